#pragma once
#include <vector>

#include "rules/rule.hpp"

namespace clprobe {
// Findings from the system layer: what else ran, what the process may use, clocks, memory,
// hypervisor steal (docs/findings.md lists each id).
std::vector<Rule> system_rules();
}  // namespace clprobe
