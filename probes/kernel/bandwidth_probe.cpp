// kernel.bandwidth: the device's global-memory bandwidth ceiling (kernel.peak.bandwidth), the
// roofline's memory roof. Every variant's output is checked before its time counts.
#include <fmt/core.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "cl/cl_error.hpp"
#include "cl/device_session.hpp"
#include "cl/kernel_args.hpp"
#include "common/device_caches.hpp"
#include "common/probe_support.hpp"
#include "probe_factories.hpp"

namespace clprobe {

namespace {

// Quick and default runs sample the ends and the middle of the width range (the scalar baseline,
// the float4 GPUs favour, the float16 that fills a CPU's vector unit); with read and copy only,
// 12 variants instead of 30 (plus the two-stream reads) keep the default run under clpeak's time.
// --full sweeps everything.
std::vector<int> vector_widths_for(RunMode mode) {
    if (mode == RunMode::full) return {1, 2, 4, 8, 16};
    return {1, 4, 16};
}
// A quick run on a CPU device streams the interleaved (grid-stride) pattern at float16 only: its
// scalar and float4 streams run 4-30x below the chunked ones on CPU drivers (PoCL 0.8 and 2.7 GB/s
// against 24 GB/s chunked), never set the roof, and over a buffer of 4x a 480 MiB last-level cache
// took two thirds of the probe's 60 s budget. A GPU, where interleaved access is the coalesced one,
// keeps every width.
std::vector<int> widths_for(RunMode mode, std::string_view pattern, const DeviceInfo& info) {
    if (mode == RunMode::quick && pattern == "interleaved" && info.type == "cpu") return {16};
    return vector_widths_for(mode);
}
// Two streams per item help CPU devices, whose wide loads already beat scalar ones: quick and
// default runs read float4 and float16 that way, --full every width.
std::vector<int> two_stream_widths_for(RunMode mode) {
    if (mode == RunMode::full) return vector_widths_for(mode);
    return {4, 16};
}
constexpr const char* patterns[] = {"interleaved", "chunked"};
enum class Access { read, write, copy };
// Write-only streams never set the roof on the devices measured so far (read or copy does): quick
// and default runs leave them out, --full measures them.
std::vector<Access> accesses_for(RunMode mode) {
    if (mode == RunMode::full) return {Access::read, Access::write, Access::copy};
    return {Access::read, Access::copy};
}
const char* name_of(Access a) {
    return a == Access::read ? "read" : a == Access::write ? "write" : "copy";
}

// The input pattern: small integers, so every partial sum of the read kernels is exact in float
// and the host can demand the exact total.
float input_value(std::uint64_t float_index) {
    return static_cast<float>(float_index & 7);
}

// Reads evenly spaced windows of `buffer` and compares each float with expected(index).
// 32 windows of 16 Ki floats (2 MiB in all) cover start, middle and end at a cost that does not
// grow with the buffer, so verification stays cheap next to the measurement.
template <typename Expected>
void verify_windows(cl::CommandQueue& q, cl::Buffer& buffer, std::uint64_t floats, const std::string& what,
                    Expected expected) {
    const std::uint64_t window = std::min<std::uint64_t>(16384, floats);
    const int windows = 32;
    std::vector<float> host(window);
    for (int w = 0; w < windows; ++w) {
        const std::uint64_t first = (floats - window) * static_cast<std::uint64_t>(w) / (windows - 1);
        q.enqueueReadBuffer(buffer, CL_TRUE, first * sizeof(float), window * sizeof(float), host.data());
        for (std::uint64_t i = 0; i < window; ++i) {
            const float want = expected(first + i);
            if (host[i] != want)
                throw VerificationError(
                    fmt::format("{}: element {} is {} (expected {})", what, first + i, host[i], want));
        }
    }
}

class BandwidthProbe final : public Probe {
  public:
    std::string id() const override { return "kernel.bandwidth"; }
    std::string layer() const override { return "kernel"; }
    std::string title() const override { return "Global-memory bandwidth ceiling"; }
    // 14 variants (35 with --full), best-of-2 samples of ~25 ms each.
    double expected_seconds(RunMode mode) const override { return 9.0 * mode_time_factor(mode); }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        DeviceSession& s = *ctx.device;
        const DeviceInfo& info = s.info();
        cl::CommandQueue& q = s.queue();

        const StreamLaunch launch = stream_launch(info);
        const std::size_t local = launch.local, items = launch.items;
        const std::uint64_t bytes = buffer_bytes_for(info, last_cache_bytes(device_caches(ctx.earlier, info).caches),
                                                     ctx.options.mode, launch.granule());
        const std::uint64_t floats = bytes / sizeof(float);

        cl::Buffer a = input_buffer(s, bytes);
        cl::Buffer b = make_buffer(s.context(), CL_MEM_READ_WRITE, bytes);
        cl::Buffer sums = make_buffer(s.context(), CL_MEM_READ_WRITE, items * 16 * sizeof(float));
        const double expected_total = static_cast<double>(floats / 8) * 28.0;

        const cl::Program& program = s.kernels().program("peak/bandwidth.cl").program;
        SamplerConfig sampler_config = ceiling_sampler_for(ctx.options.mode);
        // Best-of samples for the four variants that can set the roof; the others get plain ones.
        sampler_config.max_contenders = 4;
        InterleavedSampler sampler(sampler_config);
        std::vector<Labels> labels;
        std::vector<double> moved;
        float seed = 0;
        for (const char* pattern : patterns) {
            for (int w : widths_for(ctx.options.mode, pattern, info)) {
                const cl_uint per_item = static_cast<cl_uint>(floats / static_cast<std::uint64_t>(w) / items);
                for (Access access : accesses_for(ctx.options.mode)) {
                    const std::string name = fmt::format("{}_{}_v{}", name_of(access), pattern, w);
                    cl::Kernel k(program, name.c_str());
                    if (access == Access::read) {
                        set_args(k, a, sums, per_item);
                    } else if (access == Access::write) {
                        seed += 1;
                        set_args(k, b, per_item, seed);
                    } else {
                        set_args(k, a, b, per_item);
                        // An earlier copy left the right answer in b: poison it, so a copy that
                        // skips data cannot pass on its predecessor's output.
                        q.enqueueFillBuffer(b, -1.0f, 0, bytes);
                    }
                    const double moved_bytes = static_cast<double>(access == Access::copy ? 2 * bytes : bytes);
                    sampler.add(launch_batch(s, k, items, local, name), moved_bytes);
                    // Checked now, while the buffers hold this variant's output.
                    verify(q, access, name, b, sums, floats, items, w, seed, expected_total);
                    labels.push_back(
                        {{"access", name_of(access)}, {"pattern", pattern}, {"vector", std::to_string(w)}});
                    moved.push_back(moved_bytes);
                }
            }
        }
        // Chunked reads in two streams per item (streams=2), after the others so that a lookup
        // without the streams label finds the one-stream variant first.
        for (int w : two_stream_widths_for(ctx.options.mode)) {
            const std::string name = fmt::format("read_chunked_pair_v{}", w);
            cl::Kernel k(program, name.c_str());
            set_args(k, a, sums, static_cast<cl_uint>(floats / static_cast<std::uint64_t>(w) / items));
            sampler.add(launch_batch(s, k, items, local, name), static_cast<double>(bytes));
            verify(q, Access::read, name, b, sums, floats, items, w, seed, expected_total);
            labels.push_back(
                {{"access", "read"}, {"pattern", "chunked"}, {"streams", "2"}, {"vector", std::to_string(w)}});
            moved.push_back(static_cast<double>(bytes));
        }
        record(out, sampler.run(), labels, moved);
        out.attributes["buffer_bytes"] = bytes;
        out.attributes["work_items"] = items;
        out.attributes["local_size"] = local;
        out.attributes["sampling"] = sampling_note(sampler_config);
        out.attributes["bytes_counted"] = "read: buffer size; write: buffer size; copy: twice the buffer size";
    }

  private:
    // Several times the last-level cache, so the caches cannot serve the working set (the cache
    // factor raises it on devices with large caches); kernel.memory_levels draws the curve up to
    // here, so past 4x the last cache a larger buffer only costs time. A multiple of the launch's
    // granule, so every width gives each work-item a multiple of 4 vectors.
    // The last level comes from hwloc on a CPU device (a driver may report one CCD's L3 of many).
    static std::uint64_t buffer_bytes_for(const DeviceInfo& info, std::uint64_t last_cache, RunMode mode,
                                          std::uint64_t granule) {
        const std::uint64_t base = mode == RunMode::full ? (1ull << 30) : (128ull << 20);
        const std::uint64_t cache_factor = mode == RunMode::full ? 8 : 4;
        const std::uint64_t cache = std::max(last_cache, info.global_mem_cache_bytes);
        const std::uint64_t wanted = std::max(base, cache * cache_factor);
        return fit_buffer_bytes(info, wanted, 2, granule);
    }

    // The input the read and copy kernels stream: input_value(i) at float i.
    static cl::Buffer input_buffer(DeviceSession& s, std::uint64_t bytes) {
        cl::Buffer a = make_buffer(s.context(), CL_MEM_READ_WRITE, bytes);
        std::vector<float> init(bytes / sizeof(float));
        for (std::uint64_t i = 0; i < init.size(); ++i)
            init[i] = input_value(i);
        s.queue().enqueueWriteBuffer(a, CL_TRUE, 0, bytes, init.data());
        return a;
    }

    // Every variant's rates, then the best as the label-free headline: the memory roof.
    static void record(ProbeResult& out, const std::vector<SampleSet>& sets, const std::vector<Labels>& labels,
                       const std::vector<double>& moved) {
        for (std::size_t i = 0; i < sets.size(); ++i) {
            Measurement m = make_measurement("kernel.bandwidth", "GB/s", labels[i], to_rates(sets[i], moved[i], 1e-9),
                                             sets[i].timer);
            m.iterations_per_sample = sets[i].iterations;
            out.measurements.push_back(std::move(m));
        }
        const std::size_t variants = out.measurements.size();
        out.measurements.push_back(
            headline_from(*best_by_median(out.measurements, "kernel.bandwidth"), "kernel.peak.bandwidth", variants));
    }

    static void verify(cl::CommandQueue& q, Access access, const std::string& name, cl::Buffer& b, cl::Buffer& sums,
                       std::uint64_t floats, std::size_t items, int w, float seed, double expected_total) {
        if (access == Access::read) {
            check_read_sum(q, sums, items * static_cast<std::size_t>(w), expected_total, name);
        } else if (access == Access::write) {
            verify_windows(q, b, floats, name, [&](std::uint64_t f) {
                return static_cast<float>((f / static_cast<std::uint64_t>(w)) & 7) + seed;
            });
        } else {
            verify_windows(q, b, floats, name, input_value);
        }
    }
};

}  // namespace

std::unique_ptr<Probe> make_bandwidth_probe() {
    return std::make_unique<BandwidthProbe>();
}

}  // namespace clprobe
