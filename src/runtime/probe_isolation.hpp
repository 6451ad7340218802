#pragma once
// Runs device probes in a child process (docs/architecture.md, "Process model"), so a driver that
// crashes or hangs costs one probe, never the report. One child runs a batch (a layer's device
// probes) in turn, opening the device once: a process and a context per probe cost more than the
// ceilings they isolate (measured in docs/reliability.md). The child is clprobe itself, started
// with fork + exec and the hidden `__probe-child REQUEST` command; the request file holds the probe
// ids, the device, the run options and the results so far (workload probes read the ceilings
// measured before them). The child sends each ProbeResult back in the report's JSON form as it
// finishes; a child that dies, exits without a result or outlives a probe's budget makes that probe
// `crashed` or `timed_out` (the signal, the command it was in, the tail of its output), and a new
// child runs the rest of the batch.
#include <functional>
#include <string>
#include <vector>

#include "core/report.hpp"
#include "runtime/child_process.hpp"
#include "runtime/probe.hpp"

namespace clprobe {

struct IsolationSettings {
    std::string executable = "/proc/self/exe";  // clprobe itself, whatever its path or name
    std::string device_selector;                // "P:D", exact: the device the parent selected
    std::string kernel_dir;                     // --kernel-dir
    bool trace = false;                         // --trace: the child records its commands too
    // The hard limit is the probe's budget plus this slack: the child's own cooperative budget
    // (stop points, "exceeded its time budget") gets the first chance to end it cleanly.
    double budget_slack_seconds = 5;
    double grace_seconds = 2;  // SIGTERM, then SIGKILL this much later
};

// The request file an isolated probe's child reads.
struct ProbeRequest {
    std::vector<std::string> probe_ids;  // run in this order
    std::string device_selector;
    std::string kernel_dir;
    bool trace = false;
    RunOptions options;
    std::vector<ProbeResult> earlier;
};
// Throws std::invalid_argument (a request this clprobe did not write).
ProbeRequest read_probe_request(const std::string& path);

// The result a probe's own message stands for (pure): the probe's result, or `crashed` when the
// text is not a result for this probe.
ProbeResult result_of_message(const Probe& probe, const std::string& json, const ChildOutcome& outcome);
// The result of the probe a child was running (or about to run) when it ended without sending one
// (pure, unit-testable): crashed, timed_out or (interrupted) skipped, with the evidence in `reason`
// and the attribute `isolation`.
ProbeResult result_of_lost_probe(const Probe& probe, const ChildOutcome& outcome, double budget_seconds);

// Between the probes of a batch: the parent's own work before probe `index` of the batch starts
// (progress, the drift check), and each result as it arrives.
struct BatchHooks {
    std::function<void(std::size_t index)> starting;
    std::function<void(ProbeResult result)> finished;
};

class ProbeIsolator {
  public:
    // Makes a private temporary folder for the requests; throws std::runtime_error when it cannot.
    ProbeIsolator(IsolationSettings settings, const RunOptions& options);
    ~ProbeIsolator();
    ProbeIsolator(const ProbeIsolator&) = delete;
    ProbeIsolator& operator=(const ProbeIsolator&) = delete;

    // Runs `batch` in child processes, handing each result to hooks.finished in order. `earlier`
    // holds the results before the batch and is read again when a child must be replaced, so it
    // may grow by the results `finished` appends. Returns how many probes got a result: fewer than
    // the batch only when the run was interrupted. Never throws: every failure is a probe's result.
    std::size_t run_batch(const std::vector<const Probe*>& batch, const std::vector<ProbeResult>& earlier,
                          const BatchHooks& hooks);

  private:
    std::string request_text(const std::vector<const Probe*>& probes, const std::vector<ProbeResult>& earlier);

    IsolationSettings settings_;
    const RunOptions& options_;
    std::string folder_;
    // Each earlier result serialised once: results only grow, and a workload probe late in the run
    // would otherwise re-serialise every ceiling before it.
    std::vector<std::string> earlier_json_;
};

}  // namespace clprobe
