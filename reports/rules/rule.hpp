#pragma once
// A rule reads a RunReport and either produces a finding, stays silent (nothing wrong), or says
// why it could not be evaluated (an input is missing). Rules are pure: no OpenCL, no I/O.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/report.hpp"

namespace clprobe {

struct RuleOutcome {
    std::optional<Finding> finding;
    std::optional<std::string> not_evaluated;  // why the rule could not run

    static RuleOutcome none() { return {}; }
    static RuleOutcome found(Finding f) { return {std::move(f), std::nullopt}; }
    static RuleOutcome missing(std::string why) { return {std::nullopt, std::move(why)}; }
};

struct Rule {
    std::string id;  // the finding id it produces
    std::string layer;
    std::function<RuleOutcome(const RunReport&)> evaluate;
};

// core/stats' comparison_confidence and relative_noise, on two measurements' summaries.
inline double comparison_confidence(const Measurement& better, const Measurement& worse) {
    return comparison_confidence(better.summary, worse.summary);
}
inline double relative_noise(const Measurement& a, const Measurement& b) {
    return relative_noise(a.summary, b.summary);
}

// A comparison is a finding only when it is at least this confident: below, the measured gap
// could be noise and the report must not claim it.
inline constexpr double min_confidence = 0.5;

// A finding's identity; rules fill in evidence, suggestion and gain.
Finding make_finding(std::string layer, std::string id, Severity severity, std::string title);

Evidence evidence_of(const Measurement& m, std::string expectation = {});

// A measured gap between the better and the worse of two measurements of one quantity: ratio is
// better over worse in the direction that counts (a rate's quotient, a time's inverse quotient).
struct Gap {
    double ratio = 1;
    double confidence = 0;
    // The ratio clears min_ratio only by less than the two measurements' noise: another run could
    // fall on the other side, so the finding is marked uncertain and not ranked.
    bool uncertain = false;
    double gain() const { return 1.0 - 1.0 / ratio; }  // share of the worse one's time saved
};

// The gap when it is at least min_ratio and clears the noise (confidence >= min_confidence);
// uncertain when ratio / (1 + noise) falls below min_ratio.
std::optional<Gap> significant_gap(const Measurement& better, const Measurement& worse, double min_ratio);

// A label's value, or "?" when a (hand-edited) report lacks it: rules never throw on input.
std::string label_of(const Measurement& m, const std::string& key);

// A comparison finding's common part: the two measurements as evidence (in this order), gain
// and confidence from their gap.
Finding comparison_finding(std::string id, std::string layer, Severity severity, std::string title,
                           const Measurement& first, std::string first_expectation, const Measurement& second,
                           std::string second_expectation, const Gap& gap, std::string gain_basis);

}  // namespace clprobe
