#include "json/machine_choice_json.hpp"

#include <algorithm>

namespace clprobe {

namespace {

using nlohmann::json;

json number_or_null(const std::optional<double>& v) {
    return v ? json(*v) : json(nullptr);
}

}  // namespace

json economics_to_json(const WorkloadEconomics& e) {
    return {{"variant", e.variant},
            {"step_seconds", e.step_seconds},
            {"units_per_step", e.units_per_step},
            {"throughput", e.throughput},
            {"units_per_dollar", number_or_null(e.units_per_dollar)},
            {"cost_per_million", number_or_null(e.cost_per_million)},
            {"cost_per_hour", number_or_null(e.cost_per_hour)},
            {"joules_per_step", number_or_null(e.joules_per_step)},
            // Per unit as well as per step, so GLM steps and attention tokens read the same way.
            {"joules_per_unit", e.joules_per_step ? json(*e.joules_per_step / e.units_per_step) : json(nullptr)},
            {"energy_scope", e.joules_per_step ? json(e.energy_scope) : json(nullptr)},
            {"cost_basis", e.cost_basis}};
}

namespace {

json row_to_json(const ChoiceRow& row) {
    json out = {{"report", row.name}};
    out.update(economics_to_json(row.figures));
    return out;
}

}  // namespace

json machine_choices_to_json(const std::vector<WorkloadChoice>& choices) {
    json out = json::array();
    for (const auto& c : choices) {
        json rows = json::array(), caveats = json::array();
        for (const auto& row : c.rows)
            rows.push_back(row_to_json(row));
        for (const auto& caveat : c.caveats)
            caveats.push_back({{"choice", caveat.choice},
                               {"left_out", caveat.left_out},
                               {"reason", caveat.reason},
                               {"chosen_among_rest", caveat.chosen_among_rest},
                               {"text", caveat.text}});
        json choice = {{"workload", c.workload}, {"unit", c.unit}, {"reports", rows}, {"caveats", caveats}};
        // "best_value", not "best value": keys a script can write without quoting.
        for (const ChoiceLine& l : choice_lines(c)) {
            std::string key = l.label;
            std::replace(key.begin(), key.end(), ' ', '_');
            choice[key] =
                l.row ? json{{"index", *l.row}, {"report", c.rows[*l.row].name}, {"why", l.why}} : json(nullptr);
        }
        out.push_back(std::move(choice));
    }
    return out;
}

}  // namespace clprobe
