#pragma once
// The bandwidth roof a workload variant is held against: the roof of the memory level its working
// set lives in (kernel.memory_levels, core/memory_roofs.hpp), else kernel.peak.bandwidth, the
// memory roof. A cache-resident working set measured against the memory roof would read above
// 100%; against its own level's roof it reads what it leaves on the table.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/memory_roofs.hpp"
#include "core/report.hpp"
#include "core/roofline_facts.hpp"

namespace clprobe {

// nullopt when this run measured neither the levels nor kernel.peak.bandwidth.
std::optional<PlacedRoof> bandwidth_roof_for(const std::vector<ProbeResult>& earlier, std::uint64_t working_set_bytes);

// Each rate sample (GB/s) as a fraction of the roof: the roofline fraction, with a note naming
// the roof.
Measurement fraction_of_roof(std::string metric, Labels labels, const Measurement& rate, const PlacedRoof& roof);

// A roofline point placed against its level's roof (level and roof left empty without one).
RooflinePoint placed_point(std::string label, double intensity, double gflops, std::uint64_t working_set_bytes,
                           const std::optional<PlacedRoof>& roof);

}  // namespace clprobe
