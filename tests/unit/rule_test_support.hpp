#pragma once
// What the rule tests share: samples of known spread, reports holding one probe's results, one
// rule run through analyze() as the tool runs it, and the checks every verdict must pass. A rule
// list, probe id or layer is a parameter here; what a single layer promises stays in its test.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "core/report.hpp"
#include "core/stats.hpp"
#include "rules/analysis.hpp"
#include "rules/rule.hpp"

namespace clprobe::test {

// cv 0: only the comparisons' 1% noise floor applies.
inline std::vector<double> steady(double v) {
    return {v, v, v};
}

// {m(1-d), m, m(1+d)} with d = cv / 1.4826: median m and a robust spread (1.4826 MAD / median, the
// noise the rules weigh) of exactly cv. Three samples each: two sets that do not overlap stay
// below core/stats' separation_min_samples, so the spread-based confidence is what a test sees.
inline std::vector<double> spread(double median, double cv) {
    const double d = cv / mad_to_stddev;
    return {median * (1 - d), median, median * (1 + d)};
}

// Higher is better; the throughput probes time on the device.
inline Measurement rate(const std::string& metric, const std::string& unit, Labels labels,
                        std::vector<double> samples) {
    return make_measurement(metric, unit, std::move(labels), std::move(samples), TimerKind::device_profiling);
}

// Lower is better; probes time some stages on the device and whole steps on the host, so callers say which.
inline Measurement seconds(const std::string& metric, Labels labels, std::vector<double> samples, TimerKind timer) {
    return make_measurement(metric, "s", std::move(labels), std::move(samples), timer, false);
}

inline ProbeResult probe_result(const std::string& id, const std::string& layer,
                                std::vector<Measurement> measurements = {}) {
    ProbeResult p;
    p.id = id;
    p.layer = layer;
    p.measurements = std::move(measurements);
    return p;
}

// Rules look up measurements by metric, whichever probe holds them: one synthetic probe is enough.
inline RunReport report_with(const std::string& probe_id, const std::string& layer,
                             std::vector<Measurement> measurements) {
    RunReport r;
    r.results.push_back(probe_result(probe_id, layer, std::move(measurements)));
    return r;
}

// No rule reads the name or selector; they are there so the device looks like a queried one.
inline DeviceInfo synthetic_device(const std::string& type) {
    DeviceInfo d;
    d.selector = "0:0";
    d.name = "Synthetic device";
    d.type = type;
    return d;
}

// By value: callers pass the temporary list a layer's *_rules() returns.
inline Rule rule_named(const std::vector<Rule>& rules, const std::string& id) {
    for (const auto& rule : rules)
        if (rule.id == id) return rule;
    FAIL("no rule " << id);
    return {RuleSpec{}, nullptr};
}

// One rule's verdict as the analysis sees it: skipped-rule bookkeeping and pipeline shares, with
// the gain the rule computed (the split into ranked findings and notes is ranking_test's subject).
inline RunReport analyzed(RunReport r, const std::vector<Rule>& rules, const std::string& id) {
    evaluate_rules(r, {rule_named(rules, id)});
    return r;
}

inline void check_silent(const RunReport& r) {
    CHECK(r.findings.empty());
    CHECK(r.rules_not_evaluated.empty());
}

// The one skipped rule; callers check its reason as precisely as their rule words it.
inline const SkippedRule& skipped_rule(const RunReport& r, const std::string& rule_id) {
    CHECK(r.findings.empty());
    REQUIRE(r.rules_not_evaluated.size() == 1);
    CHECK(r.rules_not_evaluated[0].rule == rule_id);
    return r.rules_not_evaluated[0];
}

inline void check_not_evaluated(const RunReport& r, const std::string& rule_id) {
    CHECK_FALSE(skipped_rule(r, rule_id).reason.empty());
}

// The one finding, which must say what is wrong, what to do and what the gain rests on.
inline const Finding& only_finding(const RunReport& r, const std::string& id) {
    REQUIRE(r.findings.size() == 1);
    const Finding& f = r.findings[0];
    CHECK(f.id == id);
    CHECK_FALSE(f.title.empty());
    CHECK_FALSE(f.suggestion.empty());
    CHECK_FALSE(f.gain_basis.empty());
    return f;
}

// ...from a rule that had its inputs, in its layer.
inline const Finding& only_finding(const RunReport& r, const std::string& id, const std::string& layer) {
    CHECK(r.rules_not_evaluated.empty());
    const Finding& f = only_finding(r, id);
    CHECK(f.layer == layer);
    return f;
}

// ...and, through the whole analysis, listed where its gain's basis puts it: ranked first when
// the gain is a share of a measured step, else a note with rank 0 and no gain.
inline const Finding& ranked_finding(const RunReport& r, const std::string& id, const std::string& layer) {
    const Finding& f = only_finding(r, id, layer);
    RunReport full = r;
    classify_findings(full.findings);
    rank_findings(full.findings);
    const Finding& placed = only_finding(full, id);
    CHECK(placed.rank == (placed.kind == FindingKind::ranked ? 1 : 0));
    CHECK(placed.kind ==
          (f.measured_share && f.estimated_gain && !f.uncertain ? FindingKind::ranked : FindingKind::note));
    if (placed.kind == FindingKind::note) CHECK_FALSE(placed.estimated_gain);
    return f;
}

}  // namespace clprobe::test
