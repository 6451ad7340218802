// The attention workload's host maths: deterministic inputs, the reference, int8 and fp16 KV
// encodings, request lengths and the padding each batching layout computes, and the device memory
// each variant's buffers take.
#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>
#include <set>

#include "attention/attention_math.hpp"
#include "attention/attention_memory.hpp"
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

TEST_CASE("attention prefill footprint: Q, K, V, O plus the head set (fused) or the score matrix (unfused)",
          "[attention][memory]") {
    const PrefillShape shape{2, 8, 512, 64};
    const std::uint64_t tensor = 2ull * 8 * 512 * 64 * 4;  // 2 MiB
    const Footprint fused = prefill_footprint(shape, PrefillPath::fused);
    CHECK(fused.total == 4 * tensor + 2 * 16 * 4);
    CHECK(fused.largest == tensor);
    const Footprint unfused = prefill_footprint(shape, PrefillPath::unfused);
    const std::uint64_t scores = 2ull * 8 * 512 * 512 * 4;  // 16 MiB
    CHECK(unfused.total == 4 * tensor + scores);
    CHECK(unfused.largest == scores);
    // Absurd shapes saturate instead of wrapping around to something that fits.
    const Footprint huge = prefill_footprint({4000000000u, 4000000000u, 4000000000u, 64}, PrefillPath::unfused);
    CHECK(huge.total == UINT64_MAX);
    CHECK_FALSE(huge.fits({UINT64_MAX - 1, UINT64_MAX}));
}

TEST_CASE("attention prefill capacity: the binding limit, exactly at the boundary", "[attention][memory]") {
    const MemoryLimits limits{1ull << 30, 256ull << 20};  // 1 GiB global, 256 MiB per buffer
    PrefillShape shape{1, 8, 0, 64};
    // Unfused: the score matrix (32 seq^2 bytes) hits the allocation limit first.
    CHECK(max_prefill_seq(shape, PrefillPath::unfused, limits) == 2896);
    // Fused: 8192 seq bytes of tensors plus 64 of head offsets hit global memory at 2^17 - 1.
    CHECK(max_prefill_seq(shape, PrefillPath::fused, limits) == 131071);
    for (PrefillPath path : {PrefillPath::fused, PrefillPath::unfused}) {
        shape.seq = max_prefill_seq(shape, path, limits);
        CHECK(prefill_footprint(shape, path).fits(limits));
        ++shape.seq;
        CHECK_FALSE(prefill_footprint(shape, path).fits(limits));
    }
    // Batch 2: half the sequence, the same tokens less the larger head set's rounding.
    CHECK(max_batch_seq({2, 8, 0, 64}, PrefillPath::fused, limits) == 2 * 65535);
    CHECK(max_batch_seq({1, 8, 0, 64}, PrefillPath::fused, {}) == 0);
    CHECK(max_prefill_seq(shape, PrefillPath::unfused, {UINT64_MAX, UINT64_MAX}) == UINT32_MAX);
}

TEST_CASE("attention decode footprint by KV-cache precision, as the probe creates its buffers", "[attention][memory]") {
    const std::uint32_t bh = 8, kv_len = 300, d = 128, splits = 2;
    const std::uint64_t io = 2 * 8 * 128 * 4, part = 8 * 2 * 130 * 4, fp32_cache = 8ull * 300 * 128 * 4;
    const Footprint fp32 = decode_footprint(bh, kv_len, d, splits, KvPrecision::fp32);
    CHECK(fp32.total == io + part + 2 * fp32_cache + 2 * 4);  // 4-byte placeholder scales
    CHECK(fp32.largest == fp32_cache);
    CHECK(decode_footprint(bh, kv_len, d, splits, KvPrecision::fp16).total == io + part + fp32_cache + 2 * 4);
    // int8: one byte per value plus the scales quantize_int8 produces for the cache.
    const Int8Values q = quantize_int8(random_values(std::size_t{bh} * kv_len * d, 3), kv_group_for(d));
    const Footprint int8 = decode_footprint(bh, kv_len, d, splits, KvPrecision::int8);
    CHECK(int8.total == io + part + 2 * (q.values.size() + q.scales.size() * 4));
    CHECK(std::string(to_string(KvPrecision::int8)) == "int8");
}

TEST_CASE("attention decode splits: a few groups per compute unit, at least 256 keys each, at least 2",
          "[attention][memory]") {
    CHECK(decode_splits(4, 8, 2048) == 2);
    CHECK(decode_splits(64, 2, 4096) == 16);  // 128 wanted, 16 chunks of 256 keys at most
    CHECK(decode_splits(64, 2, 300) == 2);
    CHECK(decode_splits(0, 0, 0) == 2);
}
