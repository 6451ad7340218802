#include "common/paired_memory_roof.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>

#include "cl/device_session.hpp"
#include "cl/kernel_args.hpp"
#include "common/probe_support.hpp"

namespace clprobe {

namespace {

// kernel.bandwidth's fastest read (its pattern and vector width), so the paired roof is the same
// kind of read that set kernel.peak.bandwidth.
std::string best_read_kernel(const std::vector<ProbeResult>& earlier) {
    const Measurement* best = nullptr;
    for (const auto& p : earlier)
        for (const auto& m : p.measurements)
            if (m.metric == "kernel.bandwidth" && m.labels.count("access") && m.labels.at("access") == "read" &&
                m.labels.count("pattern") && m.labels.count("vector") &&
                (!best || m.summary.median > best->summary.median))
                best = &m;
    if (!best) return "read_chunked_v4";
    const bool pair = best->labels.count("streams") && best->labels.at("streams") == "2";
    return fmt::format("read_{}{}_v{}", best->labels.at("pattern"), pair ? "_pair" : "", best->labels.at("vector"));
}

int vector_width_of(const std::string& kernel) {
    return std::stoi(kernel.substr(kernel.rfind("_v") + 2));
}

}  // namespace

PairedMemoryRoof::PairedMemoryRoof(DeviceSession& s, InterleavedSampler& sampler, std::uint64_t working_set_bytes,
                                   const std::vector<ProbeResult>& earlier)
    : kernel_(best_read_kernel(earlier)) {
    cl::CommandQueue& q = s.queue();
    const StreamLaunch launch = stream_launch(s.info());
    const std::size_t local = launch.local, items = launch.items;
    const int width = vector_width_of(kernel_);
    const std::uint64_t granule = launch.granule();
    const std::uint64_t bytes = std::max(granule, working_set_bytes / granule * granule);
    const std::uint64_t floats = bytes / sizeof(float);
    bytes_ = static_cast<double>(bytes);

    cl::Buffer in = make_buffer(s.context(), CL_MEM_READ_ONLY, bytes);
    // Small integers (i & 7): every partial sum is exact in float, so the total must be exact.
    const std::array<float, 8> pattern = {0, 1, 2, 3, 4, 5, 6, 7};
    q.enqueueFillBuffer(in, pattern, 0, bytes);
    cl::Buffer sums = make_buffer(s.context(), CL_MEM_READ_WRITE, items * static_cast<std::size_t>(width) * 4);
    cl::Kernel k(s.kernels().program("peak/bandwidth.cl").program, kernel_.c_str());
    set_args(k, in, sums, static_cast<cl_uint>(floats / static_cast<std::uint64_t>(width) / items));
    index_ = sampler.add(launch_batch(s, k, items, local, "paired memory roof " + kernel_, {in, sums}), bytes_);

    check_read_sum(q, sums, items * static_cast<std::size_t>(width), static_cast<double>(floats / 8) * 28.0,
                   "paired memory roof " + kernel_);
}

bool PairedMemoryRoof::fits(const DeviceInfo& info, std::uint64_t working_set_bytes) {
    try {
        return fit_buffer_bytes(info, working_set_bytes, 3, 1) >= working_set_bytes;
    } catch (const ProbeUnsupported&) {
        return false;
    }
}

Measurement PairedMemoryRoof::measurement(std::string metric, Labels labels, const SampleSet& set) const {
    Measurement m =
        make_measurement(std::move(metric), "GB/s", std::move(labels), to_rates(set, bytes_, 1e-9), set.timer);
    m.iterations_per_sample = set.iterations;
    m.note = fmt::format(
        "kernel.bandwidth's fastest read ({}) over the workload's working set ({:.0f} MiB), sampled interleaved with "
        "it",
        kernel_, bytes_ / (1 << 20));
    return m;
}

std::optional<PlacedRoof> raised_roof(const std::optional<PlacedRoof>& placed, const Measurement& paired) {
    const double rate = paired.summary.max;
    if (placed && placed->gb_per_s >= rate) return placed;
    return PlacedRoof{"memory", rate, labelled_metric(paired.metric, paired.labels), RoofBasis::paired};
}

}  // namespace clprobe
