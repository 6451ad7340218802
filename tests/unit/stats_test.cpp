// summarize() and student_t_975() on exact, hand-computed vectors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/stats.hpp"

using clprobe::separation_confidence;
using clprobe::student_t_975;
using clprobe::summarize;
using clprobe::Summary;

namespace {

Summary summary_of(std::vector<double> v) {
    return summarize(v);
}

}  // namespace

TEST_CASE("summarize: even-sized vector {1,2,3,4}", "[stats]") {
    const Summary s = summary_of({1, 2, 3, 4});
    const double stddev = std::sqrt(5.0 / 3.0);  // squared deviations 2.25+0.25+0.25+2.25 over n-1
    const double half = 3.182 * stddev / 2.0;    // t(3) * s / sqrt(4)

    CHECK(s.n == 4);
    CHECK(s.min == 1);
    CHECK(s.max == 4);
    CHECK(s.median == Approx(2.5));
    CHECK(s.mean == Approx(2.5));
    CHECK(s.stddev == Approx(stddev));
    CHECK(s.cv == Approx(stddev / 2.5));
    (void)half;
    // n = 4: no pair of order statistics reaches 95%, so the interval is the whole range.
    CHECK(s.ci95_low == 1);
    CHECK(s.ci95_high == 4);
}

TEST_CASE("summarize: two samples use t(1) = 12.706", "[stats]") {
    const Summary s = summary_of({1, 3});
    // mean 2, s = sqrt(2), half-width = 12.706 * sqrt(2) / sqrt(2)
    CHECK(s.median == Approx(2));
    CHECK(s.stddev == Approx(std::sqrt(2.0)));
    // The interval of the median stays inside the samples (a Student-t interval of the mean
    // would run from -10.7 to 14.7).
    CHECK(s.ci95_low == 1);
    CHECK(s.ci95_high == 3);
}

TEST_CASE("summarize: odd-sized vector takes the middle element as median", "[stats]") {
    const Summary s = summary_of({10, 40, 20, 100, 30});
    CHECK(s.n == 5);
    CHECK(s.median == Approx(30));
    CHECK(s.mean == Approx(40));
    CHECK(s.min == 10);
    CHECK(s.max == 100);
    // deviations -30,-20,-10,0,60: squares 900+400+100+0+3600 = 5000, over 4
    CHECK(s.stddev == Approx(std::sqrt(1250.0)));
    CHECK(s.ci95_low == 10);
    CHECK(s.ci95_high == 100);
}

TEST_CASE("summarize: unsorted input gives the same summary as sorted input", "[stats]") {
    const Summary sorted = summary_of({1, 2, 3, 4});
    const Summary shuffled = summary_of({4, 1, 3, 2});
    CHECK(shuffled.n == sorted.n);
    CHECK(shuffled.min == sorted.min);
    CHECK(shuffled.max == sorted.max);
    CHECK(shuffled.median == Approx(sorted.median));
    CHECK(shuffled.mean == Approx(sorted.mean));
    CHECK(shuffled.stddev == Approx(sorted.stddev));
    CHECK(shuffled.cv == Approx(sorted.cv));
    CHECK(shuffled.ci95_low == Approx(sorted.ci95_low));
    CHECK(shuffled.ci95_high == Approx(sorted.ci95_high));
}

TEST_CASE("summarize: a single sample has zero spread and a point interval", "[stats]") {
    const Summary s = summary_of({7.5});
    CHECK(s.n == 1);
    CHECK(s.min == 7.5);
    CHECK(s.max == 7.5);
    CHECK(s.median == 7.5);
    CHECK(s.mean == 7.5);
    CHECK(s.stddev == 0);
    CHECK(s.cv == 0);
    CHECK(s.ci95_low == 7.5);
    CHECK(s.ci95_high == 7.5);
}

TEST_CASE("summarize: identical samples have zero spread", "[stats]") {
    const Summary s = summary_of({3, 3, 3, 3, 3, 3});
    CHECK(s.median == 3);
    CHECK(s.mean == Approx(3));
    CHECK(s.stddev == Approx(0).margin(1e-12));
    CHECK(s.cv == Approx(0).margin(1e-12));
    CHECK(s.ci95_low == Approx(3));
    CHECK(s.ci95_high == Approx(3));
}

TEST_CASE("summarize: cv uses |mean| and is 0 when the mean is 0", "[stats]") {
    SECTION("negative mean") {
        const Summary s = summary_of({-2, -4});
        CHECK(s.mean == Approx(-3));
        CHECK(s.stddev == Approx(std::sqrt(2.0)));
        CHECK(s.cv == Approx(std::sqrt(2.0) / 3.0));
        CHECK(s.cv > 0);
    }
    SECTION("zero mean") {
        const Summary s = summary_of({-1, 1});
        CHECK(s.mean == Approx(0).margin(1e-12));
        CHECK(s.stddev == Approx(std::sqrt(2.0)));
        CHECK(s.cv == 0);
    }
}

TEST_CASE("summarize: empty and non-finite input throws invalid_argument", "[stats]") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    CHECK_THROWS_AS(summary_of({}), std::invalid_argument);
    CHECK_THROWS_AS(summary_of({1, nan, 3}), std::invalid_argument);
    CHECK_THROWS_AS(summary_of({nan}), std::invalid_argument);
    CHECK_THROWS_AS(summary_of({1, 2, inf}), std::invalid_argument);
    CHECK_THROWS_AS(summary_of({-inf, 2}), std::invalid_argument);
}

TEST_CASE("student_t_975: exact table values", "[stats]") {
    CHECK(student_t_975(1) == Approx(12.706));
    CHECK(student_t_975(2) == Approx(4.303));
    CHECK(student_t_975(3) == Approx(3.182));
    CHECK(student_t_975(10) == Approx(2.228));
    CHECK(student_t_975(20) == Approx(2.086));
    CHECK(student_t_975(30) == Approx(2.042));
}

TEST_CASE("student_t_975: tail anchors and known quantiles beyond the table", "[stats]") {
    CHECK(student_t_975(40) == Approx(2.021));
    CHECK(student_t_975(60) == Approx(2.000));
    CHECK(student_t_975(120) == Approx(1.980));
    // Published quantiles; the interpolation claims 1e-3 accuracy.
    CHECK(student_t_975(50) == Approx(2.0086).margin(1e-3));
    CHECK(student_t_975(100) == Approx(1.9840).margin(1e-3));
    CHECK(student_t_975(200) == Approx(1.9719).margin(1e-3));
    CHECK(student_t_975(1000) == Approx(1.9623).margin(1e-3));
}

TEST_CASE("student_t_975: decreases monotonically towards 1.96", "[stats]") {
    double previous = student_t_975(1);
    for (std::size_t dof = 2; dof <= 2000; ++dof) {
        const double t = student_t_975(dof);
        INFO("dof = " << dof);
        REQUIRE(t < previous);
        REQUIRE(t > 1.96);
        previous = t;
    }
    CHECK(student_t_975(1000000) == Approx(1.96).margin(1e-4));
    CHECK(student_t_975(1000000) > 1.96);
}

TEST_CASE("student_t_975: zero degrees of freedom throws", "[stats]") {
    CHECK_THROWS_AS(student_t_975(0), std::invalid_argument);
}

TEST_CASE("median interval: binomial order statistics, never outside the samples", "[stats]") {
    using clprobe::median_interval_ranks;
    // 2 P(B <= j) <= 5% with B ~ Binomial(n, 1/2): the textbook ranks.
    CHECK(median_interval_ranks(1) == std::pair<std::size_t, std::size_t>{0, 0});
    CHECK(median_interval_ranks(5) == std::pair<std::size_t, std::size_t>{0, 4});    // 94%: the whole range
    CHECK(median_interval_ranks(6) == std::pair<std::size_t, std::size_t>{0, 5});    // 96.9%
    CHECK(median_interval_ranks(9) == std::pair<std::size_t, std::size_t>{1, 7});    // 96.1%
    CHECK(median_interval_ranks(20) == std::pair<std::size_t, std::size_t>{5, 14});  // 95.9%
    // Large n: about n/2 -+ 0.98 sqrt(n), and no underflow of 2^-n.
    const auto [lo, hi] = median_interval_ranks(1000);
    CHECK(lo >= 466);
    CHECK(lo <= 470);
    CHECK(hi == 999 - lo);
    CHECK_THROWS(median_interval_ranks(0));

    // A skewed sample: the interval of the median holds the median and stays within the range.
    std::vector<double> v;
    for (int i = 1; i <= 20; ++i)
        v.push_back(i == 20 ? 1000.0 : static_cast<double>(i));
    const Summary s = summary_of(v);
    CHECK(s.ci95_low == 6);
    CHECK(s.ci95_high == 15);
    CHECK(s.ci95_low <= s.median);
    CHECK(s.ci95_high >= s.median);
}

TEST_CASE("upper_median: the element at n/2 once sorted, of any type", "[stats]") {
    CHECK(clprobe::upper_median(std::vector<double>{4, 1, 3, 2}) == 3);  // not 2.5: always a sample
    CHECK(clprobe::upper_median(std::vector<std::int64_t>{5, -1, 7}) == 5);
    CHECK(clprobe::upper_median(std::vector<std::int64_t>{}) == 0);
}

TEST_CASE("median_absolute_deviation: around the given center, middle pair averaged", "[stats]") {
    CHECK(clprobe::median_absolute_deviation({1, 2, 3, 4, 100}, 3) == Approx(1));
    CHECK(clprobe::median_absolute_deviation({1, 2, 3, 4}, 2) == Approx(1));  // |d| = 1 0 1 2
    CHECK(clprobe::median_absolute_deviation({5, 5, 5}, 5) == 0);
    CHECK(clprobe::median_absolute_deviation({}, 0) == 0);
}

TEST_CASE("robust_cv: one far sample barely moves it", "[stats]") {
    // Upper median 10; deviations 2 1 0 1 90, their upper median 1.
    CHECK(clprobe::robust_cv({8, 9, 10, 11, 100}) == Approx(0.14826));
    CHECK(clprobe::robust_cv({1, 2, 3, 4}) == Approx(1.4826 / 3));
    CHECK(clprobe::robust_cv({7, 7, 7}) == 0);
    CHECK(clprobe::robust_cv({0, 0, 1}) == 0);  // median 0: no relative spread, not inf
    CHECK(clprobe::robust_cv({}) == 0);
}

TEST_CASE("bootstrap_ratio_interval: deterministic and around the ratio of medians", "[stats]") {
    const std::vector<double> a{9, 10, 11, 10, 10}, b{19, 20, 21, 20, 20};
    const auto i1 = clprobe::bootstrap_ratio_interval(a, b, 500);
    const auto i2 = clprobe::bootstrap_ratio_interval(a, b, 500);
    CHECK(i1 == i2);
    CHECK(i1.first <= 2.0);
    CHECK(i1.second >= 2.0);
    CHECK(i1.first > 1.6);
    CHECK(clprobe::bootstrap_ratio_interval({}, b, 500) == std::pair<double, double>{1, 1});
    CHECK(clprobe::bootstrap_ratio_interval({0, 0}, b, 500) == std::pair<double, double>{1, 1});
}

TEST_CASE("comparison_confidence: zero inside twice the noise, rising past it", "[stats]") {
    Summary better, worse;
    better.median = 110;
    worse.median = 100;
    better.cv = worse.cv = 0.01;
    CHECK(clprobe::relative_noise(better, worse) == Approx(0.02));
    CHECK(clprobe::comparison_confidence(better, worse) == Approx(1 - 0.04 / 0.1));
    better.cv = worse.cv = 0.05;  // a 10% gap, noise 10%: within twice the noise
    CHECK(clprobe::comparison_confidence(better, worse) == 0);
    better.cv = worse.cv = 0;  // the 1% floor
    CHECK(clprobe::relative_noise(better, worse) == Approx(0.01));
    worse.median = 0;
    CHECK(clprobe::comparison_confidence(better, worse) == 1);
    better.median = 0;
    CHECK(clprobe::comparison_confidence(better, worse) == 0);
}

TEST_CASE("separation_confidence: sample sets that never meet, from five samples each", "[stats]") {
    // A quick run's GLM steps on a VM flipping between two states (ms): the resident step's samples
    // spread 39% (robust), the pageable step's 17%, and still every resident sample is faster.
    const std::vector<double> resident{1.13, 1.14, 1.53, 2.0, 2.2}, pageable{5.03, 3.65, 3.6, 4.07, 5.59};
    CHECK(separation_confidence(resident, pageable) == Approx(1.0 - 1.0 / 252));  // C(10, 5) orders
    CHECK(separation_confidence(pageable, resident) == separation_confidence(resident, pageable));
    // The spread-based confidence alone calls this gap noise.
    const Summary r = summarize(resident), p = summarize(pageable);
    CHECK(clprobe::comparison_confidence(r, p) < 0.5);
    // One overlapping sample: no separation.
    CHECK(separation_confidence({1.13, 1.14, 1.53, 2.0, 3.7}, pageable) == 0);
    // Fewer than five samples: three and three fall in order by chance one time in 20.
    CHECK(separation_confidence({1.1, 1.2, 1.3}, {3.6, 3.7, 3.8}) == 0);
    // Separated but within 2% of each other: nothing to act on.
    CHECK(separation_confidence({100, 100, 100, 100, 100}, {101.5, 101.5, 101.5, 101.5, 101.5}) == 0);
    CHECK(separation_confidence({100, 100, 100, 100, 100}, {103, 103, 103, 103, 103}) > 0.99);
    // More samples, surer: C(14, 7) = 3432.
    const std::vector<double> a(7, 1.0), b(7, 2.0);
    CHECK(separation_confidence(a, b) == Approx(1.0 - 1.0 / 3432));
}
