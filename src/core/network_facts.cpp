#include "core/network_facts.hpp"

namespace clprobe {

nlohmann::json to_json_value(const NetworkFacts& f) {
    nlohmann::json j = {{"rank", f.rank},
                        {"world_size", f.world_size},
                        {"library_version", f.library_version},
                        {"standard_version", f.standard_version},
                        {"launcher", f.launcher},
                        {"hosts", f.hosts}};
    j["peer"] = f.peer ? nlohmann::json(*f.peer) : nlohmann::json();
    return j;
}

std::optional<NetworkFacts> network_facts_from(const nlohmann::json& j) {
    if (!j.is_object()) return std::nullopt;
    const auto rank = j.find("rank");
    const auto size = j.find("world_size");
    if (rank == j.end() || size == j.end() || !rank->is_number_integer() || !size->is_number_integer())
        return std::nullopt;
    NetworkFacts f;
    f.rank = rank->get<int>();
    f.world_size = size->get<int>();
    const auto text = [&](const char* key) {
        const auto it = j.find(key);
        return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    f.library_version = text("library_version");
    f.standard_version = text("standard_version");
    f.launcher = text("launcher");
    if (const auto peer = j.find("peer"); peer != j.end() && peer->is_number_integer()) f.peer = peer->get<int>();
    if (const auto hosts = j.find("hosts"); hosts != j.end() && hosts->is_array())
        for (const auto& h : *hosts)
            if (h.is_string()) f.hosts.push_back(h.get<std::string>());
    return f;
}

}  // namespace clprobe
