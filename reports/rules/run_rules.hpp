#pragma once
#include <vector>

#include "rules/rule.hpp"

namespace clprobe {
// Findings about the run itself: a probe whose process crashed or outlived its budget
// (runtime/probe_isolation). One finding per such probe, so each says what crashed, how, and
// what to try (docs/findings.md, "Run").
std::vector<Rule> run_rules();

// "glm.gradient, which measures it, crashed", for a metric input a crashed or timed-out probe
// would have measured: the probe whose id the metric starts with, else one of the metric's area
// (its first word: kernel, transfer, glm, attention). Empty when no lost probe explains it.
std::string lost_probe_note(const RunReport& report, const RuleInput& input);
}  // namespace clprobe
