#include "runtime/run_options_json.hpp"

#include <stdexcept>

namespace clprobe {

namespace {

RunMode mode_from(const std::string& name) {
    for (const RunMode m : {RunMode::quick, RunMode::standard, RunMode::full})
        if (to_string(m) == name) return m;
    throw std::invalid_argument("mode: unknown '" + name + "'");
}

}  // namespace

nlohmann::json run_options_to_json(const RunOptions& o) {
    return {{"mode", to_string(o.mode)},
            {"layers", o.layers},
            {"workloads", o.workloads},
            {"use_cache", o.use_cache},
            {"topology_xml", o.topology_xml},
            {"device_pci", o.device_pci},
            {"probe_timeout", o.probe_timeout},
            {"glm", {{"rows", o.glm.rows}, {"cols", o.glm.cols}, {"density", o.glm.density}, {"batch", o.glm.batch}}},
            {"attention",
             {{"batch", o.attention.batch},
              {"heads", o.attention.heads},
              {"seq", o.attention.seq},
              {"head_dim", o.attention.head_dim},
              {"kv_len", o.attention.kv_len},
              {"causal", o.attention.causal}}},
            {"transfer", {{"min_bytes", o.transfer.min_bytes}, {"max_bytes", o.transfer.max_bytes}}}};
}

RunOptions run_options_from_json(const nlohmann::json& j) {
    try {
        RunOptions o;
        o.mode = mode_from(j.at("mode").get<std::string>());
        o.layers = j.at("layers").get<std::vector<std::string>>();
        o.workloads = j.at("workloads").get<std::vector<std::string>>();
        o.use_cache = j.at("use_cache").get<bool>();
        o.topology_xml = j.at("topology_xml").get<std::string>();
        o.device_pci = j.at("device_pci").get<std::string>();
        o.probe_timeout = j.at("probe_timeout").get<double>();
        const auto& g = j.at("glm");
        o.glm = {g.at("rows").get<std::uint64_t>(), g.at("cols").get<std::uint64_t>(), g.at("density").get<double>(),
                 g.at("batch").get<std::uint64_t>()};
        const auto& a = j.at("attention");
        o.attention = {a.at("batch").get<std::uint32_t>(),  a.at("heads").get<std::uint32_t>(),
                       a.at("seq").get<std::uint32_t>(),    a.at("head_dim").get<std::uint32_t>(),
                       a.at("kv_len").get<std::uint32_t>(), a.at("causal").get<bool>()};
        const auto& t = j.at("transfer");
        o.transfer = {t.at("min_bytes").get<std::uint64_t>(), t.at("max_bytes").get<std::uint64_t>()};
        return o;
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(std::string("run options: ") + e.what());
    }
}

}  // namespace clprobe
