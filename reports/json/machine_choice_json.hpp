#pragma once
// The best / best value / cheapest choice (compare/machine_choice.hpp) as JSON, the block
// `machine_choice` of `compare --json` and `fleet --json` (docs/machine-choice.schema.json,
// referenced by docs/compare.schema.json and docs/fleet.schema.json; docs/energy.md, "Choosing a
// machine").
#include <nlohmann/json.hpp>

#include "compare/machine_choice.hpp"

namespace clprobe {
// One workload's throughput, energy and cost on one machine (core/cost_model.hpp), the figures of a
// row of the choice and of a report's `economics` block: what a dashboard reads.
nlohmann::json economics_to_json(const WorkloadEconomics& e);
// An array with one object per workload; empty when no report measured one.
nlohmann::json machine_choices_to_json(const std::vector<WorkloadChoice>& choices);
}  // namespace clprobe
