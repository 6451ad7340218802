// The attention workload's host maths: deterministic inputs, the reference, int8 and fp16 KV
// encodings, request lengths and the padding each batching layout computes.
#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>
#include <set>

#include "attention/attention_math.hpp"
#include "attention/kv_quant.hpp"
#include "attention/request_lengths.hpp"

using namespace clprobe::attention;

TEST_CASE("attention inputs are deterministic and between -1 and 1", "[attention]") {
    const auto a = random_values(1000, 5), b = random_values(1000, 5), c = random_values(1000, 6);
    CHECK(a == b);
    CHECK(a != c);
    for (float x : a) {
        CHECK(x >= -1.0f);
        CHECK(x < 1.0f);
    }
}

TEST_CASE("reference attention row: uniform keys average the values, one dominant key selects its value",
          "[attention]") {
    const std::size_t d = 4;
    // Identical keys: every weight is 1/3, so the output is the mean of the value rows.
    const std::vector<float> q{1, 0, 0, 0}, k(3 * d, 0.5f), v{1, 2, 3, 4, 3, 2, 1, 0, 2, 2, 2, 2};
    std::vector<double> out(d);
    reference_row(q.data(), k.data(), v.data(), 3, d, 1.0, out.data());
    CHECK(out[0] == Approx(2.0));
    CHECK(out[3] == Approx(2.0));
    // A huge score on key 1: the output is its value row.
    std::vector<float> k2(3 * d, 0.0f);
    k2[d] = 100;
    reference_row(q.data(), k2.data(), v.data(), 3, d, 1.0, out.data());
    CHECK(out[0] == Approx(3.0));
    CHECK(out[3] == Approx(0.0).margin(1e-12));
}

TEST_CASE("row error is relative to the row's magnitude and fails NaN", "[attention]") {
    const std::vector<double> want{1.0, -2.0, 0.0};
    const std::vector<float> close{1.0f, -2.0001f, 0.0f}, nan{1.0f, NAN, 0.0f};
    // -2.0001 is not exact in float: compare loosely.
    CHECK(row_error(close.data(), want.data(), 3) == Approx(0.0001 / 2).epsilon(1e-2));
    CHECK_FALSE(row_error(nan.data(), want.data(), 3) <= 1.0);
}

TEST_CASE("rows to check include the first and the last row", "[attention]") {
    CHECK(rows_to_check(5, 16) == std::vector<std::uint32_t>{0, 1, 2, 3, 4});
    const auto rows = rows_to_check(1000, 8);
    CHECK(rows.size() == 8);
    CHECK(rows.front() == 0);
    CHECK(rows.back() == 999);
    CHECK(rows_to_check(0, 8).empty());
    CHECK(rows_to_check(7, 1) == std::vector<std::uint32_t>{6});
}

TEST_CASE("prefill flops count the causal triangle", "[attention]") {
    CHECK(prefill_flops(4, 8, false) == 4 * 8 * 16);
    CHECK(prefill_flops(4, 8, true) == 4 * 8 * 10);
    CHECK(visible_keys(2, 10, true) == 3);
    CHECK(visible_keys(2, 10, false) == 10);
}

TEST_CASE("int8 per-group quantisation round-trips within half a step of each group's scale", "[attention]") {
    auto x = random_values(256, 9);
    x[40] = 0;  // a group can hold exact zeros
    const Int8Values q = quantize_int8(x, 32);
    CHECK(q.scales.size() == 8);
    const auto back = dequantize(q);
    for (std::size_t i = 0; i < x.size(); ++i)
        CHECK(std::fabs(back[i] - x[i]) <= q.scales[i / 32] * 0.5f + 1e-7f);
    CHECK(back[40] == 0.0f);
    CHECK_THROWS(quantize_int8(x, 48));
    CHECK(kv_group_for(64) == 32);
    CHECK(kv_group_for(72) == 8);
}

TEST_CASE("fp16 conversion rounds to nearest even and keeps subnormals", "[attention]") {
    CHECK(float_to_half(1.0f) == 0x3c00);
    CHECK(float_to_half(-2.0f) == 0xc000);
    CHECK(float_to_half(65504.0f) == 0x7bff);
    CHECK(float_to_half(1e6f) == 0x7c00);
    CHECK(float_to_half(std::ldexp(1.0f, -24)) == 0x0001);         // smallest subnormal
    CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);  // a tie rounds to even
    CHECK(half_to_float(0x3555) == Approx(0.33325195f));
    for (float f : {0.1f, -0.7f, 3e-5f, 0.999f}) {
        const float back = half_to_float(float_to_half(f));
        CHECK(std::fabs(back - f) <= std::fabs(f) * 1e-3f + 6e-8f);
    }
}

TEST_CASE("skewed request lengths: deterministic, bounded, longest present, mostly short", "[attention]") {
    const auto a = skewed_lengths(64, 2048, 3);
    CHECK(a == skewed_lengths(64, 2048, 3));
    CHECK(*std::max_element(a.begin(), a.end()) == 2048);
    std::size_t short_ones = 0;
    for (auto len : a) {
        CHECK(len >= 16);
        CHECK(len <= 2048);
        short_ones += len < 512;
    }
    CHECK(short_ones > a.size() / 2);  // log-uniform: 2/3 of the mass below a quarter of the range
}

TEST_CASE("buckets and padding fraction", "[attention]") {
    const std::vector<std::uint32_t> lengths{100, 10, 50, 20};
    const auto one = length_buckets(lengths, 1);
    REQUIRE(one.size() == 1);
    CHECK(one[0].extent == 100);
    const auto two = length_buckets(lengths, 2);
    REQUIRE(two.size() == 2);
    CHECK(two[0].extent == 20);
    CHECK(two[1].extent == 100);
    CHECK(std::set<std::size_t>(two[0].members.begin(), two[0].members.end()) == std::set<std::size_t>{1, 3});
    // Padded: 4 * 100^2 pairs computed, 100^2 + 10^2 + 50^2 + 20^2 useful.
    const double useful = 10000 + 100 + 2500 + 400;
    CHECK(padding_fraction(lengths, extents_of(lengths, one), false) == Approx(1 - useful / 40000));
    CHECK(padding_fraction(lengths, lengths, false) == 0.0);
    CHECK(padding_fraction(lengths, extents_of(lengths, two), true) <
          padding_fraction(lengths, extents_of(lengths, one), true));
    CHECK(length_buckets(lengths, 9).size() == 4);
}
