#include "core/network_math.hpp"

#include <algorithm>

#include "core/stats.hpp"

namespace clprobe {

double algorithm_bandwidth(double bytes, double seconds) {
    return seconds > 0 ? bytes / seconds * 1e-9 : 0.0;
}

double bus_bandwidth_factor(int ranks) {
    return ranks > 1 ? 2.0 * (ranks - 1) / ranks : 0.0;
}

double bus_bandwidth(double bytes, double seconds, int ranks) {
    return algorithm_bandwidth(bytes, seconds) * bus_bandwidth_factor(ranks);
}

double median_pair_bandwidth(const std::vector<PairBandwidth>& pairs) {
    std::vector<double> v;
    for (const auto& p : pairs)
        v.push_back(p.gb_per_s);
    return v.empty() ? 0.0 : median_of(v);
}

std::vector<PairBandwidth> slow_pairs(const std::vector<PairBandwidth>& pairs, double fraction) {
    std::vector<PairBandwidth> out;
    if (pairs.size() < 3) return out;
    const double typical = median_pair_bandwidth(pairs);
    for (const auto& p : pairs)
        if (p.gb_per_s < fraction * typical) out.push_back(p);
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.gb_per_s < b.gb_per_s; });
    return out;
}

std::vector<std::pair<int, int>> rank_pairs(int ranks) {
    std::vector<std::pair<int, int>> out;
    for (int a = 0; a < ranks; ++a)
        for (int b = a + 1; b < ranks; ++b)
            out.emplace_back(a, b);
    return out;
}

std::string pair_label(int a, int b) {
    return std::to_string(a) + "-" + std::to_string(b);
}

}  // namespace clprobe
