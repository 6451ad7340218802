#include "rules/replay_analysis.hpp"

#include "core/trace_facts.hpp"
#include "json/replay_json.hpp"
#include "rules/replay_findings.hpp"

namespace clprobe::replay {

namespace {

// The trace's totals per kernel and its wall time, as the replay's gains are shares of them.
ReplayContext context_of(const TraceFacts& facts) {
    ReplayContext context;
    if (facts.run.wall_seconds > 0) context.wall_ns = facts.run.wall_seconds * 1e9;
    for (const auto& k : facts.kernels) {
        KernelTotals& t = context.kernels[k.name];
        t.device_ns = k.seconds * 1e9;
        t.launches = k.launches;
    }
    return context;
}

}  // namespace

void add_replay_findings(RunReport& report) {
    const ProbeResult* result = find_result(report, replay_probe_id);
    if (!result || result->status != ProbeStatus::ok) return;
    const std::vector<ReplayResult> results =
        replay_results_from_json(result->attributes.value("replay", nlohmann::json()));
    const auto facts = trace_facts_of(report);
    if (results.empty() || !facts) return;
    // A measured change beats the heuristic that proposed it: confirmed, or no longer ranked.
    judge_heuristics(report.findings, results);
    for (auto& f : replay_findings(results, context_of(*facts)))
        report.findings.push_back(std::move(f));
}

}  // namespace clprobe::replay
