#pragma once
#include <vector>

#include "rules/rule.hpp"

namespace clprobe {
// Findings from the kernel layer's ceilings (docs/findings.md lists each id).
std::vector<Rule> kernel_rules();
}  // namespace clprobe
