#include "core/kernel_roofs.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "core/report.hpp"

namespace clprobe {

namespace {

// "GFLOP/s" -> 1e9: the ceilings' units, read rather than assumed.
double per_second_scale(const std::string& unit) {
    if (unit.empty()) return 1;
    switch (unit.front()) {
        case 'T':
            return 1e12;
        case 'G':
            return 1e9;
        case 'M':
            return 1e6;
        case 'k':
            return 1e3;
        default:
            return 1;
    }
}

std::optional<double> peak(const std::vector<ProbeResult>& results, std::string_view metric) {
    for (const auto& r : results) {
        if (r.status != ProbeStatus::ok) continue;
        // The fastest sample: every sample is a rate the device reached, so the roof is at least the
        // best of them; a median taken while the machine was busy would put kernels above their roof.
        if (const auto* m = find_measurement(r, std::string(metric)); m && m->summary.median > 0)
            return std::max(m->summary.max, m->summary.median) * per_second_scale(m->unit);
    }
    return std::nullopt;
}

RoofPart part(RoofKind kind, std::string metric, std::string basis, double amount, double roof, double seconds) {
    RoofPart p;
    p.kind = kind;
    p.metric = std::move(metric);
    p.basis = std::move(basis);
    p.amount = amount;
    p.roof = roof;
    p.measured_roof = roof;
    p.seconds_at_roof = amount / roof;
    p.achieved = amount / seconds;
    p.fraction = p.achieved / roof;
    return p;
}

}  // namespace

ComputeRoofs compute_roofs_of(const std::vector<ProbeResult>& results) {
    return {peak(results, "kernel.peak.fp16"), peak(results, "kernel.peak.fp32"), peak(results, "kernel.peak.fp64"),
            peak(results, "kernel.peak.int32")};
}

std::string_view to_string(RoofKind kind) {
    constexpr std::string_view names[] = {"fp16", "fp32", "fp64", "int32", "memory", "cache"};  // RoofKind's order
    return names[static_cast<std::size_t>(kind)];
}

bool is_compute(RoofKind kind) {
    return kind != RoofKind::memory && kind != RoofKind::cache;
}

std::optional<KernelPlacement> place_kernel(const KernelWorkFacts& w, const ComputeRoofs& compute,
                                            const BandwidthRoofs& memory, double argument_bytes) {
    if (!w.counted || w.launch_seconds <= 0) return std::nullopt;
    KernelPlacement p;
    p.launch_seconds = w.launch_seconds;
    const double t = w.launch_seconds;
    const struct {
        RoofKind kind;
        double amount;
        const std::optional<double>& roof;
        const char* metric;
    } ops[] = {{RoofKind::fp16, w.flops_fp16, compute.fp16, "kernel.peak.fp16"},
               {RoofKind::fp32, w.flops_fp32, compute.fp32, "kernel.peak.fp32"},
               {RoofKind::fp64, w.flops_fp64, compute.fp64, "kernel.peak.fp64"},
               {RoofKind::int32, w.int_ops, compute.int32, "kernel.peak.int32"}};
    for (const auto& o : ops) {
        if (o.amount <= 0) continue;
        if (!o.roof) {
            p.unroofed.push_back(fmt::format("{}: no {} in this run", to_string(o.kind), o.metric));
            continue;
        }
        p.parts.push_back(part(o.kind, o.metric,
                               o.kind == RoofKind::int32 ? "integer operations on data per launch"
                                                         : "floating-point operations per launch (an FMA is 2)",
                               o.amount, *o.roof, t));
    }
    // The footprint has to come from the level it lives in at least once per launch.
    double footprint = w.footprint_bytes;
    if (argument_bytes > 0 && (footprint <= 0 || footprint > argument_bytes)) footprint = argument_bytes;
    footprint = std::min(footprint, w.global_bytes());
    if (footprint > 0) {
        if (const auto placed = memory.for_working_set(static_cast<std::uint64_t>(footprint));
            placed && placed->gb_per_s > 0)
            p.parts.push_back(part(RoofKind::memory, placed->metric,
                                   fmt::format("distinct bytes it touches, from the {} level", placed->level),
                                   footprint, placed->gb_per_s * 1e9, t));
        else
            p.unroofed.push_back("memory: no bandwidth roof in this run");
    }
    // Every load and store is served at best at the fastest level's rate, however often it hits.
    if (w.global_bytes() > 0) {
        if (memory.levels && !memory.levels->roofs.empty() && memory.levels->roofs.front().gb_per_s > 0) {
            const MemoryRoof& fastest = memory.levels->roofs.front();
            p.parts.push_back(part(RoofKind::cache, fmt::format("kernel.roof.bandwidth{{level={}}}", fastest.level),
                                   fmt::format("bytes it loads and stores, at the {} rate", fastest.level),
                                   w.global_bytes(), fastest.gb_per_s * 1e9, t));
        } else {
            p.unroofed.push_back(
                "loads and stores: no cache roof in this run (kernel.memory_levels: give --baseline a diagnose "
                "report)");
        }
    }
    // A launch faster than a roof shows the roof's measurement fell short of the device (a ceiling
    // measured while the machine was busy: Intel's copy_f4 read 1.21 of a memory roof measured
    // beside a parallel test). The rate the launch reached is one the device did reach: the roof is
    // raised to it, said so, and no fraction above 1 is reported.
    // Far beyond that (OpenMM's findBlocksWithInteractions on Intel: 20x the fp32 peak, its first
    // launch counted, which builds the neighbour list the 607 later ones skip), the counted launch
    // did other work than the timed ones: that part is not placed, and says why.
    std::erase_if(p.parts, [&](const RoofPart& part) {
        if (part.fraction <= max_roof_excess) return false;
        p.unroofed.push_back(fmt::format(
            "{}: the counted launch's rate is {:.3g}x {}: it did other work than the traced launches it is timed by",
            to_string(part.kind), part.fraction, part.metric));
        return true;
    });
    for (auto& part : p.parts)
        if (part.fraction > 1) {
            part.basis +=
                fmt::format("; roof raised to this launch's own rate: it beat the measured {:.3g}/s", part.roof);
            part.roof = part.achieved;
            part.seconds_at_roof = t;
            part.fraction = 1;
        }
    if (p.parts.empty()) return std::nullopt;
    const auto longest = std::max_element(p.parts.begin(), p.parts.end(), [](const RoofPart& a, const RoofPart& b) {
        return a.seconds_at_roof < b.seconds_at_roof;
    });
    p.binding = static_cast<std::size_t>(longest - p.parts.begin());
    return p;
}

}  // namespace clprobe
