#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

namespace clprobe {

double student_t_975(std::size_t dof) {
    // Exact table up to 30 degrees of freedom; beyond, interpolate linearly in 1/dof towards
    // the normal quantile, which is accurate to 1e-3 for the sample counts a run takes.
    static constexpr double table[] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                       2.201, 2.179,  2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080,
                                       2.074, 2.069,  2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    if (dof == 0) throw std::invalid_argument("student_t_975: zero degrees of freedom");
    if (dof <= 30) return table[dof];
    static constexpr struct { double dof, t; } tail[] = {{30, 2.042}, {40, 2.021}, {60, 2.000}, {120, 1.980}};
    const double x = 1.0 / static_cast<double>(dof);
    for (std::size_t i = 0; i + 1 < std::size(tail); ++i) {
        const double x0 = 1.0 / tail[i].dof, x1 = 1.0 / tail[i + 1].dof;
        if (x <= x0 && x >= x1) return tail[i + 1].t + (tail[i].t - tail[i + 1].t) * (x - x1) / (x0 - x1);
    }
    const double x0 = 1.0 / 120.0;
    return 1.960 + (1.980 - 1.960) * x / x0;
}

double median_of(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double median_absolute_deviation(const std::vector<double>& values, double center) {
    std::vector<double> d;
    d.reserve(values.size());
    for (const double v : values)
        d.push_back(std::fabs(v - center));
    return median_of(std::move(d));
}

double robust_cv(std::vector<double> samples) {
    if (samples.empty()) return 0;
    const double median = upper_median(samples);
    for (double& s : samples)
        s = std::fabs(s - median);
    const double cv = mad_to_stddev * upper_median(std::move(samples)) / median;
    return std::isfinite(cv) ? cv : 0;
}

std::pair<double, double> bootstrap_ratio_interval(const std::vector<double>& a, const std::vector<double>& b,
                                                   int resamples, unsigned seed) {
    if (a.empty() || b.empty()) return {1, 1};
    // A fixed seed: the same two reports always give the same verdicts.
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::size_t> pick_a(0, a.size() - 1), pick_b(0, b.size() - 1);
    std::vector<double> ratios;
    ratios.reserve(static_cast<std::size_t>(std::max(resamples, 0)));
    std::vector<double> ra(a.size()), rb(b.size());
    for (int i = 0; i < resamples; ++i) {
        for (auto& x : ra)
            x = a[pick_a(rng)];
        for (auto& x : rb)
            x = b[pick_b(rng)];
        const double ma = median_of(ra);
        if (ma > 0) ratios.push_back(median_of(rb) / ma);
    }
    if (ratios.empty()) return {1, 1};
    std::sort(ratios.begin(), ratios.end());
    const auto at = [&](double q) {
        const double last = static_cast<double>(ratios.size() - 1);
        return ratios[static_cast<std::size_t>(std::clamp(q * last, 0.0, last))];
    };
    return {at(0.025), at(0.975)};
}

double relative_noise(const Summary& a, const Summary& b) {
    // The floor keeps a handful of identical samples (cv 0) from making any gap look certain.
    return std::max(0.01, a.cv + b.cv);
}

double comparison_confidence(const Summary& better, const Summary& worse) {
    return comparison_confidence(better.median, worse.median, relative_noise(better, worse));
}

double comparison_confidence(double better_median, double worse_median, double noise) {
    const double hi = std::max(better_median, worse_median);
    const double lo = std::min(better_median, worse_median);
    if (lo <= 0) return hi > 0 ? 1.0 : 0.0;
    const double gap = hi / lo - 1.0;
    if (gap <= 2 * noise) return 0.0;
    return std::clamp(1.0 - 2 * noise / gap, 0.0, 1.0);
}

double separation_confidence(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() < separation_min_samples || b.size() < separation_min_samples) return 0;
    const auto [a_min, a_max] = std::minmax_element(a.begin(), a.end());
    const auto [b_min, b_max] = std::minmax_element(b.begin(), b.end());
    if (!(*a_max < *b_min) && !(*b_max < *a_min)) return 0;
    const double ma = median_of(a), mb = median_of(b);
    if (!(std::min(ma, mb) > 0) || std::max(ma, mb) / std::min(ma, mb) - 1 <= 2 * 0.01) return 0;
    // C(n + m, n) in log space: large sample counts neither overflow nor lose the 1.
    const double n = static_cast<double>(a.size()), m = static_cast<double>(b.size());
    const double log_orders = std::lgamma(n + m + 1) - std::lgamma(n + 1) - std::lgamma(m + 1);
    return 1.0 - std::exp(-log_orders);
}

std::pair<std::size_t, std::size_t> median_interval_ranks(std::size_t n) {
    if (n == 0) throw std::invalid_argument("median_interval_ranks: no samples");
    // B, the number of samples below the median, is Binomial(n, 1/2). [x(j), x(n-1-j)] (sorted,
    // 0-based) misses the median when B <= j or B >= n - j: probability 2 P(B <= j). Take the
    // largest j that keeps it at most 5%; j = 0 (the whole range) when even that misses more often
    // (n <= 5). The pmf in log space, so large n neither underflows nor overflows.
    const double dn = static_cast<double>(n);
    std::size_t best = 0;
    double tail = 0;
    for (std::size_t j = 0; 2 * j + 1 < n; ++j) {
        const double dj = static_cast<double>(j);
        tail += std::exp(std::lgamma(dn + 1) - std::lgamma(dj + 1) - std::lgamma(dn - dj + 1) - dn * std::log(2.0));
        if (2 * tail > 0.05) break;
        best = j;
    }
    return {best, n - 1 - best};
}

Summary summarize(std::span<const double> samples) {
    if (samples.empty()) throw std::invalid_argument("summarize: no samples");
    for (double s : samples)
        if (!std::isfinite(s)) throw std::invalid_argument("summarize: non-finite sample");

    std::vector<double> sorted(samples.begin(), samples.end());
    std::sort(sorted.begin(), sorted.end());
    Summary out;
    out.n = sorted.size();
    out.min = sorted.front();
    out.max = sorted.back();
    const std::size_t mid = out.n / 2;
    out.median = (out.n % 2 == 1) ? sorted[mid] : 0.5 * (sorted[mid - 1] + sorted[mid]);

    // Two-pass mean and variance: the values are rates of similar magnitude, so this is exact
    // enough and avoids the cancellation of the one-pass formula.
    double sum = 0;
    for (double s : sorted)
        sum += s;
    out.mean = sum / static_cast<double>(out.n);
    if (out.n > 1) {
        double sq = 0;
        for (double s : sorted)
            sq += (s - out.mean) * (s - out.mean);
        out.stddev = std::sqrt(sq / static_cast<double>(out.n - 1));
    }
    const auto [low, high] = median_interval_ranks(out.n);
    out.ci95_low = sorted[low];
    out.ci95_high = sorted[high];
    out.cv = out.mean != 0 ? out.stddev / std::fabs(out.mean) : 0.0;
    return out;
}

}  // namespace clprobe
