#pragma once
// A counted kernel against every roof its work meets (docs/trace.md, "Which roof binds"): for each
// kind of work it does — floating-point operations of each precision, integer operations, bytes of
// memory — the time that work takes at this device's measured roof for it, and the binding roof:
// the one whose time is longest, since the launch cannot be shorter than any of them. Each roof is
// taken alone: work on different units may overlap, so no sum of them is claimed as a bound. Pure
// (no OpenCL): the trace's measurements and rules use it, and so does a saved report.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/kernel_work_facts.hpp"
#include "core/memory_roofs.hpp"

namespace clprobe {

struct ProbeResult;

// The compute ceilings of this run, in operations per second (kernel.peak.* headlines).
struct ComputeRoofs {
    std::optional<double> fp16, fp32, fp64, int32;
};
ComputeRoofs compute_roofs_of(const std::vector<ProbeResult>& results);

enum class RoofKind { fp16, fp32, fp64, int32, memory, cache };
std::string_view to_string(RoofKind kind);
bool is_compute(RoofKind kind);

// One kind of work of one launch against its roof.
struct RoofPart {
    RoofKind kind = RoofKind::fp32;
    std::string metric;  // the roof's measurement: kernel.peak.fp32, kernel.peak.bandwidth, kernel.roof.bandwidth...
    std::string basis;   // what the amount is ("distinct bytes it touched", "bytes it loaded and stored")
    double amount = 0;   // operations or bytes per launch
    double roof = 0;     // operations or bytes per second
    double seconds_at_roof = 0;  // amount / roof
    double achieved = 0;         // amount / the launch's time
    double fraction = 0;         // achieved / roof
    // The roof as measured; above `roof` never, below it when the launch beat it and the roof was
    // raised to the launch's own rate (place_kernel).
    double measured_roof = 0;
    bool raised() const { return roof > measured_roof; }
};

struct KernelPlacement {
    double launch_seconds = 0;          // the like-for-like traced launch time the work is set against
    std::vector<RoofPart> parts;        // work with a roof, in RoofKind order
    std::vector<std::string> unroofed;  // work without a measured roof ("fp64: no kernel.peak.fp64 in this run")
    std::size_t binding = 0;            // index into parts: the longest seconds_at_roof
    const RoofPart& bound() const { return parts[binding]; }
    // The launch at its binding roof: the share of its time the roof accounts for (<= 1 for any
    // kernel a roof really bounds; above 1.05 the count or the roof is wrong).
    double binding_fraction() const { return parts.empty() ? 0 : bound().fraction; }
};

// A counted launch faster than a roof by up to this factor raises the roof to its own rate (the
// roof was measured while the machine was busy; this VM's compute flips 2x); beyond it, the count
// and the time are of different work and that part is not placed.
inline constexpr double max_roof_excess = 3;

// The work of `w` (counted, with a launch time) against these roofs. `argument_bytes` is the
// summed size of the buffers bound to one launch (an upper bound on its distinct footprint when
// its count was sampled); `memory` places a footprint of a given size at its level's roof; the
// fastest measured level (the first level roof) bounds the rate at which loads and stores are
// served however often they hit. nullopt when nothing of it has a roof.
std::optional<KernelPlacement> place_kernel(const KernelWorkFacts& w, const ComputeRoofs& compute,
                                            const BandwidthRoofs& memory, double argument_bytes);

}  // namespace clprobe
