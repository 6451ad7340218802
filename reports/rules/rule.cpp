#include "rules/rule.hpp"

#include <algorithm>
#include <cmath>

namespace clprobe {

Evidence evidence_of(const Measurement& m, std::string expectation) {
    return {m.metric, m.labels, m.summary.median, m.unit, std::move(expectation)};
}

std::optional<Gap> significant_gap(const Measurement& better, const Measurement& worse, double min_ratio) {
    const double b = better.summary.median, w = worse.summary.median;
    if (b <= 0 || w <= 0) return std::nullopt;
    Gap gap;
    gap.ratio = better.higher_is_better ? b / w : w / b;
    gap.confidence = comparison_confidence(better, worse);
    if (gap.ratio < min_ratio || gap.confidence < min_confidence) return std::nullopt;
    gap.uncertain = gap.ratio / (1.0 + relative_noise(better, worse)) < min_ratio;
    return gap;
}

std::string label_of(const Measurement& m, const std::string& key) {
    const auto it = m.labels.find(key);
    return it == m.labels.end() ? "?" : it->second;
}

Finding make_finding(std::string layer, std::string id, Severity severity, std::string title) {
    Finding f;
    f.id = std::move(id);
    f.layer = std::move(layer);
    f.severity = severity;
    f.title = std::move(title);
    return f;
}

Finding comparison_finding(std::string id, std::string layer, Severity severity, std::string title,
                           const Measurement& first, std::string first_expectation, const Measurement& second,
                           std::string second_expectation, const Gap& gap, std::string gain_basis) {
    Finding f = make_finding(std::move(layer), std::move(id), severity, std::move(title));
    f.evidence = {evidence_of(first, std::move(first_expectation)), evidence_of(second, std::move(second_expectation))};
    f.estimated_gain = gap.gain();
    f.gain_basis = std::move(gain_basis);
    f.confidence = gap.confidence;
    f.factor = gap.ratio;
    f.uncertain = gap.uncertain;
    return f;
}

}  // namespace clprobe
