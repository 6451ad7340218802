#include "render/html_trace_processes.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "render/html_page.hpp"
#include "render/svg_chart.hpp"
#include "render/trace_summary_text.hpp"
#include "render/value_format.hpp"

namespace clprobe::html {

namespace {

using svg::escape;

bool cut_short(const ProcessFacts& p) {
    return p.end == ProcessEnd::killed || p.end == ProcessEnd::still_running ||
           (p.end == ProcessEnd::exited && p.exit_code.value_or(0) != 0);
}

}  // namespace

std::string trace_processes_table(const TraceFacts& f) {
    if (f.processes.empty()) return {};
    double device_total = 0;
    for (const auto& p : f.processes)
        device_total += p.device_seconds;
    const bool ranks =
        std::any_of(f.processes.begin(), f.processes.end(), [](const ProcessFacts& p) { return !p.rank.empty(); });
    std::string rows;
    for (const auto& p : f.processes) {
        // A child sits under its parent: its pid indented by its depth in the tree.
        const int depth = std::min(process_depth(f.processes, p), 6);
        const double share = device_total > 0 ? p.device_seconds / device_total : 0;
        std::string ended = escape(process_ending(p));
        if (p.end == ProcessEnd::still_running)
            ended += fmt::format("<br><small>records end {} after the start</small>",
                                 escape(units::format(p.records_end_seconds, "s")));
        rows += fmt::format(
            "<tr><td class=\"num\"><span style=\"padding-left:{}em\">{}</span></td><td class=\"num\">{}</td>{}"
            "<td><code>{}</code></td><td>{}</td><td{}>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
            "<td class=\"num\">{}</td><td class=\"sharecell\"><span class=\"gainbar\"><span class=\"track\">"
            "<span class=\"fill\" style=\"width:{:.1f}%;background:#0072B2\"></span></span>{}</span></td></tr>\n",
            depth, p.pid, p.ppid, ranks ? "<td class=\"num\">" + escape(p.rank) + "</td>" : std::string(),
            escape(p.command_line.empty() ? "?" : p.command_line), escape(p.origin.empty() ? "?" : p.origin),
            cut_short(p) ? " class=\"worse\"" : "", ended, escape(units::format(p.wall_seconds, "s")),
            p.opencl_commands, escape(units::format(p.device_seconds, "s")), 100 * std::clamp(share, 0.0, 1.0),
            device_total > 0 ? escape(units::format(100 * share, "%")) : std::string("&ndash;"));
    }
    return fmt::format("<h3>Processes ({} used OpenCL)</h3>\n", f.processes.size()) +
           scroll_table(fmt::format("<tr><th>pid</th><th>parent</th>{}<th>command line</th><th>origin</th>"
                                    "<th>how it ended</th><th>wall time</th><th>OpenCL commands</th>"
                                    "<th>device time</th><th>share of the job's device time</th></tr>",
                                    ranks ? "<th>rank</th>" : ""),
                        rows);
}

}  // namespace clprobe::html
