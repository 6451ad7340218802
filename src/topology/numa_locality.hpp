#pragma once
// Which CPUs and NUMA nodes are local to an object, and which NUMA nodes a set of CPUs spans.
#include <vector>

#include "topology/bitmap.hpp"
#include "topology/hwloc_topology.hpp"

namespace clprobe {

struct Locality {
    Bitmap cpuset;                     // PUs local to the object
    std::vector<unsigned> numa_nodes;  // OS indexes of the NUMA nodes local to it
};

// For an I/O object (PCI device, bridge), the CPU-side object it hangs from decides. Local NUMA
// nodes are those attached to exactly that CPU set or to a part of it (an I/O hub on a package
// split into sub-NUMA clusters is local to all of them); when none is (the object sits below
// NUMA level, e.g. on one L3), the nodes whose CPU set contains it.
Locality locality_of(const Topology& topology, hwloc_obj_t object);

// NUMA nodes (OS indexes) with at least one PU in `pus`.
std::vector<unsigned> numa_nodes_of(const Topology& topology, const Bitmap& pus);

}  // namespace clprobe
