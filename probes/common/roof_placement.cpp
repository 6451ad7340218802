#include "common/roof_placement.hpp"

#include <fmt/core.h>

#include "core/memory_roofs.hpp"

namespace clprobe {

std::optional<WorkloadRoof> bandwidth_roof_for(const std::vector<ProbeResult>& earlier,
                                               std::uint64_t working_set_bytes) {
    const BandwidthRoofs roofs = bandwidth_roofs_of(earlier);
    const auto placed = roofs.for_working_set(working_set_bytes);
    if (!placed) return std::nullopt;
    return WorkloadRoof{placed->level, placed->gb_per_s, roofs.metric_of(*placed)};
}

Measurement fraction_of_roof(std::string metric, Labels labels, const Measurement& rate, const WorkloadRoof& roof) {
    std::vector<double> fractions;
    fractions.reserve(rate.samples.size());
    for (double s : rate.samples)
        fractions.push_back(s / roof.gb_per_s);
    Measurement m = make_measurement(std::move(metric), "fraction", std::move(labels), fractions, rate.timer);
    m.iterations_per_sample = rate.iterations_per_sample;
    m.note = fmt::format("effective bandwidth / the {} roof ({}, {:.4g} GB/s) of this run", roof.level, roof.metric,
                         roof.gb_per_s);
    return m;
}

RooflinePoint placed_point(std::string label, double intensity, double gflops, std::uint64_t working_set_bytes,
                           const std::optional<WorkloadRoof>& roof) {
    RooflinePoint p;
    p.label = std::move(label);
    p.intensity = intensity;
    p.gflops = gflops;
    p.working_set_bytes = working_set_bytes;
    if (roof) {
        p.level = roof->level;
        p.roof_gb_per_s = roof->gb_per_s;
    }
    return p;
}

}  // namespace clprobe
