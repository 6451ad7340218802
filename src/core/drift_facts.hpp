#pragma once
// Machine drift during a run: a fixed reference (one short compute-bound kernel, one short
// memory-bound read) timed on the device before each device probe (src/runtime/drift_monitor).
// Some machines (VMs above all) switch between throughput states for tens of seconds at a time;
// samples inside a probe are then tight while two runs, or two probes of one run, differ by far
// more. The checks make that instability a measured figure of the run: the report stores them,
// a trust note names a large spread, and `compare` widens its noise band by it. Plain data.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace clprobe {

// One timing of the reference: each rate is the median of a few profiled launches.
struct DriftCheck {
    double offset_seconds = 0;   // since the run started
    std::string before_probe;    // id of the probe that ran next
    double compute_gflops = 0;   // FMA chains, fp32
    double memory_gb_per_s = 0;  // one read of a buffer several times the last-level cache
};

// One rate over the run's checks.
struct DriftSeries {
    std::size_t n = 0;
    double median = 0;
    double spread = 0;  // max / min - 1: 0.25 = the fastest check was 25% above the slowest
};

struct MachineDrift {
    std::vector<DriftCheck> checks;
    // Why there are no checks (the device cannot profile, the reference would not build) or why
    // they stopped (a wrong reference result); empty when the monitor ran throughout.
    std::string note;
    double cost_seconds = 0;  // host time the monitor took: building, filling and every check
};

DriftSeries compute_series(const MachineDrift& drift);
DriftSeries memory_series(const MachineDrift& drift);
// The larger spread of the two series; nullopt with fewer than two checks (no spread to speak of).
std::optional<double> largest_spread(const MachineDrift& drift);
// How far the reference moved between two runs: the larger of |median_b / median_a - 1| over the
// two series; nullopt unless both runs have checks.
std::optional<double> reference_shift(const MachineDrift& a, const MachineDrift& b);

// The reference around one probe: the mean of the check just before it and the check before the
// next device probe, so a phase change inside the probe shows as a move between the two. nullopt
// when no check preceded the probe.
struct DriftWindow {
    double compute_gflops = 0;
    double memory_gb_per_s = 0;
};
std::optional<DriftWindow> drift_around(const MachineDrift& drift, const std::string& probe_id);

// The run header's line, after "Machine drift during the run: ": "compute varied 12.0% (median
// 150 GFLOP/s), memory varied 4.0% (median 41 GB/s) between the slowest and the fastest of 22
// checks" (a spread is max / min - 1, not a symmetric interval), or why there were none.
std::string drift_summary(const MachineDrift& drift);

nlohmann::json to_json(const MachineDrift& drift);
// Strict, like the rest of the report reader: throws std::invalid_argument("<field>: <problem>"),
// the field relative to the block ("checks[2].compute_gflops"). The series are derived from the
// checks on reading, never trusted from the file.
MachineDrift machine_drift_from_json(const nlohmann::json& j);

}  // namespace clprobe
