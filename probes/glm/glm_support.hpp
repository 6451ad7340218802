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

}  // namespace clprobe::glm
