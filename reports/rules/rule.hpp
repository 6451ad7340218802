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

// How sure a comparison "a is better than b by ratio" is, from the two measurements' spread:
// 0 when the gap is inside the noise, approaching 1 as the gap dwarfs it.
double comparison_confidence(const Measurement& better, const Measurement& worse);

// A comparison is a finding only when it is at least this confident: below, the measured gap
// could be noise and the report must not claim it.
inline constexpr double min_confidence = 0.5;

Evidence evidence_of(const Measurement& m, std::string expectation = {});

}  // namespace clprobe
