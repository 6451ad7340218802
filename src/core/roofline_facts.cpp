#include "core/roofline_facts.hpp"

#include <cmath>

#include "core/report.hpp"

namespace clprobe {

nlohmann::json to_json(const RooflinePoint& p) {
    nlohmann::json j = {{"label", p.label}, {"intensity", p.intensity}, {"gflops", p.gflops}};
    if (p.working_set_bytes) j["working_set_bytes"] = p.working_set_bytes;
    if (!p.level.empty()) j["level"] = p.level;
    if (p.roof_gb_per_s) j["roof_gb_per_s"] = *p.roof_gb_per_s;
    return j;
}

namespace {

std::optional<double> finite_number(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number()) return std::nullopt;
    const double v = it->get<double>();
    if (!std::isfinite(v)) return std::nullopt;
    return v;
}

}  // namespace

std::optional<RooflinePoint> roofline_point_from_json(const nlohmann::json& j) {
    if (!j.is_object()) return std::nullopt;
    const auto intensity = finite_number(j, "intensity");
    const auto gflops = finite_number(j, "gflops");
    if (!intensity || !gflops || *intensity <= 0 || *gflops < 0) return std::nullopt;
    RooflinePoint p;
    const auto label = j.find("label");
    p.label = label != j.end() && label->is_string() ? label->get<std::string>() : std::string();
    p.intensity = *intensity;
    p.gflops = *gflops;
    if (const auto ws = finite_number(j, "working_set_bytes"); ws && *ws >= 0)
        p.working_set_bytes = static_cast<std::uint64_t>(*ws);
    const auto level = j.find("level");
    if (level != j.end() && level->is_string()) p.level = level->get<std::string>();
    if (const auto roof = finite_number(j, "roof_gb_per_s"); roof && *roof > 0) p.roof_gb_per_s = roof;
    return p;
}

void add_roofline_point(ProbeResult& out, const RooflinePoint& point) {
    auto& points = out.attributes[roofline_points_key];
    if (!points.is_array()) points = nlohmann::json::array();
    points.push_back(to_json(point));
}

std::vector<RooflinePoint> roofline_points_of(const ProbeResult& result) {
    std::vector<RooflinePoint> out;
    if (!result.attributes.is_object()) return out;
    const auto it = result.attributes.find(roofline_points_key);
    if (it == result.attributes.end() || !it->is_array()) return out;
    for (const auto& j : *it)
        if (auto p = roofline_point_from_json(j)) out.push_back(std::move(*p));
    return out;
}

}  // namespace clprobe
