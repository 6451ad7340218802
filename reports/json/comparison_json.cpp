#include "json/comparison_json.hpp"

#include "json/report_json.hpp"

namespace clprobe {

using nlohmann::json;

namespace {

// null when either report predates provenance; otherwise the fields that differ (maybe none).
json provenance_json(const Comparison& c) {
    if (!c.provenance_known) return nullptr;
    json out = json::array();
    for (const auto& e : c.provenance)
        out.push_back({{"field", e.field}, {"a", e.a}, {"b", e.b}});
    return out;
}

// Each family's band from the movement between repeated runs of A, widest first; empty when A ran
// once (baseline_runs 1).
json between_runs_json(const Comparison& c) {
    json out = json::array();
    for (const auto& [family, band] : c.between_runs_bands)
        out.push_back({{"family", family}, {"band", band}});
    return out;
}

// The verdict B's first run gave a difference that a repeat of B did not show; null otherwise.
json unconfirmed_json(const std::optional<Verdict>& v) {
    return v ? json(to_string(*v)) : json(nullptr);
}

}  // namespace

json comparison_to_json(const Comparison& c) {
    json metrics = json::array();
    for (const auto& m : c.metrics)
        metrics.push_back({{"metric", m.metric},
                           {"labels", m.labels},
                           {"unit", m.unit},
                           {"higher_is_better", m.higher_is_better},
                           {"headline", m.headline},
                           {"fact", m.fact},
                           {"median_a", m.median_a ? json(*m.median_a) : json(nullptr)},
                           {"median_b", m.median_b ? json(*m.median_b) : json(nullptr)},
                           {"method", to_string(m.method)},
                           {"ratio", m.ratio},
                           {"raw_ratio", m.raw_ratio},
                           {"ratio_low", m.ratio_low},
                           {"ratio_high", m.ratio_high},
                           {"band", m.band},
                           {"between_runs_band", m.between_runs_band},
                           {"baseline_median", m.baseline_median ? json(*m.baseline_median) : json(nullptr)},
                           {"reference_a", m.reference_a ? json(*m.reference_a) : json(nullptr)},
                           {"reference_b", m.reference_b ? json(*m.reference_b) : json(nullptr)},
                           {"reference_series", m.reference_series.empty() ? json(nullptr) : json(m.reference_series)},
                           {"verdict", to_string(m.verdict)},
                           {"disturbance", m.disturbance.empty() ? json(nullptr) : json(m.disturbance)},
                           {"repeat_ratios", m.repeat_ratios},
                           {"unconfirmed", unconfirmed_json(m.unconfirmed)}});
    json env = json::array();
    for (const auto& e : c.environment)
        env.push_back({{"field", e.field}, {"a", e.a}, {"b", e.b}});
    auto finding_ids = [](const std::vector<Finding>& fs) {
        json out = json::array();
        for (const auto& f : fs)
            out.push_back({{"id", f.id}, {"title", f.title}});
        return out;
    };
    json regressions = json::array();
    for (const auto* m : c.headline_regressions())
        regressions.push_back(m->metric);
    json family_regressions = json::array();
    for (const auto& f : c.family_regressions()) {
        json figures = json::array();
        for (const auto* m : f.slower)
            figures.push_back({{"metric", m->metric}, {"labels", m->labels}, {"ratio", m->ratio}});
        family_regressions.push_back({{"family", f.family}, {"variants", f.variants}, {"slower", figures}});
    }
    json out = {{"schema", "clprobe.comparison"},
                {"schema_version", 2},
                {"a", c.a_label},
                {"b", c.b_label},
                {"threshold", c.threshold},
                {"baseline_runs", c.baseline_runs},
                {"movement_known_from", c.movement_known_from.empty() ? json(nullptr) : json(c.movement_known_from)},
                {"between_runs", between_runs_json(c)},
                {"candidate_runs", c.candidate_runs},
                {"metrics", metrics},
                {"environment", env},
                {"provenance", provenance_json(c)},
                {"explanations", c.explanations},
                {"findings_only_in_a", finding_ids(c.findings_only_in_a)},
                {"findings_only_in_b", finding_ids(c.findings_only_in_b)},
                {"trust_notes_only_in_a", trust_notes_to_json(c.trust_notes_only_in_a)},
                {"trust_notes_only_in_b", trust_notes_to_json(c.trust_notes_only_in_b)},
                {"headline_regressions", regressions},
                {"family_regressions", family_regressions},
                {"regressed", c.regressed()}};
    // Only when a report measured its drift, so comparisons of older reports keep their shape.
    if (c.driver) out["driver_change"] = {{"a", c.driver->a}, {"b", c.driver->b}, {"text", describe(*c.driver)}};
    if (c.machine) {
        json shifts = json::array();
        for (const auto& r : c.machine->shifts)
            shifts.push_back({{"series", r.series},
                              {"unit", r.unit},
                              {"fast_a", r.fast_a},
                              {"fast_b", r.fast_b},
                              {"ratio", r.ratio},
                              {"band", r.band},
                              {"verdict", to_string(r.verdict)},
                              {"repeat_ratios", r.repeat_ratios},
                              {"unconfirmed", unconfirmed_json(r.unconfirmed)},
                              {"text", describe(r)}});
        auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
        out["machine"] = {{"shifts", shifts},
                          {"spread_a", opt(c.machine->spread_a)},
                          {"spread_b", opt(c.machine->spread_b)},
                          {"shift_is_driver", c.machine->shift_is_driver},
                          {"regressed", !c.machine->regressions().empty()},
                          {"text", describe(*c.machine)}};
    }
    return out;
}

}  // namespace clprobe
