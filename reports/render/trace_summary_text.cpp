#include "render/trace_summary_text.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

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
    const Measurement* peak = find_measurement(r, "kernel.peak.bandwidth");
    out += fmt::format("  kernels ({} by device time):\n", f.kernels.size() > kernels_shown ? "top 5" : "all");
    for (std::size_t i = 0; i < f.kernels.size() && i < kernels_shown; ++i) {
        const KernelFacts& k = f.kernels[i];
        const double gbs = k.seconds > 0 ? k.bytes / k.seconds * 1e-9 : 0;
        const std::string roof = peak && peak->summary.median > 0 && gbs > 0
                                     ? fmt::format(", {:.0f}% of the roof", 100 * gbs / peak->summary.median)
                                     : "";
        out += fmt::format("    {:<28} {:>7} launches  {:>9} total  {:>9} median  ~{:.3g} GB/s{}\n", k.name, k.launches,
                           seconds_text(k.seconds), seconds_text(k.median_launch_seconds), gbs, roof);
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

}  // namespace

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
    render_stages(out, f);
    render_kernels(out, f, report);
    render_transfers(out, f);
    return out + "\n";
}

}  // namespace clprobe
