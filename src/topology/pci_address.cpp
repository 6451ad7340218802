#include "topology/pci_address.hpp"

#include <fmt/core.h>

#include <regex>

namespace clprobe {

std::string PciAddress::text() const {
    return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, device, function);
}

std::optional<PciAddress> parse_pci_address(const std::string& text) {
    static const std::regex form(R"((?:([0-9a-fA-F]{4}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7]))");
    std::smatch m;
    if (!std::regex_match(text, m, form)) return std::nullopt;
    PciAddress a;
    a.domain = m[1].matched ? std::stoul(m[1].str(), nullptr, 16) : 0;
    a.bus = std::stoul(m[2].str(), nullptr, 16);
    a.device = std::stoul(m[3].str(), nullptr, 16);
    a.function = std::stoul(m[4].str(), nullptr, 16);
    if (a.device > 0x1f) return std::nullopt;  // 5 bits
    return a;
}

hwloc_obj_t find_pci_device(const Topology& topology, const PciAddress& a) {
    return hwloc_get_pcidev_by_busid(topology.get(), a.domain, a.bus, a.device, a.function);
}

std::string pci_address_of(hwloc_obj_t object) {
    const hwloc_obj_attr_u::hwloc_pcidev_attr_s* pci = nullptr;
    if (object->type == HWLOC_OBJ_PCI_DEVICE)
        pci = &object->attr->pcidev;
    else if (object->type == HWLOC_OBJ_BRIDGE && object->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI)
        pci = &object->attr->bridge.upstream.pci;
    if (!pci) return {};
    return PciAddress{pci->domain, pci->bus, pci->dev, pci->func}.text();
}

}  // namespace clprobe
