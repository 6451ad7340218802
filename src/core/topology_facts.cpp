#include "core/topology_facts.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "core/report.hpp"

namespace clprobe {

using nlohmann::json;

namespace {

// Unknown parts of a reading are left out, which keeps the report small on machines with many devices.
json reading_to_json(const PcieLinkReading& r) {
    json j = json::object();
    if (r.gt_per_s) j["gt_per_s"] = *r.gt_per_s;
    if (r.width) j["width"] = *r.width;
    if (r.gb_per_s) j["gb_per_s"] = *r.gb_per_s;
    return j;
}

json pci_device_to_json(const PciDeviceFacts& d) {
    return {{"address", d.address},     {"kind", d.kind},     {"class_id", d.class_id},  {"vendor_id", d.vendor_id},
            {"device_id", d.device_id}, {"name", d.name},     {"link", to_json(d.link)}, {"numa_nodes", d.numa_nodes},
            {"cpuset", d.cpuset},       {"parent", d.parent}, {"upstream", d.upstream}};
}

json binding_to_json(const ProcessBindingFacts& b) {
    return {{"relation", b.relation},         {"cpuset", b.cpuset},
            {"numa_nodes", b.numa_nodes},     {"memory_policy", b.memory_policy},
            {"memory_nodes", b.memory_nodes}, {"note", b.note}};
}

// The readers take what is there and default the rest; a value of the wrong type makes the
// whole document unreadable (nlohmann throws type_error, caught by the public readers).
template <typename T>
T get_or(const json& j, const char* key, T fallback) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    return it->get<T>();
}

std::optional<double> optional_number(const json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    return it->get<double>();
}

PcieLinkReading reading_from_json(const json& j) {
    PcieLinkReading r;
    if (!j.is_object()) return r;
    r.gt_per_s = optional_number(j, "gt_per_s");
    if (const auto w = optional_number(j, "width")) r.width = static_cast<int>(*w);
    r.gb_per_s = optional_number(j, "gb_per_s");
    return r;
}

PcieLinkFacts link_from_json(const json& j) {
    PcieLinkFacts l;
    if (!j.is_object()) return l;
    l.current = reading_from_json(j.value("current", json::object()));
    l.max = reading_from_json(j.value("max", json::object()));
    l.source = get_or<std::string>(j, "source", "");
    return l;
}

PciDeviceFacts pci_device_from_json(const json& j) {
    PciDeviceFacts d;
    d.address = get_or<std::string>(j, "address", "");
    d.kind = get_or<std::string>(j, "kind", "");
    d.class_id = get_or<std::string>(j, "class_id", "");
    d.vendor_id = get_or<std::string>(j, "vendor_id", "");
    d.device_id = get_or<std::string>(j, "device_id", "");
    d.name = get_or<std::string>(j, "name", "");
    d.link = link_from_json(j.value("link", json::object()));
    d.numa_nodes = get_or<std::vector<unsigned>>(j, "numa_nodes", {});
    d.cpuset = get_or<std::string>(j, "cpuset", "");
    d.parent = get_or<std::string>(j, "parent", "");
    d.upstream = get_or<std::string>(j, "upstream", "");
    return d;
}

ProcessBindingFacts binding_from_json(const json& j) {
    ProcessBindingFacts b;
    if (!j.is_object()) return b;
    b.relation = get_or<std::string>(j, "relation", "unknown");
    b.cpuset = get_or<std::string>(j, "cpuset", "");
    b.numa_nodes = get_or<std::vector<unsigned>>(j, "numa_nodes", {});
    b.memory_policy = get_or<std::string>(j, "memory_policy", "");
    b.memory_nodes = get_or<std::vector<unsigned>>(j, "memory_nodes", {});
    b.note = get_or<std::string>(j, "note", "");
    return b;
}

}  // namespace

json to_json(const PcieLinkFacts& link) {
    return {{"current", reading_to_json(link.current)}, {"max", reading_to_json(link.max)}, {"source", link.source}};
}

json to_json(const TopologyFacts& f) {
    json packages = json::array();
    for (const auto& p : f.packages)
        packages.push_back({{"os_index", p.os_index}, {"cpuset", p.cpuset}, {"cpu_model", p.cpu_model}});
    json numa = json::array();
    for (const auto& n : f.numa_nodes)
        numa.push_back({{"os_index", n.os_index}, {"memory_bytes", n.memory_bytes}, {"cpuset", n.cpuset}});
    json caches = json::array();
    for (const auto& c : f.caches)
        caches.push_back({{"level", c.level}, {"type", c.type}, {"size_bytes", c.size_bytes}, {"count", c.count}});
    json devices = json::array();
    for (const auto& d : f.pci_devices)
        devices.push_back(pci_device_to_json(d));
    json upstream = json::array();
    for (const auto& u : f.upstream_links)
        upstream.push_back({{"address", u.address},
                            {"link", to_json(u.link)},
                            {"devices", u.devices},
                            {"is_device_link", u.is_device_link}});
    return {{"packages", packages}, {"numa_nodes", numa},     {"caches", caches},
            {"cores", f.cores},     {"pus", f.pus},           {"allowed_pus", f.allowed_pus},
            {"has_pci", f.has_pci}, {"pci_devices", devices}, {"upstream_links", upstream}};
}

json to_json(const DeviceLocalityFacts& f) {
    return {{"match", f.match},
            {"note", f.note},
            {"device_type", f.device_type},
            {"address", f.address},
            {"pci", f.pci ? pci_device_to_json(*f.pci) : json(nullptr)},
            {"numa_nodes", f.numa_nodes},
            {"cpuset", f.cpuset},
            {"cores", f.cores},
            {"binding", binding_to_json(f.binding)}};
}

std::optional<TopologyFacts> topology_facts_from_json(const json& j) {
    if (!j.is_object()) return std::nullopt;
    try {
        TopologyFacts f;
        for (const auto& p : j.value("packages", json::array()))
            f.packages.push_back({get_or<unsigned>(p, "os_index", 0), get_or<std::string>(p, "cpuset", ""),
                                  get_or<std::string>(p, "cpu_model", "")});
        for (const auto& n : j.value("numa_nodes", json::array()))
            f.numa_nodes.push_back({get_or<unsigned>(n, "os_index", 0), get_or<std::uint64_t>(n, "memory_bytes", 0),
                                    get_or<std::string>(n, "cpuset", "")});
        for (const auto& c : j.value("caches", json::array()))
            f.caches.push_back({get_or<unsigned>(c, "level", 0), get_or<std::string>(c, "type", ""),
                                get_or<std::uint64_t>(c, "size_bytes", 0), get_or<unsigned>(c, "count", 0)});
        f.cores = get_or<unsigned>(j, "cores", 0);
        f.pus = get_or<unsigned>(j, "pus", 0);
        f.allowed_pus = get_or<std::string>(j, "allowed_pus", "");
        f.has_pci = get_or<bool>(j, "has_pci", false);
        for (const auto& d : j.value("pci_devices", json::array()))
            f.pci_devices.push_back(pci_device_from_json(d));
        for (const auto& u : j.value("upstream_links", json::array()))
            f.upstream_links.push_back(
                {get_or<std::string>(u, "address", ""), link_from_json(u.value("link", json::object())),
                 get_or<std::vector<std::string>>(u, "devices", {}), get_or<bool>(u, "is_device_link", false)});
        return f;
    } catch (const json::exception&) {
        return std::nullopt;
    }
}

std::optional<DeviceLocalityFacts> device_locality_from_json(const json& j) {
    if (!j.is_object()) return std::nullopt;
    try {
        DeviceLocalityFacts f;
        f.match = get_or<std::string>(j, "match", "");
        f.note = get_or<std::string>(j, "note", "");
        f.device_type = get_or<std::string>(j, "device_type", "");
        f.address = get_or<std::string>(j, "address", "");
        if (const auto it = j.find("pci"); it != j.end() && it->is_object()) f.pci = pci_device_from_json(*it);
        f.numa_nodes = get_or<std::vector<unsigned>>(j, "numa_nodes", {});
        f.cpuset = get_or<std::string>(j, "cpuset", "");
        f.cores = get_or<std::string>(j, "cores", "");
        f.binding = binding_from_json(j.value("binding", json::object()));
        return f;
    } catch (const json::exception&) {
        return std::nullopt;
    }
}

namespace {

constexpr const char* topology_summary_key = "summary";
constexpr const char* device_locality_key = "locality";

// The attribute `key` of an ok result, or null.
const json* ok_attribute(const ProbeResult* p, const char* key) {
    if (!p || p->status != ProbeStatus::ok || !p->attributes.is_object()) return nullptr;
    const auto it = p->attributes.find(key);
    return it == p->attributes.end() ? nullptr : &*it;
}

}  // namespace

void record_topology_facts(ProbeResult& out, const TopologyFacts& facts) {
    out.attributes[topology_summary_key] = to_json(facts);
}

void record_device_locality(ProbeResult& out, const DeviceLocalityFacts& facts) {
    out.attributes[device_locality_key] = to_json(facts);
}

std::optional<TopologyFacts> topology_facts_of(const ProbeResult& result) {
    if (result.id != "topology.host") return std::nullopt;
    const json* j = ok_attribute(&result, topology_summary_key);
    return j ? topology_facts_from_json(*j) : std::nullopt;
}

std::optional<TopologyFacts> topology_facts_of(const RunReport& report) {
    const ProbeResult* p = find_result(report, "topology.host");
    return p ? topology_facts_of(*p) : std::nullopt;
}

std::optional<DeviceLocalityFacts> device_locality_of(const RunReport& report) {
    const json* j = ok_attribute(find_result(report, "topology.device"), device_locality_key);
    return j ? device_locality_from_json(*j) : std::nullopt;
}

std::string index_list(const std::vector<unsigned>& indexes) {
    std::vector<unsigned> sorted = indexes;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    std::string out;
    for (std::size_t i = 0; i < sorted.size();) {
        std::size_t end = i;
        while (end + 1 < sorted.size() && sorted[end + 1] == sorted[end] + 1)
            ++end;
        if (!out.empty()) out += ',';
        out += end == i ? fmt::format("{}", sorted[i]) : fmt::format("{}-{}", sorted[i], sorted[end]);
        i = end + 1;
    }
    return out;
}

}  // namespace clprobe
