// Reduced storage of the GLM design matrix (probes/glm/glm_storage): fp16 and bf16 conversions
// round to nearest even (against hand-worked cases, an exhaustive round trip and the compiler's own
// _Float16 where it has one), int8 per-column scales and rounding, the reference over the decoded
// X, and the rounding bound that the accuracy check of glm.gradient holds a storage to.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "glm/glm_memory.hpp"
#include "glm/glm_model.hpp"
#include "glm/glm_storage.hpp"

using namespace clprobe::glm;

namespace {

float from_bits(std::uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

// A storage decoded with a bug, for the checks below: bf16 shifted by 15 instead of 16.
Dataset wrongly_decoded_bf16(const Dataset& d) {
    Dataset out = d;
    for (float& v : out.x) {
        const std::uint32_t u = static_cast<std::uint32_t>(float_to_bf16(v)) << 15;
        v = from_bits(u);
    }
    return out;
}

}  // namespace

TEST_CASE("fp16 conversion rounds to nearest even, keeps subnormals, saturates to inf", "[glm][storage]") {
    CHECK(float_to_half(1.0f) == 0x3c00);
    CHECK(float_to_half(-2.0f) == 0xc000);
    CHECK(float_to_half(0.0f) == 0x0000);
    CHECK(float_to_half(-0.0f) == 0x8000);
    CHECK(float_to_half(65504.0f) == 0x7bff);  // the largest half
    CHECK(float_to_half(65519.0f) == 0x7bff);  // below the midpoint to 2^16
    CHECK(float_to_half(65520.0f) == 0x7c00);  // the midpoint: even is inf
    CHECK(float_to_half(1e9f) == 0x7c00);
    CHECK(float_to_half(-std::numeric_limits<float>::infinity()) == 0xfc00);
    CHECK((float_to_half(std::numeric_limits<float>::quiet_NaN()) & 0x7fff) > 0x7c00);
    // Ties: 1 + 2^-11 is halfway between 1 and 1 + 2^-10 -> 1 (even); 1 + 3 2^-11 -> 1 + 2^-9.
    CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);
    CHECK(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);
    CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)) == 0x3c01);  // past the tie
    // Subnormals (units of 2^-24) and the smallest normal.
    CHECK(float_to_half(std::ldexp(1.0f, -24)) == 0x0001);
    CHECK(float_to_half(std::ldexp(1.0f, -25)) == 0x0000);      // tie between 0 and 2^-24: even
    CHECK(float_to_half(3 * std::ldexp(1.0f, -26)) == 0x0001);  // 0.75 of 2^-24
    CHECK(float_to_half(3 * std::ldexp(1.0f, -25)) == 0x0002);  // 1.5 units, tie: even (2)
    CHECK(float_to_half(std::ldexp(1.0f, -14)) == 0x0400);
    CHECK(float_to_half(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -26)) == 0x0400);  // rounds up into normal
    CHECK(float_to_half(std::ldexp(1.0f, -30)) == 0x0000);
    CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));
    CHECK(half_to_float(0x3555) == 0.333251953125f);
    CHECK(std::isinf(half_to_float(0x7c00)));
    CHECK(std::isnan(half_to_float(0x7e00)));
}

TEST_CASE("fp16: every half survives a round trip, and any float goes to its nearest half", "[glm][storage]") {
    for (std::uint32_t h = 0; h < 0x10000; ++h) {
        const auto half = static_cast<std::uint16_t>(h);
        if ((half & 0x7fff) > 0x7c00) continue;  // NaN payloads
        INFO("half " << h);
        REQUIRE(float_to_half(half_to_float(half)) == half);
    }
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> mag(-30.0f, 17.0f);
    std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
    const RoundingBound b = rounding_bound(Storage::fp16);
    for (int k = 0; k < 200000; ++k) {
        const float x = std::ldexp(mantissa(rng), static_cast<int>(mag(rng)));
        const std::uint16_t h = float_to_half(x);
        const float got = half_to_float(h);
        INFO("x = " << x);
#if defined(__FLT16_MAX__)
        REQUIRE(got == static_cast<float>(static_cast<_Float16>(x)));  // the compiler's conversion
#endif
        if (std::isinf(got)) {
            REQUIRE(x >= 65520.0f);
            continue;
        }
        REQUIRE(std::fabs(static_cast<double>(got) - x) <= b.relative * x + b.absolute);
        // No neighbour is nearer.
        REQUIRE(std::fabs(got - x) <= std::fabs(half_to_float(static_cast<std::uint16_t>(h + 1)) - x));
        if (h & 0x7fff) REQUIRE(std::fabs(got - x) <= std::fabs(half_to_float(static_cast<std::uint16_t>(h - 1)) - x));
    }
}

TEST_CASE("bf16 conversion: the top 16 bits, rounded to nearest even", "[glm][storage]") {
    CHECK(float_to_bf16(1.0f) == 0x3f80);
    CHECK(float_to_bf16(-1.0f) == 0xbf80);
    CHECK(bf16_to_float(0x3f80) == 1.0f);
    CHECK(bf16_to_float(0x4049) == 3.140625f);
    CHECK(float_to_bf16(3.14159265f) == 0x4049);
    // Ties: 1 + 2^-8 is halfway between 1 and 1 + 2^-7 -> 1 (even); 1 + 3 2^-8 -> 1 + 2^-6.
    CHECK(float_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);
    CHECK(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3f82);
    CHECK(float_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)) == 0x3f81);
    CHECK(float_to_bf16(1.0f + std::ldexp(1.0f, -8) - std::ldexp(1.0f, -20)) == 0x3f80);
    CHECK(float_to_bf16(std::numeric_limits<float>::max()) == 0x7f80);  // rounds past the largest: inf
    CHECK(float_to_bf16(std::numeric_limits<float>::infinity()) == 0x7f80);
    CHECK(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
    CHECK(std::isnan(bf16_to_float(float_to_bf16(from_bits(0x7f800001)))));  // a NaN whose top half is inf
    for (std::uint32_t b = 0; b < 0x10000; ++b) {
        const auto bf = static_cast<std::uint16_t>(b);
        if ((bf & 0x7fff) > 0x7f80) continue;
        REQUIRE(float_to_bf16(bf16_to_float(bf)) == bf);
    }
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(-4.0f, 4.0f);
    const RoundingBound b = rounding_bound(Storage::bf16);
    for (int k = 0; k < 100000; ++k) {
        const float x = u(rng);
        REQUIRE(std::fabs(static_cast<double>(bf16_to_float(float_to_bf16(x))) - x) <= b.relative * std::fabs(x));
    }
}

TEST_CASE("int8 storage: per-column max-abs scales, round half to even, within half a step", "[glm][storage]") {
    // Two rows, three columns: column 1 all zero.
    const std::vector<float> x{1.0f, 0.0f, -2.54f, -0.5f, 0.0f, 1.27f};
    const auto s = int8_scales(x, 2, 3);
    REQUIRE(s.size() == 3);
    CHECK(s[0] == 1.0f / 127.0f);
    CHECK(s[1] == 1.0f);  // an all-zero column
    CHECK(s[2] == 2.54f / 127.0f);
    CHECK(to_int8(1.0f, s[0]) == 127);
    CHECK(to_int8(-2.54f, s[2]) == -127);
    CHECK(to_int8(2.5f, 1.0f) == 2);  // ties to even
    CHECK(to_int8(3.5f, 1.0f) == 4);
    CHECK(to_int8(-2.5f, 1.0f) == -2);
    CHECK(to_int8(500.0f, 1.0f) == 127);  // clamped (never -128: the range stays symmetric)
    CHECK(to_int8(-500.0f, 1.0f) == -127);

    const Dataset d = make_dataset(4096, 9, Family::logistic, 3);
    const StoredMatrix m = encode(d, Storage::int8);
    CHECK(m.encoded_bytes() == 4096u * 9);
    for (std::uint64_t i = 0; i < d.n; ++i)
        for (std::uint32_t j = 0; j < d.p; ++j) {
            const double err = std::fabs(static_cast<double>(m.decoded(i, j)) - d.x[i * d.p + j]);
            REQUIRE(err <= rounding_bound(Storage::int8, m.scales[j]).absolute * (1 + 1e-6));
        }
    CHECK(m.decoded(0, 0) == Approx(1.0f));  // the intercept column: 127 steps of 1/127
}

TEST_CASE("stored X: the reference over the decoded values and the rounding bound of each storage", "[glm][storage]") {
    for (Family family : {Family::logistic, Family::poisson}) {
        const Dataset d = make_dataset(6000, 24, family, 17);
        const auto beta = evaluation_beta(d);
        const auto full = reference_gradient(d, beta, 1e-4);
        double previous_bound = 0;
        for (const Storage s : reduced_storages) {
            INFO(to_string(family) << " " << to_string(s));
            const StoredMatrix m = encode(d, s);
            CHECK(m.encoded_bytes() == d.x.size() * storage_bytes(s));
            const StoredReference ref = stored_reference(d, m, beta, 1e-4);
            // The same gradient as the plain reference over a decoded copy.
            CHECK(relative_error(ref.gradient, reference_gradient(decoded(d, m), beta, 1e-4)) < 1e-12);
            // The rounding moved the gradient, but by less than the bound.
            const double moved = relative_error(ref.gradient, full);
            CHECK(moved > 0);
            CHECK(moved <= ref.bound);
            CHECK(ref.bound < 0.05);
            if (s == Storage::bf16) CHECK(ref.bound > previous_bound);  // fp16 keeps 3 more bits than bf16
            previous_bound = ref.bound;
        }
    }
}

TEST_CASE("a wrong decode of stored X lands far outside the rounding bound", "[glm][storage]") {
    // The accuracy check of glm.gradient (the gradient over stored X against the one over fp32 X,
    // within the rounding bound) catches a storage that decodes to other values.
    const Dataset d = make_dataset(5000, 16, Family::logistic, 23);
    const auto beta = evaluation_beta(d);
    const auto full = reference_gradient(d, beta, 1e-4);
    const StoredReference bf16 = stored_reference(d, encode(d, Storage::bf16), beta, 1e-4);
    const double wrong = relative_error(reference_gradient(wrongly_decoded_bf16(d), beta, 1e-4), full);
    CHECK(wrong > 10 * bf16.bound);
}

TEST_CASE("glm data footprint of X in reduced storage", "[glm][storage][memory]") {
    DataShape s{1000, 13, Layout::row, Format::dense, false, 0.3, 64};
    // beta, r (n rows: row-major only, no padding), partials, g
    const std::uint64_t work = 13 * 4 + 1000 * 4 + 64 * 256 * 13 * 4 + 13 * 4;
    for (const Storage storage : reduced_storages) {
        s.storage = storage;
        CHECK(data_footprint(s).total == 1000 * 13 * storage_bytes(storage) + 1000 * 4 + 13 * 4 + work);
    }
    CHECK(storage_bytes(Storage::fp16) == 2);
    CHECK(storage_bytes(Storage::bf16) == 2);
    CHECK(storage_bytes(Storage::int8) == 1);
}

TEST_CASE("fit tolerances grow with the rounding of the storage", "[glm][storage]") {
    CHECK(fit_tolerance(Storage::fp16) < fit_tolerance(Storage::bf16));
    CHECK(fit_tolerance(Storage::int8) == fit_tolerance(Storage::bf16));
    CHECK(to_string(Storage::fp16) == "fp16");
    CHECK(to_string(Storage::bf16) == "bf16");
    CHECK(to_string(Storage::int8) == "int8");
}
