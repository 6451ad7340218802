#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "render/fleet_text.hpp"
#include "render/html_page.hpp"
#include "render/machine_choice_html.hpp"
#include "render/svg_chart.hpp"
#include "render/value_format.hpp"

namespace clprobe {

namespace {

using svg::escape;

// One row per node's distance from the median, as a bar: outliers stand out at a glance.
std::string metric_rows(const FleetAnalysis& f) {
    std::string out;
    for (const auto& m : f.metrics) {
        const double worst = m.outliers.empty() ? 0 : std::fabs(m.outliers.front().relative);
        const int width = static_cast<int>(std::min(200.0, 400 * worst));
        out += fmt::format(
            "<tr><td><code>{}</code></td><td class=num>{}</td><td class=num>{:.1f}%</td>"
            "<td class=num>{}</td><td class=num>{}</td><td class=num>{}</td>"
            "<td><span class='devbar{}' style='width:{}px'></span> {}</td></tr>\n",
            escape(m.metric), escape(units::format(m.median, m.unit)), 100 * m.spread,
            escape(units::format(m.min, m.unit)), escape(units::format(m.max, m.unit)), m.outliers.size(),
            m.outliers.empty() ? "" : " out", std::max(width, 2),
            m.outliers.empty() ? std::string("none") : fmt::format("{:+.1f}%", 100 * m.outliers.front().relative));
    }
    return out;
}

std::string outlier_sections(const FleetAnalysis& f) {
    std::string out;
    for (const auto& n : f.outliers) {
        out += fmt::format("<h3>{} <span class={}>{}</span></h3><p><code>{}</code></p><ul>\n", escape(n.node),
                           n.worse ? "worse" : "better", n.worse ? "worse" : "better", escape(n.source));
        for (const auto& o : n.metrics)
            out += fmt::format(
                "<li><code>{}</code> {:.4g} ({:+.1f}% from the median; band {:.4g}..{:.4g}; node cv "
                "{:.1f}%)</li>\n",
                escape(o.metric), o.value, 100 * o.relative, o.band_low, o.band_high, 100 * o.cv);
        for (const auto& e : n.environment)
            out += fmt::format("<li>differs: <code>{}</code> = {} (fleet majority: {}, {} nodes)</li>\n",
                               escape(e.field), escape(e.value.empty() ? "unknown" : e.value),
                               escape(e.majority.empty() ? "unknown" : e.majority), e.majority_nodes);
        out += "</ul>\n";
    }
    return out;
}

}  // namespace

std::string render_fleet_html(const FleetAnalysis& f, const RenderOptions&) {
    std::string out = html::page_start("clprobe fleet");
    out += fmt::format("<h1>Fleet of {} node(s)</h1><p>{}; {} report(s) not paired.</p>\n", f.nodes, escape(f.device),
                       f.unpaired.size());
    out += "<h2>Headline metrics</h2>";
    out += html::scroll_table(
        "<tr><th>metric</th><th>median</th><th>spread</th><th>min</th><th>max</th><th>outliers</th>"
        "<th>largest deviation</th></tr>",
        metric_rows(f));
    out += fmt::format("<h2>Outliers ({}, {} worse)</h2>\n", f.outliers.size(), f.worse_outliers());
    out += outlier_sections(f);
    out +=
        "<h2>Findings on only some nodes</h2><div "
        "class=\"scroll\"><table><tr><th>finding</th><th>nodes</th><th>which</th></tr>\n";
    for (const auto& p : f.partial_findings) {
        std::string which;
        for (const auto& n : p.nodes)
            which += (which.empty() ? "" : ", ") + escape(n);
        out += fmt::format("<tr><td><code>{}</code></td><td class=num>{} of {}</td><td>{}</td></tr>\n", escape(p.id),
                           p.nodes.size(), f.nodes, which);
    }
    out += "</table></div>\n";
    if (!f.unpaired.empty()) {
        out += "<h2>Not paired</h2><ul>\n";
        for (const auto& u : f.unpaired)
            out += fmt::format("<li><code>{}</code>: {}</li>\n", escape(u.source), escape(u.reason));
        out += "</ul>\n";
    }
    out += render_machine_choices_html(choose_machines(f.machines));
    return out + html::page_end();
}

}  // namespace clprobe
