#include "trace/app_measurements.hpp"

#include <fmt/core.h>

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

}  // namespace

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
