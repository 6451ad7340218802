#pragma once
#include <vector>

#include "rules/rule.hpp"

namespace clprobe {
// Findings from the GLM workload (probes/glm): gradient variants, the mini-batch pipeline and the
// host BLAS comparison (docs/findings.md lists each id).
std::vector<Rule> glm_rules();
}  // namespace clprobe
