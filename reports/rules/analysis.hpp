#pragma once
// Turns measurements into ranked findings. Pure: runs on a RunReport, live or loaded from JSON.
#include <vector>

#include "core/report.hpp"
#include "rules/rule.hpp"

namespace clprobe {

// Every rule clprobe knows, in evaluation order.
std::vector<Rule> all_rules();

// Replaces report.findings and report.rules_not_evaluated with the rules' verdicts, ranked.
void analyze(RunReport& report, const std::vector<Rule>& rules = all_rules());

// Ranks in place: quantified gains first (largest first), then by severity, then by id, so the
// order is deterministic; ranks start at 1.
void rank_findings(std::vector<Finding>& findings);

}  // namespace clprobe
