#pragma once
// What the GLM probes share: the shape the options ask for, the dataset (generated once per
// shape and kept for the next probe), and the verification rule.
#include <memory>
#include <string>
#include <vector>

#include "glm/glm_model.hpp"
#include "runtime/probe.hpp"

namespace clprobe::glm {

inline constexpr std::uint64_t data_seed = 20240531;
inline constexpr double ridge_lambda = 1e-4;

// The options' shape with the mode's defaults filled in.
Shape shape_for(const RunOptions& options);
// The same, with the default row count (no --glm-rows) of a standard or full run raised to the
// fewest rows (a multiple of 2^16) whose fp32 X holds at least four times `last_cache_bytes`
// (memory_level_rows): the headline GLM figure is then a clear memory-level point on the machine
// at hand (a quick run keeps its smaller, cache-level default; 0: no capacity known, the mode's
// default).
Shape shape_for(const RunOptions& options, std::uint64_t last_cache_bytes);
// shape_for with the device's last cache: kernel.memory_levels' capacities when that probe ran,
// else the device's global-memory cache. Every GLM probe of a run gets the same shape.
Shape shape_for(const ProbeContext& ctx);
Mode mode_of(RunMode mode);

// The dense logistic dataset of this shape; the last one generated is kept, so the probes of one
// run share it instead of generating it again.
std::shared_ptr<const Dataset> shared_dataset(std::uint64_t n, std::uint32_t p, Family family);

// Relative error allowed against the double reference: float sums over many rows stay near
// 1e-6 on well-conditioned data; 1e-4 leaves room while still catching any real bug.
double tolerance(bool fp64);

// Throws VerificationError naming `what` when `got` is not within tolerance of `want`; returns
// the relative error.
double verify_gradient(const std::string& what, const std::vector<double>& got, const std::vector<double>& want,
                       bool fp64);

// X in reduced storage: throws VerificationError when `got` (already within tolerance(false) of
// the double gradient over the decoded X) is further from `full`, the double gradient over fp32 X,
// than `bound` (stored_reference's first-order bound of the rounding of X) plus tolerance(false);
// returns that relative distance, the accuracy the storage kept.
double verify_storage_accuracy(const std::string& what, const std::vector<double>& got, const std::vector<double>& full,
                               double bound);

}  // namespace clprobe::glm
