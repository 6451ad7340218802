#pragma once
// What the trace rules share: reading the facts, stating a gain as a share of the program's wall
// time, evidence from facts, and the text of times and sizes.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/byte_size.hpp"  // bytes_text
#include "core/trace_facts.hpp"
#include "rules/rule.hpp"

namespace clprobe::trace_rule {

inline constexpr const char* layer = "trace";
// Gains under 1% of the wall time are not worth a line in the report.
inline constexpr double min_gain = 0.01;

using FactsRule = RuleOutcome (*)(const RunReport&, const TraceFacts&, const RuleSpec&);

// What every trace rule reads: the traced program's facts (core/trace_facts), which the
// trace.program probe records. Declared first in each rule's inputs.
inline RuleInput program_facts() {
    return RuleInput::facts(trace_probe_id);
}
// The threshold every rule whose gain is a share of the wall time applies (worth_reporting).
inline RuleThreshold min_gain_threshold() {
    return {"gain, share of the wall time", min_gain, true};
}

// Adapts a rule over facts: silent on reports without a traced program (the analysis does not run
// the trace rules there; this covers a rule evaluated on its own), not evaluated (rule.missing())
// when trace.program holds no readable facts.
RuleCheck over_facts(FactsRule rule);
// The same for a rule that holds the program against this machine's ceilings: not evaluated when
// the program ran on devices none of which is the one the ceilings were measured on.
RuleCheck over_facts_and_ceilings(FactsRule rule);

Severity severity_for(double share);
std::string seconds_text(double s);
Evidence fact(std::string metric, double value, std::string unit, std::string expectation, Labels labels = {});
// The stages of the wall time each ranked trace rule's fix removes time from (one table, so the
// bound below and the unit test that checks it read the same list). Empty for a rule that is not
// listed: wall_share_finding then gives no gain at all rather than an unbounded one.
std::vector<AppStage> removable_stages(std::string_view rule_id);
// The seconds of those stages: no fix saves more than the time it removes.
double removable_seconds(const TraceFacts& f, std::string_view rule_id);

// A finding of `rule` whose gain is `saved` seconds of the program's measured wall time, bounded
// by removable_seconds (the basis says so when the bound applied).
Finding wall_share_finding(const RuleSpec& rule, const TraceFacts& f, std::string title, double saved,
                           std::string basis);
// Whether `saved` seconds clear min_gain of the wall time.
bool worth_reporting(const TraceFacts& f, double saved);
// The ceiling measurement with exactly these labels (the label-free headline by default).
const Measurement* headline(const RunReport& r, std::string_view metric, const Labels& labels = {});

}  // namespace clprobe::trace_rule
