// network.device_buffers: whether an all-reduce of device buffers goes through host memory, and
// what that costs. MPI libraries take host pointers (GPU-aware builds add CUDA/ROCm pointers);
// an OpenCL buffer has neither, so with ocl-icd and any driver the data is read to a host buffer,
// reduced there and written back to the device. This probe times that staged path (read,
// MPI_Allreduce, write) beside the all-reduce of the same bytes already in host memory.
#include <chrono>

#include "cl/device_session.hpp"
#include "common/probe_support.hpp"
#include "core/clock.hpp"
#include "network/allreduce_timing.hpp"
#include "network/mpi_call.hpp"
#include "network/network_support.hpp"
#include "probe_factories.hpp"

namespace clprobe {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::uint64_t> staged_sizes(RunMode mode) {
    constexpr std::uint64_t KiB = 1024, MiB = 1024 * 1024;
    if (mode == RunMode::quick) return {64 * KiB, MiB, 4 * MiB};
    return {64 * KiB, MiB, 4 * MiB, 16 * MiB};
}

// Seconds per step of each part of the staged path, this rank's own (the copies are local);
// total is the slowest rank's whole step, like the host path's time.
struct StagedTimes {
    std::vector<double> total, read, reduce, write;
};

class DeviceBuffersProbe final : public net::MpiProbe {
  public:
    DeviceBuffersProbe() : MpiProbe(network_device_buffers_info) {}

    void run(ProbeContext& ctx, ProbeResult& out) override {
        const MpiWorld& w = net::require_world();
        DeviceSession& s = net::require_device(ctx);
        const RunMode mode = ctx.options.mode;
        for (const std::uint64_t bytes : staged_sizes(mode)) {
            const std::uint64_t count = bytes / sizeof(float);
            net::AllreduceBuffers host(count, w.rank);
            const std::vector<double> host_seconds = net::time_allreduce(host, mode);
            net::AllreduceBuffers staging(count, w.rank);
            cl::Buffer in, result;
            net::on_all_ranks([&] {
                in = make_buffer(s.context(), CL_MEM_READ_WRITE, bytes);
                result = make_buffer(s.context(), CL_MEM_READ_WRITE, bytes);
                s.queue().enqueueWriteBuffer(in, CL_TRUE, 0, bytes, staging.send.data());
            });
            staging.send.assign(count, 0.0f);  // from here on only the device holds the input
            const StagedTimes t = time_staged(s, in, result, staging, mode);
            s.queue().enqueueReadBuffer(result, CL_TRUE, 0, bytes, staging.recv.data());
            net::verify_on_all_ranks(host.sums_ok(w.size) && staging.sums_ok(w.size),
                                     "all-reduce sums of " + net::size_label(bytes) + " bytes");
            record(out, bytes, host_seconds, t);
        }
        out.attributes["through_host"] = true;
        out.attributes["why"] =
            "OpenCL buffers are not addressable by MPI (GPU-aware MPI covers CUDA/ROCm pointers, not OpenCL): each "
            "all-reduce reads the buffer to host memory, reduces there and writes the result back";
        if (s.info().type == "cpu" || s.info().host_unified_memory)
            out.attributes["device_memory"] =
                "the device shares host memory: the staging copies are memory copies, no bus is crossed";
        out.attributes["stages"] =
            "read and write: this rank's blocking clEnqueueRead/WriteBuffer; allreduce: "
            "MPI_Allreduce of the staged floats; device_staged: the slowest rank's whole step";
    }

  private:
    static StagedTimes time_staged(DeviceSession& s, cl::Buffer& in, cl::Buffer& result, net::AllreduceBuffers& staging,
                                   RunMode mode) {
        const std::uint64_t count = staging.send.size(), bytes = count * sizeof(float);
        const std::int64_t iterations = net::iterations_for(mode, static_cast<double>(bytes), 3, 200);
        StagedTimes t;
        for (int sample = -1; sample < net::samples_for(mode); ++sample) {  // -1: warm-up
            mpi_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
            double read = 0, reduce = 0, write = 0;
            const auto t0 = Clock::now();
            for (std::int64_t i = 0; i < iterations; ++i) {
                auto mark = Clock::now();
                s.queue().enqueueReadBuffer(in, CL_TRUE, 0, bytes, staging.send.data());
                read += seconds_since(mark);
                mark = Clock::now();
                net::allreduce_sum(staging.send.data(), staging.recv.data(), count);
                reduce += seconds_since(mark);
                mark = Clock::now();
                s.queue().enqueueWriteBuffer(result, CL_TRUE, 0, bytes, staging.recv.data());
                write += seconds_since(mark);
            }
            const double n = static_cast<double>(iterations);
            const double total = net::max_over_ranks(seconds_since(t0) / n);
            if (sample < 0) continue;
            t.total.push_back(total);
            t.read.push_back(read / n);
            t.reduce.push_back(reduce / n);
            t.write.push_back(write / n);
        }
        return t;
    }

    static std::vector<double> us(const std::vector<double>& seconds) {
        std::vector<double> out;
        for (const double s : seconds)
            out.push_back(s * 1e6);
        return out;
    }

    static void record(ProbeResult& out, std::uint64_t bytes, const std::vector<double>& host_seconds,
                       const StagedTimes& t) {
        const std::string size = net::size_label(bytes);
        const auto add = [&](const char* metric, const char* unit, Labels labels, std::vector<double> v) {
            labels["size"] = size;
            out.measurements.push_back(
                make_measurement(metric, unit, std::move(labels), std::move(v), TimerKind::host_steady_clock, false));
        };
        add("network.device_buffers.allreduce_time", "us", {{"path", "host_buffer"}}, us(host_seconds));
        add("network.device_buffers.allreduce_time", "us", {{"path", "device_staged"}}, us(t.total));
        add("network.device_buffers.copy_time", "us", {{"copy", "read"}}, us(t.read));
        add("network.device_buffers.copy_time", "us", {{"copy", "write"}}, us(t.write));
        std::vector<double> share;
        for (std::size_t i = 0; i < t.read.size(); ++i) {
            const double whole = t.read[i] + t.reduce[i] + t.write[i];
            share.push_back(whole > 0 ? (t.read[i] + t.write[i]) / whole : 0.0);
        }
        add("network.device_buffers.staging_share", "fraction", {}, share);
    }
};

}  // namespace

std::unique_ptr<Probe> make_network_device_buffers_probe() {
    return std::make_unique<DeviceBuffersProbe>();
}

}  // namespace clprobe
