#pragma once
#include <cstdint>

#include "core/device_info.hpp"

namespace clprobe {

HostInfo query_host_info();

// MemAvailable from /proc/meminfo (bytes); 0 when unknown. Probes cap their buffers by it so a
// run never asks for memory the host cannot give.
std::uint64_t available_host_memory_bytes();

}  // namespace clprobe
