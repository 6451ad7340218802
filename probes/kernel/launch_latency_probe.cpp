// kernel.launch: what one kernel launch costs before any work is done. Small kernels (decode
// steps, per-iteration GLM updates) pay this on every call.
#include <algorithm>
#include <chrono>

#include "cl/cl_error.hpp"
#include "cl/command_trace.hpp"
#include "cl/device_session.hpp"
#include "common/probe_support.hpp"
#include "core/clock.hpp"
#include "core/launch_metrics.hpp"
#include "probe_factories.hpp"

namespace clprobe {

namespace {

class LaunchLatencyProbe final : public Probe {
  public:
    std::string id() const override { return "kernel.launch"; }
    std::string layer() const override { return "kernel"; }
    std::string title() const override { return "Kernel launch latency"; }
    // Thousands of empty launches.
    double expected_seconds(RunMode mode) const override { return 1.4 * mode_time_factor(mode); }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        DeviceSession& s = *ctx.device;
        cl::CommandQueue& q = s.queue();
        cl::Kernel k = s.kernels().kernel("peak/launch.cl", "empty");
        auto enqueue = [&](cl::Event* e) {
            q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(1), cl::NullRange, nullptr, e);
        };

        SamplerConfig config = sampler_for(ctx.options.mode);
        config.max_iterations = 100000;

        // Round trip: enqueue, then wait for completion, one launch at a time (host clock: this
        // is what a host loop that synchronises every step experiences).
        const SampleSet round_trip = run_samples(
            [&](std::int64_t n) {
                const auto t = std::chrono::steady_clock::now();
                for (std::int64_t i = 0; i < n; ++i) {
                    enqueue(nullptr);
                    cl_check(clFinish(q()), "clFinish");
                }
                return TimedBatch{seconds_since(t), TimerKind::host_steady_clock};
            },
            config);
        add(out, "round_trip", round_trip);

        // Back to back: many launches, one wait; the interval between launches a pipelined
        // host loop can sustain.
        const SampleSet back_to_back = run_samples(
            [&](std::int64_t n) {
                const auto t = std::chrono::steady_clock::now();
                for (std::int64_t i = 0; i < n; ++i)
                    enqueue(nullptr);
                cl_check(clFinish(q()), "clFinish");
                return TimedBatch{seconds_since(t), TimerKind::host_steady_clock};
            },
            config);
        add(out, "back_to_back", back_to_back);

        // Enqueue to start, from the device's own timestamps (queued -> start).
        if (s.profiling()) {
            // One empty launch at a time, waited for, summing one interval of its profiling
            // timestamps; `traced` launches also go to the --trace timeline.
            auto profiled_launches = [&](double (*interval)(const cl::Event&), bool traced) {
                return [&, interval, traced](std::int64_t n) {
                    double total = 0;
                    for (std::int64_t i = 0; i < n; ++i) {
                        cl::Event e;
                        enqueue(&e);
                        e.wait();
                        total += interval(e);
                        if (traced) CommandTrace::instance().record(e, "empty kernel");
                    }
                    return TimedBatch{total, TimerKind::device_profiling};
                };
            };
            const SampleSet queued = run_samples(profiled_launches(queued_to_start_seconds, true), config);
            if (queued.seconds_per_iteration.front() > 0) add(out, "enqueue_to_start", queued);

            // Device time of the empty kernel itself (START -> END): no launch on this device runs
            // shorter, so the trace rules hold a tiny kernel against this floor as well as a roof.
            // As many launches per sample as enqueue_to_start took: calibrating on a device time of
            // well under a microsecond would wait out tens of thousands of launches (20 s on PoCL).
            SamplerConfig per_launch = config;
            per_launch.max_iterations = std::max<std::int64_t>(1, queued.iterations);
            const SampleSet device_time = run_samples(profiled_launches(command_seconds, false), per_launch);
            // Its own metric, not a kind of kernel.launch.latency: on PoCL it moves 10x between runs
            // (0.4-3.7 us), and compare --baseline-repeat pools a family's movement, which would
            // have widened the band of every launch latency with it.
            if (device_time.seconds_per_iteration.front() > 0) {
                Measurement m = make_measurement(empty_launch_metric, "us", {}, to_times(device_time, 1e6),
                                                 device_time.timer, /*higher_is_better=*/false);
                m.iterations_per_sample = device_time.iterations;
                out.measurements.push_back(std::move(m));
            }
        } else {
            out.attributes["enqueue_to_start"] = "not measured: the queue has no profiling";
            out.attributes["empty_launch"] = "not measured: the queue has no profiling";
        }
    }

  private:
    static void add(ProbeResult& out, const char* kind, const SampleSet& set) {
        Measurement m = make_measurement("kernel.launch.latency", "us", {{"kind", kind}}, to_times(set, 1e6), set.timer,
                                         /*higher_is_better=*/false);
        m.iterations_per_sample = set.iterations;
        out.measurements.push_back(std::move(m));
    }
};

}  // namespace

std::unique_ptr<Probe> make_launch_latency_probe() {
    return std::make_unique<LaunchLatencyProbe>();
}

}  // namespace clprobe
