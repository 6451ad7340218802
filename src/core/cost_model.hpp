#pragma once
// What a workload's work costs on the machine a report measured: its throughput from the measured
// step time, its energy per step where sensors read it, and, from the prices diagnose recorded
// (--price-per-hour, --watts-price), the cost per million steps or tokens. Pure: computed from a
// saved report alone, so `report`, `compare` and `fleet` give the same figures
// (docs/energy.md, "Cost model").
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/report.hpp"

namespace clprobe {

struct Prices {
    std::optional<double> per_hour;  // USD per hour of the machine
    std::optional<double> per_kwh;   // USD per kWh, for machines billed by the energy they use
    bool any() const { return per_hour || per_kwh; }
};

// The prices in the report's options (price_per_hour, energy_price_per_kwh); none when absent or
// not a number >= 0 (a hand-edited report does not make a cost up).
Prices prices_of(const RunReport& report);
void record_prices(nlohmann::json& options, const Prices& prices);

struct WorkloadEconomics {
    std::string workload;  // "glm", "attention"
    std::string pipeline;  // "glm.pipeline", "attention.pipeline"
    std::string variant;   // the fastest variant measured: the one a user would run
    std::string unit;      // "step" (GLM), "token" (attention: prompt and generated tokens)
    double units_per_step = 1;
    double step_seconds = 0;  // the variant's median step time
    double throughput = 0;    // units per second
    std::optional<double> joules_per_step;
    std::string energy_scope;                // the sensors' scopes summed: "cpu package 0 + dram package 0"
    std::optional<double> cost_per_million;  // USD per million units
    std::optional<double> units_per_dollar;  // 1e6 / cost_per_million
    std::optional<double> cost_per_hour;     // what an hour of the machine costs running this step
    std::string cost_basis;                  // how the cost was computed, or which figure is missing
};

// One entry per workload pipeline the report measured (GLM, then attention).
std::vector<WorkloadEconomics> workload_economics(const RunReport& report);

// The energy over a traced program's lifetime (clprobe trace): the one step of "app.pipeline",
// whose stages partition the program's wall time. Its average power is app.power.
inline constexpr const char* app_energy_metric = "app.energy";
inline constexpr const char* app_power_metric = "app.power";

// A step's measured joules, summed over sensors whose scopes do not overlap, and those scopes
// ("cpu package 0 + dram package 0"); nullopt where no sensor read the step. `labels` picks the
// variant ({"variant": "resident"}), as the step's stage and time measurements carry it; the
// metric is <pipeline>.step_energy, or app.energy for a traced program.
struct StepEnergyFigure {
    double joules = 0;
    std::string scope;
};
std::optional<StepEnergyFigure> step_energy_of(const RunReport& report, const std::string& pipeline,
                                               const Labels& labels);

}  // namespace clprobe
