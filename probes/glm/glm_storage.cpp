#include "glm/glm_storage.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace clprobe::glm {

namespace {

std::uint32_t bits_of(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

float float_of(std::uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

// v >> shift, rounded to nearest, ties to even (shift in [1, 31]).
std::uint32_t shift_round_even(std::uint32_t v, unsigned shift) {
    const std::uint32_t kept = v >> shift, rest = v & ((1u << shift) - 1), half = 1u << (shift - 1);
    return kept + ((rest > half || (rest == half && (kept & 1u))) ? 1u : 0u);
}

}  // namespace

std::string to_string(Storage s) {
    switch (s) {
        case Storage::fp16:
            return "fp16";
        case Storage::bf16:
            return "bf16";
        case Storage::int8:
            return "int8";
        case Storage::real:
            break;
    }
    return "real";
}

std::size_t storage_bytes(Storage s) {
    return s == Storage::int8 ? 1 : s == Storage::real ? 4 : 2;
}

std::uint16_t float_to_half(float f) {
    const std::uint32_t u = bits_of(f);
    const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
    const std::uint32_t exp = (u >> 23) & 0xffu, mant = u & 0x7fffffu;
    if (exp == 0xffu) return static_cast<std::uint16_t>(sign | (mant ? 0x7e00u : 0x7c00u));  // NaN, inf
    if (exp >= 113) {  // a normal half, or beyond its range (2^-14 and up)
        if (exp >= 143) return static_cast<std::uint16_t>(sign | 0x7c00u);  // 2^16 and up: inf
        // Exponent and mantissa side by side: a carry out of the mantissa steps the exponent,
        // and one out of the largest exponent makes inf (0x7c00), as round to nearest even must.
        const std::uint32_t h = shift_round_even(((exp - 112) << 23) | mant, 13);
        return static_cast<std::uint16_t>(sign | std::min<std::uint32_t>(h, 0x7c00u));
    }
    if (exp < 102) return sign;  // below half the smallest subnormal (2^-25): zero (float subnormals too)
    // Subnormal half: the value is M 2^(exp - 150) with M the 24-bit significand; in units of
    // 2^-24 that is M >> (126 - exp), rounded (a carry into 0x400 is the smallest normal, as it
    // should be).
    return static_cast<std::uint16_t>(sign | shift_round_even(mant | 0x800000u, 126 - exp));
}

float half_to_float(std::uint16_t h) {
    const std::uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0) {
        const float v = std::ldexp(static_cast<float>(mant), -24);  // zero or subnormal, exact
        return sign ? -v : v;
    }
    if (exp == 0x1fu) return float_of(sign | 0x7f800000u | (mant << 13));
    return float_of(sign | ((exp + 112) << 23) | (mant << 13));
}

std::uint16_t float_to_bf16(float f) {
    const std::uint32_t u = bits_of(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);  // quiet NaN
    // Round to nearest even on the low 16 bits; a carry past the largest finite value makes inf.
    return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

float bf16_to_float(std::uint16_t b) {
    return float_of(static_cast<std::uint32_t>(b) << 16);
}

std::vector<float> int8_scales(const std::vector<float>& x, std::uint64_t n, std::uint32_t p) {
    std::vector<float> largest(p, 0.0f);
    for (std::uint64_t i = 0; i < n; ++i)
        for (std::uint32_t j = 0; j < p; ++j)
            largest[j] = std::max(largest[j], std::fabs(x[i * p + j]));
    for (float& s : largest)
        s = s > 0 ? s / 127.0f : 1.0f;
    return largest;
}

std::int8_t to_int8(float x, float scale) {
    const double q = std::nearbyint(static_cast<double>(x) / static_cast<double>(scale));  // ties to even
    return static_cast<std::int8_t>(std::clamp(q, -127.0, 127.0));
}

float StoredMatrix::decoded(std::uint64_t i, std::uint32_t j) const {
    const std::uint64_t e = i * p + j;
    switch (storage) {
        case Storage::fp16:
            return half_to_float(halves[e]);
        case Storage::bf16:
            return bf16_to_float(halves[e]);
        case Storage::int8:
            return scales[j] * static_cast<float>(bytes[e]);
        case Storage::real:
            break;
    }
    throw std::logic_error("StoredMatrix holds no reduced storage");
}

std::size_t StoredMatrix::encoded_bytes() const {
    return halves.size() * sizeof(std::uint16_t) + bytes.size();
}

StoredMatrix encode(const Dataset& d, Storage s) {
    if (s == Storage::real) throw std::invalid_argument("encode() makes fp16, bf16 or int8 copies only");
    StoredMatrix m;
    m.storage = s;
    m.n = d.n;
    m.p = d.p;
    if (s == Storage::int8) {
        m.scales = int8_scales(d.x, d.n, d.p);
        m.bytes.resize(d.x.size());
        for (std::uint64_t i = 0; i < d.n; ++i)
            for (std::uint32_t j = 0; j < d.p; ++j)
                m.bytes[i * d.p + j] = to_int8(d.x[i * d.p + j], m.scales[j]);
        return m;
    }
    m.halves.resize(d.x.size());
    std::transform(d.x.begin(), d.x.end(), m.halves.begin(), s == Storage::fp16 ? float_to_half : float_to_bf16);
    return m;
}

RoundingBound rounding_bound(Storage s, float scale) {
    switch (s) {
        case Storage::fp16:  // half an ulp of an 11-bit significand; subnormals: half of 2^-24
            return {std::ldexp(1.0, -11), std::ldexp(1.0, -25)};
        case Storage::bf16:  // half an ulp of an 8-bit significand (fp32's exponent range)
            return {std::ldexp(1.0, -8), 0.0};
        case Storage::int8:  // half a step of the column's scale
            return {0.0, 0.5 * static_cast<double>(scale)};
        case Storage::real:
            break;
    }
    return {};
}

StoredReference stored_reference(const Dataset& d, const StoredMatrix& x, const std::vector<double>& beta,
                                 double lambda) {
    const std::uint32_t p = d.p;
    if (x.n != d.n || x.p != p) throw std::invalid_argument("stored X and dataset differ in shape");
    std::vector<RoundingBound> bounds(p);
    for (std::uint32_t j = 0; j < p; ++j)
        bounds[j] = rounding_bound(x.storage, x.scales.empty() ? 0.0f : x.scales[j]);
    StoredReference out{std::vector<double>(p, 0.0), 0.0};
    std::vector<double> spread(p, 0.0), row(p), err(p);
    for (std::uint64_t i = 0; i < d.n; ++i) {
        const float* full = d.x.data() + i * p;
        double eta = 0, moved = 0;  // x_i . beta, and the most rounding can move it
        for (std::uint32_t j = 0; j < p; ++j) {
            row[j] = x.decoded(i, j);
            err[j] = bounds[j].relative * std::fabs(full[j]) + bounds[j].absolute;
            eta += row[j] * beta[j];
            moved += err[j] * std::fabs(beta[j]);
        }
        const double mu = mean_of(d.family, eta), r = mu - d.y[i];
        const double w = std::fabs(weight_of(d.family, mu));
        for (std::uint32_t j = 0; j < p; ++j) {
            out.gradient[j] += r * row[j];
            spread[j] += std::fabs(r) * err[j] + std::fabs(full[j]) * w * moved;
        }
    }
    const double inv_n = 1.0 / static_cast<double>(d.n);
    double largest = 0, scale = 0;
    for (std::uint32_t j = 0; j < p; ++j) {
        out.gradient[j] = out.gradient[j] * inv_n + lambda * beta[j];
        largest = std::max(largest, spread[j] * inv_n);
        scale = std::max(scale, std::fabs(out.gradient[j]));
    }
    out.bound = scale > 0 ? largest / scale : INFINITY;
    return out;
}

Dataset decoded(const Dataset& d, const StoredMatrix& x) {
    Dataset out = d;
    for (std::uint64_t i = 0; i < d.n; ++i)
        for (std::uint32_t j = 0; j < d.p; ++j)
            out.x[i * d.p + j] = x.decoded(i, j);
    return out;
}

double fit_tolerance(Storage s) {
    return s == Storage::fp16 ? 1e-3 : 5e-3;
}

}  // namespace clprobe::glm
