#include "topology/pci_devices.hpp"

#include <fmt/core.h>

#include "topology/numa_locality.hpp"
#include "topology/pci_address.hpp"
#include "topology/pci_links.hpp"

namespace clprobe {

namespace {

// hwloc's vendor and device names where it has them (pciaccess or a saved XML), then the OS
// devices below the PCI object (eth0, card0, nvme0n1), which often say more to an administrator.
std::string device_name(hwloc_obj_t device) {
    std::string name;
    const char* vendor = hwloc_obj_get_info_by_name(device, "PCIVendor");
    const char* model = hwloc_obj_get_info_by_name(device, "PCIDevice");
    if (vendor) name = vendor;
    if (model) name += (name.empty() ? "" : " ") + std::string(model);
    std::string os_devices;
    for (hwloc_obj_t child = device->io_first_child; child; child = child->next_sibling)
        if (child->type == HWLOC_OBJ_OS_DEVICE && child->name)
            os_devices += (os_devices.empty() ? "" : ", ") + std::string(child->name);
    if (os_devices.empty()) return name;
    return name.empty() ? os_devices : fmt::format("{} ({})", name, os_devices);
}

}  // namespace

std::string device_of_interest_kind(unsigned class_id) {
    const unsigned base = class_id >> 8;
    if (base == 0x03) return "gpu";
    if (base == 0x12) return "accelerator";
    if (class_id == 0x0b40) return "coprocessor";
    if (base == 0x02 || class_id == 0x0c06) return "nic";
    return {};
}

std::vector<hwloc_obj_t> devices_of_interest(const Topology& topology) {
    std::vector<hwloc_obj_t> out;
    for (hwloc_obj_t d = hwloc_get_next_pcidev(topology.get(), nullptr); d;
         d = hwloc_get_next_pcidev(topology.get(), d))
        if (!device_of_interest_kind(d->attr->pcidev.class_id).empty()) out.push_back(d);
    return out;
}

std::vector<hwloc_obj_t> pci_bridges_above(hwloc_obj_t object) {
    std::vector<hwloc_obj_t> out;
    for (hwloc_obj_t p = object->parent; p && p->type == HWLOC_OBJ_BRIDGE; p = p->parent)
        if (p->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI) out.push_back(p);
    return out;
}

PciDeviceFacts pci_device_facts(const Topology& topology, hwloc_obj_t device) {
    const auto& pci = device->attr->pcidev;
    PciDeviceFacts f;
    f.address = pci_address_of(device);
    f.kind = device_of_interest_kind(pci.class_id);
    f.class_id = fmt::format("{:04x}", pci.class_id);
    f.vendor_id = fmt::format("{:04x}", pci.vendor_id);
    f.device_id = fmt::format("{:04x}", pci.device_id);
    f.name = device_name(device);
    const auto bridges = pci_bridges_above(device);
    // A PCIe device's parent port (root port or switch downstream port) is the other end of its link.
    f.link = link_facts(device, bridges.empty() ? nullptr : bridges.front());
    const Locality local = locality_of(topology, device);
    f.numa_nodes = local.numa_nodes;
    f.cpuset = local.cpuset.list();
    if (!bridges.empty()) {
        f.parent = pci_address_of(bridges.front());
        f.upstream = pci_address_of(bridges.back());
    }
    return f;
}

}  // namespace clprobe
