// transfer.overlap: does this device and driver run a copy while a kernel runs? A stand-in step
// (upload a block, run a kernel of about the upload's duration on another block, download a
// third) is timed serially on one queue and overlapped on three queues. The serial variant is the
// baseline of the `transfer.pipeline` stand-in pipeline, which the ranking uses when no workload
// pipeline was measured.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "cl/cl_error.hpp"
#include "cl/device_session.hpp"
#include "common/probe_support.hpp"
#include "core/pipeline_stages.hpp"
#include "core/stop_points.hpp"
#include "probe_factories.hpp"
#include "transfer/transfer_support.hpp"

namespace clprobe {

namespace {

using namespace transfer;

constexpr std::uint32_t upload_seed = 11, download_seed = 12;
constexpr float chain_a = 1.0f, chain_b = 0.5f;
const std::string stage_metric = std::string(pipeline_ids::transfer) + ".stage_time";
const std::string step_metric = std::string(pipeline_ids::transfer) + ".step_time";

std::uint64_t block_bytes(RunMode mode) {
    return mode == RunMode::quick ? (8ull << 20) : mode == RunMode::full ? (64ull << 20) : (16ull << 20);
}

struct Blocks {
    std::uint64_t bytes = 0;
    cl::Buffer upload_dev, kernel_in, kernel_out, download_dev, upload_pinned, download_pinned;
    std::uint32_t* upload_host = nullptr;    // mapping of upload_pinned
    std::uint32_t* download_host = nullptr;  // mapping of download_pinned
};

class OverlapProbe final : public Probe {
  public:
    std::string id() const override { return "transfer.overlap"; }
    std::string layer() const override { return "transfer"; }
    std::string title() const override { return "Copy/compute overlap and the stand-in transfer pipeline"; }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        DeviceSession& s = *ctx.device;
        const DeviceInfo& info = s.info();
        // Four device buffers and two pinned ones of one block each.
        const std::uint64_t bytes = fit_buffer_bytes(info, block_bytes(ctx.options.mode), 6, granule);
        const std::size_t floats = bytes / sizeof(float);
        Blocks b = allocate(s, bytes);
        cl::CommandQueue& q = s.queue();
        cl::CommandQueue q_compute = s.make_queue();
        cl::CommandQueue q_download = s.make_queue();

        cl::Kernel kernel = s.kernels().kernel("transfer/overlap.cl", "chain");
        kernel.setArg(0, b.kernel_in);
        kernel.setArg(1, b.kernel_out);
        kernel.setArg(3, chain_a);
        kernel.setArg(4, chain_b);
        const cl_uint rounds = match_upload(s, b, kernel, floats);
        kernel.setArg(2, rounds);

        SamplerConfig config = sampler_for(ctx.options.mode);
        config.budget_seconds = std::min(config.budget_seconds, 2.0);
        InterleavedSampler sampler(config);
        const std::size_t size = bytes;
        const cl::NDRange global(floats);
        // Serial: the way a step is first written, one queue, each stage after the last.
        sampler.add([&q, &b, &kernel, size, global](std::int64_t n) {
            const double t = host_seconds([&] {
                for (std::int64_t i = 0; i < n; ++i) {
                    check_stop();
                    q.enqueueWriteBuffer(b.upload_dev, CL_FALSE, 0, size, b.upload_host);
                    q.enqueueNDRangeKernel(kernel, cl::NullRange, global, cl::NullRange);
                    q.enqueueReadBuffer(b.download_dev, CL_FALSE, 0, size, b.download_host);
                    q.finish();
                }
            });
            return TimedBatch{t, TimerKind::host_steady_clock};
        });
        verify_step(s, b, floats, rounds, "serial step");
        // Overlapped: each stage on its own queue (they touch different buffers), one wait.
        sampler.add([&q, &q_compute, &q_download, &b, &kernel, size, global](std::int64_t n) {
            const double t = host_seconds([&] {
                for (std::int64_t i = 0; i < n; ++i) {
                    check_stop();
                    q.enqueueWriteBuffer(b.upload_dev, CL_FALSE, 0, size, b.upload_host);
                    q_compute.enqueueNDRangeKernel(kernel, cl::NullRange, global, cl::NullRange);
                    q_download.enqueueReadBuffer(b.download_dev, CL_FALSE, 0, size, b.download_host);
                    q.flush();
                    q_compute.flush();
                    q_download.flush();
                    q.finish();
                    q_compute.finish();
                    q_download.finish();
                }
            });
            return TimedBatch{t, TimerKind::host_steady_clock};
        });
        verify_step(s, b, floats, rounds, "overlapped step");
        const std::vector<SampleSet> steps = sampler.run();

        // Stage times of the serial step, each stage timed on its own.
        record(out, stage_times(s, b, kernel, global, config.samples), steps);
        q.enqueueUnmapMemObject(b.upload_pinned, b.upload_host);
        q.enqueueUnmapMemObject(b.download_pinned, b.download_host);
        q.finish();
        out.attributes["block_bytes"] = bytes;
        out.attributes["kernel_rounds"] = rounds;
        out.attributes["host_memory"] = "pinned (CL_MEM_ALLOC_HOST_PTR, mapped once): overlap needs it on GPUs";
        out.attributes["sampling"] = sampling_note(config);
        out.attributes["stages"] =
            "upload: clEnqueueWriteBuffer of one block; compute: a kernel on another block, sized to take about the "
            "upload's time; download: clEnqueueReadBuffer of a third block";
    }

  private:
    struct StageTimes {
        std::vector<double> seconds[3];
        TimerKind timer = TimerKind::device_profiling;
    };

    static void record(ProbeResult& out, const StageTimes& stages, const std::vector<SampleSet>& steps) {
        for (std::size_t k = 0; k < 3; ++k)
            out.measurements.push_back(make_measurement(
                stage_metric, "s", {{"stage", stage_name(transfer_pipeline_stages[k])}, {"variant", "serial"}},
                stages.seconds[k], stages.timer, false));
        const char* variant_names[] = {"serial", "overlapped"};
        for (std::size_t v = 0; v < 2; ++v) {
            Measurement m = make_measurement(step_metric, "s", {{"variant", variant_names[v]}}, to_times(steps[v], 1.0),
                                             steps[v].timer, false);
            m.iterations_per_sample = steps[v].iterations;
            out.measurements.push_back(std::move(m));
        }
        out.measurements.push_back(efficiency(out, steps));
    }

    // The share of the possible saving (every stage but the longest hidden) that running the
    // stages on separate queues achieved, one value per round of samples.
    static Measurement efficiency(const ProbeResult& out, const std::vector<SampleSet>& steps) {
        double sum = 0, longest = 0;
        for (std::size_t k = 0; k < 3; ++k) {
            const double median =
                find_measurement(out, stage_metric, {{"stage", stage_name(transfer_pipeline_stages[k])}})
                    ->summary.median;
            sum += median;
            longest = std::max(longest, median);
        }
        const double possible = sum - longest;
        std::vector<double> efficiency;
        const auto& serial = steps[0].seconds_per_iteration;
        const auto& overlapped = steps[1].seconds_per_iteration;
        for (std::size_t i = 0; i < std::min(serial.size(), overlapped.size()); ++i)
            efficiency.push_back(std::clamp((serial[i] - overlapped[i]) / possible, 0.0, 1.0));
        Measurement eff = make_measurement("transfer.overlap.efficiency", "fraction", {}, std::move(efficiency),
                                           TimerKind::host_steady_clock);
        eff.note =
            "(serial step - overlapped step) / (sum of the serial stages - the longest stage), per round of "
            "samples, clamped to [0, 1]";
        return eff;
    }

    static cl::Buffer pinned_mapped(DeviceSession& s, std::uint64_t bytes, std::uint32_t*& host) {
        cl::Buffer buffer = make_buffer(s.context(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes);
        try {
            host = static_cast<std::uint32_t*>(
                s.queue().enqueueMapBuffer(buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes));
        } catch (const cl::Error& e) {
            throw ClError("clEnqueueMapBuffer", e.err(), "pinned staging buffer");
        }
        return buffer;
    }

    static Blocks allocate(DeviceSession& s, std::uint64_t bytes) {
        Blocks b;
        b.bytes = bytes;
        b.upload_dev = make_buffer(s.context(), CL_MEM_READ_WRITE, bytes);
        b.kernel_in = make_buffer(s.context(), CL_MEM_READ_WRITE, bytes);
        b.kernel_out = make_buffer(s.context(), CL_MEM_READ_WRITE, bytes);
        b.download_dev = make_buffer(s.context(), CL_MEM_READ_WRITE, bytes);
        b.upload_pinned = pinned_mapped(s, bytes, b.upload_host);
        b.download_pinned = pinned_mapped(s, bytes, b.download_host);
        fill_pattern(b.upload_host, bytes / 4, upload_seed);
        // The download source holds its own pattern, written once; the step only ever reads it.
        fill_pattern(b.download_host, bytes / 4, download_seed);
        cl::CommandQueue& q = s.queue();
        q.enqueueWriteBuffer(b.download_dev, CL_TRUE, 0, bytes, b.download_host);
        std::vector<float> in(bytes / sizeof(float));
        for (std::size_t i = 0; i < in.size(); ++i)
            in[i] = static_cast<float>(i & 7);
        q.enqueueWriteBuffer(b.kernel_in, CL_TRUE, 0, bytes, in.data());
        q.enqueueWriteBuffer(b.upload_dev, CL_TRUE, 0, bytes, b.upload_host);  // first-touch pages now
        q.finish();
        return b;
    }

    // Kernel rounds so that the compute stage takes about as long as the upload: the case where
    // overlap can hide the most.
    static cl_uint match_upload(DeviceSession& s, Blocks& b, cl::Kernel& kernel, std::size_t floats) {
        cl::CommandQueue& q = s.queue();
        const auto time = [&](auto&& enqueue) {
            return host_seconds([&] {
                enqueue();
                q.finish();
            });
        };
        const double upload =
            std::min(time([&] { q.enqueueWriteBuffer(b.upload_dev, CL_FALSE, 0, b.bytes, b.upload_host); }),
                     time([&] { q.enqueueWriteBuffer(b.upload_dev, CL_FALSE, 0, b.bytes, b.upload_host); }));
        constexpr cl_uint probe_rounds = 64;
        kernel.setArg(2, probe_rounds);
        const auto launch = [&] { q.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(floats), cl::NullRange); };
        time(launch);  // the first launch pays for compilation and page faults
        const double compute = std::min(time(launch), time(launch));
        // Every partial sum x + k/2 must be exact in float: below 2^22 floats are spaced 0.25 or finer.
        const double wanted = probe_rounds * upload / std::max(compute, 1e-9);
        return static_cast<cl_uint>(std::clamp(wanted, 1.0, double(1 << 22)));
    }

    static void verify_step(DeviceSession& s, Blocks& b, std::size_t floats, cl_uint rounds, const std::string& what) {
        cl::CommandQueue& q = s.queue();
        verify_buffer(q, b.upload_dev, b.bytes, upload_seed, what + ": upload");
        verify_windows(b.download_host, b.bytes, download_seed, what + ": download");
        std::vector<float> result(floats);
        q.enqueueReadBuffer(b.kernel_out, CL_TRUE, 0, b.bytes, result.data());
        for (std::size_t i = 0; i < floats; ++i) {
            const double want = static_cast<double>(i & 7) + 0.5 * rounds;
            if (static_cast<double>(result[i]) != want)
                throw VerificationError(
                    fmt::format("{}: compute output {} is {} (expected {})", what, i, result[i], want));
        }
        // Poison what the next variant must rewrite.
        poison_buffer(q, b.upload_dev, b.bytes);
        poison_windows(b.download_host, b.bytes);
        q.enqueueFillBuffer(b.kernel_out, -1.0f, 0, b.bytes);
        q.finish();
    }

    // Each stage alone, `samples` times: device time from the events, or the host clock around
    // the stage and a finish when the queue cannot profile.
    static StageTimes stage_times(DeviceSession& s, Blocks& b, cl::Kernel& kernel, const cl::NDRange& global,
                                  int samples) {
        cl::CommandQueue& q = s.queue();
        StageTimes out;
        if (!s.profiling()) out.timer = TimerKind::host_steady_clock;
        for (int i = 0; i < samples; ++i) {
            check_stop();
            cl::Event e[3];
            double host[3];
            host[0] = host_seconds([&] {
                q.enqueueWriteBuffer(b.upload_dev, CL_FALSE, 0, b.bytes, b.upload_host, nullptr, &e[0]);
                q.finish();
            });
            host[1] = host_seconds([&] {
                q.enqueueNDRangeKernel(kernel, cl::NullRange, global, cl::NullRange, nullptr, &e[1]);
                q.finish();
            });
            host[2] = host_seconds([&] {
                q.enqueueReadBuffer(b.download_dev, CL_FALSE, 0, b.bytes, b.download_host, nullptr, &e[2]);
                q.finish();
            });
            for (int k = 0; k < 3; ++k) {
                const double device = s.profiling() ? command_seconds(e[k]) : 0;
                if (device <= 0) out.timer = TimerKind::host_steady_clock;
                out.seconds[k].push_back(device > 0 ? device : host[k]);
            }
        }
        return out;
    }
};

}  // namespace

std::unique_ptr<Probe> make_transfer_overlap_probe() {
    return std::make_unique<OverlapProbe>();
}

}  // namespace clprobe
