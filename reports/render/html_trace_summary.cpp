#include "render/html_trace_summary.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "json/replay_json.hpp"
#include "render/html_page.hpp"
#include "render/html_trace_processes.hpp"
#include "render/kernel_roof_cells.hpp"
#include "render/replay_text.hpp"
#include "render/svg_chart.hpp"
#include "render/trace_summary_text.hpp"
#include "render/value_format.hpp"

namespace clprobe::html {

namespace {

using svg::escape;

constexpr std::size_t kernels_shown = 8;

// The timeline's colours for the same activities, so a stage reads the same in both places.
const char* stage_colour(AppStage s) {
    switch (s) {
        case AppStage::kernel:
            return "#0072B2";
        case AppStage::transfer:
            return "#E69F00";
        case AppStage::build:
            return "#CC79A7";
        case AppStage::host_wait:
            return "#D55E00";
        case AppStage::device_idle:
            return "#999";
        case AppStage::host_only:
            return "#ccc";
    }
    return "#999";
}

// A share as a bar with its percentage printed (0..1 of the bar's track).
std::string share_cell(double share, const char* colour) {
    return fmt::format(
        "<td class=\"sharecell\"><span class=\"gainbar\"><span class=\"track\"><span class=\"fill\" "
        "style=\"width:{:.1f}%;background:{}\"></span></span>{}</span></td>",
        100 * std::clamp(share, 0.0, 1.0), colour,
        share > 0 && share < 0.001 ? "&lt; 0.1%" : escape(units::format(100 * share, "%")));
}

std::string stages_table(const TraceFacts& f) {
    const double wall = f.run.wall_seconds;
    std::string rows;
    for (const auto& s : f.stages) {
        const double share = wall > 0 ? s.seconds / wall : 0;
        rows += fmt::format("<tr><td><code>{}</code></td><td class=\"num\">{}</td>{}<td>{}</td></tr>\n",
                            escape(to_string(s.stage)), escape(units::format(s.seconds, "s")),
                            share_cell(share, stage_colour(s.stage)), escape(stage_words(s.stage)));
    }
    return "<h3>Where the wall time went</h3>\n" +
           scroll_table("<tr><th>stage</th><th>time</th><th>share of the wall time</th><th>what it is</th></tr>", rows);
}

std::string kernels_table(const TraceFacts& f, const RunReport& r) {
    if (f.kernels.empty()) return {};
    std::string rows;
    for (std::size_t i = 0; i < f.kernels.size() && i < kernels_shown; ++i) {
        const KernelFacts& k = f.kernels[i];
        const KernelRoofCells cells = kernel_roof_cells(f, r, k);
        rows += fmt::format(
            "<tr><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
            "<td>{}</td><td>{}</td></tr>\n",
            escape(k.name), k.launches, escape(units::format(k.seconds, "s")),
            escape(units::format(k.median_launch_seconds, "s")), escape(cells.work.empty() ? "-" : cells.work),
            escape(cells.roofs.empty() ? "-" : cells.roofs));
    }
    const std::string which = f.kernels.size() > kernels_shown
                                  ? fmt::format("top {} of {} by device time", kernels_shown, f.kernels.size())
                                  : "by device time";
    return fmt::format("<h3>Kernels ({})</h3>\n", which) +
           scroll_table(
               "<tr><th>kernel</th><th>launches</th><th>device time</th><th>median launch</th>"
               "<th>work per launch (counted under Oclgrind)</th><th>fraction of each roof (the binding one "
               "marked), or the estimate from its arguments</th></tr>",
               rows);
}

std::string transfers_table(const TraceFacts& f) {
    if (f.transfers.empty()) return {};
    std::string rows;
    for (const auto& t : f.transfers) {
        const double gbs = t.seconds > 0 ? t.bytes / t.seconds * 1e-9 : 0;
        rows += fmt::format(
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
            "<td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
            escape(t.direction), escape(t.path), t.count, t.blocking, escape(units::format(t.bytes, "B")),
            escape(units::format(t.seconds, "s")), gbs > 0 ? escape(units::format(gbs, "GB/s")) : "?");
    }
    return "<h3>Transfers</h3>\n" +
           scroll_table(
               "<tr><th>direction</th><th>path</th><th>commands</th><th>blocking</th><th>bytes</th>"
               "<th>device time</th><th>rate</th></tr>",
               rows);
}

// The replay's what-if table of each capture (trace --replay), as the text report prints it.
std::string replays_section(const RunReport& report) {
    const ProbeResult* result = find_result(report, replay::replay_probe_id);
    if (!result) return {};
    const auto replays = replay::replay_results_from_json(result->attributes.value("replay", nlohmann::json()));
    if (replays.empty()) return {};
    std::string out = fmt::format("<h3>What-if replays ({} captures, {})</h3>\n", replays.size(),
                                  escape(units::format(result->wall_seconds, "s")));
    for (const auto& r : replays) {
        out += fmt::format("<p><b>{}</b><br>{}</p>\n", escape(replay::replay_heading(r)),
                           escape(replay::replay_verdict(r)));
        std::string rows;
        for (const auto& row : replay::what_if_rows(r))
            rows += fmt::format(
                "<tr><td>{}</td><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                "<td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>\n",
                escape(row.what_if), escape(row.variant), escape(row.median), escape(row.spread), escape(row.samples),
                escape(row.speedup), escape(row.verdict), escape(row.outputs));
        if (!rows.empty())
            out += scroll_table(
                "<tr><th>what-if</th><th>variant</th><th>median</th><th>spread</th><th>n</th><th>speed-up [95%]</th>"
                "<th>verdict</th><th>outputs</th></tr>",
                rows);
        std::string notes;
        for (const auto& note : replay::replay_notes(r))
            notes += "<li>" + escape(note) + "</li>";
        if (!notes.empty()) out += "<ul>" + notes + "</ul>\n";
    }
    return out;
}

}  // namespace

std::string trace_summary_section(const RunReport& report) {
    const auto facts = trace_facts_of(report);
    if (!facts) return {};
    const TraceFacts& f = *facts;
    std::string argv;
    for (const auto& a : f.run.argv)
        argv += (argv.empty() ? "" : " ") + a;
    std::string out = "<h2>Traced program</h2>\n";
    out += fmt::format("<p class=\"meta\"><code>{}</code><br>{} &middot; {} wall &middot; {} OpenCL commands</p>\n",
                       escape(argv.empty() ? "?" : argv), escape(run_ending(f.run)),
                       escape(units::format(f.run.wall_seconds, "s")), f.run.opencl_commands);
    if (!f.run.layer_loaded)
        out += "<div class=\"warn\">The layer recorded nothing: was the program's OpenCL loaded?</div>\n";
    if (f.run.commands_without_times)
        out += fmt::format(
            "<div class=\"warn\">{} commands never completed while the program ran: their device time is "
            "missing.</div>\n",
            f.run.commands_without_times);
    return out + trace_processes_table(f) + stages_table(f) + kernels_table(f, report) + transfers_table(f) +
           replays_section(report);
}

}  // namespace clprobe::html
