#include "render/capture_text.hpp"

#include <fmt/core.h>

#include "core/byte_size.hpp"
#include "rules/trace_rule_support.hpp"

namespace clprobe {

namespace {

using trace_rule::seconds_text;

// "kernel 41% · host_wait 30%": the stages above 1% of the window, largest first.
std::string stage_shares(const TraceFacts& f) {
    std::vector<AppStageTime> stages = f.stages;
    std::sort(stages.begin(), stages.end(),
              [](const AppStageTime& a, const AppStageTime& b) { return a.seconds > b.seconds; });
    std::string out;
    for (const auto& s : stages) {
        const double share = f.run.wall_seconds > 0 ? s.seconds / f.run.wall_seconds : 0;
        if (share < 0.01) continue;
        out += fmt::format("{}{} {:.0f}%", out.empty() ? "" : " · ", to_string(s.stage), 100 * share);
    }
    return out;
}

}  // namespace

std::string render_capture(const RunReport& report, const TraceFacts& f) {
    if (!f.capture) return {};
    const CaptureFacts& c = *f.capture;
    std::string out;
    if (c.mode != "all") {
        if (c.windows.empty())
            out += fmt::format("  capture ({}): no window was open while the program ran: nothing analysed\n", c.mode);
        else
            out += fmt::format("  capture ({}): {} window{}; the analysis below covers only commands enqueued in {}\n",
                               c.mode, c.windows.size(), c.windows.size() == 1 ? "" : "s",
                               c.windows.size() == 1 ? "it" : "them");
        const ProbeResult* p = find_result(report, trace_probe_id);
        const nlohmann::json* windows = nullptr;
        if (p && p->attributes.is_object() && p->attributes.contains("windows")) windows = &p->attributes["windows"];
        for (std::size_t i = 0; i < c.windows.size(); ++i) {
            const auto& w = c.windows[i];
            out += fmt::format("    window {}: {:.3f} s to {:.3f} s after the start ({}) · {} OpenCL commands\n", i + 1,
                               w.begin_seconds, w.end_seconds, seconds_text(w.end_seconds - w.begin_seconds),
                               w.opencl_commands);
            if (!windows || i >= windows->size()) continue;
            const nlohmann::json& entry = (*windows)[i];
            if (const auto wf = trace_facts_from_json(entry.value("facts", nlohmann::json::object())))
                out += fmt::format("      stages: {}\n", stage_shares(*wf));
            for (const auto& finding : entry.value("findings", nlohmann::json::array())) {
                const std::string gain =
                    finding.contains("estimated_gain")
                        ? fmt::format(" (gain ~{:.0f}%)", 100 * finding["estimated_gain"].get<double>())
                        : "";
                out += fmt::format("      {}{}: {}\n", finding.value("id", ""), gain, finding.value("title", ""));
            }
        }
    }
    if (c.limited && (c.sampled_since_seconds || c.dropped_writes)) {
        out +=
            fmt::format("  bounded space: records {} of --max-size {}; the timeline holds {} of {} commands ({:.1f}%)",
                        bytes_text(c.records_bytes), bytes_text(c.max_bytes), c.timeline_commands,
                        c.timeline_commands + c.aggregated_commands, 100 * c.timeline_fraction());
        if (c.sampled_since_seconds)
            out += fmt::format(", sampled from {:.3f} s after the start (at the sparsest 1 in {})",
                               *c.sampled_since_seconds, c.max_period);
        out += "; per-kernel and per-transfer totals are exact, stage times come from the sampled timeline\n";
        if (c.dropped_writes)
            out += fmt::format("  {} record writes were refused at the limit (their commands are in the totals only)\n",
                               c.dropped_writes);
    }
    return out;
}

}  // namespace clprobe
