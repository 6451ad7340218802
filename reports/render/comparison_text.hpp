#pragma once
#include <string>

#include "compare/comparison.hpp"

namespace clprobe {
// The terminal view of a comparison: verdict counts, moved metrics first, the environment diff
// and its explanations, findings in one report only. `verbose` lists every paired metric.
std::string render_comparison_text(const Comparison& c, bool verbose = false, bool color = false);
}  // namespace clprobe
