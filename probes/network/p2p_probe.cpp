// network.p2p: point-to-point latency and bandwidth between ranks 0 and 1 over a size sweep, with
// the OSU micro-benchmarks' definitions: latency = half the round trip of a blocking ping-pong
// (osu_latency); bandwidth = bytes of a window of non-blocking sends, ended by the receiver's
// acknowledgement, over the time (osu_bw). Then every rank pair at one size, to find a slow link.
// Rank 0 (the lower rank of a pair) times; its figures are broadcast so every rank's report holds
// the same numbers. Payloads are checked against the sender's pattern.
#include <algorithm>
#include <chrono>

#include "core/clock.hpp"
#include "core/network_math.hpp"
#include "network/mpi_call.hpp"
#include "network/network_support.hpp"
#include "probe_factories.hpp"

namespace clprobe {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int data_tag = 11, ack_tag = 12;
constexpr double window_bytes_cap = 64.0 * 1024 * 1024;  // receive slots of one window, at most

// Messages in flight per window (osu_bw's default 64), fewer for large messages: each needs its
// own receive slot, as MPI forbids two pending receives into one buffer.
int window_for(std::uint64_t bytes) {
    const double fit = window_bytes_cap / static_cast<double>(std::max<std::uint64_t>(1, bytes));
    return static_cast<int>(std::clamp(fit, 1.0, 64.0));
}

struct Exchange {
    int me = 0;
    int peer = 0;
    bool leads = false;  // the lower rank: sends first and times
    std::uint64_t bytes = 0;
};

// One ping-pong batch; seconds per one-way trip at the leader, 0 at the follower.
double ping_pong(const Exchange& x, std::vector<unsigned char>& send, std::vector<unsigned char>& recv,
                 std::int64_t iterations) {
    const int n = static_cast<int>(x.bytes);
    const auto t0 = Clock::now();
    for (std::int64_t i = 0; i < iterations; ++i) {
        if (x.leads) {
            mpi_check(MPI_Send(send.data(), n, MPI_BYTE, x.peer, data_tag, MPI_COMM_WORLD), "MPI_Send");
            mpi_check(MPI_Recv(recv.data(), n, MPI_BYTE, x.peer, data_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                      "MPI_Recv");
        } else {
            mpi_check(MPI_Recv(recv.data(), n, MPI_BYTE, x.peer, data_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                      "MPI_Recv");
            mpi_check(MPI_Send(recv.data(), n, MPI_BYTE, x.peer, data_tag, MPI_COMM_WORLD), "MPI_Send");
        }
    }
    return x.leads ? seconds_since(t0) / (2.0 * static_cast<double>(iterations)) : 0.0;
}

// One streaming batch: `iterations` windows from leader to follower, each acknowledged; GB/s at
// the leader, 0 at the follower.
double stream(const Exchange& x, std::vector<unsigned char>& send, std::vector<unsigned char>& slots, int window,
              std::int64_t iterations) {
    const int n = static_cast<int>(x.bytes);
    std::vector<MPI_Request> requests(static_cast<std::size_t>(window));
    int ack = 0;
    const auto t0 = Clock::now();
    for (std::int64_t i = 0; i < iterations; ++i) {
        for (int w = 0; w < window; ++w) {
            auto* r = &requests[static_cast<std::size_t>(w)];
            if (x.leads)
                mpi_check(MPI_Isend(send.data(), n, MPI_BYTE, x.peer, data_tag, MPI_COMM_WORLD, r), "MPI_Isend");
            else
                mpi_check(MPI_Irecv(slots.data() + static_cast<std::size_t>(w) * x.bytes, n, MPI_BYTE, x.peer, data_tag,
                                    MPI_COMM_WORLD, r),
                          "MPI_Irecv");
        }
        mpi_check(MPI_Waitall(window, requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
        if (x.leads)
            mpi_check(MPI_Recv(&ack, 1, MPI_INT, x.peer, ack_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv (ack)");
        else
            mpi_check(MPI_Send(&ack, 1, MPI_INT, x.peer, ack_tag, MPI_COMM_WORLD), "MPI_Send (ack)");
    }
    const double moved = static_cast<double>(x.bytes) * window * static_cast<double>(iterations);
    return x.leads ? moved / seconds_since(t0) * 1e-9 : 0.0;
}

struct PairFigures {
    std::vector<double> latency_us;  // empty unless asked for
    std::vector<double> gb_per_s;
    bool payload_ok = true;
};

// Latency (optional) and bandwidth samples between this rank and its peer, warm-up first.
PairFigures measure_pair(const Exchange& x, RunMode mode, bool with_latency) {
    PairFigures f;
    std::vector<unsigned char> send(x.bytes), recv(x.bytes, 0);
    net::fill_pattern(send, x.me);
    const int samples = net::samples_for(mode);
    if (with_latency) {
        const std::int64_t iters = net::iterations_for(mode, 2.0 * static_cast<double>(x.bytes), 3, 1000);
        ping_pong(x, send, recv, std::max<std::int64_t>(1, iters / 10));
        for (int s = 0; s < samples; ++s)
            f.latency_us.push_back(ping_pong(x, send, recv, iters) * 1e6);
        // The follower holds the leader's pattern, and the leader got it back unchanged.
        f.payload_ok = net::holds_pattern(recv, 0, x.bytes, x.leads ? x.me : x.peer);
    }
    const int window = window_for(x.bytes);
    std::vector<unsigned char> slots(x.leads ? 0 : x.bytes * static_cast<std::size_t>(window), 0);
    const std::int64_t iters = net::iterations_for(mode, static_cast<double>(x.bytes) * window, 2, 100);
    stream(x, send, slots, window, 1);
    for (int s = 0; s < samples; ++s)
        f.gb_per_s.push_back(stream(x, send, slots, window, iters));
    if (!x.leads)
        for (int w = 0; w < window && f.payload_ok; ++w)
            f.payload_ok = net::holds_pattern(slots, static_cast<std::uint64_t>(w) * x.bytes, x.bytes, x.peer);
    return f;
}

class P2pProbe final : public net::MpiProbe {
  public:
    P2pProbe() : MpiProbe(network_p2p_info) {}

    void run(ProbeContext& ctx, ProbeResult& out) override {
        const MpiWorld& w = net::require_world();
        const RunMode mode = ctx.options.mode;
        const int samples = net::samples_for(mode);
        for (const std::uint64_t bytes : net::p2p_sizes(mode)) {
            PairFigures f;
            if (w.rank <= 1) f = measure_pair({w.rank, 1 - w.rank, w.rank == 0, bytes}, mode, true);
            net::verify_on_all_ranks(f.payload_ok, "point-to-point payload of " + net::size_label(bytes) + " bytes");
            f.latency_us.resize(static_cast<std::size_t>(samples));
            f.gb_per_s.resize(static_cast<std::size_t>(samples));
            net::share_from(0, f.latency_us);
            net::share_from(0, f.gb_per_s);
            const Labels labels{{"size", net::size_label(bytes)}, {"pair", pair_label(0, 1)}};
            out.measurements.push_back(make_measurement("network.p2p.latency", "us", labels, f.latency_us,
                                                        TimerKind::host_steady_clock, false));
            out.measurements.push_back(make_measurement("network.p2p.bandwidth", "GB/s", labels, f.gb_per_s,
                                                        TimerKind::host_steady_clock, true));
        }
        scan_pairs(w, mode, out);
        out.attributes["definitions"] =
            "latency: half the round trip of a blocking MPI_Send/MPI_Recv ping-pong (osu_latency); bandwidth: a "
            "window of MPI_Isend acknowledged by the receiver, bytes over time at the sender (osu_bw); GB = 1e9 bytes";
        out.attributes["sampling"] =
            "fixed iteration counts from the mode and size (the same on every rank), one "
            "warm-up batch, samples timed by the lower rank of the pair and broadcast";
        out.attributes["timed_by"] = 0;
    }

  private:
    // Every pair (a < b) at one size, one pair at a time: rank 0 drives the order, the others
    // wait at a barrier. With 2 ranks this is the sweep's pair once more, at the scan size.
    static void scan_pairs(const MpiWorld& w, RunMode mode, ProbeResult& out) {
        const std::uint64_t bytes = net::pair_scan_bytes(mode);
        const auto samples = static_cast<std::size_t>(net::samples_for(mode));
        bool ok = true;
        for (const auto& [a, b] : rank_pairs(w.size)) {
            PairFigures f;
            if (w.rank == a || w.rank == b)
                f = measure_pair({w.rank, w.rank == a ? b : a, w.rank == a, bytes}, mode, false);
            ok = ok && f.payload_ok;
            mpi_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
            f.gb_per_s.resize(samples);
            net::share_from(a, f.gb_per_s);
            out.measurements.push_back(make_measurement("network.pair.bandwidth", "GB/s",
                                                        {{"pair", pair_label(a, b)}, {"size", net::size_label(bytes)}},
                                                        f.gb_per_s, TimerKind::host_steady_clock, true));
        }
        net::verify_on_all_ranks(ok, "pair scan payload");
        out.attributes["pairs"] = rank_pairs(w.size).size();
    }
};

}  // namespace

std::unique_ptr<Probe> make_network_p2p_probe() {
    return std::make_unique<P2pProbe>();
}

}  // namespace clprobe
