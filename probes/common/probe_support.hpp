#pragma once
// Small pieces several probes share: picking the best variant, headline metrics, buffer sizing.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cl/cl_api.hpp"
#include "core/byte_size.hpp"  // format_bytes
#include "core/report.hpp"
#include "runtime/probe.hpp"
#include "runtime/sampler.hpp"

namespace clprobe {

class DeviceSession;

// The measurement of `metric` with the best median (highest, or lowest when lower is better).
const Measurement* best_by_median(const std::vector<Measurement>& measurements, std::string_view metric);

// A copy of `best` under the headline metric id, without labels (so reports from machines whose
// best variant differs still line up in `compare`), noting which variant it came from.
Measurement headline_from(const Measurement& best, std::string metric, std::size_t variant_count);

// Each rate sample as a fraction of a ceiling's median (the roofline fraction).
Measurement fraction_of_peak(std::string metric, Labels labels, const Measurement& rate, double peak);

// Largest buffer size <= wanted that the device and host can hold `buffers` times over, rounded
// down to a multiple of `granule` bytes. Throws ProbeUnsupported when not even one granule fits.
std::uint64_t fit_buffer_bytes(const DeviceInfo& device, std::uint64_t wanted, int buffers, std::uint64_t granule);

// Buffer creation that names the failing call and the size asked for.
cl::Buffer make_buffer(cl::Context& context, cl_mem_flags flags, std::size_t bytes);

// The launch of peak/bandwidth.cl's streaming kernels (kernel.bandwidth and the paired memory
// roof): groups of up to 256 items, 32 groups per compute unit (at least 8), which keeps every GPU
// SM busy with several resident groups and gives CPU devices enough groups to balance across cores.
struct StreamLaunch {
    std::size_t local = 1, items = 1;
    // Buffers a multiple of this give every item a multiple of 4 vectors at every width up to 16
    // (the read kernels unroll by 4).
    std::uint64_t granule() const { return std::uint64_t{items} * 16 * 4 * sizeof(float); }
};
StreamLaunch stream_launch(const DeviceInfo& device);

// Reads `count` per-item partial sums of a streaming read kernel and checks their total against
// the exact sum of the input; throws VerificationError naming `what` when they differ.
void check_read_sum(cl::CommandQueue& q, const cl::Buffer& sums, std::size_t count, double expected,
                    const std::string& what);

// A sampler batch of `n` launches of `kernel` over `global` items in groups of `local`, timed on
// the session's queue. `keep` holds buffers the kernel's arguments name: a kernel object does not
// keep them alive on every driver, so a batch that outlives its caller's buffers must.
BatchFunction launch_batch(DeviceSession& s, cl::Kernel kernel, std::size_t global, std::size_t local, std::string name,
                           std::vector<cl::Buffer> keep = {});

// How the samples were taken, for a probe's attributes ("each sample: fastest of 3 batches...").
std::string sampling_note(const SamplerConfig& config);

}  // namespace clprobe
