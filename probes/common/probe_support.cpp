#include "common/probe_support.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "cl/cl_error.hpp"
#include "cl/command_timing.hpp"
#include "cl/device_session.hpp"
#include "runtime/host_info.hpp"

namespace clprobe {

const Measurement* best_by_median(const std::vector<Measurement>& measurements, std::string_view metric) {
    std::vector<const Measurement*> candidates;
    for (const auto& m : measurements)
        if (m.metric == metric) candidates.push_back(&m);
    return best_median(candidates);
}

Measurement fraction_of_peak(std::string metric, Labels labels, const Measurement& rate, double peak) {
    std::vector<double> fractions;
    for (double s : rate.samples)
        fractions.push_back(s / peak);
    Measurement m = make_measurement(std::move(metric), "fraction", std::move(labels), fractions, rate.timer);
    m.iterations_per_sample = rate.iterations_per_sample;
    return m;
}

Measurement headline_from(const Measurement& best, std::string metric, std::size_t variant_count) {
    Measurement h = best;
    h.metric = std::move(metric);
    h.labels.clear();
    h.note = fmt::format("best of {} variants: {}", variant_count, labels_to_string(best.labels));
    return h;
}

std::uint64_t fit_buffer_bytes(const DeviceInfo& device, std::uint64_t wanted, int buffers, std::uint64_t granule) {
    std::uint64_t limit = wanted;
    if (device.max_alloc_bytes) limit = std::min(limit, device.max_alloc_bytes);
    // Leave a fifth of device memory to the driver and other users of the device.
    if (device.global_mem_bytes) limit = std::min(limit, device.global_mem_bytes * 4 / 5 / buffers);
    // Host side: one staging copy per buffer at most, and half of what is available.
    if (const auto host = available_host_memory_bytes()) limit = std::min(limit, host / 2 / (buffers + 1));
    limit -= limit % granule;
    if (limit == 0)
        throw ProbeUnsupported(fmt::format("not enough memory for {} buffers of {}", buffers, format_bytes(granule)));
    return limit;
}

cl::Buffer make_buffer(cl::Context& context, cl_mem_flags flags, std::size_t bytes) {
    try {
        return cl::Buffer(context, flags, bytes);
    } catch (const cl::Error& e) {
        throw ClError("clCreateBuffer", e.err(), format_bytes(bytes));
    }
}

std::string sampling_note(const SamplerConfig& config) {
    if (config.best_of <= 1) return fmt::format("{} samples, variants interleaved", config.samples);
    if (config.max_contenders > 0)
        return fmt::format(
            "up to {} samples per variant, variants interleaved; each sample is the fastest of {} batches (the "
            "device's capability), for the {} variants with the fastest first batches that reach {:.0f}% of the best; "
            "the others take 3 single-batch samples",
            config.samples, config.best_of, config.max_contenders, 100 * config.contender_fraction);
    return fmt::format(
        "up to {} samples per variant, variants interleaved; each sample is the fastest of {} batches (the "
        "device's capability); variants below {:.0f}% of the best first batch take 3 single-batch samples",
        config.samples, config.best_of, 100 * config.contender_fraction);
}

BatchFunction launch_batch(DeviceSession& s, cl::Kernel kernel, std::size_t global, std::size_t local, std::string name,
                           std::vector<cl::Buffer> keep) {
    return [&s, kernel, global, local, name = std::move(name), keep = std::move(keep)](std::int64_t n) mutable {
        cl::CommandQueue& q = s.queue();
        return time_commands(
            q, s.profiling(), n,
            [&] {
                cl::Event e;
                q.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(global), cl::NDRange(local), nullptr, &e);
                return e;
            },
            name);
    };
}

StreamLaunch stream_launch(const DeviceInfo& device) {
    StreamLaunch l;
    l.local = std::bit_floor(std::min<std::uint64_t>(256, std::max<std::uint64_t>(1, device.max_work_group_size)));
    l.items = std::max<std::size_t>(8, std::size_t{device.compute_units} * 32) * l.local;
    return l;
}

void check_read_sum(cl::CommandQueue& q, const cl::Buffer& sums, std::size_t count, double expected,
                    const std::string& what) {
    std::vector<float> partial(count);
    q.enqueueReadBuffer(sums, CL_TRUE, 0, count * sizeof(float), partial.data());
    double total = 0;
    for (float p : partial)
        total += p;
    if (std::fabs(total - expected) > 0.5 + 1e-7 * expected)
        throw VerificationError(fmt::format("{}: sum of the input is {} (expected {})", what, total, expected));
}

}  // namespace clprobe
