#pragma once
// The topology the layer analyses, and the check of --topology / --device-pci that `diagnose`
// runs before any probe.
#include <optional>
#include <string>

#include "topology/hwloc_topology.hpp"

namespace clprobe {

// The saved XML when `xml_path` is set (--topology), else the live machine with the kernel's
// PCIe link readings added to its PCI objects (annotate_pci_links). Throws TopologyError.
Topology load_analysed_topology(const std::string& xml_path);

// nullopt when the options are usable; otherwise one line saying what is wrong: a --topology
// file that is missing, unreadable or not an hwloc XML topology, a --device-pci that is not an
// address, or one with no PCI device at it in that file. Empty options are fine.
std::optional<std::string> topology_input_problem(const std::string& xml_path, const std::string& device_pci);

}  // namespace clprobe
