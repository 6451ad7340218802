#pragma once
// PCIe link state of PCI devices and bridges. hwloc keeps only the current link bandwidth; the
// kernel's sysfs files also say the generation and width each link trained at and could reach.
// annotate_pci_links copies those readings into the objects as "clprobe.*" info attributes, so
// that an exported XML carries them and the same analysis runs on it later, offline.
#include <string>

#include "core/topology_facts.hpp"
#include "topology/hwloc_topology.hpp"

namespace clprobe {

// The info attributes, holding the sysfs text as read ("16.0 GT/s PCIe", "16").
inline constexpr const char* info_current_link_speed = "clprobe.current_link_speed";
inline constexpr const char* info_max_link_speed = "clprobe.max_link_speed";
inline constexpr const char* info_current_link_width = "clprobe.current_link_width";
inline constexpr const char* info_max_link_width = "clprobe.max_link_width";

// Reads <sysfs_root>/bus/pci/devices/<address>/{current,max}_link_{speed,width} for every PCI
// device and PCI bridge in the topology and adds what exists as infos (objects already annotated
// are left alone). Returns how many objects got at least one reading.
int annotate_pci_links(Topology& topology, const std::string& sysfs_root = "/sys");

// The link of a PCI device or bridge as its own PCIe capability reports it: from the clprobe.*
// infos when present, else hwloc's current bandwidth, else nothing (source ""). Ports above a
// link (root ports, switch downstream ports) report the link below them; endpoints, switch
// upstream ports and PCIe-to-PCI bridges the link above them.
PcieLinkFacts link_facts(hwloc_obj_t object);

// The same, for a link whose other end is `other_end` (null: not known): the maximum is what both
// ends can do, so an x16 card in an x8 slot has an x8 maximum, not a shortfall.
PcieLinkFacts link_facts(hwloc_obj_t object, hwloc_obj_t other_end);

}  // namespace clprobe
