#include "topology/pci_links.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>

#include "core/pcie_link.hpp"
#include "topology/pci_address.hpp"

namespace clprobe {

namespace {

constexpr struct {
    const char* file;
    const char* info;
} sysfs_link_files[] = {
    {"current_link_speed", info_current_link_speed},
    {"max_link_speed", info_max_link_speed},
    {"current_link_width", info_current_link_width},
    {"max_link_width", info_max_link_width},
};

// First line of a sysfs file, trimmed; "" when the file is absent (links without a PCIe
// capability, conventional PCI, virtual devices) or unreadable.
std::string read_sysfs_line(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line)) return {};
    const auto end = line.find_last_not_of(" \t\r\n");
    return end == std::string::npos ? std::string() : line.substr(0, end + 1);
}

bool annotated(hwloc_obj_t object) {
    for (const auto& f : sysfs_link_files)
        if (hwloc_obj_get_info_by_name(object, f.info)) return true;
    return false;
}

bool annotate(hwloc_obj_t object, const std::string& sysfs_root) {
    const std::string address = pci_address_of(object);
    if (address.empty() || annotated(object)) return false;
    const std::string dir = sysfs_root + "/bus/pci/devices/" + address + "/";
    bool any = false;
    for (const auto& f : sysfs_link_files) {
        const std::string value = read_sysfs_line(dir + f.file);
        if (value.empty()) continue;
        hwloc_obj_add_info(object, f.info, value.c_str());
        any = true;
    }
    return any;
}

PcieLinkReading reading(hwloc_obj_t object, const char* speed_info, const char* width_info) {
    PcieLinkReading r;
    if (const char* speed = hwloc_obj_get_info_by_name(object, speed_info)) r.gt_per_s = parse_link_speed(speed);
    if (const char* width = hwloc_obj_get_info_by_name(object, width_info)) r.width = parse_link_width(width);
    if (r.gt_per_s && r.width) r.gb_per_s = pcie_link_bandwidth(*r.gt_per_s, *r.width);
    return r;
}

float hwloc_link_speed(hwloc_obj_t object) {
    if (object->type == HWLOC_OBJ_PCI_DEVICE) return object->attr->pcidev.linkspeed;
    if (object->type == HWLOC_OBJ_BRIDGE && object->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI)
        return object->attr->bridge.upstream.pci.linkspeed;
    return 0;
}

template <typename T>
std::optional<T> smaller(std::optional<T> a, std::optional<T> b) {
    if (a && b) return std::min(*a, *b);
    return a ? a : b;
}

}  // namespace

int annotate_pci_links(Topology& topology, const std::string& sysfs_root) {
    int count = 0;
    for (hwloc_obj_t d = hwloc_get_next_pcidev(topology.get(), nullptr); d;
         d = hwloc_get_next_pcidev(topology.get(), d))
        count += annotate(d, sysfs_root);
    for (hwloc_obj_t b = hwloc_get_next_bridge(topology.get(), nullptr); b;
         b = hwloc_get_next_bridge(topology.get(), b))
        count += annotate(b, sysfs_root);
    return count;
}

PcieLinkFacts link_facts(hwloc_obj_t object) {
    PcieLinkFacts facts;
    if (annotated(object)) {
        facts.source = "sysfs";
        facts.current = reading(object, info_current_link_speed, info_current_link_width);
        facts.max = reading(object, info_max_link_speed, info_max_link_width);
        return facts;
    }
    // hwloc's figure is the current bandwidth in GB/s (its own encoding factors); it says
    // nothing about generation, width or the maximum.
    if (const float speed = hwloc_link_speed(object); speed > 0) {
        facts.source = "hwloc";
        facts.current.gb_per_s = std::round(static_cast<double>(speed) * 1000) / 1000;
    }
    return facts;
}

PcieLinkFacts link_facts(hwloc_obj_t object, hwloc_obj_t other_end) {
    PcieLinkFacts facts = link_facts(object);
    if (facts.source != "sysfs" || !other_end) return facts;
    const PcieLinkFacts other = link_facts(other_end);
    if (other.source != "sysfs") return facts;
    facts.max.gt_per_s = smaller(facts.max.gt_per_s, other.max.gt_per_s);
    facts.max.width = smaller(facts.max.width, other.max.width);
    if (facts.max.gt_per_s && facts.max.width)
        facts.max.gb_per_s = pcie_link_bandwidth(*facts.max.gt_per_s, *facts.max.width);
    return facts;
}

}  // namespace clprobe
