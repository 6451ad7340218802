#pragma once
#include <vector>

#include "rules/rule.hpp"

namespace clprobe {
// Findings from the network layer (probes/network): all-reduce not overlapped with compute in the
// data-parallel GLM step, all-reduce bus bandwidth far below the point-to-point bandwidth, one
// slow rank pair (docs/findings.md lists each id).
std::vector<Rule> network_rules();
}  // namespace clprobe
