#pragma once
// PCI addresses as clprobe writes them ("dddd:bb:dd.f", lower-case hex, hwloc's and lspci -D's form).
#include <hwloc.h>

#include <optional>
#include <string>

#include "topology/hwloc_topology.hpp"

namespace clprobe {

struct PciAddress {
    unsigned domain = 0, bus = 0, device = 0, function = 0;
    std::string text() const;  // "0000:17:00.0"
};

// Reads "dddd:bb:dd.f" or lspci's short "bb:dd.f" (domain 0), any case; nullopt otherwise.
std::optional<PciAddress> parse_pci_address(const std::string& text);

// The PCI device (not bridge) at this address, or null.
hwloc_obj_t find_pci_device(const Topology& topology, const PciAddress& address);

// The address of a PCI device, or of a bridge's upstream side; "" for other objects.
std::string pci_address_of(hwloc_obj_t object);

}  // namespace clprobe
