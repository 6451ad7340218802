#include "json/fleet_json.hpp"

#include "json/machine_choice_json.hpp"

namespace clprobe {

namespace {

using nlohmann::json;

json outlier_to_json(const MetricOutlier& o) {
    return {{"metric", o.metric}, {"node", o.node},         {"source", o.source},     {"value", o.value},
            {"cv", o.cv},         {"relative", o.relative}, {"band_low", o.band_low}, {"band_high", o.band_high},
            {"worse", o.worse}};
}

json metric_to_json(const FleetMetric& m) {
    json outliers = json::array();
    for (const auto& o : m.outliers)
        outliers.push_back(outlier_to_json(o));
    return {{"metric", m.metric},  {"unit", m.unit},     {"higher_is_better", m.higher_is_better},
            {"nodes", m.nodes},    {"median", m.median}, {"mad", m.mad},
            {"spread", m.spread},  {"min", m.min},       {"max", m.max},
            {"outliers", outliers}};
}

json node_outlier_to_json(const NodeOutlier& n) {
    json metrics = json::array(), environment = json::array();
    for (const auto& o : n.metrics)
        metrics.push_back(outlier_to_json(o));
    for (const auto& e : n.environment)
        environment.push_back(
            {{"field", e.field}, {"value", e.value}, {"majority", e.majority}, {"majority_nodes", e.majority_nodes}});
    return {
        {"node", n.node}, {"source", n.source}, {"worse", n.worse}, {"metrics", metrics}, {"environment", environment}};
}

}  // namespace

json fleet_to_json(const FleetAnalysis& f) {
    json metrics = json::array(), outliers = json::array(), partial = json::array(), unpaired = json::array();
    for (const auto& m : f.metrics)
        metrics.push_back(metric_to_json(m));
    for (const auto& n : f.outliers)
        outliers.push_back(node_outlier_to_json(n));
    for (const auto& p : f.partial_findings)
        partial.push_back({{"id", p.id}, {"nodes", p.nodes}});
    for (const auto& u : f.unpaired)
        unpaired.push_back({{"source", u.source}, {"reason", u.reason}});
    return {{"schema", "clprobe.fleet"},
            {"schema_version", 1},
            {"device", f.device},
            {"nodes", f.nodes},
            {"band",
             {{"mad_k", f.options.mad_k},
              {"cv_k", f.options.cv_k},
              {"min_relative_band", f.options.min_relative_band},
              {"min_nodes", f.options.min_nodes}}},
            {"metrics", metrics},
            {"outliers", outliers},
            {"worse_outliers", f.worse_outliers()},
            {"partial_findings", partial},
            {"unpaired", unpaired},
            {"machine_choice", machine_choices_to_json(choose_machines(f.machines))}};
}

}  // namespace clprobe
