#include "cli/trace_command_replay.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>

#include "json/replay_json.hpp"
#include "replay/replay_engine.hpp"
#include "rules/analysis.hpp"

namespace clprobe {

replay::ReplayContext replay_context_of(const std::vector<ProgramTrace>& processes, double wall_seconds) {
    replay::ReplayContext context;
    if (wall_seconds > 0) context.wall_ns = wall_seconds * 1e9;
    for (const auto& p : processes) {
        for (const auto& c : p.commands) {
            if (c.kind != CommandKind::kernel || c.kernel < 0) continue;
            const std::string name(p.kernel_name(c));
            auto& totals = context.kernels[name];
            ++totals.launches;
            // A sampled timeline lacks launches: the ordinal of the captured one cannot be matched.
            const bool sampled = p.sampling.max_period > 1 || !p.aggregates.empty();
            std::vector<int>* order = sampled ? nullptr : &context.launch_shapes[{p.pid, name}];
            if (c.device && c.device->status == 0 && c.device->end > c.device->start) {
                const double ns = static_cast<double>(c.device->end - c.device->start);
                totals.device_ns += ns;
                const std::pair<std::string, std::uint64_t> shape{c.global, c.bytes};
                auto at = std::find(totals.shapes.begin(), totals.shapes.end(), shape);
                if (at == totals.shapes.end()) {
                    totals.shapes.push_back(shape);
                    totals.times_ns.emplace_back();
                    at = totals.shapes.end() - 1;
                }
                const auto index = at - totals.shapes.begin();
                totals.times_ns[static_cast<std::size_t>(index)].push_back(ns);
                if (order) order->push_back(static_cast<int>(index));
            } else if (order) {
                order->push_back(-1);
            }
        }
        // Launches a sampled timeline left out (--max-size): counted and timed in aggregate.
        for (const auto& a : p.aggregates) {
            if (a.kind != CommandKind::kernel || a.kernel < 0 ||
                static_cast<std::size_t>(a.kernel) >= p.kernel_names.size())
                continue;
            auto& totals = context.kernels[p.kernel_names[static_cast<std::size_t>(a.kernel)]];
            totals.launches += a.count;
            totals.device_ns += static_cast<double>(a.device_ns);
        }
    }
    return context;
}

void add_replays(RunReport& report, const std::vector<ProgramTrace>& processes, const std::string& records_dir,
                 const ReplayOptions& o, bool quiet) {
    if (!o.enabled()) return;
    const Measurement* wall = find_measurement(report, "app.wall_time");
    const replay::ReplayContext context = replay_context_of(processes, wall ? wall->summary.median : 0);
    replay::ReplayOptions options;
    options.max_kernels = static_cast<std::size_t>(o.replay_kernels);
    if (!quiet) options.progress = [](const std::string& line) { fmt::print(stderr, "clprobe trace: {}\n", line); };
    ProbeResult result;
    result.id = replay::replay_probe_id;
    result.layer = "trace";
    result.title = "Replay of the hottest captured kernels";
    const auto started = std::chrono::steady_clock::now();
    try {
        const replay::ReplayRun run = replay::run_replay(records_dir, context, options);
        result.status = ProbeStatus::ok;
        result.attributes["replay"] = replay_to_json(run.results, run.findings);
        // The what-if tables are part of the text report (render/replay_text's replay_section_text),
        // wherever it goes: stderr, -o FILE with -q, a saved report read back.
        if (run.results.empty())
            result.reason =
                fmt::format("the layer captured no kernel (each is captured at launch {})", o.capture_launch());
    } catch (const std::exception& e) {
        // The trace's own report stands without the replay.
        result.status = ProbeStatus::error;
        result.reason = fmt::format("replay failed: {}", e.what());
    }
    // The replay's own wall time, whatever its end: time the user waited for, not the program's.
    result.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    report.results.push_back(std::move(result));
    // The findings again, the replay's among them (rules/replay_analysis): the path `clprobe
    // report` takes on the saved report, so both give the same findings.
    analyze(report);
}

}  // namespace clprobe
