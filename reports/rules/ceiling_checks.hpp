#pragma once
// Whether a report's ceilings are consistent with what the same hardware achieved in the same
// run. A ceiling (kernel.peak.*) is the denominator of every roofline fraction and "x% of peak"
// statement; one that sits below a rate some other code reached on the same cores or device was
// not measured at the hardware's limit, and every fraction of it reads too high. Pure.
//
// Each kind of check returns the same CeilingViolation, so trust notes (reports/rules/trust.cpp)
// and any later consumer treat compute ceilings and, later, bandwidth roofs alike.
#include <optional>
#include <string>
#include <vector>

#include "core/report.hpp"

namespace clprobe {

enum class CeilingKind { compute, bandwidth };

// Where the rate above the ceiling was achieved.
enum class AchievedOn {
    device,     // a kernel on the device the ceiling belongs to
    host_cores  // host code (OpenBLAS) on the cores a CPU device runs on
};

struct CeilingViolation {
    CeilingKind kind = CeilingKind::compute;
    std::string ceiling_metric;  // kernel.peak.fp32
    double ceiling_value = 0;    // its median
    std::string unit;            // GFLOP/s, shared by both sides
    std::string achieved_metric;
    Labels achieved_labels;
    double achieved_value = 0;  // the median of the highest rate above the ceiling
    AchievedOn achieved_on = AchievedOn::device;
    int other_rates_above = 0;                  // further measurements above the same ceiling, not named
    std::string ceiling_probe, achieved_probe;  // the probes that measured each
    // How much faster the machine's own reference ran around the achieved rate's probe than around
    // the ceiling's (core/drift_facts.hpp: memory for a bandwidth roof, compute for a compute
    // ceiling): above 1 the machine sped up between the two. nullopt without checks around both.
    std::optional<double> machine_speedup;
    // The speed-up accounts for the gap (the ceiling was measured in a slower phase of the machine)
    // rather than the ceiling falling short of the hardware.
    bool explained_by_drift() const;
};

// Every device compute ceiling kernel.peak.<precision> with a rate of the same precision above it
// by more than the two measurements' noise: kernel.host_gemm.gflops and workload GFLOP/s points
// (a measurement's `precision` label; fp32 when it has none). Host-side rates count only on a CPU
// device, where they ran on the device's own cores. One violation per ceiling: its highest rate.
std::vector<CeilingViolation> compute_ceiling_violations(const RunReport& report);

// Every workload roofline point (core/roofline_facts.hpp) whose bandwidth exceeds the roof of the
// memory level it was placed against by more than 5%: one violation per roof, naming its highest
// point (achieved_labels: working_set), other_rates_above counting the rest.
std::vector<CeilingViolation> bandwidth_roof_violations(const RunReport& report);

// Every kind of check above, in a fixed order (compute first).
std::vector<CeilingViolation> ceiling_violations(const RunReport& report);

// The trust note for one violation: "kernel.peak.fp32 (243 GFLOP/s) is below
// kernel.host_gemm.gflops{precision=fp32} (380 GFLOP/s) measured on the same cores: ...", with the
// drift checks' verdict when the run has them: the machine sped up between the two probes, or it
// did not and the ceiling itself falls short.
std::string describe(const CeilingViolation& violation);

}  // namespace clprobe
