#pragma once
// Host-side attention maths, free of OpenCL so unit tests run it alone: deterministic inputs, the
// double-precision reference the device results are checked against, and the flop counts.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace clprobe::attention {

// Values uniform in [-1, 1), the same for the same seed on every machine (splitmix64).
std::vector<float> random_values(std::size_t count, std::uint64_t seed);

// Softmax(q . k_j * scale) weighted sum of v_j over keys j in [0, keys), in double: one output
// row of attention. k and v hold `keys` rows of head_dim floats.
void reference_row(const float* q, const float* k, const float* v, std::size_t keys, std::size_t head_dim, double scale,
                   double* out);

// Keys query row i of a sequence of `len` tokens attends to (causal: itself and the past).
inline std::size_t visible_keys(std::size_t i, std::size_t len, bool causal) {
    return causal ? i + 1 : len;
}

// Largest |got - want| over the row, relative to the row's largest |want|: a norm-wise error that
// stays meaningful when individual outputs are near zero.
double row_error(const float* got, const double* want, std::size_t head_dim);

// Up to max_rows rows of a sequence of `len` spread over it, always including the first and the
// last (where tile edges and the causal mask bite); every row when len <= max_rows.
std::vector<std::uint32_t> rows_to_check(std::uint32_t len, std::uint32_t max_rows);

// Query-key pairs attention computes for one sequence-head.
double attention_pairs(double len, bool causal);
// Floating-point operations of prefill attention for one sequence-head: 2 per multiply-add of
// QK^T and of PV (the softmax's exponentials are not counted, as in the usual convention).
double prefill_flops(double len, double head_dim, bool causal);

}  // namespace clprobe::attention
