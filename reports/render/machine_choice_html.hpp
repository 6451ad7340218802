#pragma once
// The best / best value / cheapest choice (compare/machine_choice.hpp) as an HTML section, for the
// fleet page: a table per workload, the three choices, and a warning box per choice that rests on
// a missing figure. Kept apart from the page renderers so they gain it with one call.
#include <string>
#include <vector>

#include "compare/machine_choice.hpp"

namespace clprobe {
// Empty when no report measured a workload.
std::string render_machine_choices_html(const std::vector<WorkloadChoice>& choices);
}  // namespace clprobe
