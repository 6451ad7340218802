#pragma once
// What a set of device buffers needs, and whether it fits a device: the sum of the buffers and the
// largest one, against CL_DEVICE_GLOBAL_MEM_SIZE and CL_DEVICE_MAX_MEM_ALLOC_SIZE. Shared by the
// workloads' memory models (probes/glm/glm_memory, probes/attention/attention_memory); pure.
#include <cstdint>
#include <initializer_list>

namespace clprobe {

struct MemoryLimits {
    std::uint64_t global_bytes = 0;     // CL_DEVICE_GLOBAL_MEM_SIZE
    std::uint64_t max_alloc_bytes = 0;  // CL_DEVICE_MAX_MEM_ALLOC_SIZE
};

// Device buffers of one variant: their sum and the largest one. Sums saturate instead of wrapping.
struct Footprint {
    std::uint64_t total = 0;
    std::uint64_t largest = 0;
    void add(std::uint64_t bytes);
    bool fits(const MemoryLimits& limits) const {
        return total <= limits.global_bytes && largest <= limits.max_alloc_bytes;
    }
};

// a x b x ..., saturating at 2^64 - 1 (a shape search tries absurd sizes on its way down).
std::uint64_t saturating_product(std::initializer_list<std::uint64_t> factors);

}  // namespace clprobe
