#include "trace/app_measurements.hpp"

#include <fmt/core.h>

#include "core/kernel_roofs.hpp"
#include "trace/trace_analysis.hpp"

namespace clprobe {

std::vector<double> strided(const std::vector<double>& samples, std::size_t limit) {
    if (samples.size() <= limit || limit == 0) return samples;
    std::vector<double> out;
    out.reserve(limit);
    for (std::size_t i = 0; i < limit; ++i)
        out.push_back(samples[i * samples.size() / limit]);
    return out;
}

namespace {

constexpr const char* bytes_estimate_note =
    "estimate: the summed sizes of the buffers bound as arguments, over the kernel's device time";

Measurement single(std::string metric, std::string unit, Labels labels, double value, TimerKind timer,
                   bool higher_is_better) {
    return make_measurement(std::move(metric), std::move(unit), std::move(labels), {value}, timer, higher_is_better);
}

void add_kernels(const TraceFacts& f, const std::vector<std::vector<double>>& launch_seconds,
                 const BandwidthRoofs& roofs, std::vector<Measurement>& out) {
    for (std::size_t k = 0; k < f.kernels.size() && k < launch_seconds.size(); ++k) {
        const KernelFacts& kernel = f.kernels[k];
        if (kernel.launches == 0) continue;
        const Labels labels{{"kernel", kernel.name}};
        out.push_back(single("app.kernel.launches", "count", labels, static_cast<double>(kernel.launches),
                             TimerKind::none, false));
        if (launch_seconds[k].empty()) continue;
        std::vector<double> us;
        for (double s : strided(launch_seconds[k], max_samples_per_measurement))
            us.push_back(s * 1e6);
        Measurement per_launch =
            make_measurement("app.kernel.time", "us", labels, std::move(us), TimerKind::device_profiling, false);
        if (launch_seconds[k].size() > max_samples_per_measurement)
            per_launch.note = "every launch's device time; samples evenly strided over the launches";
        out.push_back(std::move(per_launch));
        out.push_back(single("app.kernel.total_time", "s", labels, kernel.seconds, TimerKind::device_profiling, false));
        if (kernel.bytes <= 0 || kernel.seconds <= 0) continue;
        const double gbs = kernel.bytes / kernel.seconds * 1e-9;
        Measurement bw = single("app.kernel.bandwidth", "GB/s", labels, gbs, TimerKind::device_profiling, true);
        bw.note = bytes_estimate_note;
        out.push_back(std::move(bw));
        // One launch's buffers: the working set that decides the memory level.
        const auto working_set = static_cast<std::uint64_t>(kernel.bytes / static_cast<double>(kernel.launches));
        const auto placed = roofs.for_working_set(working_set);
        if (!placed || placed->gb_per_s <= 0) continue;
        // Past the roof the estimate is no bandwidth at all (the kernel cannot have moved those bytes):
        // it is shown as what it is, and no fraction of a roof is made of it.
        if (gbs > impossible_fraction * placed->gb_per_s) {
            out.back().note =
                fmt::format("{}; above the {} roof ({:.3g} GB/s), so the kernel did not move them all: not a bandwidth",
                            bytes_estimate_note, placed->level, placed->gb_per_s);
            continue;
        }
        Measurement roof = single("app.kernel.roofline_fraction", "fraction", labels, gbs / placed->gb_per_s,
                                  TimerKind::device_profiling, true);
        roof.note = fmt::format("app.kernel.bandwidth over the {} roof ({}): its buffers hold {} bytes", placed->level,
                                placed->metric, working_set);
        out.push_back(std::move(roof));
    }
}

void add_transfers(const TraceFacts& f, const std::vector<std::vector<double>>& rates, std::vector<Measurement>& out) {
    for (std::size_t t = 0; t < f.transfers.size(); ++t) {
        const TransferFacts& x = f.transfers[t];
        const Labels labels{{"direction", x.direction}, {"path", x.path}};
        out.push_back(
            single("app.transfer.count", "count", labels, static_cast<double>(x.count), TimerKind::none, false));
        out.push_back(single("app.transfer.bytes", "bytes", labels, x.bytes, TimerKind::none, false));
        out.push_back(single("app.transfer.time", "s", labels, x.seconds, TimerKind::device_profiling, false));
        if (t < rates.size() && !rates[t].empty())
            out.push_back(make_measurement("app.transfer.bandwidth", "GB/s", labels,
                                           strided(rates[t], max_samples_per_measurement), TimerKind::device_profiling,
                                           true));
    }
}

// The roofs a report keeps for a counted kernel: the binding one, and the nearest of the other side
// (compute against memory): the two the kernel table and `compare` need, each the longest time at
// its roof on its side. The kernel table prints every roof from the facts.
std::vector<std::size_t> kept_roofs(const KernelPlacement& p) {
    std::vector<std::size_t> kept{p.binding};
    const bool compute = is_compute(p.bound().kind);
    std::optional<std::size_t> other;
    for (std::size_t i = 0; i < p.parts.size(); ++i)
        if (is_compute(p.parts[i].kind) != compute &&
            (!other || p.parts[i].seconds_at_roof > p.parts[*other].seconds_at_roof))
            other = i;
    if (other) kept.push_back(*other);
    return kept;
}

void add_placement(const KernelWorkFacts& w, const KernelPlacement& p, const Labels& labels,
                   std::vector<Measurement>& out) {
    for (const std::size_t i : kept_roofs(p)) {
        const RoofPart& part = p.parts[i];
        Labels l = labels;
        l["roof"] = std::string(to_string(part.kind));
        Measurement m =
            single("app.kernel.roof_fraction", "fraction", l, part.fraction, TimerKind::device_profiling, true);
        m.note = fmt::format(
            "{}{}: {:.4g} per launch over {:.4g} s (the median of {} traced launches of {} "
            "work-items, {:.0f}% of its device time), against {} {:.4g}/s{}",
            w.upper_bound ? "an upper bound (counted from an unoptimised build), " : "", part.basis, part.amount,
            p.launch_seconds, w.like_launches, w.global_items, 100 * w.like_share, part.metric, part.roof,
            i == p.binding ? "; the binding roof" : "");
        out.push_back(std::move(m));
        // How far the launch beat the roof as measured: the roof's shortfall (or a count too high).
        if (part.raised())
            out.push_back(single("app.kernel.roof_excess", "x", l, part.achieved / part.measured_roof,
                                 TimerKind::device_profiling, true));
    }
}

}  // namespace

void add_work_measurements(const TraceFacts& f, const BandwidthRoofs& roofs, const ComputeRoofs& compute,
                           std::vector<Measurement>& out) {
    for (const auto& w : f.work) {
        if (!w.counted) continue;
        const Labels labels{{"kernel", w.kernel}};
        const std::string how = w.method == "exact" ? "counted under Oclgrind, every work-group"
                                                    : fmt::format(
                                                          "counted under Oclgrind on {} of {} work-groups, "
                                                          "extrapolated",
                                                          w.groups_counted, w.groups_total);
        // How it was counted, once per kernel (on its first work measurement): the report stays small.
        bool noted = false;
        const auto add = [&](const char* metric, const char* unit, Labels l, double value) {
            Measurement m = single(metric, unit, std::move(l), value, TimerKind::none, false);
            if (!noted) m.note = how;
            noted = true;
            out.push_back(std::move(m));
        };
        for (const auto& [precision, flops] :
             {std::pair{"fp16", w.flops_fp16}, std::pair{"fp32", w.flops_fp32}, std::pair{"fp64", w.flops_fp64}})
            if (flops > 0) {
                Labels l = labels;
                l["precision"] = precision;
                add("app.kernel.flops", "FLOP", l, flops);
            }
        if (w.int_ops > 0 || w.flops() <= 0) add("app.kernel.int_ops", "op", labels, w.int_ops);
        for (const auto& [direction, bytes] :
             {std::pair{"load", w.global_load_bytes}, std::pair{"store", w.global_store_bytes}}) {
            Labels l = labels;
            l["direction"] = direction;
            add("app.kernel.bytes", "bytes", l, bytes);
        }
        if (w.global_bytes() > 0) {
            Labels fp = labels, integer = labels;
            fp["kind"] = "fp";
            integer["kind"] = "int";
            if (w.flops() > 0) add("app.kernel.intensity", "FLOP/byte", fp, w.flops() / w.global_bytes());
            if (w.int_ops > 0) add("app.kernel.intensity", "op/byte", integer, w.int_ops / w.global_bytes());
        }
        const KernelFacts* k = nullptr;
        for (const auto& kernel : f.kernels)
            if (kernel.name == w.kernel) k = &kernel;
        const double argument_bytes = k && k->launches ? k->bytes / static_cast<double>(k->launches) : 0;
        if (const auto placement = place_kernel(w, compute, roofs, argument_bytes))
            add_placement(w, *placement, labels, out);
    }
    // A counted kernel's place on the roofs replaces the estimate from its argument sizes.
    std::erase_if(out, [&](const Measurement& m) {
        if (m.metric != "app.kernel.roofline_fraction") return false;
        const auto it = m.labels.find("kernel");
        const KernelWorkFacts* w = it == m.labels.end() ? nullptr : find_work(f.work, it->second);
        return w && w->counted;
    });
}

std::vector<Measurement> app_measurements(const TraceFacts& f, const std::vector<std::vector<double>>& launch_seconds,
                                          const std::vector<std::vector<double>>& rates, const BandwidthRoofs& roofs) {
    std::vector<Measurement> out;
    const double wall = f.run.wall_seconds;
    out.push_back(single("app.wall_time", "s", {}, wall, TimerKind::host_steady_clock, false));
    if (wall > 0)
        out.push_back(single("app.device.busy_fraction", "fraction", {}, f.device_busy_seconds() / wall,
                             TimerKind::device_profiling, true));
    for (const auto& s : f.stages)
        out.push_back(single(std::string(app_pipeline_id) + ".stage_time", "s",
                             {{"stage", std::string(to_string(s.stage))}}, s.seconds, TimerKind::host_steady_clock,
                             false));
    add_kernels(f, launch_seconds, roofs, out);
    add_transfers(f, rates, out);
    out.push_back(single("app.host_wait.time", "s", {}, f.sync.wait_seconds, TimerKind::host_steady_clock, false));
    out.push_back(single("app.build.time", "s", {}, f.builds.seconds, TimerKind::host_steady_clock, false));
    out.push_back(single("app.memory.peak", "bytes", {}, f.memory.peak_bytes, TimerKind::none, false));
    return out;
}

}  // namespace clprobe
