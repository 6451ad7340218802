#include "attention/request_lengths.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "attention/attention_math.hpp"

namespace clprobe::attention {

std::vector<std::uint32_t> skewed_lengths(std::size_t count, std::uint32_t longest, std::uint64_t seed) {
    std::vector<std::uint32_t> lengths;
    if (count == 0 || longest == 0) return lengths;
    const double shortest = std::min<double>(16, longest);
    const std::vector<float> u = random_values(count, seed);
    for (std::size_t i = 0; i < count; ++i) {
        const double t = (static_cast<double>(u[i]) + 1.0) / 2.0;  // [0, 1)
        // Log-uniform: as many prompts in 16..32 tokens as in 1024..2048.
        const double len = shortest * std::pow(longest / shortest, t);
        lengths.push_back(std::clamp<std::uint32_t>(static_cast<std::uint32_t>(len), 1, longest));
    }
    lengths[seed % count] = longest;
    return lengths;
}

std::vector<Bucket> length_buckets(const std::vector<std::uint32_t>& lengths, std::size_t buckets) {
    if (buckets == 0) throw std::invalid_argument("length_buckets: no buckets");
    std::vector<std::size_t> order(lengths.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return lengths[a] < lengths[b]; });
    const std::size_t n = std::min(buckets, lengths.size());
    std::vector<Bucket> out;
    for (std::size_t b = 0; b < n; ++b) {
        Bucket bucket;
        for (std::size_t i = b * order.size() / n; i < (b + 1) * order.size() / n; ++i) {
            bucket.members.push_back(order[i]);
            bucket.extent = std::max(bucket.extent, lengths[order[i]]);
        }
        out.push_back(std::move(bucket));
    }
    return out;
}

double padding_fraction(const std::vector<std::uint32_t>& lengths, const std::vector<std::uint32_t>& extents,
                        bool causal) {
    double useful = 0, done = 0;
    for (std::size_t i = 0; i < lengths.size(); ++i) {
        useful += attention_pairs(lengths[i], causal);
        done += attention_pairs(std::max(lengths[i], extents.at(i)), causal);
    }
    return done > 0 ? 1.0 - useful / done : 0.0;
}

std::vector<std::uint32_t> extents_of(const std::vector<std::uint32_t>& lengths, const std::vector<Bucket>& buckets) {
    std::vector<std::uint32_t> extents(lengths);
    for (const auto& b : buckets)
        for (std::size_t i : b.members)
            extents[i] = b.extent;
    return extents;
}

}  // namespace clprobe::attention
