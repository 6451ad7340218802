#include "common/roof_placement.hpp"

#include <fmt/core.h>

namespace clprobe {

std::optional<PlacedRoof> bandwidth_roof_for(const std::vector<ProbeResult>& earlier, std::uint64_t working_set_bytes) {
    return bandwidth_roofs_of(earlier).for_working_set(working_set_bytes);
}

Measurement fraction_of_roof(std::string metric, Labels labels, const Measurement& rate, const PlacedRoof& roof) {
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
                           const std::optional<PlacedRoof>& roof) {
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
