#pragma once
// The timed all-reduce the network.allreduce and network.device_buffers probes share (MPI build).
#include <cstdint>
#include <vector>

#include "runtime/probe.hpp"

namespace clprobe::net {

// Send and receive buffers of one all-reduce: rank r contributes (r + 1) + (i mod 7) at index i,
// so every sum is an exact small integer in float.
struct AllreduceBuffers {
    std::vector<float> send, recv;
    AllreduceBuffers(std::uint64_t count, int rank);
    static float contribution(int rank, std::uint64_t index);
    // recv holds the sum over `ranks` ranks.
    bool sums_ok(int ranks) const;
};

// One untimed warm-up batch, then the mode's samples: seconds per MPI_Allreduce, each sample
// the slowest rank's.
std::vector<double> time_allreduce(AllreduceBuffers& buffers, RunMode mode);

// One MPI_Allreduce (float sum) of `count` floats from send into recv.
void allreduce_sum(const float* send, float* recv, std::uint64_t count);

}  // namespace clprobe::net
