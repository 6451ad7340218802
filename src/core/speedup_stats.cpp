#include "core/speedup_stats.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/stats.hpp"

namespace clprobe {

namespace {

bool all_positive(const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x) && x > 0; });
}

// The interval and share of `estimates` (one per resample), sorted in place.
SpeedupInterval interval_of(std::vector<double>& estimates, double estimate, double at_least, std::size_t samples) {
    std::sort(estimates.begin(), estimates.end());
    const double last = static_cast<double>(estimates.size() - 1);
    const auto at = [&](double q) { return estimates[static_cast<std::size_t>(std::lround(q * last))]; };
    const auto reached = std::count_if(estimates.begin(), estimates.end(), [&](double e) { return e >= at_least; });
    SpeedupInterval s;
    s.estimate = estimate;
    s.low = at(0.025);
    s.high = at(0.975);
    s.share_at_least = static_cast<double>(reached) / static_cast<double>(estimates.size());
    s.samples = samples;
    return s;
}

}  // namespace

std::optional<SpeedupInterval> paired_speedup(const std::vector<double>& reference, const std::vector<double>& variant,
                                              double at_least, int resamples, unsigned seed) {
    if (reference.empty() || reference.size() != variant.size() || resamples < 1) return std::nullopt;
    if (!all_positive(reference) || !all_positive(variant)) return std::nullopt;
    std::vector<double> ratios;
    for (std::size_t i = 0; i < reference.size(); ++i)
        ratios.push_back(reference[i] / variant[i]);
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::size_t> pick(0, ratios.size() - 1);
    std::vector<double> estimates, resample(ratios.size());
    estimates.reserve(static_cast<std::size_t>(resamples));
    for (int i = 0; i < resamples; ++i) {
        for (auto& r : resample)
            r = ratios[pick(rng)];
        estimates.push_back(median_of(resample));
    }
    return interval_of(estimates, median_of(ratios), at_least, ratios.size());
}

std::optional<SpeedupInterval> unpaired_speedup(const std::vector<double>& reference,
                                                const std::vector<double>& variant, double at_least, int resamples,
                                                unsigned seed) {
    if (reference.empty() || variant.empty() || resamples < 1) return std::nullopt;
    if (!all_positive(reference) || !all_positive(variant)) return std::nullopt;
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::size_t> pick_r(0, reference.size() - 1), pick_v(0, variant.size() - 1);
    std::vector<double> estimates, rr(reference.size()), rv(variant.size());
    estimates.reserve(static_cast<std::size_t>(resamples));
    for (int i = 0; i < resamples; ++i) {
        for (auto& x : rr)
            x = reference[pick_r(rng)];
        for (auto& x : rv)
            x = variant[pick_v(rng)];
        estimates.push_back(median_of(rr) / median_of(rv));
    }
    return interval_of(estimates, median_of(reference) / median_of(variant), at_least, variant.size());
}

std::optional<TimeModes> two_modes(std::vector<double> times) {
    if (times.size() < min_modal_samples || !all_positive(times)) return std::nullopt;
    std::sort(times.begin(), times.end());
    const std::size_t n = times.size();
    const auto min_side = std::max<std::size_t>(2, static_cast<std::size_t>(std::ceil(min_mode_share * n)));
    if (2 * min_side > n) return std::nullopt;
    // k: the first time of the slow side.
    std::size_t best = 0;
    double widest = 0;
    for (std::size_t k = min_side; k + min_side <= n; ++k)
        if (const double gap = times[k] / times[k - 1]; gap > widest) {
            widest = gap;
            best = k;
        }
    if (best == 0 || widest < min_mode_gap) return std::nullopt;
    const double fast_range = times[best - 1] / times[0], slow_range = times[n - 1] / times[best];
    if (widest <= std::max(fast_range, slow_range)) return std::nullopt;
    auto mode = [&](std::size_t from, std::size_t to) {
        const std::vector<double> side(times.begin() + static_cast<std::ptrdiff_t>(from),
                                       times.begin() + static_cast<std::ptrdiff_t>(to));
        return TimeMode{median_of(side), side.front(), side.back(), side.size()};
    };
    return TimeModes{mode(0, best), mode(best, n), times[best - 1]};
}

}  // namespace clprobe
