#pragma once
// Turns measurements into ranked findings. Pure: runs on a RunReport, live or loaded from JSON.
#include <vector>

#include "core/report.hpp"
#include "rules/ranking.hpp"
#include "rules/rule.hpp"

namespace clprobe {

// Every rule clprobe knows, in evaluation order.
std::vector<Rule> all_rules();

// The rules' own verdicts: replaces report.findings and report.rules_not_evaluated, with the
// pipeline shares applied; gains are still as the rules computed them (unclassified, unranked).
void evaluate_rules(RunReport& report, const std::vector<Rule>& rules = all_rules());

// Replaces report.findings and report.rules_not_evaluated with the rules' verdicts: the pipeline
// shares applied, each finding classified as ranked or a note, and ranked (rules/ranking.hpp);
// and report.trust_notes with the run's trust notes (rules/trust.hpp).
void analyze(RunReport& report, const std::vector<Rule>& rules = all_rules());

}  // namespace clprobe
