#pragma once
// Choosing among machines for a workload: the best (highest throughput), the best value (most work
// per dollar) and the cheapest (lowest cost per hour), from each report's workload economics
// (core/cost_model.hpp). Pure. A choice that some reports could not enter, for want of a price
// or an energy figure, says so rather than choosing among the rest silently.
#include <optional>
#include <string>
#include <vector>

#include "core/cost_model.hpp"

namespace clprobe {

// One report's figures, under the name the table shows (its file, or its node).
struct MachineFigures {
    std::string name;
    std::vector<WorkloadEconomics> workloads;
};

struct ChoiceRow {
    std::string name;
    WorkloadEconomics figures;
};

struct WorkloadChoice {
    std::string workload, unit;
    std::vector<ChoiceRow> rows;                            // one per report that measured the workload
    std::optional<std::size_t> best, best_value, cheapest;  // indices into rows
    std::vector<std::string> caveats;                       // which choice rests on a missing figure
};

// One choice per workload measured by any report, GLM first.
std::vector<WorkloadChoice> choose_machines(const std::vector<MachineFigures>& machines);

// The tables as text: a row per report, then "best", "best value" and "cheapest" with the caveats.
// Empty when no report measured a workload.
std::string render_machine_choices(const std::vector<WorkloadChoice>& choices);

}  // namespace clprobe
