#include "topology/topology_summary.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "topology/bitmap.hpp"
#include "topology/pci_address.hpp"
#include "topology/pci_devices.hpp"
#include "topology/pci_links.hpp"

namespace clprobe {

namespace {

template <typename Visit>
void for_each_of_type(const Topology& t, hwloc_obj_type_t type, Visit visit) {
    for (hwloc_obj_t o = hwloc_get_next_obj_by_type(t.get(), type, nullptr); o;
         o = hwloc_get_next_obj_by_type(t.get(), type, o))
        visit(o);
}

std::string cache_type_name(hwloc_obj_cache_type_t type) {
    switch (type) {
        case HWLOC_OBJ_CACHE_DATA:
            return "data";
        case HWLOC_OBJ_CACHE_INSTRUCTION:
            return "instruction";
        default:
            return "unified";
    }
}

std::vector<CacheLevelFacts> cache_levels(const Topology& t) {
    // (level, type, size) -> count; several sizes on one level happen on hybrid CPUs.
    std::map<std::tuple<unsigned, std::string, std::uint64_t>, unsigned> counts;
    for (int type = HWLOC_OBJ_TYPE_MIN; type < HWLOC_OBJ_TYPE_MAX; ++type) {
        const auto obj_type = static_cast<hwloc_obj_type_t>(type);
        if (!hwloc_obj_type_is_cache(obj_type)) continue;
        for_each_of_type(t, obj_type, [&](hwloc_obj_t c) {
            ++counts[{c->attr->cache.depth, cache_type_name(c->attr->cache.type), c->attr->cache.size}];
        });
    }
    std::vector<CacheLevelFacts> out;
    for (const auto& [key, count] : counts)
        out.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), count});
    return out;
}

}  // namespace

TopologyFacts summarize(const Topology& t) {
    TopologyFacts f;
    for_each_of_type(t, HWLOC_OBJ_PACKAGE, [&](hwloc_obj_t p) {
        const char* model = hwloc_obj_get_info_by_name(p, "CPUModel");
        f.packages.push_back({p->os_index, Bitmap(p->cpuset).list(), model ? model : ""});
    });
    for_each_of_type(t, HWLOC_OBJ_NUMANODE, [&](hwloc_obj_t n) {
        f.numa_nodes.push_back({n->os_index, n->attr->numanode.local_memory, Bitmap(n->cpuset).list()});
    });
    f.caches = cache_levels(t);
    f.cores = static_cast<unsigned>(std::max(0, hwloc_get_nbobjs_by_type(t.get(), HWLOC_OBJ_CORE)));
    f.pus = static_cast<unsigned>(std::max(0, hwloc_get_nbobjs_by_type(t.get(), HWLOC_OBJ_PU)));
    f.allowed_pus = Bitmap(hwloc_topology_get_allowed_cpuset(t.get())).list();
    f.has_pci = hwloc_get_next_pcidev(t.get(), nullptr) != nullptr;

    // Devices of interest, and for each root port above them the link they all share.
    std::map<std::string, std::size_t> upstream_index;
    for (hwloc_obj_t d : devices_of_interest(t)) {
        f.pci_devices.push_back(pci_device_facts(t, d));
        const auto bridges = pci_bridges_above(d);
        if (bridges.empty()) continue;
        const std::string top = pci_address_of(bridges.back());
        auto [it, added] = upstream_index.try_emplace(top, f.upstream_links.size());
        // The root port reports the link below it; the object under it on this path is the other end.
        hwloc_obj_t below = bridges.size() > 1 ? bridges[bridges.size() - 2] : d;
        if (added) f.upstream_links.push_back({top, link_facts(bridges.back(), below), {}, false});
        PciUpstreamLinkFacts& upstream = f.upstream_links[it->second];
        upstream.devices.push_back(f.pci_devices.back().address);
        upstream.is_device_link = upstream.is_device_link || bridges.size() == 1;
    }
    return f;
}

}  // namespace clprobe
