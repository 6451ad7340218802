#include "json/rank_json.hpp"

namespace clprobe {

namespace {

using nlohmann::json;

json figures_to_json(const RankFigures& f) {
    return {{"rank", f.rank},
            {"source", f.source},
            {"host", f.host},
            {"device", f.device},
            {"wall_seconds", f.wall_seconds},
            {"device_busy_seconds", f.device_busy_seconds},
            {"kernel_seconds", f.kernel_seconds},
            {"transfer_seconds", f.transfer_seconds},
            {"build_seconds", f.build_seconds},
            {"host_wait_seconds", f.host_wait_seconds},
            {"device_idle_seconds", f.device_idle_seconds},
            {"host_only_seconds", f.host_only_seconds},
            {"opencl_seconds", f.opencl_seconds},
            {"opencl_commands", f.opencl_commands},
            {"host_waits", f.host_waits}};
}

json cause_to_json(const RankCause& c) {
    return {{"kind", c.kind},
            {"name", c.name},
            {"seconds", c.seconds},
            {"reference_seconds", c.reference_seconds},
            {"excess_seconds", c.excess_seconds()},
            {"count", c.count},
            {"reference_count", c.reference_count}};
}

json slowest_to_json(const SlowRank& s) {
    json stages = json::array(), causes = json::array();
    for (const auto& c : s.stages)
        stages.push_back(cause_to_json(c));
    for (const auto& c : s.causes)
        causes.push_back(cause_to_json(c));
    return {{"rank", s.rank},
            {"source", s.source},
            {"basis", s.basis},
            {"seconds", s.value},
            {"reference_seconds", s.reference},
            {"excess_seconds", s.excess()},
            {"relative", s.relative()},
            {"threshold_seconds", s.threshold},
            {"slow", s.slow},
            {"stages", stages},
            {"causes", causes}};
}

}  // namespace

json ranks_to_json(const RankAnalysis& a) {
    json ranks = json::array(), findings = json::array(), unpaired = json::array();
    for (const auto& r : a.ranks)
        ranks.push_back(figures_to_json(r));
    for (const auto& f : a.findings)
        findings.push_back(
            {{"id", f.id}, {"rank", f.rank}, {"source", f.source}, {"title", f.title}, {"evidence", f.evidence}});
    for (const auto& u : a.unpaired)
        unpaired.push_back({{"source", u.source}, {"reason", u.reason}});
    json median = figures_to_json(a.median);
    median.erase("source");
    median.erase("host");
    median.erase("device");
    return {{"schema", "clprobe.fleet.ranks"},
            {"schema_version", 1},
            {"options", {{"min_relative", a.options.min_relative}, {"mad_k", a.options.mad_k}}},
            {"size", a.size ? json(*a.size) : json(nullptr)},
            {"missing_ranks", a.missing_ranks},
            {"ranks", ranks},
            {"median", median},
            {"slowest", a.slowest ? slowest_to_json(*a.slowest) : json(nullptr)},
            {"findings", findings},
            {"unpaired", unpaired}};
}

}  // namespace clprobe
