#include <catch2/catch.hpp>

#include "core/speedup_stats.hpp"

using clprobe::paired_speedup;
using clprobe::two_modes;
using clprobe::unpaired_speedup;

TEST_CASE("paired_speedup: a steady 2x is 2x whatever the machine did to both of a pair", "[speedup]") {
    // A hog on for the pairs 3-5: both launches of each pair twice as slow, the ratio unchanged.
    const std::vector<double> ref{10, 10.2, 20, 20.4, 19.8, 10.1, 9.9, 10};
    const std::vector<double> var{5, 5.1, 10, 10.2, 10, 5, 5, 5};
    const auto s = paired_speedup(ref, var, 1.1);
    REQUIRE(s);
    CHECK(s->estimate == Approx(2.0).epsilon(0.02));
    CHECK(s->low >= 1.9);
    CHECK(s->high <= 2.1);
    CHECK(s->share_at_least == 1.0);
    CHECK(s->samples == 8);
    // Unpaired, the same samples give a far wider interval: the hog is in the comparison.
    const auto u = unpaired_speedup(ref, var, 1.1);
    REQUIRE(u);
    CHECK(u->high - u->low > s->high - s->low);
}

TEST_CASE("paired_speedup: a variant that only caught the fast mode is not faster", "[speedup]") {
    // The reference flips between 5.3 and 10.4 ms; the variant ran at 5.3 each time, and so did
    // the reference beside it half the time: the pairs say 1x or 2x, never reliably above 1.1.
    const std::vector<double> ref{10.4, 5.3, 10.3, 5.4, 5.3, 10.5, 5.2, 10.4};
    const std::vector<double> var{5.3, 5.3, 5.4, 5.3, 5.2, 5.3, 5.3, 5.4};
    const auto s = paired_speedup(ref, var, 1.1);
    REQUIRE(s);
    CHECK(s->low < 1.1);
    CHECK(s->share_at_least < 0.975);
}

TEST_CASE("paired_speedup: deterministic, and refuses what it cannot measure", "[speedup]") {
    const std::vector<double> ref{10, 11, 9, 10, 12}, var{9, 10, 10, 9, 11};
    const auto a = paired_speedup(ref, var, 1.1), b = paired_speedup(ref, var, 1.1);
    REQUIRE(a);
    CHECK(a->low == b->low);
    CHECK(a->high == b->high);
    CHECK(a->low <= a->estimate);
    CHECK(a->estimate <= a->high);
    CHECK_FALSE(paired_speedup({}, {}, 1.1));
    CHECK_FALSE(paired_speedup({1, 2}, {1}, 1.1));
    CHECK_FALSE(paired_speedup({1, 0}, {1, 1}, 1.1));
    CHECK_FALSE(unpaired_speedup({1, 2}, {}, 1.1));
    const auto same = paired_speedup({4, 4, 4}, {4, 4, 4}, 1.1);
    REQUIRE(same);
    CHECK(same->low == 1);
    CHECK(same->high == 1);
    CHECK(same->share_at_least == 0);
}

TEST_CASE("two_modes: two levels apart, with both modes", "[speedup]") {
    const auto m = two_modes({5.3, 10.4, 5.2, 10.6, 5.4, 10.2, 5.3, 10.5, 5.3, 5.5});
    REQUIRE(m);
    CHECK(m->fast.n == 6);
    CHECK(m->slow.n == 4);
    CHECK(m->fast.median == Approx(5.3));
    CHECK(m->slow.median == Approx(10.45));
    CHECK(m->fast.max == 5.5);
    CHECK(m->slow.min == 10.2);
    CHECK(m->split == 5.5);
}

TEST_CASE("two_modes: an even spread, one outlier or too few times are one mode", "[speedup]") {
    CHECK_FALSE(two_modes({5, 5.5, 6, 6.5, 7, 7.5, 8, 8.5, 9, 9.5, 10}));  // even spread over 2x
    CHECK_FALSE(two_modes({5, 5.1, 5, 5.2, 5.1, 5, 5.1, 9}));              // one slow launch
    CHECK_FALSE(two_modes({5, 10, 5, 10, 5}));                             // under min_modal_samples
    CHECK_FALSE(two_modes({5, 5.05, 5.1, 5.5, 5.55, 5.6}));                // 1.08x apart: noise
    CHECK_FALSE(two_modes({5, 5, 5, 5, 5, 5}));
    CHECK_FALSE(two_modes({5, 5, 5, 0, 10, 10}));  // a time that is not positive
}
