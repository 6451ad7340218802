#include "core/capture_facts.hpp"

namespace clprobe {

using nlohmann::json;

double CaptureFacts::timeline_fraction() const {
    const std::uint64_t all = timeline_commands + aggregated_commands;
    return all ? static_cast<double>(timeline_commands) / static_cast<double>(all) : 1.0;
}

json to_json(const CaptureFacts& c) {
    json windows = json::array();
    for (const auto& w : c.windows)
        windows.push_back({{"begin_seconds", w.begin_seconds},
                           {"end_seconds", w.end_seconds},
                           {"opencl_commands", w.opencl_commands}});
    json j = {{"mode", c.mode}, {"windows", windows}, {"limited", c.limited}};
    if (c.limited) {
        j["max_bytes"] = c.max_bytes;
        j["records_bytes"] = c.records_bytes;
        j["timeline_commands"] = c.timeline_commands;
        j["aggregated_commands"] = c.aggregated_commands;
        j["timeline_fraction"] = c.timeline_fraction();
        j["max_period"] = c.max_period;
        j["dropped_writes"] = c.dropped_writes;
        j["sampled_since_seconds"] = c.sampled_since_seconds ? json(*c.sampled_since_seconds) : json(nullptr);
    }
    return j;
}

CaptureFacts capture_facts_from_json(const json& j) {
    CaptureFacts c;
    c.mode = j.value("mode", "all");
    for (const auto& w : j.value("windows", json::array()))
        c.windows.push_back(
            {w.value("begin_seconds", 0.0), w.value("end_seconds", 0.0), w.value("opencl_commands", std::uint64_t{0})});
    c.limited = j.value("limited", false);
    c.max_bytes = j.value("max_bytes", 0.0);
    c.records_bytes = j.value("records_bytes", 0.0);
    c.timeline_commands = j.value("timeline_commands", std::uint64_t{0});
    c.aggregated_commands = j.value("aggregated_commands", std::uint64_t{0});
    c.max_period = j.value("max_period", std::uint64_t{1});
    c.dropped_writes = j.value("dropped_writes", std::uint64_t{0});
    if (j.contains("sampled_since_seconds") && j["sampled_since_seconds"].is_number())
        c.sampled_since_seconds = j["sampled_since_seconds"].get<double>();
    return c;
}

}  // namespace clprobe
