#pragma once
// Pieces the transfer probes share: the data pattern every copy is checked against, page-aligned
// host allocations, the size sweep, and the efficiency reference read from earlier probes.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cl/cl_api.hpp"
#include "cl/command_timing.hpp"
#include "core/report.hpp"
#include "runtime/probe.hpp"

namespace clprobe::transfer {

// Every transfer size is a multiple of this (a page: map/unmap and zero-copy paths want it).
inline constexpr std::uint64_t granule = 4096;

// The word stored at 32-bit index `i` for `seed`: distinct per position and seed, so a copy that
// moved the wrong range, or did not happen (stale data of an earlier variant), is caught.
std::uint32_t pattern_word(std::uint64_t i, std::uint32_t seed);
void fill_pattern(std::uint32_t* words, std::uint64_t count, std::uint32_t seed);

// Windows of a transfer of `bytes` that verification checks: spread over the whole range (start,
// middle, end), a fixed total so checking costs the same at every size.
struct Window {
    std::uint64_t offset = 0, bytes = 0;
};
std::vector<Window> check_windows(std::uint64_t bytes);

// Writes a value no pattern produces into the windows (host memory), so stale data fails the check.
void poison_windows(std::uint32_t* words, std::uint64_t bytes);
// Throws VerificationError naming `what` when a window of host memory differs from the pattern.
void verify_windows(const std::uint32_t* words, std::uint64_t bytes, std::uint32_t seed, const std::string& what);
// The same for a buffer: poisons its windows with clEnqueueFillBuffer, and reads them back to check.
void poison_buffer(cl::CommandQueue& q, cl::Buffer& buffer, std::uint64_t bytes);
void verify_buffer(cl::CommandQueue& q, cl::Buffer& buffer, std::uint64_t bytes, std::uint32_t seed,
                   const std::string& what);

// Page-aligned, untouched host memory (malloc'd memory as a user has it: pageable).
struct FreeDeleter {
    void operator()(void* p) const;
};
using HostMemory = std::unique_ptr<std::uint32_t, FreeDeleter>;
HostMemory allocate_host(std::uint64_t bytes);

// The sizes a sweep measures for this mode, from `smallest` up to `largest` (both included).
std::vector<std::uint64_t> sweep_sizes(RunMode mode, std::uint64_t smallest, std::uint64_t largest);
// The largest size the mode asks for, or RunOptions::transfer.max_bytes when set.
std::uint64_t wanted_largest(const RunOptions& options);

// What a transfer's bandwidth is compared with on this device, from earlier results.
struct EfficiencyReference {
    std::string kind;     // "pcie_link" or "memory_copy"
    std::string metric;   // the measurement it comes from; "" when none was measured
    double gb_per_s = 0;  // the ceiling a transfer is held against
    std::string note;
};
EfficiencyReference efficiency_reference(const DeviceInfo& device, const std::vector<ProbeResult>& earlier);
// True where a "transfer" is a copy inside host memory: CPU devices and unified-memory devices.
bool host_memory_device(const DeviceInfo& device);

// Host-clock seconds of `fn`.
template <typename Fn>
double host_seconds(Fn&& fn);

}  // namespace clprobe::transfer

#include <chrono>
template <typename Fn>
double clprobe::transfer::host_seconds(Fn&& fn) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
