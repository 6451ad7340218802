#pragma once
// Times a fixed reference on the device before each device probe (kernels/drift/reference.cl: an
// FMA-bound kernel whose work depends on the work-item id, and one read of a buffer several times
// the last-level cache, in whichever of two access patterns the device streams faster), so the report
// says how far the machine's own throughput moved during the run (core/drift_facts.hpp). The
// monitor never fails a run: a device that cannot profile, a reference that does not build or
// computes a wrong result leaves it off, with the reason in MachineDrift::note.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/drift_facts.hpp"
#include "runtime/runner.hpp"

namespace clprobe {

class DeviceSession;

struct DriftMonitorConfig {
    std::chrono::steady_clock::time_point run_start = std::chrono::steady_clock::now();
    int launches = 3;               // per rate; the check keeps the median
    double target_seconds = 0.001;  // one compute launch, once calibrated
    std::uint64_t min_buffer_bytes = 64ull << 20;
    // Tests only: edits the read-back results (every lane of every work-item) before they are
    // verified: a planted wrong result.
    std::function<void(std::vector<float>& fma_sums, std::vector<std::uint32_t>& read_sums)> tamper;
};

class DriftMonitor {
  public:
    // Builds the reference, fills its buffer, calibrates and verifies it once. Never throws.
    explicit DriftMonitor(DeviceSession& session, DriftMonitorConfig config = {});
    ~DriftMonitor();
    DriftMonitor(const DriftMonitor&) = delete;
    DriftMonitor& operator=(const DriftMonitor&) = delete;

    // Times the reference once, as the check before probe `probe_id`; a failure turns the monitor
    // off with a note. Never throws.
    void check(const std::string& probe_id);
    bool active() const;
    const MachineDrift& drift() const;
    // The memory reference's access pattern, the fastest at set-up ("chunked", "chunked_wide" or
    // "interleaved"); empty when the set-up did not get that far.
    const std::string& read_pattern() const;

  private:
    struct State;
    std::unique_ptr<State> state_;
};

// The monitor for a run of `options` on `session`; null when there is no device or the run has no
// device layer (kernel, transfer).
std::unique_ptr<DriftMonitor> make_drift_monitor(DeviceSession* session, const RunOptions& options,
                                                 std::chrono::steady_clock::time_point run_start);

// The probes a check precedes: those that use the device, in the device layers (kernel, transfer,
// and the workloads in the kernel layer).
bool drift_check_precedes(const Probe& probe);

// `hooks` with a check before every probe drift_check_precedes names; `monitor` outlives the run.
RunnerHooks with_drift_checks(RunnerHooks hooks, DriftMonitor& monitor);

}  // namespace clprobe
