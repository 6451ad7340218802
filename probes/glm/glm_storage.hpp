#pragma once
// Reduced storage of the design matrix X (pure host code, no OpenCL): X kept in fp16, bf16 or int8
// with a per-column scale, read by the kernels (kernels/glm/storage.cl, newton.cl) and widened to
// fp32 before any arithmetic (fp32 accumulation). The gradient is memory-bound, so the bytes of X
// are its cost; these are the conversions done once at upload, the decoded values the device
// sees, the double-precision reference over those values, and the bound that says how far the
// rounding of X may move the gradient.
//
// Conversions:
//   fp16: IEEE binary16, round to nearest even; overflow to +-inf, subnormals kept (what
//         vload_half reads back exactly).
//   bf16: the high 16 bits of the fp32 value, rounded to nearest even; NaN stays NaN. The device
//         decodes with as_float((uint)u << 16), exactly.
//   int8: q_ij = round_half_even(x_ij / s_j) clamped to [-127, 127], with s_j = max_i |x_ij| / 127
//         (s_j = 1 for an all-zero column); the device reads x_ij as s_j * q_ij.
#include <cstdint>
#include <string>
#include <vector>

#include "glm/glm_model.hpp"

namespace clprobe::glm {

// How X is held on the device. `real` is the variant's REAL (fp32, or fp64 with fp64 = true), as
// every variant stored it before reduced storage existed.
enum class Storage { real, fp16, bf16, int8 };

// "fp16", "bf16", "int8"; "real" for Storage::real (whose label is the precision, fp32 or fp64).
std::string to_string(Storage s);
// Bytes one element of X takes on the device (real: 4, the fp32 case; fp64 callers use 8).
std::size_t storage_bytes(Storage s);
// The reduced storages, in the order the probes run them.
inline constexpr Storage reduced_storages[] = {Storage::fp16, Storage::bf16, Storage::int8};

std::uint16_t float_to_half(float f);
float half_to_float(std::uint16_t h);
std::uint16_t float_to_bf16(float f);
float bf16_to_float(std::uint16_t b);

// Per-column scales s_j = max_i |x_ij| / 127 (1 for an all-zero column) of row-major X (n x p).
std::vector<float> int8_scales(const std::vector<float>& x, std::uint64_t n, std::uint32_t p);
std::int8_t to_int8(float x, float scale);

// X (row-major) encoded for the device: 2 bytes an element for fp16 and bf16, 1 for int8 (with
// `scales`, p floats); decoded() is every element as the device reads it, in fp32.
struct StoredMatrix {
    Storage storage = Storage::fp16;
    std::uint64_t n = 0;
    std::uint32_t p = 0;
    std::vector<std::uint16_t> halves;  // fp16 or bf16 bits
    std::vector<std::int8_t> bytes;     // int8
    std::vector<float> scales;          // int8: per column
    float decoded(std::uint64_t i, std::uint32_t j) const;
    // Host bytes of the encoded X (what the upload copies).
    std::size_t encoded_bytes() const;
};
StoredMatrix encode(const Dataset& d, Storage s);

// The precision of one stored element: |decoded - x| <= relative * |x| + absolute (int8: absolute
// = s_j / 2, relative 0; fp16: relative 2^-11, absolute 2^-25 below the normal range; bf16:
// relative 2^-8).
struct RoundingBound {
    double relative = 0;
    double absolute = 0;
};
RoundingBound rounding_bound(Storage s, float scale = 0);

// The double-precision gradient over the decoded X (what a correct kernel computes, so it is
// checked against this within the fp32 tolerance), and the first-order bound on how far the
// rounding of X can move the gradient away from the full-precision one: with |dx_ij| <= e_ij from
// rounding_bound, |dg_j| <= (1/n) sum_i (|r_i| e_ij + |x_ij| w_i sum_k e_ik |beta_k|), w_i =
// dmu/deta at row i; `bound` is max_j of that over max_j |g_j| (the norm relative_error uses).
struct StoredReference {
    std::vector<double> gradient;
    double bound = 0;
};
StoredReference stored_reference(const Dataset& d, const StoredMatrix& x, const std::vector<double>& beta,
                                 double lambda);

// `d` with X replaced by its decoded values: the data a device fit on stored X works on (its
// Newton sums are checked against reference_newton_sums of this copy).
Dataset decoded(const Dataset& d, const StoredMatrix& x);

// Largest |beta_storage - beta_fp64| a fit on X in this storage may end at (elementwise), against
// the host fit in double on the full-precision X: fp16 1e-3 (the fp32 fit's own tolerance), bf16
// and int8 5e-3. The fitted beta moves by H^-1 times the gradient's change, a fraction of the
// storage's unit roundoff (fp16 2^-11, bf16 2^-8, int8 half a step of 1/127 of the column's
// largest value) times |beta|; measured on glm.fit's data it stays under a tenth of these.
double fit_tolerance(Storage s);

}  // namespace clprobe::glm
