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

namespace clprobe {

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

// How the samples were taken, for a probe's attributes ("each sample: fastest of 3 batches...").
std::string sampling_note(const SamplerConfig& config);

}  // namespace clprobe
