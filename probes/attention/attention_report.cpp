#include "attention/attention_report.hpp"

namespace clprobe::attention {

std::optional<double> earlier_median(const ProbeContext& ctx, const std::string& metric) {
    for (const auto& r : ctx.earlier)
        if (r.status == ProbeStatus::ok)
            if (const auto* m = find_measurement(r, metric); m && m->summary.median > 0) return m->summary.median;
    return std::nullopt;
}

Measurement derived(std::string metric, std::string unit, Labels labels, double value, bool higher_is_better) {
    return make_measurement(std::move(metric), std::move(unit), std::move(labels), {value}, TimerKind::none,
                            higher_is_better);
}

std::optional<MemoryLimits> memory_limits(const DeviceInfo& info) {
    if (!info.global_mem_bytes || !info.max_alloc_bytes) return std::nullopt;
    return MemoryLimits{info.global_mem_bytes, info.max_alloc_bytes};
}

void add_footprint(ProbeResult& out, const Labels& labels, const Footprint& f) {
    out.measurements.push_back(
        derived("attention.memory.device_bytes", "bytes", labels, static_cast<double>(f.total), false));
    out.measurements.push_back(
        derived("attention.memory.largest_buffer", "bytes", labels, static_cast<double>(f.largest), false));
}

Measurement time_measurement(std::string metric, Labels labels, const SampleSet& set) {
    Measurement m = make_measurement(std::move(metric), "s", std::move(labels), to_times(set, 1.0), set.timer, false);
    m.iterations_per_sample = set.iterations;
    return m;
}

}  // namespace clprobe::attention
