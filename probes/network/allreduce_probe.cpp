// network.allreduce: MPI_Allreduce (sum of floats) of host buffers over a size sweep, with
// nccl-tests' definitions: time per call, algbw = bytes / time, busbw = algbw * 2 (n - 1) / n,
// which is comparable with the point-to-point bandwidth of one link. Each sample's time is the
// slowest rank's (a collective ends when its last rank does), so every rank reports the same
// figures. The sums are checked against the values every rank is known to contribute.
#include <chrono>
#include <vector>

#include "core/clock.hpp"
#include "core/network_math.hpp"
#include "network/allreduce_timing.hpp"
#include "network/mpi_call.hpp"
#include "network/network_support.hpp"
#include "probe_factories.hpp"

namespace clprobe {

namespace {

class AllreduceProbe final : public net::MpiProbe {
  public:
    AllreduceProbe() : MpiProbe(network_allreduce_info) {}

    void run(ProbeContext& ctx, ProbeResult& out) override {
        const MpiWorld& w = net::require_world();
        const RunMode mode = ctx.options.mode;
        for (const std::uint64_t bytes : net::allreduce_sizes(mode)) {
            net::AllreduceBuffers buffers(bytes / sizeof(float), w.rank);
            const std::vector<double> seconds = net::time_allreduce(buffers, mode);
            net::verify_on_all_ranks(buffers.sums_ok(w.size),
                                     "all-reduce sums of " + net::size_label(bytes) + " bytes");
            std::vector<double> us, algbw, busbw;
            for (const double s : seconds) {
                us.push_back(s * 1e6);
                algbw.push_back(algorithm_bandwidth(static_cast<double>(bytes), s));
                busbw.push_back(bus_bandwidth(static_cast<double>(bytes), s, w.size));
            }
            const Labels labels{{"size", net::size_label(bytes)}};
            out.measurements.push_back(
                make_measurement("network.allreduce.time", "us", labels, us, TimerKind::host_steady_clock, false));
            out.measurements.push_back(
                make_measurement("network.allreduce.algbw", "GB/s", labels, algbw, TimerKind::host_steady_clock, true));
            out.measurements.push_back(
                make_measurement("network.allreduce.busbw", "GB/s", labels, busbw, TimerKind::host_steady_clock, true));
        }
        out.attributes["ranks"] = w.size;
        out.attributes["bus_factor"] = bus_bandwidth_factor(w.size);
        out.attributes["definitions"] =
            "MPI_Allreduce(MPI_FLOAT, MPI_SUM) of host buffers; time = the slowest rank's time per call; algbw = "
            "bytes / time; busbw = algbw * 2(n-1)/n (nccl-tests); GB = 1e9 bytes";
        out.attributes["sampling"] =
            "fixed iteration counts from the mode and size (the same on every rank), one warm-up batch";
    }
};

}  // namespace

std::unique_ptr<Probe> make_network_allreduce_probe() {
    return std::make_unique<AllreduceProbe>();
}

}  // namespace clprobe
