#pragma once
// Pure statistics over a sample vector: no I/O, no OpenCL, unit-tested on exact vectors.
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

// The 0-based ranks {j, n-1-j} of the sorted samples that bound the 95% interval of the median.
std::pair<std::size_t, std::size_t> median_interval_ranks(std::size_t n);

// Two-sided 97.5% quantile of Student's t distribution with `dof` degrees of freedom.
double student_t_975(std::size_t dof);

}  // namespace clprobe
