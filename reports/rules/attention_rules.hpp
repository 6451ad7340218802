#pragma once
#include <vector>

#include "rules/rule.hpp"

namespace clprobe {
// Findings from the attention workload's probes (docs/findings.md lists each id).
std::vector<Rule> attention_rules();
}  // namespace clprobe
