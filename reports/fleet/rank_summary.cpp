#include "fleet/rank_summary.hpp"

#include <filesystem>
#include <stdexcept>

#include "fleet/node_summary.hpp"
#include "rules/trace_rules.hpp"

namespace clprobe {

namespace {

std::size_t stage_index(AppStage s) {
    for (std::size_t i = 0; i < std::size(all_app_stages); ++i)
        if (all_app_stages[i] == s) return i;
    return 0;
}

}  // namespace

double RankSummary::stage(AppStage s) const {
    return stages[stage_index(s)];
}

double RankSummary::opencl_seconds() const {
    return stage(AppStage::kernel) + stage(AppStage::transfer) + stage(AppStage::build) + stage(AppStage::host_wait);
}

bool is_rank_report(const RunReport& report) {
    return is_trace_report(report);
}

RankSummary summarize_rank(const RunReport& report, std::string source) {
    const std::optional<TraceFacts> facts = trace_facts_of(report);
    if (!facts) throw std::runtime_error("the trace report holds no readable facts of its program");
    RankSummary s;
    s.source = std::move(source);
    if (report.launch) {
        s.rank = report.launch->rank;
        s.rank_from_launcher = true;
        s.size = report.launch->world_size;
    } else {
        s.rank = std::filesystem::path(s.source).stem().string();
    }
    s.host = report.host.hostname;
    s.device = device_key(report);
    s.wall_seconds = facts->run.wall_seconds;
    for (const auto& st : facts->stages)
        s.stages[stage_index(st.stage)] += st.seconds;
    s.opencl_commands = facts->run.opencl_commands;
    s.host_waits = facts->sync.waits;
    for (const auto& k : facts->kernels)
        s.items.push_back({"kernel", k.name, k.launches, k.seconds, k.bytes});
    for (const auto& t : facts->transfers)
        s.items.push_back({"transfer", t.direction + " " + t.path, t.count, t.seconds, t.bytes});
    return s;
}

}  // namespace clprobe
