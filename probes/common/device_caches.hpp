#pragma once
// The cache levels a device's work can fill, for the probes that size working sets against them
// (kernel.memory_levels, kernel.bandwidth): hwloc's caches from the topology layer on a CPU device,
// else the device's own global-memory cache as one level.
#include <cstdint>
#include <string>
#include <vector>

#include "core/device_info.hpp"
#include "core/memory_roofs.hpp"
#include "core/report.hpp"

namespace clprobe {

struct DeviceCaches {
    std::vector<CacheCapacity> caches;  // smallest first
    std::string note;                   // where they came from, when not from the topology layer
};

DeviceCaches device_caches(const std::vector<ProbeResult>& earlier, const DeviceInfo& info);

}  // namespace clprobe
