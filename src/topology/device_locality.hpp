#pragma once
// Places the selected OpenCL device in the topology: its PCI object, the CPUs and NUMA nodes
// local to it, and how the process's binding relates to them.
#include <optional>
#include <string>

#include "core/topology_facts.hpp"
#include "topology/bitmap.hpp"
#include "topology/hwloc_topology.hpp"
#include "topology/process_binding.hpp"

namespace clprobe {

struct DeviceQuery {
    std::string type;                        // OpenCL device type (gpu, cpu, ...); "" when not known
    std::optional<std::string> pci_address;  // from the driver, or --device-pci for a saved topology
};

// How a process bound to `binding` sits relative to the device's local PUs:
// inside (binding within them), outside (no PU in common), unbound (binding covers every PU of
// the machine, some of which are not local), overlapping (the rest).
std::string binding_relation(const Bitmap& binding, const Bitmap& device_pus, const Bitmap& machine_pus);

// `binding` is the process's (read_process_binding), passed in so tests can choose it.
DeviceLocalityFacts locate_device(const Topology& topology, const DeviceQuery& query, const ProcessBinding& binding);

}  // namespace clprobe
