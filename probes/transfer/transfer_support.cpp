#include "transfer/transfer_support.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <new>

#include "cl/cl_error.hpp"
#include "cl/command_trace.hpp"
#include "core/report.hpp"
#include "core/stop_points.hpp"

namespace clprobe::transfer {

namespace {

// Even, while every pattern word is odd: poisoned words can never pass the check.
constexpr std::uint32_t poison = 0xDEADBEEEu;
constexpr int window_count = 16;
constexpr std::uint64_t window_bytes = 4096;

const Measurement* earlier_measurement(const std::vector<ProbeResult>& earlier, std::string_view metric,
                                       const Labels& labels = {}) {
    for (const auto& r : earlier)
        if (r.status == ProbeStatus::ok)
            if (const auto* m = find_measurement(r, metric, labels)) return m;
    return nullptr;
}

}  // namespace

std::uint32_t pattern_word(std::uint64_t i, std::uint32_t seed) {
    // A cheap integer mix (splitmix-like) of position and seed: different for neighbouring indexes
    // and seeds, so a shifted range or another variant's data fails the check.
    std::uint64_t x = i * 0x9E3779B97F4A7C15ull + seed * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 31;
    return static_cast<std::uint32_t>(x) | 1u;  // odd: never the (even) poison value
}

void fill_pattern(std::uint32_t* words, std::uint64_t count, std::uint32_t seed) {
    for (std::uint64_t i = 0; i < count; ++i)
        words[i] = pattern_word(i, seed);
}

std::vector<Window> check_windows(std::uint64_t bytes) {
    std::vector<Window> out;
    const std::uint64_t w = std::min(window_bytes, bytes);
    const int n = bytes <= w ? 1 : window_count;
    for (int k = 0; k < n; ++k) {
        std::uint64_t offset = n == 1 ? 0 : (bytes - w) * static_cast<std::uint64_t>(k) / (n - 1);
        offset -= offset % 4;
        if (!out.empty() && offset < out.back().offset + out.back().bytes) continue;  // overlapping windows
        out.push_back({offset, w});
    }
    return out;
}

void poison_windows(std::uint32_t* words, std::uint64_t bytes) {
    for (const auto& w : check_windows(bytes))
        std::fill(words + w.offset / 4, words + (w.offset + w.bytes) / 4, poison);
}

void verify_windows(const std::uint32_t* words, std::uint64_t bytes, std::uint32_t seed, const std::string& what) {
    for (const auto& w : check_windows(bytes))
        for (std::uint64_t i = w.offset / 4; i < (w.offset + w.bytes) / 4; ++i)
            if (words[i] != pattern_word(i, seed))
                throw VerificationError(fmt::format("{}: word {} of {} bytes is {:#x} (expected {:#x})", what, i, bytes,
                                                    words[i], pattern_word(i, seed)));
}

void poison_buffer(cl::CommandQueue& q, cl::Buffer& buffer, std::uint64_t bytes) {
    const std::vector<std::uint32_t> junk(window_bytes / 4, poison);
    for (const auto& w : check_windows(bytes))
        q.enqueueWriteBuffer(buffer, CL_TRUE, w.offset, w.bytes, junk.data());
}

void verify_buffer(cl::CommandQueue& q, cl::Buffer& buffer, std::uint64_t bytes, std::uint32_t seed,
                   const std::string& what) {
    std::vector<std::uint32_t> host(window_bytes / 4);
    for (const auto& w : check_windows(bytes)) {
        q.enqueueReadBuffer(buffer, CL_TRUE, w.offset, w.bytes, host.data());
        for (std::uint64_t i = 0; i < w.bytes / 4; ++i) {
            const std::uint64_t index = w.offset / 4 + i;
            if (host[i] != pattern_word(index, seed))
                throw VerificationError(fmt::format("{}: word {} of {} bytes is {:#x} (expected {:#x})", what, index,
                                                    bytes, host[i], pattern_word(index, seed)));
        }
    }
}

void FreeDeleter::operator()(void* p) const {
    std::free(p);
}

HostMemory allocate_host(std::uint64_t bytes) {
    void* p = std::aligned_alloc(granule, (bytes + granule - 1) / granule * granule);
    if (!p) throw std::bad_alloc();
    return HostMemory(static_cast<std::uint32_t*>(p));
}

std::vector<std::uint64_t> sweep_sizes(RunMode mode, std::uint64_t smallest, std::uint64_t largest) {
    // Steps: quick x32 (4 KiB, 128 KiB, 4 MiB, 64 MiB), standard x16 (4 KiB to 256 MiB in 5
    // sizes), full x4 (to 1 GiB); the largest size is always measured, since the headlines come
    // from it.
    const std::uint64_t step = mode == RunMode::quick ? 32 : mode == RunMode::full ? 4 : 16;
    std::vector<std::uint64_t> out;
    for (std::uint64_t s = smallest; s < largest; s *= step)
        out.push_back(s);
    out.push_back(largest);
    return out;
}

std::uint64_t wanted_largest(const RunOptions& options) {
    if (options.transfer.max_bytes) return options.transfer.max_bytes;
    // Quick stops at 64 MiB (still twice a large last-level cache) to stay inside seconds.
    return options.mode == RunMode::full    ? (1ull << 30)
           : options.mode == RunMode::quick ? (64ull << 20)
                                            : (256ull << 20);
}

bool host_memory_device(const DeviceInfo& device) {
    return device.type == "cpu" || device.host_unified_memory;
}

EfficiencyReference efficiency_reference(const DeviceInfo& device, const std::vector<ProbeResult>& earlier) {
    EfficiencyReference ref;
    if (!host_memory_device(device)) {
        ref.kind = "pcie_link";
        if (const auto* link = earlier_measurement(earlier, "topology.device.link_bandwidth")) {
            ref.metric = "topology.device.link_bandwidth";
            ref.gb_per_s = link->summary.median;
            ref.note = "the device's PCIe link, theoretical one-direction rate (topology layer)";
        } else {
            ref.note =
                "no link bandwidth was measured (run the topology layer; the driver may not expose the "
                "device's PCI address)";
        }
        return ref;
    }
    ref.kind = "memory_copy";
    // A copy reads and writes every byte, so it can move at most half of what memory sustains.
    for (const char* metric : {"host.memory.bandwidth", "kernel.peak.bandwidth"})
        if (const auto* m = earlier_measurement(earlier, metric)) {
            ref.metric = metric;
            ref.gb_per_s = m->summary.median / 2;
            ref.note = fmt::format(
                "a transfer on this device is a copy inside host memory: half of {} (a copy reads and writes "
                "each byte)",
                metric);
            return ref;
        }
    ref.note = "no memory bandwidth was measured (run the system or kernel layer first)";
    return ref;
}

}  // namespace clprobe::transfer
