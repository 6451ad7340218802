#pragma once
// The experiments a replay runs on one captured launch, chosen from the capture and the device's
// limits alone (pure, unit-tested): local sizes, build options, buffer placements.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "replay/capture.hpp"

namespace clprobe::replay {

// The kernel's and device's limits on a work-group (clGetKernelWorkGroupInfo, clGetDeviceInfo).
struct GroupLimits {
    std::uint64_t max_group = 1;           // CL_KERNEL_WORK_GROUP_SIZE
    std::uint64_t preferred_multiple = 1;  // CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE
    Range max_item_sizes{1, 1, 1};         // CL_DEVICE_MAX_WORK_ITEM_SIZES
};

struct LocalSizeVariant {
    std::optional<Range> local;  // nullopt: NULL, the driver's choice
    std::string label;           // "NULL (driver's choice)", "256", "16x16"
};

// "256", "16x16", "4x4x4" for the first `work_dim` entries; "NULL" for none.
std::string range_text(const std::optional<Range>& r, unsigned work_dim);

// NULL, then every total of preferred_multiple x 2^k up to max_group whose shapes divide the
// global size (1-D: that size; 2-D/3-D: all of it along x, and the most balanced split of powers
// of two), within max_item_sizes; the captured local size itself is left out (it is the
// reference), so is a duplicate. Ordered by total size, smallest first.
std::vector<LocalSizeVariant> local_size_variants(unsigned work_dim, const Range& global,
                                                  const std::optional<Range>& captured, const GroupLimits& limits);

// The options each build variant appends to the captured ones, leaving out those already there.
std::vector<std::string> build_option_variants(const std::string& captured_options);

struct PlacementVariant {
    std::string label;
    std::vector<std::uint64_t> flags;  // per argument (buffers only; others 0)
};

// cl_mem_flags bits the placement variants use (the CL values, so this file needs no OpenCL header).
inline constexpr std::uint64_t mem_read_write = 1u << 0;
inline constexpr std::uint64_t mem_write_only = 1u << 1;
inline constexpr std::uint64_t mem_read_only = 1u << 2;
inline constexpr std::uint64_t mem_use_host_ptr = 1u << 3;
inline constexpr std::uint64_t mem_alloc_host_ptr = 1u << 4;
inline constexpr std::uint64_t mem_copy_host_ptr = 1u << 5;
inline constexpr std::uint64_t mem_host_access_bits =
    (1u << 7) | (1u << 8) | (1u << 9);  // HOST_WRITE/READ_ONLY, NO_ACCESS

// The flags a replay creates a captured buffer with: the program's, less what the replay cannot
// keep (USE_HOST_PTR and COPY_HOST_PTR: the replay writes the inputs itself before each launch;
// HOST_* access limits: it must write inputs and read outputs). USE_HOST_PTR becomes
// ALLOC_HOST_PTR, the nearest placement the replay can make on its own.
std::uint64_t replay_flags(std::uint64_t captured);

// CL_MEM_READ_ONLY for every read-write buffer whose captured output equals its input (the kernel
// only read it); CL_MEM_ALLOC_HOST_PTR for all buffers that lack it. Each only where it changes a
// flag; `unchanged[i]` says argument i's output equals its input.
std::vector<PlacementVariant> placement_variants(const std::vector<CapturedArg>& args,
                                                 const std::vector<bool>& unchanged);

}  // namespace clprobe::replay
