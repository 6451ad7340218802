#pragma once
// Host memory as the kernel reports it: totals, what is available without swapping, swap in use,
// and the transparent-huge-page policy.
#include <cstdint>
#include <optional>
#include <string>

#include "system/system_files.hpp"

namespace clprobe {

struct MemoryFacts {
    std::optional<std::uint64_t> total_bytes;      // MemTotal
    std::optional<std::uint64_t> available_bytes;  // MemAvailable: what can be allocated without swapping
    std::optional<std::uint64_t> swap_total_bytes;
    std::optional<std::uint64_t> swap_used_bytes;  // SwapTotal - SwapFree
    std::string thp_enabled;                       // always, madvise or never; "" unknown
    std::string thp_defrag;
};
MemoryFacts read_memory_facts(const SystemFiles& files);

// What the process can still allocate without swapping or hitting its cgroup's limit: the host's
// available memory, or the limit less the cgroup's working set when that is less. nullopt when
// neither is known.
std::optional<std::uint64_t> memory_headroom_bytes(std::optional<std::uint64_t> available,
                                                   std::optional<std::uint64_t> limit,
                                                   std::optional<std::uint64_t> working_set);

}  // namespace clprobe
