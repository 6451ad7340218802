#pragma once
// The layer's sampling period under --max-size (space_budget.hpp), as a pure function so unit
// tests check it without a traced program: the layer and tests/unit share this header.
#include <cstdint>

namespace clprobe::layer {

inline constexpr std::uint32_t max_sampling_period = std::uint32_t{1} << 30;
// K moves by one step at most this often: written-out batches come every few microseconds in a
// tight loop, and a step per batch would overshoot to the largest K before the bytes answer.
inline constexpr std::uint64_t sampling_adjust_ns = 10'000'000;

// Bytes the timeline may hold `elapsed_ns` after the job started, once half of `soft` was used
// `tau_ns` after the start: soft * e / (e + tau). Half of soft at e = tau, soft only in the limit,
// so a run of any length keeps recording, ever more sparsely (the kept rate falls as 1/e^2).
inline double sampling_allowance(std::uint64_t soft, double elapsed_ns, double tau_ns) {
    if (elapsed_ns <= 0) return 0;
    return static_cast<double>(soft) * elapsed_ns / (elapsed_ns + (tau_ns > 1 ? tau_ns : 1));
}

// The next period from the current one `k`: doubled while the bytes used run ahead of the
// allowance, halved once they fall behind it by soft/32 (the gap keeps K from flapping).
inline std::uint32_t next_sampling_period(std::uint32_t k, std::uint64_t used, double allowance, std::uint64_t soft) {
    if (static_cast<double>(used) > allowance && k < max_sampling_period) return k * 2;
    if (static_cast<double>(used + soft / 32) < allowance && k > 1) return k / 2;
    return k;
}

}  // namespace clprobe::layer
