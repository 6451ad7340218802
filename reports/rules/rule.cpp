#include "rules/rule.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

#include "core/drift_facts.hpp"
#include "core/stats.hpp"
#include "core/text.hpp"
#include "rules/run_rules.hpp"

namespace clprobe {

Evidence evidence_of(const Measurement& m, std::string expectation) {
    return {m.metric, m.labels, m.summary.median, m.unit, std::move(expectation)};
}

double sample_noise(const Measurement& m) {
    return m.samples.size() >= 3 ? robust_cv(m.samples) : m.summary.cv;
}

double relative_noise(const Measurement& a, const Measurement& b) {
    // The floor keeps a handful of identical samples from making any gap look certain.
    return std::max(0.01, sample_noise(a) + sample_noise(b));
}

double comparison_confidence(const Measurement& better, const Measurement& worse) {
    return std::max(comparison_confidence(better.summary.median, worse.summary.median, relative_noise(better, worse)),
                    separation_confidence(better.samples, worse.samples));
}

std::string probe_holding(const RunReport& r, const std::string& metric, const Labels& labels) {
    for (const auto& p : r.results)
        for (const auto& m : p.measurements)
            if (m.metric == metric && m.labels == labels) return p.id;
    return {};
}

double drift_noise(const RunReport& r, const Measurement& a, const Measurement& b) {
    if (!r.drift) return 0;
    const std::string pa = probe_holding(r, a.metric, a.labels), pb = probe_holding(r, b.metric, b.labels);
    if (pa.empty() || pb.empty() || pa == pb) return 0;
    return largest_spread(*r.drift).value_or(0);
}

std::optional<Gap> significant_gap(const RunReport& r, const Measurement& better, const Measurement& worse,
                                   double min_ratio) {
    const double b = better.summary.median, w = worse.summary.median;
    if (b <= 0 || w <= 0) return std::nullopt;
    Gap gap;
    gap.ratio = better.higher_is_better ? b / w : w / b;
    gap.confidence = comparison_confidence(better, worse);
    if (gap.ratio < min_ratio || gap.confidence < min_confidence) return std::nullopt;
    gap.uncertain = gap.ratio / (1.0 + relative_noise(better, worse) + drift_noise(r, better, worse)) < min_ratio;
    return gap;
}

std::string label_of(const Measurement& m, const std::string& key) {
    const auto it = m.labels.find(key);
    return it == m.labels.end() ? "?" : it->second;
}

RuleInput RuleInput::metric(std::string id, std::string variants) {
    return {Kind::metric, {std::move(id)}, std::move(variants)};
}

RuleInput RuleInput::any_metric(std::vector<std::string> ids, std::string variants) {
    return {Kind::metric, std::move(ids), std::move(variants)};
}

RuleInput RuleInput::facts(std::string probe_id) {
    return {Kind::facts, {std::move(probe_id)}, {}};
}

RuleInput RuleInput::device() {
    return {Kind::device, {}, {}};
}

std::string RuleInput::text() const {
    if (kind == Kind::device) return "the device context";
    std::string names_text;
    for (std::size_t i = 0; i < names.size(); ++i)
        names_text += (i == 0 ? "" : " or ") + names[i];
    if (kind == Kind::facts) names_text += "'s facts";
    return variants.empty() ? names_text : names_text + " (" + variants + ")";
}

std::string RuleThreshold::text() const {
    return percent ? fmt::format("{}%", value * 100) : fmt::format("{}", value);
}

Finding RuleSpec::finding(Severity severity, std::string title) const {
    Finding f;
    f.id = id;
    f.layer = layer;
    f.severity = severity;
    f.title = std::move(title);
    return f;
}

Finding RuleSpec::comparison(Severity severity, std::string title, const Measurement& first,
                             std::string first_expectation, const Measurement& second, std::string second_expectation,
                             const Gap& gap, std::string gain_basis) const {
    Finding f = finding(severity, std::move(title));
    f.evidence = {evidence_of(first, std::move(first_expectation)), evidence_of(second, std::move(second_expectation))};
    f.estimated_gain = gap.gain();
    f.gain_basis = std::move(gain_basis);
    f.confidence = gap.confidence;
    f.factor = gap.ratio;
    f.uncertain = gap.uncertain;
    return f;
}

std::string RuleSpec::needs() const {
    std::vector<std::string> texts;
    for (const auto& input : inputs)
        texts.push_back(input.text());
    return "needs " + text::sentence_list(texts, " and ");
}

namespace {

bool present(const RunReport& report, const RuleInput& input) {
    switch (input.kind) {
        case RuleInput::Kind::device:
            return report.device.has_value();
        case RuleInput::Kind::facts:
            return true;  // the rule reads them through their typed accessor
        case RuleInput::Kind::metric:
            return std::any_of(input.names.begin(), input.names.end(),
                               [&](const std::string& metric) { return !find_measurements(report, metric).empty(); });
    }
    return true;
}

}  // namespace

const RuleInput* RuleSpec::absent_input(const RunReport& report) const {
    for (const auto& input : inputs)
        if (!present(report, input)) return &input;
    return nullptr;
}

RuleOutcome Rule::evaluate(const RunReport& report) const {
    if (const RuleInput* absent = absent_input(report)) {
        RuleOutcome out = missing();
        // The input is missing because its probe crashed or hung: say so, the user's next step differs.
        if (const std::string lost = lost_probe_note(report, *absent); !lost.empty()) *out.not_evaluated += "; " + lost;
        return out;
    }
    return check(report, *this);
}

}  // namespace clprobe
