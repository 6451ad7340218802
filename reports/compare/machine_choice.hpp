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

// A choice some reports could not enter: which reports, why, and whether it was still made among
// the others. Kept as data (not only a sentence) so the JSON gives a script the names to act on.
struct ChoiceCaveat {
    std::string choice;                 // "best value", "cheapest", "energy"
    std::vector<std::string> left_out;  // the reports without the figure
    std::string reason;                 // "no price given (...)", "no readable sensor"
    bool chosen_among_rest = false;     // false: no report had the figure, nothing was chosen
    std::string text;                   // the sentence every view prints
};

struct WorkloadChoice {
    std::string workload, unit;
    std::vector<ChoiceRow> rows;                            // one per report that measured the workload
    std::optional<std::size_t> best, best_value, cheapest;  // indices into rows
    std::vector<ChoiceCaveat> caveats;                      // which choice rests on a missing figure
};

// One choice per workload measured by any report, GLM first.
std::vector<WorkloadChoice> choose_machines(const std::vector<MachineFigures>& machines);

// A row's figures as every view prints them, "n/a" where a figure is missing.
struct ChoiceCells {
    std::string throughput, per_dollar, per_million, per_hour, energy;
};
ChoiceCells choice_cells(const WorkloadChoice& choice, const ChoiceRow& row);

// The three choices in order: label ("best"), the chosen row (nullopt: none), and why it won.
struct ChoiceLine {
    std::string label;
    std::optional<std::size_t> row;
    std::string why;
};
std::vector<ChoiceLine> choice_lines(const WorkloadChoice& choice);

// The heading every view gives a workload's table ("Choosing a machine for glm (in steps, ...)").
std::string choice_heading(const WorkloadChoice& choice);

// The tables as text: a row per report, then "best", "best value" and "cheapest" with the caveats.
// Empty when no report measured a workload.
std::string render_machine_choices(const std::vector<WorkloadChoice>& choices);
// The same as Markdown (fleet --format md): a table per workload, the choices and caveats as a list.
std::string render_machine_choices_markdown(const std::vector<WorkloadChoice>& choices);

}  // namespace clprobe
