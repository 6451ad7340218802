#include "topology/numa_locality.hpp"

#include <hwloc/memattrs.h>

#include <algorithm>

namespace clprobe {

namespace {

std::vector<unsigned> local_nodes(const Topology& topology, hwloc_obj_t cpu_side, unsigned long flags) {
    hwloc_location location{};
    location.type = HWLOC_LOCATION_TYPE_OBJECT;
    location.location.object = cpu_side;
    unsigned count = 0;
    if (hwloc_get_local_numanode_objs(topology.get(), &location, &count, nullptr, flags) != 0 || count == 0) return {};
    std::vector<hwloc_obj_t> nodes(count);
    if (hwloc_get_local_numanode_objs(topology.get(), &location, &count, nodes.data(), flags) != 0) return {};
    std::vector<unsigned> out;
    for (unsigned i = 0; i < count && i < nodes.size(); ++i)
        out.push_back(nodes[i]->os_index);
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

Locality locality_of(const Topology& topology, hwloc_obj_t object) {
    hwloc_obj_t cpu_side = hwloc_get_non_io_ancestor_obj(topology.get(), object);
    Locality out{Bitmap(cpu_side->cpuset), {}};
    out.numa_nodes = local_nodes(topology, cpu_side, HWLOC_LOCAL_NUMANODE_FLAG_SMALLER_LOCALITY);
    if (out.numa_nodes.empty())
        out.numa_nodes = local_nodes(topology, cpu_side, HWLOC_LOCAL_NUMANODE_FLAG_LARGER_LOCALITY);
    return out;
}

std::vector<unsigned> numa_nodes_of(const Topology& topology, const Bitmap& pus) {
    std::vector<unsigned> out;
    for (hwloc_obj_t node = hwloc_get_next_obj_by_type(topology.get(), HWLOC_OBJ_NUMANODE, nullptr); node;
         node = hwloc_get_next_obj_by_type(topology.get(), HWLOC_OBJ_NUMANODE, node))
        if (node->cpuset && hwloc_bitmap_intersects(node->cpuset, pus.get())) out.push_back(node->os_index);
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace clprobe
