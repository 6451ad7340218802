#pragma once
// The best / best value / cheapest choice (compare/machine_choice.hpp) as JSON, the block
// `machine_choice` of `compare --json` and `fleet --json` (docs/machine-choice.schema.json,
// referenced by docs/compare.schema.json and docs/fleet.schema.json; docs/energy.md, "Choosing a
// machine").
#include <nlohmann/json.hpp>

#include "compare/machine_choice.hpp"

namespace clprobe {
// An array with one object per workload; empty when no report measured one.
nlohmann::json machine_choices_to_json(const std::vector<WorkloadChoice>& choices);
}  // namespace clprobe
