#pragma once
// The arithmetic of the network layer's figures, kept apart from MPI so unit tests check it.
#include <string>
#include <vector>

namespace clprobe {

// nccl-tests' definitions for an all-reduce of `bytes` per rank over `ranks` ranks taking
// `seconds`: algbw = bytes / seconds; busbw = algbw * 2 (n - 1) / n, the rate each link must
// carry in a ring, so it compares with the point-to-point bandwidth. GB/s (1e9 bytes).
double algorithm_bandwidth(double bytes, double seconds);
double bus_bandwidth_factor(int ranks);
double bus_bandwidth(double bytes, double seconds, int ranks);

// One rank pair's measured bandwidth (median, GB/s).
struct PairBandwidth {
    std::string pair;  // "0-1"
    double gb_per_s = 0;
};

// A pair is slow when its bandwidth is below `fraction` of the median of all pairs' bandwidths.
// Needs at least three pairs: with two, neither is the odd one out. Returns the slow pairs,
// slowest first.
std::vector<PairBandwidth> slow_pairs(const std::vector<PairBandwidth>& pairs, double fraction);
// The median of the pairs' bandwidths (0 for none).
double median_pair_bandwidth(const std::vector<PairBandwidth>& pairs);

// Every unordered pair (a < b) of `ranks` ranks, in the order rank 0 drives them.
std::vector<std::pair<int, int>> rank_pairs(int ranks);
std::string pair_label(int a, int b);  // "0-1"

}  // namespace clprobe
