#pragma once
// A workload variant's point on the roofline, as the workload probes record it (attribute
// "roofline_points" of their result) and the renderers and ceiling checks read it back: its
// arithmetic intensity, the rate it achieved, and the working set that decides which memory
// level's roof bounds it (core/memory_roofs.hpp). Plain data; saved reports read back without the
// machine, and a damaged entry is skipped, never thrown on.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace clprobe {

struct ProbeResult;

struct RooflinePoint {
    std::string label;
    double intensity = 0;                 // FLOP per byte moved
    double gflops = 0;                    // achieved, median
    std::uint64_t working_set_bytes = 0;  // bytes the variant touches per run; 0 = unknown
    // The memory level the working set lives in and that level's roof (GB/s) when the point was
    // placed; "" when this run measured no roofs (then kernel.peak.bandwidth bounds it).
    std::string level;
    std::optional<double> roof_gb_per_s;

    double gb_per_s() const { return intensity > 0 ? gflops / intensity : 0; }
};

inline constexpr const char* roofline_points_key = "roofline_points";

nlohmann::json to_json(const RooflinePoint& p);
// nullopt when the entry lacks a finite label/intensity/gflops (older reports lack the rest).
std::optional<RooflinePoint> roofline_point_from_json(const nlohmann::json& j);

void add_roofline_point(ProbeResult& out, const RooflinePoint& point);
// The readable points of one probe's result, in recording order.
std::vector<RooflinePoint> roofline_points_of(const ProbeResult& result);

}  // namespace clprobe
