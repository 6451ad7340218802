#include "core/cost_model.hpp"

#include <fmt/core.h>

#include <cmath>
#include <set>

#include "core/trace_facts.hpp"

namespace clprobe {

namespace {

std::optional<double> price(const nlohmann::json& options, const char* key) {
    if (!options.is_object() || !options.contains(key) || !options[key].is_number()) return std::nullopt;
    const double v = options[key].get<double>();
    if (!std::isfinite(v) || v < 0) return std::nullopt;
    return v;
}

struct PipelineInfo {
    const char* workload;
    const char* pipeline;
    const char* unit;
};
constexpr PipelineInfo pipelines[] = {{"glm", "glm.pipeline", "step"}, {"attention", "attention.pipeline", "token"}};

// Tokens one attention step processes: every sequence's prompt and generated tokens. Recorded by
// attention.step; older reports give it through the shape they recorded.
std::optional<double> tokens_per_step(const RunReport& report) {
    const ProbeResult* r = find_result(report, "attention.step");
    if (!r) return std::nullopt;
    const auto& a = r->attributes;
    if (a.contains("tokens_per_step") && a["tokens_per_step"].is_number()) return a["tokens_per_step"].get<double>();
    if (a.contains("shape") && a["shape"].is_object() && a.contains("decode_steps") && a["decode_steps"].is_number()) {
        const auto& s = a["shape"];
        if (s.contains("batch") && s["batch"].is_number() && s.contains("seq") && s["seq"].is_number())
            return s["batch"].get<double>() * (s["seq"].get<double>() + a["decode_steps"].get<double>());
    }
    return std::nullopt;
}

// The variant's joules per step summed over sensors whose scopes do not overlap. "platform" (psys)
// covers the packages and DRAM, so it stands alone only when nothing else was read.
std::optional<std::pair<double, std::string>> step_joules(const RunReport& report, const std::string& pipeline,
                                                          const Labels& labels) {
    const std::string metric = pipeline == app_pipeline_id ? app_energy_metric : pipeline + ".step_energy";
    const auto ms = find_measurements(report, metric, labels);
    double total = 0;
    std::string scopes;
    std::optional<std::pair<double, std::string>> platform;
    std::set<std::string> seen;
    for (const Measurement* m : ms) {
        const auto scope = m->labels.count("scope") ? m->labels.at("scope") : std::string("?");
        if (!seen.insert(scope).second) continue;
        if (scope == "platform") {
            platform = {{m->summary.median, scope}};
            continue;
        }
        total += m->summary.median;
        scopes += (scopes.empty() ? "" : " + ") + scope;
    }
    if (!scopes.empty()) return std::make_pair(total, scopes);
    return platform;
}

}  // namespace

Prices prices_of(const RunReport& report) {
    return {price(report.options, "price_per_hour"), price(report.options, "energy_price_per_kwh")};
}

void record_prices(nlohmann::json& options, const Prices& prices) {
    options["price_per_hour"] = prices.per_hour ? nlohmann::json(*prices.per_hour) : nlohmann::json(nullptr);
    options["energy_price_per_kwh"] = prices.per_kwh ? nlohmann::json(*prices.per_kwh) : nlohmann::json(nullptr);
}

std::vector<WorkloadEconomics> workload_economics(const RunReport& report) {
    const Prices prices = prices_of(report);
    std::vector<WorkloadEconomics> out;
    for (const PipelineInfo& p : pipelines) {
        const Measurement* fastest = best_median(find_measurements(report, std::string(p.pipeline) + ".step_time"));
        if (!fastest || !(fastest->summary.median > 0)) continue;
        WorkloadEconomics e;
        e.workload = p.workload;
        e.pipeline = p.pipeline;
        e.unit = p.unit;
        e.variant = fastest->labels.count("variant") ? fastest->labels.at("variant") : "";
        e.step_seconds = fastest->summary.median;
        if (e.unit == std::string("token")) {
            const auto tokens = tokens_per_step(report);
            if (!tokens || !(*tokens > 0)) continue;
            e.units_per_step = *tokens;
        }
        e.throughput = e.units_per_step / e.step_seconds;
        if (const auto j = step_joules(report, e.pipeline, {{"variant", e.variant}})) {
            e.joules_per_step = j->first;
            e.energy_scope = j->second;
        }
        // Cost of one step: the machine's time at its hourly price, plus its energy where billed by it.
        // A plain flag beside the sum (not an optional<double>): GCC 12 reads a reset optional as
        // maybe-uninitialised, and CI builds with -Werror.
        double step_cost = 0;
        bool costed = true;
        std::vector<std::string> basis;
        if (prices.per_hour) {
            step_cost += *prices.per_hour * e.step_seconds / 3600;
            basis.push_back(fmt::format("${}/h x measured step time", *prices.per_hour));
        }
        if (prices.per_kwh) {
            if (e.joules_per_step) {
                step_cost += *prices.per_kwh * *e.joules_per_step / 3.6e6;
                basis.push_back(fmt::format("${}/kWh x measured energy ({})", *prices.per_kwh, e.energy_scope));
            } else {
                costed = false;
                basis.push_back("billed by energy, but no energy was measured");
            }
        }
        if (!prices.any()) {
            costed = false;
            basis.push_back("no price given (diagnose --price-per-hour, --watts-price)");
        }
        for (const auto& b : basis)
            e.cost_basis += (e.cost_basis.empty() ? "" : "; ") + b;
        if (costed) {
            e.cost_per_million = step_cost / e.units_per_step * 1e6;
            if (*e.cost_per_million > 0) e.units_per_dollar = 1e6 / *e.cost_per_million;
            e.cost_per_hour = step_cost / e.step_seconds * 3600;
        }
        out.push_back(std::move(e));
    }
    return out;
}

std::optional<StepEnergyFigure> step_energy_of(const RunReport& report, const std::string& pipeline,
                                               const Labels& labels) {
    const auto j = step_joules(report, pipeline, labels);
    if (!j) return std::nullopt;
    return StepEnergyFigure{j->first, j->second};
}

}  // namespace clprobe
