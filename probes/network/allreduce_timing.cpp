#include "network/allreduce_timing.hpp"

#include <chrono>

#include "core/clock.hpp"
#include "network/mpi_call.hpp"
#include "network/network_support.hpp"

namespace clprobe::net {

AllreduceBuffers::AllreduceBuffers(std::uint64_t count, int rank) : send(count), recv(count, 0.0f) {
    for (std::uint64_t i = 0; i < count; ++i)
        send[i] = contribution(rank, i);
}

float AllreduceBuffers::contribution(int rank, std::uint64_t index) {
    return static_cast<float>(rank + 1) + static_cast<float>(index % 7);
}

bool AllreduceBuffers::sums_ok(int ranks) const {
    for (std::uint64_t i = 0; i < recv.size(); ++i) {
        float want = 0;
        for (int r = 0; r < ranks; ++r)
            want += contribution(r, i);
        if (recv[i] != want) return false;
    }
    return true;
}

void allreduce_sum(const float* send, float* recv, std::uint64_t count) {
    mpi_check(MPI_Allreduce(send, recv, static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
}

std::vector<double> time_allreduce(AllreduceBuffers& b, RunMode mode) {
    const std::uint64_t count = b.send.size();
    const std::int64_t iterations = iterations_for(mode, static_cast<double>(count * sizeof(float)), 3, 1000);
    const auto batch = [&](std::int64_t n) {
        mpi_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        const auto t0 = std::chrono::steady_clock::now();
        for (std::int64_t i = 0; i < n; ++i)
            allreduce_sum(b.send.data(), b.recv.data(), count);
        return max_over_ranks(seconds_since(t0) / static_cast<double>(n));
    };
    batch(std::max<std::int64_t>(1, iterations / 10));
    std::vector<double> seconds;
    for (int s = 0; s < samples_for(mode); ++s)
        seconds.push_back(batch(iterations));
    return seconds;
}

}  // namespace clprobe::net
