#include "fleet/node_environment.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <set>

#include "core/pcie_link.hpp"
#include "core/system_facts.hpp"
#include "core/topology_facts.hpp"

namespace clprobe {

namespace {

std::string pcie_link_of(const RunReport& r) {
    const auto facts = device_locality_of(r);
    if (!facts || !facts->pci || facts->pci->link.source.empty()) return "";
    const PcieLinkReading& now = facts->pci->link.current;
    return describe_link(now.gt_per_s, now.width);
}

std::string numa_binding_of(const RunReport& r) {
    const auto facts = device_locality_of(r);
    if (!facts) return "";
    const ProcessBindingFacts& b = facts->binding;
    std::string out = b.relation;
    if (!b.numa_nodes.empty()) out += ", NUMA " + index_list(b.numa_nodes);
    if (!b.memory_policy.empty() && b.memory_policy != "default") out += ", memory " + b.memory_policy;
    return out;
}

std::string governor_of(const RunReport& r) {
    const auto host = host_facts_of(r);
    if (!host) return "";
    const std::set<std::string> names(host->frequency.governors.begin(), host->frequency.governors.end());
    std::string out;
    for (const auto& n : names)
        out += (out.empty() ? "" : ",") + n;
    return out;
}

// A limit's amount when one is set, else the word the limits probe wrote ("none", "unknown");
// "" when a damaged limit has no amount.
template <typename T>
std::string limit_text(const CgroupLimit<T>& limit, double amount, const char* unit) {
    if (!limit.value) return limit.word;
    return amount > 0 ? fmt::format("{:.3g} {}", amount, unit) : std::string();
}

std::string cpu_quota_of(const std::optional<LimitsFacts>& limits) {
    if (!limits) return "";
    const auto& q = limits->cpu_quota;
    return limit_text(q, q.value ? q.value->cpus : 0, "CPUs");
}

std::string memory_limit_of(const std::optional<LimitsFacts>& limits) {
    if (!limits) return "";
    const auto& m = limits->memory_limit;
    return limit_text(m, m.value ? static_cast<double>(m.value->bytes) / (1024.0 * 1024 * 1024) : 0, "GiB");
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
    const auto limits = limits_facts_of(r);
    e.cpu_quota = cpu_quota_of(limits);
    e.memory_limit = memory_limit_of(limits);
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
