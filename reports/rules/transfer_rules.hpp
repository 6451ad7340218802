#pragma once
#include <vector>

#include "rules/rule.hpp"

namespace clprobe {
// Findings from the transfer layer (docs/findings.md lists each id).
std::vector<Rule> transfer_rules();
}  // namespace clprobe
