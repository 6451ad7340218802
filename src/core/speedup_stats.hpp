#pragma once
// The statistics a replay's what-if is judged by (docs/replay.md, "When a what-if is ranked"):
// a speed-up measured side by side with its bootstrap interval, and whether a set of launch times
// falls into two separate modes. Pure functions over sample vectors, unit-tested on exact vectors.
#include <cstddef>
#include <optional>
#include <vector>

namespace clprobe {

// reference time / variant time: above 1, the variant is faster.
struct SpeedupInterval {
    double estimate = 1;        // median of the pairs' ratios (paired) or ratio of medians (unpaired)
    double low = 1, high = 1;   // 95% percentile-bootstrap interval of the estimate
    double share_at_least = 0;  // share of the bootstrap resamples whose estimate reached `at_least`
    std::size_t samples = 0;    // pairs (paired) or variant samples (unpaired)
};

inline constexpr int speedup_resamples = 2000;

// Launches timed side by side: reference[i] and variant[i] ran next to each other, so whatever
// slowed the machine for one slowed the other. Resampling keeps the pairs together and the
// estimate is the median of reference[i] / variant[i]: a CPU hog that comes and goes moves both
// of a pair, not their ratio. nullopt when the vectors are empty, differ in length or hold a
// time that is not positive. A fixed seed: the same samples always give the same interval.
std::optional<SpeedupInterval> paired_speedup(const std::vector<double>& reference, const std::vector<double>& variant,
                                              double at_least, int resamples = speedup_resamples,
                                              unsigned seed = 12345);

// Two sets timed apart (the variant against launches of another run): each resampled on its own,
// the estimate median(reference) / median(variant).
std::optional<SpeedupInterval> unpaired_speedup(const std::vector<double>& reference,
                                                const std::vector<double>& variant, double at_least,
                                                int resamples = speedup_resamples, unsigned seed = 12345);

struct TimeMode {
    double median = 0, min = 0, max = 0;
    std::size_t n = 0;
};

// Two modes: times that flip between two levels with nothing changed (OpenMM's computeNonbonded
// between 5.3 and 10.4 ms on PoCL). `split` lies between them: a time at or below it is in the
// fast mode.
struct TimeModes {
    TimeMode fast, slow;
    double split = 0;
};

// Whether `times` fall into two modes: sorted, the widest gap (by ratio) between neighbours with at
// least min_mode_share of the samples (and 2) on each side, when it is at least 1.2x and wider than
// either side's own range (by ratio). A long even spread or one outlier is not two modes. nullopt
// below min_modal_samples times, or when the times are one mode.
inline constexpr std::size_t min_modal_samples = 6;
inline constexpr double min_mode_share = 0.2;
inline constexpr double min_mode_gap = 1.2;
std::optional<TimeModes> two_modes(std::vector<double> times);

}  // namespace clprobe
