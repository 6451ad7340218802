#include "attention/attention_math.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace clprobe::attention {

std::vector<float> random_values(std::size_t count, std::uint64_t seed) {
    std::vector<float> out(count);
    std::uint64_t state = seed;
    for (auto& x : out) {
        state += 0x9e3779b97f4a7c15ull;
        std::uint64_t z = state;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        // 24 random bits: exact in float, so host and device start from identical values.
        x = static_cast<float>(static_cast<double>(z >> 40) / 8388608.0 - 1.0);
    }
    return out;
}

void reference_row(const float* q, const float* k, const float* v, std::size_t keys, std::size_t head_dim, double scale,
                   double* out) {
    std::vector<double> s(keys);
    double m = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < keys; ++j) {
        double dot = 0;
        for (std::size_t d = 0; d < head_dim; ++d)
            dot += static_cast<double>(q[d]) * k[j * head_dim + d];
        s[j] = dot * scale;
        m = std::max(m, s[j]);
    }
    double sum = 0;
    for (auto& x : s) {
        x = std::exp(x - m);
        sum += x;
    }
    std::fill(out, out + head_dim, 0.0);
    for (std::size_t j = 0; j < keys; ++j)
        for (std::size_t d = 0; d < head_dim; ++d)
            out[d] += s[j] / sum * v[j * head_dim + d];
}

double row_error(const float* got, const double* want, std::size_t head_dim) {
    double diff = 0, mag = 0;
    for (std::size_t d = 0; d < head_dim; ++d) {
        // NaN fails: the comparison below is false for it, so it is counted as infinite.
        const double e = std::fabs(static_cast<double>(got[d]) - want[d]);
        diff = e == e ? std::max(diff, e) : std::numeric_limits<double>::infinity();
        mag = std::max(mag, std::fabs(want[d]));
    }
    return diff / std::max(mag, std::numeric_limits<double>::min());
}

std::vector<std::uint32_t> rows_to_check(std::uint32_t len, std::uint32_t max_rows) {
    std::vector<std::uint32_t> rows;
    if (len == 0 || max_rows == 0) return rows;
    if (len <= max_rows) {
        for (std::uint32_t i = 0; i < len; ++i)
            rows.push_back(i);
        return rows;
    }
    if (max_rows == 1) return {len - 1};
    for (std::uint32_t r = 0; r < max_rows; ++r)
        rows.push_back(static_cast<std::uint32_t>(static_cast<std::uint64_t>(len - 1) * r / (max_rows - 1)));
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    return rows;
}

double attention_pairs(double len, bool causal) {
    return causal ? len * (len + 1) / 2 : len * len;
}

double prefill_flops(double len, double head_dim, bool causal) {
    return 4.0 * head_dim * attention_pairs(len, causal);
}

}  // namespace clprobe::attention
