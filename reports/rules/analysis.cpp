#include "rules/analysis.hpp"

#include <algorithm>

#include "rules/attention_rules.hpp"
#include "rules/glm_rules.hpp"
#include "rules/kernel_rules.hpp"
#include "rules/network_rules.hpp"
#include "rules/pipeline.hpp"
#include "rules/ranking.hpp"
#include "rules/replay_analysis.hpp"
#include "rules/run_rules.hpp"
#include "rules/system_rules.hpp"
#include "rules/topology_rules.hpp"
#include "rules/trace_rules.hpp"
#include "rules/transfer_rules.hpp"
#include "rules/trust.hpp"

namespace clprobe {

std::vector<Rule> all_rules() {
    // One list per layer, in evaluation order.
    using LayerRules = std::vector<Rule> (*)();
    std::vector<Rule> rules;
    for (const LayerRules layer : {run_rules, system_rules, topology_rules, transfer_rules, kernel_rules, glm_rules,
                                   attention_rules, trace_rules, network_rules})
        for (auto& r : layer())
            rules.push_back(std::move(r));
    return rules;
}

namespace {

// A trace report ranks what slows the traced program down. The device layers' rules speak about
// clprobe's own stand-in pipelines, so there they would rank device traits above the program's
// measured patterns; the ceilings they read still serve the trace rules. The trace rules read a
// traced program's facts: any other report has none, so there they neither find anything nor count
// as not evaluated (their declared ceilings would otherwise be listed as missing).
bool applies_to(const Rule& rule, bool trace_report) {
    if (rule.layer == "trace") return trace_report;
    return !trace_report || rule.layer == "system" || rule.layer == "topology";
}

}  // namespace

void evaluate_rules(RunReport& report, const std::vector<Rule>& rules) {
    report.findings.clear();
    report.rules_not_evaluated.clear();
    const bool trace_report = is_trace_report(report);
    for (const auto& rule : rules) {
        if (!applies_to(rule, trace_report)) continue;
        RuleOutcome outcome = rule.evaluate(report);
        if (outcome.finding)
            report.findings.push_back(std::move(*outcome.finding));
        else if (outcome.not_evaluated)
            report.rules_not_evaluated.push_back({rule.id, *outcome.not_evaluated});
        for (auto& f : outcome.also)
            report.findings.push_back(std::move(f));
    }
    apply_pipeline_shares(report, report.findings);
}

void analyze(RunReport& report, const std::vector<Rule>& rules) {
    evaluate_rules(report, rules);
    replay::add_replay_findings(report);
    classify_findings(report.findings);
    rank_findings(report.findings);
    // Once, here: the JSON, `compare` and every renderer read the same stored notes.
    report.trust_notes = assess_trust(report);
}

}  // namespace clprobe
