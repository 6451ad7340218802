#pragma once
// What the trace rules share: reading the facts, stating a gain as a share of the program's wall
// time, evidence from facts, and the text of times and sizes.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/byte_size.hpp"  // bytes_text
#include "core/kernel_roofs.hpp"
#include "core/launch_metrics.hpp"
#include "core/memory_roofs.hpp"
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
// by removable_seconds (the basis says so when the bound applied). In a job of several
// processes, attributed to them by each process's pattern_seconds under the rule's id.
Finding wall_share_finding(const RuleSpec& rule, const TraceFacts& f, std::string title, double saved,
                           std::string basis);
// In a job of several processes, a pattern this much in one process is that process's: the
// finding names it in its title.
inline constexpr double one_process_share = 0.95;
// "pid N (command)": how findings name a process of the job.
std::string process_text(const TraceFacts& f, int pid);
// Says which processes of a job `finding` concerns, from how much of its pattern each holds
// (seconds, or any amount; pids absent or 0 hold none): the title and an app.process.pattern_share
// evidence name the process that holds one_process_share of it, else the evidence gives the share
// of each process that holds any (the largest three). Nothing for a trace of one process.
void attribute_to_processes(Finding& finding, const TraceFacts& f, const std::map<int, double>& amount_by_pid);
// Every process with the same amount: the pattern is in exactly these (a kernel launched by them).
std::map<int, double> processes_among(const std::vector<int>& pids);

// The kernel that loses the most time below the roof of the memory level its buffers fit in,
// among those `eligible` picks: at least kernel_share_of_interest of the wall time and under
// below_roof_fraction of that roof. Shared by trace.kernel.below_roof and no_local_size.
inline constexpr double below_roof_fraction = 0.1;  // below a tenth of the roof: far below it
inline constexpr double kernel_share_of_interest = 0.1;
// A kernel's time can fall to the roof only as far as the launch floor allows: no launch runs
// shorter than an empty kernel's device time measured here (kernel.empty_launch.time),
// so a tiny kernel launched thousands of times is held against launches x that floor, not against
// its few bytes at the roof alone.
//
// A kernel whose work was counted (trace --work) is held against the roof that binds it
// (core/kernel_roofs): the memory rules take it when its bytes bind it, the compute rule when its
// operations do, and its fraction and saving come from the counted work, not from its arguments.
// A kernel whose work was not counted is judged by its arguments' sizes alone: an estimate, whose
// finding is shown but never ranked (`estimated`).
struct KernelBelowRoof {
    const KernelFacts* kernel = nullptr;
    PlacedRoof roof;
    double saved = 0;          // its time less max(its work at the roof, launches x floor)
    bool floor_bound = false;  // the launch floor, not the roof, set the time it could fall to
    double fraction = 0;       // of the roof it is held against
    // Its device time the judgement stands for: a counted kernel's launches of the counted size
    // (KernelWorkFacts::like_share of it), an estimated kernel's whole time.
    double represented_seconds = 0;
    const KernelWorkFacts* work = nullptr;     // its counted work, when counted
    std::optional<KernelPlacement> placement;  // where that work sits on every roof
    bool estimated() const { return work == nullptr; }
};
struct KernelLimits {
    BandwidthRoofs roofs;
    ComputeRoofs compute;
    double launch_floor_seconds = 0;  // an empty kernel's device time; 0 when not measured
};
KernelLimits kernel_limits_of(const RunReport& r);
// Which roofs a rule judges kernels against: memory (the footprint's level, or the cache rate of
// every load and store) or compute (a precision's FLOP peak, or the integer peak).
enum class RoofSide { memory, compute };
inline constexpr double below_compute_fraction = 0.5;  // under half of the peak that binds it
std::optional<KernelBelowRoof> worst_below_roof(const KernelLimits& limits, const TraceFacts& f,
                                                const std::function<bool(const KernelFacts&)>& eligible,
                                                RoofSide side = RoofSide::memory);
// Why `kernel`'s work was not counted, when the trace tried; "" when it was counted or not tried.
std::string uncounted_reason(const TraceFacts& f, const std::string& kernel);
// Evidence of the launch floor, when one was measured: the empty kernel's device time, and whether
// it (rather than the roof) bounded the kernel's saving.
void add_launch_floor_evidence(Finding& finding, const KernelLimits& limits, const KernelBelowRoof& below);
// The floor's metric (probes/kernel/launch_latency_probe).
inline constexpr const char* launch_floor_metric = empty_launch_metric;
// The spec both roof rules declare: the program's facts and the device's bandwidth roofs in, a
// kernel share and a roof fraction as thresholds. One definition, so the two cannot drift apart.
RuleSpec below_roof_spec(std::string id);
// Launched with a NULL local size (the driver chose the work-group) at least half the time.
bool mostly_auto_local(const KernelFacts& k);

// Whether `saved` seconds clear min_gain of the wall time.
bool worth_reporting(const TraceFacts& f, double saved);
// The ceiling measurement with exactly these labels (the label-free headline by default).
const Measurement* headline(const RunReport& r, std::string_view metric, const Labels& labels = {});

}  // namespace clprobe::trace_rule
