#pragma once
// Runs a device probe in a child process of its own (docs/architecture.md, "Process model"), so a
// driver that crashes or hangs costs that probe, never the report. The child is clprobe itself,
// started with fork + exec and the hidden `__probe-child REQUEST` command; the request file holds
// the probe id, the device, the run options and the results so far (workload probes read the
// ceilings measured before them). The child sends its ProbeResult back in the report's JSON form;
// a child that dies, exits without a result or outlives its budget becomes a `crashed` or
// `timed_out` result with the signal, the command it was in and the tail of its output.
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
    std::string probe_id;
    std::string device_selector;
    std::string kernel_dir;
    bool trace = false;
    RunOptions options;
    std::vector<ProbeResult> earlier;
};
// Throws std::invalid_argument (a request this clprobe did not write).
ProbeRequest read_probe_request(const std::string& path);

// The result a child's outcome stands for (pure, unit-testable): its own result when it sent one
// and ended normally, else crashed, timed_out or (interrupted) skipped, with the evidence in
// `reason` and the attribute `isolation`.
ProbeResult result_of_child(const Probe& probe, const ChildOutcome& outcome, double budget_seconds);

class ProbeIsolator {
  public:
    // Makes a private temporary folder for the requests; throws std::runtime_error when it cannot.
    ProbeIsolator(IsolationSettings settings, const RunOptions& options);
    ~ProbeIsolator();
    ProbeIsolator(const ProbeIsolator&) = delete;
    ProbeIsolator& operator=(const ProbeIsolator&) = delete;

    // Never throws: every failure is the probe's result.
    ProbeResult run(const Probe& probe, const std::vector<ProbeResult>& earlier);

  private:
    std::string request_text(const Probe& probe, const std::vector<ProbeResult>& earlier);

    IsolationSettings settings_;
    const RunOptions& options_;
    std::string folder_;
    // Each earlier result serialised once: results only grow, and a workload probe late in the run
    // would otherwise re-serialise every ceiling before it.
    std::vector<std::string> earlier_json_;
};

}  // namespace clprobe
