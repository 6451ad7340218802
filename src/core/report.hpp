#pragma once
// The run's data model. Probes produce it, rules annotate it, renderers and `compare` read it;
// saved as JSON it is the interchange format (docs/report-schema.md).
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/device_info.hpp"
#include "core/drift_facts.hpp"
#include "core/provenance.hpp"
#include "core/stats.hpp"

namespace clprobe {

using Labels = std::map<std::string, std::string>;

// crashed and timed_out: an isolated probe's child process died by a signal or exited without a
// result, or outlived its time budget and was killed (docs/reliability.md, "Process model").
enum class ProbeStatus { ok, unsupported, skipped, error, crashed, timed_out };
enum class TimerKind { device_profiling, host_steady_clock, none };
enum class Severity { info, low, medium, high };

std::string_view to_string(ProbeStatus s);
std::string_view to_string(TimerKind t);
std::string_view to_string(Severity s);
std::optional<ProbeStatus> probe_status_from(std::string_view s);
std::optional<TimerKind> timer_kind_from(std::string_view s);
std::optional<Severity> severity_from(std::string_view s);

struct Measurement {
    std::string metric;  // stable dotted id, e.g. kernel.peak.bandwidth
    std::string unit;    // GB/s, GFLOP/s, us, ms, count...
    Labels labels;       // variant coordinates: access=read, vector=8...
    std::vector<double> samples;
    Summary summary;
    bool higher_is_better = true;
    TimerKind timer = TimerKind::none;
    std::int64_t iterations_per_sample = 1;
    std::string note;  // how the number was obtained when not obvious (e.g. "best of 30 variants")
};

// What else the host ran while a probe measured (runtime/probe_load_meter): CPUs' worth of other
// processes' time and of time the hypervisor stole, averaged over the probe, on the CPUs clprobe
// may run on. On a CPU device that is compute and memory bandwidth the probe did not get.
struct HostLoad {
    double seconds = 0;      // the window measured: the probe's start to its result
    int cpus = 0;            // CPUs counted (clprobe's affinity)
    double others_cpus = 0;  // other processes' CPU seconds per second
    double steal_cpus = 0;   // stolen CPU seconds per second
};

struct ProbeResult {
    std::string id;     // e.g. kernel.bandwidth
    std::string layer;  // system, topology, transfer, kernel
    std::string title;
    ProbeStatus status = ProbeStatus::ok;
    std::string reason;  // why it is not ok; the OpenCL call and error name for errors
    std::vector<Measurement> measurements;
    nlohmann::json attributes = nlohmann::json::object();
    double wall_seconds = 0;
    std::optional<HostLoad> host_load;  // diagnose measures it for every probe it runs
};

struct Evidence {
    std::string metric;
    Labels labels;
    double value = 0;
    std::string unit;
    std::string expectation;  // what good looks like on this machine
};

// The pipeline stage a finding's fix speeds up, and by how much on that stage alone; the analysis
// turns it into a share of the pipeline's measured time (reports/rules/pipeline.hpp).
struct GainTarget {
    std::string pipeline;                  // e.g. "glm.pipeline"; "" = the first measured pipeline that has the stage
    std::string stage;                     // e.g. "upload"
    double stage_gain = 0;                 // fraction of the stage's time saved, 0..1
    std::optional<double> pipeline_share;  // the stage's share of the pipeline, once applied
};

// Ranked: the gain is a share of a step measured in this run (a workload pipeline, a traced
// program's wall time), so findings of this kind compare with each other. Note: a trait of the
// device or the machine whose gain would be hypothetical (launch round trips, scalar arithmetic,
// zero-copy availability); notes carry their factor, never a gain, and are listed apart.
enum class FindingKind { ranked, note };

struct Finding {
    std::string id;  // stable dotted id documented in docs/findings.md
    std::string layer;
    Severity severity = Severity::info;
    std::string title;
    std::vector<Evidence> evidence;
    std::string suggestion;
    std::optional<double> estimated_gain;  // fraction of the pipeline's time saved, 0..1
    std::string gain_basis;                // what the gain was computed from
    double confidence = 0;                 // 0..1, lowered by measurement noise
    std::optional<GainTarget> target;      // set by rules whose gain is a share of a pipeline stage
    // Set by rules whose gain is already a share of a step measured in this run (a whole-step
    // comparison, a traced program's seconds); a target applied to a workload pipeline sets it too.
    bool measured_share = false;
    // The trigger lies inside the noise of its inputs: the finding is shown but never ranked.
    bool uncertain = false;
    // Why it is shown but never ranked, when something other than noise rules it out: its numbers
    // are an estimate, or a replay measured the change it proposes and found no gain. Empty: no such reason.
    std::string not_ranked;
    std::optional<double> factor;  // how many times worse the measured pattern is (27 = "27x")
    FindingKind kind = FindingKind::note;
    int rank = 0;  // ranked findings: 1 = most important; notes: 0
};

// A condition of the run that lowers or supports trust in its numbers (a busy machine, noisy
// samples, the host clock instead of device timestamps). The analysis computes them
// (reports/rules/trust.hpp) and the report stores them, so JSON readers and `compare` see them.
struct TrustNote {
    std::string id;        // stable dotted id, e.g. trust.machine_busy (docs/report-schema.md)
    bool warning = false;  // false: information that supports the numbers
    std::string text;
};

struct SkippedRule {
    std::string rule;
    std::string reason;
};

// How a parallel launcher (srun, mpirun) started this run, and whether its node-local layers
// waited for other ranks on the same node (docs/fleet.md). Absent when no launcher was seen.
struct LaunchContext {
    std::string launcher;  // slurm, openmpi, pmi
    std::string rank;      // global rank, as the launcher wrote it
    std::optional<int> local_rank, local_size;
    std::optional<int> world_size;  // the number of ranks the launcher announced
    bool took_turns = false;        // the node-local layers ran holding the node lock
    bool waited = false;            // another rank held the node when this one asked
    double turn_wait_seconds = 0;   // time spent waiting for the node
};

// A further pass of the same probes in one run (`diagnose --passes N`, N >= 2): its results as
// measured, so one report carries how far this machine's figures move between passes, as separate
// runs would show it. The report's own results are pass 1; its findings are pass 1's.
struct RunPass {
    int number = 2;          // 2..N, in the order they ran
    std::string device;      // the device it ran on, by name: compare refuses a pass of another
    std::string started_at;  // UTC, ISO 8601
    double wall_seconds = 0;
    bool complete = true;  // false when the run was interrupted during this pass
    std::vector<ProbeResult> results;
    std::optional<MachineDrift> drift;  // the reference timed before each of this pass's device probes
};

struct RunReport {
    static constexpr std::string_view schema_id = "clprobe.report";
    static constexpr int current_schema_version = 1;

    std::string schema{schema_id};
    int schema_version = current_schema_version;
    std::string tool_version;
    std::optional<Provenance> provenance;  // absent in reports written before it was recorded
    std::string created_at;                // UTC, ISO 8601
    std::vector<std::string> command_line;
    nlohmann::json options = nlohmann::json::object();
    HostInfo host;
    std::optional<DeviceInfo> device;
    std::vector<ProbeResult> results;
    std::vector<Finding> findings;
    std::vector<SkippedRule> rules_not_evaluated;
    std::vector<TrustNote> trust_notes;  // set by the analysis; none in reports written before
    bool complete = true;                // false when the run was interrupted
    double wall_seconds = 0;
    std::optional<LaunchContext> launch;
    // The reference timed before each device probe (core/drift_facts.hpp); absent when no device
    // layer ran, and in reports written before it was measured.
    std::optional<MachineDrift> drift;
    // Passes 2..N of `diagnose --passes N`; empty for a run of one pass (and reports written before).
    std::vector<RunPass> passes;
};

// One pass of `report` as a report of its own: the header (host, device, options) of `report`,
// the pass's results and drift. What compare holds as a further run of the same machine and build.
RunReport pass_as_report(const RunReport& report, const RunPass& pass);

// Builds a measurement from raw samples, summarising them.
Measurement make_measurement(std::string metric, std::string unit, Labels labels, std::vector<double> samples,
                             TimerKind timer, bool higher_is_better = true);

// True when `have` holds every label of `want` with the same value (the empty set is in every set).
bool labels_contain(const Labels& have, const Labels& want);

// Lookups used by rules and renderers: the first measurement with this metric whose labels
// contain every pair in `labels`.
const Measurement* find_measurement(const RunReport& report, std::string_view metric, const Labels& labels = {});
const Measurement* find_measurement(const ProbeResult& result, std::string_view metric, const Labels& labels = {});
const ProbeResult* find_result(const RunReport& report, std::string_view probe_id);
// Every measurement of `metric` whose labels contain `labels`, in report order.
std::vector<const Measurement*> find_measurements(const RunReport& report, std::string_view metric,
                                                  const Labels& labels = {});
// The one with the best median (highest, or lowest when lower is better); null for none.
const Measurement* best_median(const std::vector<const Measurement*>& measurements);

std::string labels_to_string(const Labels& labels);  // "access=read,vector=8"
// The metric with its labels, as every renderer names a measurement: "m{access=read}", or "m".
std::string labelled_metric(std::string_view metric, const Labels& labels);

}  // namespace clprobe
