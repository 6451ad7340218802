#pragma once
// Pure statistics over a sample vector: no I/O, no OpenCL, unit-tested on exact vectors.
#include <algorithm>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace clprobe {

struct Summary {
    std::size_t n = 0;
    double min = 0, max = 0, median = 0, mean = 0;
    double stddev = 0;  // sample standard deviation (n - 1 in the denominator)
    double cv = 0;      // stddev / |mean|; 0 when the mean is 0
    // A distribution-free 95% confidence interval of the median: two order statistics of the
    // samples (median_interval_ranks), so never outside [min, max]; the whole range when n <= 5.
    double ci95_low = 0, ci95_high = 0;
};

// Throws std::invalid_argument on an empty span or a non-finite sample: a summary of
// nothing or of NaN would be a number nobody measured.
Summary summarize(std::span<const double> samples);

// The median of `values` (the mean of the two middle ones for an even count); 0 when empty.
double median_of(std::vector<double> values);

// The upper median: the element at index n/2 once sorted, so always one of the values (for an
// integer clock offset, or a launch time that must be a measured one); T{} when empty.
template <class T>
T upper_median(std::vector<T> values) {
    if (values.empty()) return T{};
    const auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
    std::nth_element(values.begin(), mid, values.end());
    return *mid;
}

// The factor that turns a median absolute deviation into a standard deviation for normal noise.
inline constexpr double mad_to_stddev = 1.4826;

// The median of |v - center| over `values` (median_of: the two middle ones averaged); 0 when empty.
double median_absolute_deviation(const std::vector<double>& values, double center);

// A relative spread that one slowed (or one unusually quiet) sample barely moves: 1.4826 x the
// upper median of the absolute deviations from the upper median, over that median; equal to the
// cv for normal noise. 0 when empty or when the median is 0.
double robust_cv(std::vector<double> samples);

// The 95% percentile-bootstrap interval of median(b*) / median(a*), resampling each vector with
// replacement `resamples` times from a fixed seed (the same inputs always give the same interval).
// {1, 1} when either is empty or no resample had a positive median of a.
std::pair<double, double> bootstrap_ratio_interval(const std::vector<double>& a, const std::vector<double>& b,
                                                   int resamples, unsigned seed = 12345);

// The noise two summaries carry together: the sum of their cvs, at least 1%.
double relative_noise(const Summary& a, const Summary& b);

// How sure a gap between two medians is a real difference, in [0, 1]: 0 while the gap is within
// twice the pair's relative_noise, rising towards 1 as the gap outgrows it. 1 when only one
// median is positive.
double comparison_confidence(const Summary& better, const Summary& worse);
// The same for two medians whose relative noise the caller has worked out.
double comparison_confidence(double better_median, double worse_median, double noise);

// How sure two sample sets differ when they do not overlap at all (every sample of one below every
// sample of the other): 1 - 1 / C(n + m, n), one minus the chance of that order if both came from
// one distribution (the exact one-sided Mann-Whitney p at U = 0; 0.996 for 5 and 5 samples). 0
// when they overlap, when either has fewer than separation_min_samples (with 3 and 3 the order
// arises by chance one time in 20), or when their medians are within twice relative_noise's 1%
// floor (a separation that small says nothing a user can act on). A VM that flips between two
// throughput states spreads each set widely while the two sets may still never meet; the
// spread-based confidence misses that.
inline constexpr std::size_t separation_min_samples = 5;
double separation_confidence(const std::vector<double>& a, const std::vector<double>& b);

// The 0-based ranks {j, n-1-j} of the sorted samples that bound the 95% interval of the median.
std::pair<std::size_t, std::size_t> median_interval_ranks(std::size_t n);

// Two-sided 97.5% quantile of Student's t distribution with `dof` degrees of freedom.
double student_t_975(std::size_t dof);

}  // namespace clprobe
