#include "common/roof_placement.hpp"

#include <fmt/core.h>

#include "common/probe_support.hpp"

namespace clprobe {

std::optional<PlacedRoof> bandwidth_roof_for(const std::vector<ProbeResult>& earlier, std::uint64_t working_set_bytes) {
    return bandwidth_roofs_of(earlier).for_working_set(working_set_bytes);
}

Measurement fraction_of_roof(std::string metric, Labels labels, const Measurement& rate, const PlacedRoof& roof) {
    Measurement m = fraction_of_peak(std::move(metric), std::move(labels), rate, roof.gb_per_s);
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
