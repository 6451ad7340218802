#include "common/device_caches.hpp"

#include <fmt/core.h>

#include "common/probe_support.hpp"
#include "core/topology_facts.hpp"

namespace clprobe {

// CPU devices: hwloc's caches from the topology layer; other devices (or without that layer): the
// device's global-memory cache as one level.
DeviceCaches device_caches(const std::vector<ProbeResult>& earlier, const DeviceInfo& info) {
    if (info.type == "cpu") {
        for (const auto& r : earlier) {
            if (const auto t = topology_facts_of(r)) {
                auto caches = device_cache_capacities(*t, info.compute_units);
                if (!caches.empty()) return {std::move(caches), ""};
            }
        }
    }
    // A GPU's global-memory cache is its L2 (the L1s are per compute unit and not reported); a CPU
    // driver reports one of its levels (PoCL: the last), which without hwloc cannot be named.
    const char* level = info.type == "cpu" ? "LLC" : "L2";
    std::vector<CacheCapacity> caches;
    if (info.global_mem_cache_bytes > 0) caches.push_back({level, info.global_mem_cache_bytes});
    const std::string what = caches.empty()
                                 ? "the device reports no global-memory cache, so levels are unnamed"
                                 : fmt::format("capacity from CL_DEVICE_GLOBAL_MEM_CACHE_SIZE ({}) as one level, {}",
                                               format_bytes(info.global_mem_cache_bytes), level);
    if (info.type == "cpu")
        return {std::move(caches), what +
                                       ", because the topology layer did not run (or found no caches): the "
                                       "levels inside it are unknown, and its roof is the fastest plateau below it"};
    return {std::move(caches), what};
}

}  // namespace clprobe
