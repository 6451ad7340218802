#include "attention/kv_quant.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

namespace clprobe::attention {

std::size_t kv_group_for(std::size_t head_dim) {
    return head_dim % 32 == 0 ? 32 : 8;
}

Int8Values quantize_int8(const std::vector<float>& x, std::size_t group) {
    if (group == 0 || x.size() % group != 0)
        throw std::invalid_argument("quantize_int8: length not a multiple of group");
    Int8Values q;
    q.group = group;
    q.values.resize(x.size());
    q.scales.resize(x.size() / group);
    for (std::size_t g = 0; g < q.scales.size(); ++g) {
        float amax = 0;
        for (std::size_t i = g * group; i < (g + 1) * group; ++i)
            amax = std::max(amax, std::fabs(x[i]));
        const float scale = amax > 0 ? amax / 127.0f : 1.0f;
        q.scales[g] = scale;
        for (std::size_t i = g * group; i < (g + 1) * group; ++i)
            q.values[i] = static_cast<std::int8_t>(std::clamp(std::lround(x[i] / scale), -127l, 127l));
    }
    return q;
}

std::vector<float> dequantize(const Int8Values& q) {
    std::vector<float> out(q.values.size());
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = static_cast<float>(q.values[i]) * q.scales[i / q.group];
    return out;
}

std::uint16_t float_to_half(float f) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
    const std::uint32_t abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
    if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds past 65504
    const int exp = static_cast<int>(abs >> 23) - 127;
    std::uint32_t mant = (abs & 0x7fffffu) | 0x800000u;  // with the implicit bit
    int shift;                                           // bits of mant dropped
    std::uint32_t hexp;
    if (exp < -14) {  // subnormal half: value = m * 2^-24
        shift = 13 + (-14 - exp);
        hexp = 0;
        if (shift > 24) return sign;
    } else {
        shift = 13;
        hexp = static_cast<std::uint32_t>(exp + 15);
        mant &= 0x7fffffu;
    }
    std::uint32_t h = mant >> shift;
    const std::uint32_t rest = mant & ((1u << shift) - 1), half_way = 1u << (shift - 1);
    h |= hexp << 10;
    if (rest > half_way || (rest == half_way && (h & 1u))) ++h;  // a carry into the exponent is correct
    return static_cast<std::uint16_t>(sign | h);
}

float half_to_float(std::uint16_t h) {
    const float sign = (h & 0x8000u) ? -1.0f : 1.0f;
    const int exp = (h >> 10) & 0x1f;
    const int mant = h & 0x3ff;
    if (exp == 0) return sign * std::ldexp(static_cast<float>(mant), -24);
    if (exp == 31) return mant ? std::nanf("") : sign * INFINITY;
    return sign * std::ldexp(static_cast<float>(mant + 1024), exp - 25);
}

std::vector<std::uint16_t> to_half(const std::vector<float>& x) {
    std::vector<std::uint16_t> out(x.size());
    std::transform(x.begin(), x.end(), out.begin(), float_to_half);
    return out;
}

}  // namespace clprobe::attention
