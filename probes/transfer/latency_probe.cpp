// transfer.latency: what one small transfer costs (the floor under which batching pays), and the
// host's share of it: the enqueue overhead (host time of a blocking transfer minus its device
// time) and the cost of a clFinish round trip on an idle queue.
#include <fmt/core.h>

#include <algorithm>

#include "cl/cl_error.hpp"
#include "cl/device_session.hpp"
#include "common/probe_support.hpp"
#include "core/stop_points.hpp"
#include "probe_factories.hpp"
#include "transfer/transfer_support.hpp"

namespace clprobe {

namespace {

using namespace transfer;

// One cache line: small enough that the copy itself is negligible next to the fixed costs.
constexpr std::size_t small_bytes = 64;
constexpr std::uint32_t seed = 7;

// One metric of the sampler's variants, in the order they were added.
struct Row {
    std::string metric;
    Labels labels;
};

// Latency: a blocking small transfer as the user waits for it (host clock).
BatchFunction blocking_transfers(cl::CommandQueue& q, cl::Buffer& device, std::uint32_t* host, bool h2d) {
    return [&q, &device, host, h2d](std::int64_t n) {
        const double t = host_seconds([&] {
            for (std::int64_t i = 0; i < n; ++i) {
                if (i % 64 == 0) check_stop();
                if (h2d)
                    q.enqueueWriteBuffer(device, CL_TRUE, 0, small_bytes, host);
                else
                    q.enqueueReadBuffer(device, CL_TRUE, 0, small_bytes, host);
            }
        });
        return TimedBatch{t, TimerKind::host_steady_clock};
    };
}

// Enqueue overhead: host time of blocking transfers minus what the device spent on them.
BatchFunction enqueue_overhead(cl::CommandQueue& q, cl::Buffer& device, std::uint32_t* host) {
    return [&q, &device, host](std::int64_t n) {
        std::vector<cl::Event> events(static_cast<std::size_t>(n));
        const double host_time = host_seconds([&] {
            for (std::int64_t i = 0; i < n; ++i) {
                if (i % 64 == 0) check_stop();
                q.enqueueWriteBuffer(device, CL_TRUE, 0, small_bytes, host, nullptr,
                                     &events[static_cast<std::size_t>(i)]);
            }
        });
        double device_time = 0;
        for (const auto& e : events)
            device_time += command_seconds(e);
        // Never zero or negative: a driver whose timestamps cover the whole call leaves no
        // measurable overhead, which the floor of 1 ns per transfer reports as such.
        return TimedBatch{std::max(host_time - device_time, 1e-9 * static_cast<double>(n)),
                          TimerKind::host_steady_clock};
    };
}

// A clFinish with nothing pending: the floor cost of every synchronisation.
BatchFunction idle_finishes(cl::CommandQueue& q) {
    return [&q](std::int64_t n) {
        const double t = host_seconds([&] {
            for (std::int64_t i = 0; i < n; ++i) {
                if (i % 64 == 0) check_stop();
                cl_check(clFinish(q()), "clFinish");
            }
        });
        return TimedBatch{t, TimerKind::host_steady_clock};
    };
}

// Every row in microseconds, then the best path per direction as the headline latency.
void record(ProbeResult& out, const std::vector<Row>& rows, const std::vector<SampleSet>& sets) {
    for (std::size_t i = 0; i < sets.size(); ++i) {
        Measurement m =
            make_measurement(rows[i].metric, "us", rows[i].labels, to_times(sets[i], 1e6), sets[i].timer, false);
        m.iterations_per_sample = sets[i].iterations;
        out.measurements.push_back(std::move(m));
    }
    for (const char* metric : {"transfer.h2d.latency", "transfer.d2h.latency"}) {
        const Measurement* best = best_by_median(out.measurements, metric);
        if (best) out.measurements.push_back(headline_from(*best, metric, 2));
    }
}

class LatencyProbe final : public Probe {
  public:
    std::string id() const override { return "transfer.latency"; }
    std::string layer() const override { return "transfer"; }
    std::string title() const override { return "Small-transfer latency and host-side cost"; }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        DeviceSession& s = *ctx.device;
        cl::CommandQueue& q = s.queue();
        HostMemory pageable = allocate_host(granule);
        fill_pattern(pageable.get(), granule / 4, seed);
        cl::Buffer device = make_buffer(s.context(), CL_MEM_READ_WRITE, granule);
        cl::Buffer pinned = make_buffer(s.context(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, granule);
        std::uint32_t* staging = nullptr;
        try {
            staging = static_cast<std::uint32_t*>(
                q.enqueueMapBuffer(pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, granule));
        } catch (const cl::Error& e) {
            throw ClError("clEnqueueMapBuffer", e.err(), "pinned staging buffer");
        }
        fill_pattern(staging, granule / 4, seed);

        SamplerConfig config = sampler_for(ctx.options.mode);
        config.target_seconds = ctx.options.mode == RunMode::quick ? 0.003 : 0.01;
        InterleavedSampler sampler(config);
        std::vector<Row> rows;
        for (const char* path : {"pageable", "pinned"})
            for (const char* dir : {"h2d", "d2h"}) {
                std::uint32_t* host = std::string(path) == "pinned" ? staging : pageable.get();
                const bool h2d = std::string(dir) == "h2d";
                if (h2d)
                    poison_buffer(q, device, small_bytes);
                else
                    poison_windows(host, small_bytes);
                sampler.add(blocking_transfers(q, device, host, h2d));
                const std::string what = fmt::format("{} {} {} B", dir, path, small_bytes);
                if (h2d)
                    verify_buffer(q, device, small_bytes, seed, what);
                else
                    verify_windows(host, small_bytes, seed, what);
                rows.push_back({fmt::format("transfer.{}.latency", dir), {{"path", path}}});
            }
        if (s.profiling()) {
            sampler.add(enqueue_overhead(q, device, pageable.get()));
            rows.push_back({"transfer.host.enqueue_overhead", {{"path", "pageable"}}});
        } else {
            out.attributes["enqueue_overhead"] = "not measured: the queue cannot profile commands";
        }
        sampler.add(idle_finishes(q));
        rows.push_back({"transfer.host.finish_time", {}});
        record(out, rows, sampler.run());
        q.enqueueUnmapMemObject(pinned, staging);
        q.finish();
        out.attributes["transfer_bytes"] = small_bytes;
        out.attributes["sampling"] = sampling_note(config);
        out.attributes["definitions"] = {
            {"latency", "host time of one blocking clEnqueueWrite/ReadBuffer of 64 bytes"},
            {"enqueue_overhead", "host time of a blocking 64-byte write minus its END - START device time"},
            {"finish_time", "host time of clFinish on a queue with nothing pending"}};
    }
};

}  // namespace

std::unique_ptr<Probe> make_transfer_latency_probe() {
    return std::make_unique<LatencyProbe>();
}

}  // namespace clprobe
