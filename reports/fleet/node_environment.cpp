#include "fleet/node_environment.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <set>

#include "core/pcie_link.hpp"
#include "core/topology_facts.hpp"

namespace clprobe {

namespace {

const nlohmann::json* attribute(const RunReport& r, std::string_view probe, const char* key) {
    const ProbeResult* p = find_result(r, probe);
    if (p == nullptr || !p->attributes.is_object() || !p->attributes.contains(key)) return nullptr;
    return &p->attributes.at(key);
}

std::string pcie_link_of(const RunReport& r) {
    const nlohmann::json* locality = attribute(r, "topology.device", "locality");
    if (locality == nullptr) return "";
    const auto facts = device_locality_from_json(*locality);
    if (!facts || !facts->pci || facts->pci->link.source.empty()) return "";
    const PcieLinkReading& now = facts->pci->link.current;
    return describe_link(now.gt_per_s, now.width);
}

std::string numa_binding_of(const RunReport& r) {
    const nlohmann::json* locality = attribute(r, "topology.device", "locality");
    if (locality == nullptr) return "";
    const auto facts = device_locality_from_json(*locality);
    if (!facts) return "";
    const ProcessBindingFacts& b = facts->binding;
    std::string out = b.relation;
    if (!b.numa_nodes.empty()) out += ", NUMA " + index_list(b.numa_nodes);
    if (!b.memory_policy.empty() && b.memory_policy != "default") out += ", memory " + b.memory_policy;
    return out;
}

std::string governor_of(const RunReport& r) {
    const nlohmann::json* freq = attribute(r, "system.host", "frequency");
    if (freq == nullptr || !freq->is_object() || !freq->contains("governors")) return "";
    const auto& g = freq->at("governors");
    if (!g.is_array()) return "";
    std::set<std::string> names;
    for (const auto& item : g)
        if (item.is_string()) names.insert(item.get<std::string>());
    std::string out;
    for (const auto& n : names)
        out += (out.empty() ? "" : ",") + n;
    return out;
}

// The limits probe writes an object when a limit is set and a word ("none", "unknown") otherwise.
std::string limit_of(const RunReport& r, const char* key, const char* field, double scale, const char* unit) {
    const nlohmann::json* v = attribute(r, "system.limits", key);
    if (v == nullptr) return "";
    if (v->is_string()) return v->get<std::string>();
    if (v->is_object() && v->contains(field) && v->at(field).is_number())
        return fmt::format("{:.3g} {}", v->at(field).get<double>() / scale, unit);
    return "";
}

std::string option_text(const RunReport& r, const char* key) {
    if (!r.options.is_object() || !r.options.contains(key)) return "";
    const auto& v = r.options.at(key);
    if (v.is_string()) return v.get<std::string>();
    if (v.is_array()) {
        std::string out;
        for (const auto& item : v)
            out += (out.empty() ? "" : ",") + (item.is_string() ? item.get<std::string>() : item.dump());
        return out;
    }
    return v.dump();
}

}  // namespace

NodeEnvironment node_environment_of(const RunReport& r) {
    NodeEnvironment e;
    e.tool_version = r.tool_version;
    if (r.device) {
        e.device_name = r.device->name;
        e.device_type = r.device->type;
        e.platform = r.device->platform_name + " " + r.device->platform_version;
        e.driver_version = r.device->driver_version;
        e.compute_units = r.device->compute_units;
        e.max_clock_mhz = r.device->max_clock_mhz;
    }
    e.pcie_link = pcie_link_of(r);
    e.numa_binding = numa_binding_of(r);
    e.governor = governor_of(r);
    e.cpu_quota = limit_of(r, "cpu_quota", "cpus", 1, "CPUs");
    e.memory_limit = limit_of(r, "memory_limit", "bytes", 1024.0 * 1024 * 1024, "GiB");
    e.kernel = r.host.kernel;
    e.mode = option_text(r, "mode");
    e.layers = option_text(r, "layers");
    if (r.provenance) e.provenance = *r.provenance;
    return e;
}

std::vector<std::pair<std::string_view, std::string>> environment_fields(const NodeEnvironment& e) {
    return {{"tool_version", e.tool_version},
            {"device.name", e.device_name},
            {"device.type", e.device_type},
            {"device.platform", e.platform},
            {"device.driver_version", e.driver_version},
            {"device.compute_units", e.compute_units ? std::to_string(e.compute_units) : ""},
            {"device.max_clock_mhz", e.max_clock_mhz ? std::to_string(e.max_clock_mhz) : ""},
            {"device.pcie_link", e.pcie_link},
            {"process.numa_binding", e.numa_binding},
            {"host.governor", e.governor},
            {"host.kernel", e.kernel},
            {"cgroup.cpu_quota", e.cpu_quota},
            {"cgroup.memory_limit", e.memory_limit},
            {"options.mode", e.mode},
            {"options.layers", e.layers},
            // clprobe_version is tool_version above; the rest says which build and libraries ran.
            {"provenance.git_commit", e.provenance.git_commit},
            {"provenance.build_type", e.provenance.build_type},
            {"provenance.compiler", e.provenance.compiler},
            {"provenance.hwloc_version", e.provenance.hwloc_version},
            {"provenance.icd_loader", e.provenance.icd_loader},
            {"provenance.openblas", e.provenance.openblas},
            {"provenance.fmt_version", e.provenance.fmt_version},
            {"provenance.cli11_version", e.provenance.cli11_version},
            {"provenance.nlohmann_json_version", e.provenance.nlohmann_json_version}};
}

}  // namespace clprobe
