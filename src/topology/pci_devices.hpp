#pragma once
// The PCI devices the topology layer cares about and what it records of each.
#include <hwloc.h>

#include <string>
#include <vector>

#include "core/topology_facts.hpp"
#include "topology/hwloc_topology.hpp"

namespace clprobe {

// "gpu" for display controllers (class 03xx), "accelerator" for processing accelerators (12xx),
// "coprocessor" (0b40), "nic" for network (02xx) and InfiniBand (0c06) controllers; "" for the rest.
std::string device_of_interest_kind(unsigned class_id);

// Every PCI device of interest, in topology order.
std::vector<hwloc_obj_t> devices_of_interest(const Topology& topology);

// The PCI-to-PCI bridges above an object (root ports, switch ports), nearest first; host bridges
// are not links and are left out.
std::vector<hwloc_obj_t> pci_bridges_above(hwloc_obj_t object);

PciDeviceFacts pci_device_facts(const Topology& topology, hwloc_obj_t device);

}  // namespace clprobe
