#pragma once
// Lower-precision KV caches as the decode kernels read them: symmetric int8 with one float scale
// per group of consecutive values of a row, and IEEE binary16. Pure host code.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace clprobe::attention {

struct Int8Values {
    std::vector<std::int8_t> values;
    std::vector<float> scales;  // one per group: values[i] * scales[i / group] approximates the input
    std::size_t group = 0;
};

// Group size the kernels use for a head dimension (kernels/attention/attention.cl, KV_GROUP):
// 32 values share a scale when the row allows it (1/8 byte of scale per value), else 8.
std::size_t kv_group_for(std::size_t head_dim);

// Rounds each group to int8 with scale max|x| / 127. The input's length must be a multiple of group.
Int8Values quantize_int8(const std::vector<float>& x, std::size_t group);
std::vector<float> dequantize(const Int8Values& q);

// IEEE binary16, round to nearest even, with subnormals, infinities and NaN.
std::uint16_t float_to_half(float f);
float half_to_float(std::uint16_t h);
std::vector<std::uint16_t> to_half(const std::vector<float>& x);

}  // namespace clprobe::attention
