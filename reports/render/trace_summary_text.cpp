#include "render/trace_summary_text.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "render/capture_text.hpp"
#include "render/kernel_roof_cells.hpp"
#include "render/replay_text.hpp"
#include "rules/trace_rule_support.hpp"
#include "rules/trace_rules.hpp"

namespace clprobe {

namespace {

using trace_rule::seconds_text;

constexpr std::size_t kernels_shown = 5;
constexpr int bar_width = 30;

}  // namespace

std::string run_ending(const ProgramRunFacts& run) {
    if (run.signal) return fmt::format("killed by signal {}", *run.signal);
    if (run.exit_code) return fmt::format("exit code {}", *run.exit_code);
    return "end unknown";
}

std::string stage_words(AppStage s) {
    switch (s) {
        case AppStage::kernel:
            return "kernels on the device";
        case AppStage::transfer:
            return "transfers and other device commands";
        case AppStage::build:
            return "program builds";
        case AppStage::host_wait:
            return "host waiting, device idle";
        case AppStage::device_idle:
            return "device idle while the host works";
        case AppStage::host_only:
            return "before the first / after the last command";
    }
    return "";
}

namespace {

void render_stages(std::string& out, const TraceFacts& f) {
    const double wall = f.run.wall_seconds;
    out += "  where the wall time went:\n";
    for (const auto& s : f.stages) {
        const double share = wall > 0 ? s.seconds / wall : 0;
        const int filled = static_cast<int>(std::lround(share * bar_width));
        out += fmt::format("    {:<12} {:>9} {:>5.1f}%  {:<{}}  {}\n", to_string(s.stage), seconds_text(s.seconds),
                           100 * share, std::string(static_cast<std::size_t>(std::clamp(filled, 0, bar_width)), '#'),
                           bar_width, stage_words(s.stage));
    }
}

void render_kernels(std::string& out, const TraceFacts& f, const RunReport& r) {
    if (f.kernels.empty()) return;
    out += fmt::format("  kernels ({} by device time{}):\n", f.kernels.size() > kernels_shown ? "top 5" : "all",
                       f.work.empty() ? "" : "; work per launch counted under Oclgrind, each roof's fraction");
    for (std::size_t i = 0; i < f.kernels.size() && i < kernels_shown; ++i) {
        const KernelFacts& k = f.kernels[i];
        const KernelRoofCells cells = kernel_roof_cells(f, r, k);
        out += fmt::format("    {:<28} {:>7} launches  {:>9} total  {:>9} median  {:>5.1f}% of the wall\n", k.name,
                           k.launches, seconds_text(k.seconds), seconds_text(k.median_launch_seconds),
                           f.run.wall_seconds > 0 ? 100 * k.seconds / f.run.wall_seconds : 0.0);
        if (!cells.work.empty()) out += fmt::format("      {}\n", cells.work);
        if (!cells.roofs.empty()) out += fmt::format("      {}\n", cells.roofs);
    }
}

void render_transfers(std::string& out, const TraceFacts& f) {
    if (f.transfers.empty()) return;
    out += "  transfers:\n";
    for (const auto& t : f.transfers) {
        const double gbs = t.seconds > 0 ? t.bytes / t.seconds * 1e-9 : 0;
        out += fmt::format("    {:<7} {:<12} {:>7} commands  {:>10.4g} MiB  {:>9}  {:.3g} GB/s\n", t.direction, t.path,
                           t.count, t.bytes / (1 << 20), seconds_text(t.seconds), gbs);
    }
}

// The job's processes (those that used OpenCL) as a tree by parent, each with how it ended, its
// lifetime, its commands and its share of the job's device time; then each one's own stages.
void render_processes(std::string& out, const TraceFacts& f) {
    if (f.processes.size() < 2) return;
    double device_total = 0;
    for (const auto& p : f.processes)
        device_total += p.device_seconds;
    out += fmt::format("  processes ({} used OpenCL):\n", f.processes.size());
    out += fmt::format("    {:<8} {:<8} {:<6} {:<16} {:>9} {:>9} {:>8}  {}\n", "pid", "parent", "origin", "end", "wall",
                       "commands", "device", "command line");
    const auto depth_of = [&](const ProcessFacts& p) { return process_depth(f.processes, p); };
    const ProcessFacts* dominant = nullptr;
    for (const auto& p : f.processes) {
        if (!dominant || p.device_seconds > dominant->device_seconds) dominant = &p;
        const std::string share =
            device_total > 0 ? fmt::format("{:.0f}%", 100 * p.device_seconds / device_total) : std::string("-");
        const std::string pid =
            std::string(static_cast<std::size_t>(2 * std::min(depth_of(p), 6)), ' ') + std::to_string(p.pid);
        out += fmt::format("    {:<8} {:<8} {:<6} {:<16} {:>9} {:>9} {:>8}  {}\n", pid, p.ppid,
                           p.origin.empty() ? "?" : p.origin, process_ending(p), seconds_text(p.wall_seconds),
                           p.opencl_commands, share,
                           (p.rank.empty() ? "" : "[rank " + p.rank + "] ") + p.command_line.substr(0, 60));
        if (p.end == ProcessEnd::still_running)
            out +=
                fmt::format("    {:<8} records end at {} after the start\n", "", seconds_text(p.records_end_seconds));
    }
    if (dominant && device_total > 0)
        out += fmt::format("  pid {} holds {:.0f}% of the job's device time ({})\n", dominant->pid,
                           100 * dominant->device_seconds / device_total, seconds_text(dominant->device_seconds));
    out += "  each process's own wall time (kernel / transfer / build / host_wait / device_idle / host_only):\n";
    for (const auto& p : f.processes) {
        std::string shares;
        for (const auto& s : p.stages)
            shares += fmt::format("{}{:.0f}%", shares.empty() ? "" : " / ",
                                  p.wall_seconds > 0 ? 100 * s.seconds / p.wall_seconds : 0.0);
        out += fmt::format("    {:<8} {}\n", p.pid, shares);
    }
}

}  // namespace

std::string process_ending(const ProcessFacts& p) {
    switch (p.end) {
        case ProcessEnd::exited:
            return fmt::format("exit {}", p.exit_code.value_or(-1));
        case ProcessEnd::killed:
            return p.signal ? fmt::format("CRASHED signal {}", *p.signal) : "killed";
        case ProcessEnd::exit_handler:
            return "exited";
        case ProcessEnd::no_exit_handler:
            return "ended (_exit)";
        case ProcessEnd::still_running:
            return "STILL RUNNING";
    }
    return "?";
}

// Depth from the parent links among the processes listed: a child is drawn under its parent.
int process_depth(const std::vector<ProcessFacts>& processes, const ProcessFacts& p) {
    int depth = 0;
    int parent = p.ppid;
    for (int guard = 0; guard < 64; ++guard) {
        const auto it =
            std::find_if(processes.begin(), processes.end(), [&](const ProcessFacts& q) { return q.pid == parent; });
        if (it == processes.end()) break;
        ++depth;
        parent = it->ppid;
    }
    return depth;
}

std::string render_trace_summary(const RunReport& report) {
    const auto facts = trace_facts_of(report);
    if (!facts) return {};
    const TraceFacts& f = *facts;
    std::string argv;
    for (const auto& a : f.run.argv)
        argv += (argv.empty() ? "" : " ") + a;
    std::string out = "Traced program\n";
    out += fmt::format("  {} · {} · {} wall · {} OpenCL commands{}\n", argv.empty() ? "?" : argv, run_ending(f.run),
                       seconds_text(f.run.wall_seconds), f.run.opencl_commands,
                       f.run.layer_loaded ? "" : " (the layer recorded nothing)");
    if (f.run.commands_without_times)
        out += fmt::format("  {} commands never completed while the program ran: their device time is missing\n",
                           f.run.commands_without_times);
    if (f.run.capture_seconds > 0)
        out += fmt::format(
            "  {} of the layer's own capture work (--work, --replay) is cut out of the wall time and "
            "every stage\n",
            seconds_text(f.run.capture_seconds));
    render_processes(out, f);
    out += render_capture(report, f);
    render_stages(out, f);
    render_kernels(out, f, report);
    render_transfers(out, f);
    out += "\n";
    // The what-if tables, so that `-q -o FILE` and a saved report read back keep them.
    if (const std::string replays = replay::replay_section_text(report); !replays.empty()) out += replays;
    return out;
}

}  // namespace clprobe
