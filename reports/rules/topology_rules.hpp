#pragma once
#include <vector>

#include "rules/rule.hpp"

namespace clprobe {
// Findings from the topology layer's facts (docs/findings.md lists each id).
std::vector<Rule> topology_rules();
}  // namespace clprobe
