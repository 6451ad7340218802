// The fleet page (render_fleet_html, render/fleet_text.hpp) in the report pages' style: nodes by
// name, each headline metric's distribution over the nodes as a dot strip with the outliers named
// and their deviation in %, and each outlier's environment differences beside its metrics.
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

std::string percent(double relative) {
    return fmt::format("{}{}", relative >= 0 ? "+" : "\u2212", units::format(100 * std::fabs(relative), "%"));
}

// The nodes in the order the fleet lists them (every metric lists the same nodes, most all of them).
std::vector<std::string> node_names(const FleetAnalysis& f) {
    std::vector<std::string> names;
    for (const auto& m : f.metrics)
        for (const auto& v : m.values)
            if (std::find(names.begin(), names.end(), v.node) == names.end()) names.push_back(v.node);
    return names;
}

const MetricOutlier* outlier_of(const FleetMetric& m, const std::string& node) {
    for (const auto& o : m.outliers)
        if (o.node == node) return &o;
    return nullptr;
}

// One metric's nodes as dots on a line of deviation from the fleet median (the centre), symmetric
// so that up and down read alike; the band where a node is not an outlier is shaded. No text: the
// deviation range is printed beside it and each dot's tooltip names its node and value.
std::string dot_strip(const FleetMetric& m) {
    constexpr int width = 220, height = 22, pad = 6;
    if (m.median <= 0 || m.values.empty()) return {};
    const double band = m.band_half_width / m.median;
    double reach = band;
    for (const auto& v : m.values)
        reach = std::max(reach, std::fabs(v.value / m.median - 1));
    reach = std::max(reach * 1.15, 0.01);
    auto x_of = [&](double relative) { return pad + (relative / reach + 1) / 2 * (width - 2 * pad); };
    std::string out = fmt::format(
        R"(<svg class="strip" width="{0}" height="{1}" viewBox="0 0 {0} {1}" role="img" aria-label="{2} per node">)",
        width, height, escape(m.metric));
    if (band > 0)
        out += fmt::format(
            R"(<rect x="{:.1f}" y="3" width="{:.1f}" height="{}" fill="#e3eef7"><title>band: {} .. {}</title></rect>)",
            x_of(-band), x_of(band) - x_of(-band), height - 6,
            escape(units::format(m.median - m.band_half_width, m.unit)),
            escape(units::format(m.median + m.band_half_width, m.unit)));
    out += fmt::format(R"(<line x1="{0}" x2="{1}" y1="{2}" y2="{2}" stroke="#bbb"/>)", pad, width - pad, height / 2);
    out +=
        fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="2" y2="{1}" stroke="#555"><title>median {2}</title></line>)",
                    x_of(0), height - 2, escape(units::format(m.median, m.unit)));
    for (const auto& v : m.values) {
        const double rel = v.value / m.median - 1;
        const MetricOutlier* o = outlier_of(m, v.node);
        // Outside the fleet's band but not an outlier: the node's own noise widened its band. Hollow.
        const bool own_noise = !o && std::fabs(rel) > band;
        const char* fill = !o ? "#0072B2" : o->worse ? "#c62828" : "#1a7f37";
        out += fmt::format(
            R"(<circle class="{}" cx="{:.1f}" cy="{}" r="{}" fill="{}" fill-opacity="{}" stroke="{}"><title>{}: {} ({} from the median{})</title></circle>)",
            o ? "dot out" : "dot", x_of(rel), height / 2, o ? 5 : 4, own_noise ? "#fff" : fill, own_noise ? "1" : "0.8",
            fill, escape(v.node), escape(units::format(v.value, m.unit)), escape(percent(rel)),
            own_noise ? "; not an outlier: its own samples spread " + escape(units::format(100 * v.cv, "%")) : "");
    }
    return out + "</svg>";
}

std::string named_value(const FleetMetric& m, bool lowest) {
    if (m.values.empty()) return {};
    const auto it = std::min_element(m.values.begin(), m.values.end(), [&](const auto& a, const auto& b) {
        return lowest ? a.value < b.value : a.value > b.value;
    });
    return fmt::format("{}<br><small>{}</small>", escape(units::format(it->value, m.unit)), escape(it->node));
}

std::string headline_table(const FleetAnalysis& f) {
    std::string rows;
    for (const auto& m : f.metrics) {
        std::string outliers;
        for (const auto& o : m.outliers)
            outliers += fmt::format("{}<span class=\"{}\"><b>{}</b> {}</span>", outliers.empty() ? "" : "<br>",
                                    o.worse ? "worse" : "better", escape(o.node), escape(percent(o.relative)));
        double reach = m.median > 0 ? m.band_half_width / m.median : 0;
        for (const auto& v : m.values)
            if (m.median > 0) reach = std::max(reach, std::fabs(v.value / m.median - 1));
        rows += fmt::format(
            "<tr><td class=\"metric\"><code>{}</code><br><small>{}</small></td><td class=\"num\">{}</td><td "
            "class=\"num\">{}</td>"
            "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"strip\">{}<small>\u00b1{}</small></td>"
            "<td>{}</td></tr>\n",
            escape(m.metric), m.higher_is_better ? "higher is better" : "lower is better",
            escape(units::format(m.median, m.unit)), escape(units::format(100 * m.spread, "%")), named_value(m, true),
            named_value(m, false), dot_strip(m), escape(units::format(100 * reach * 1.15, "%")),
            outliers.empty() ? "none" : outliers);
    }
    return html::scroll_table(
        "<tr><th>metric</th><th>median</th><th>spread</th><th>lowest</th><th>highest</th>"
        "<th>each node, around the median</th><th>outliers</th></tr>",
        rows);
}

std::string nodes_table(const FleetAnalysis& f) {
    std::string rows;
    for (const auto& name : node_names(f)) {
        const NodeOutlier* n = nullptr;
        for (const auto& o : f.outliers)
            if (o.node == name) n = &o;
        std::string differs;
        if (n)
            for (const auto& e : n->environment)
                differs += fmt::format("{}<code>{}</code> {}", differs.empty() ? "" : "<br>", escape(e.field),
                                       escape(e.value.empty() ? "unknown" : e.value));
        rows += fmt::format(
            "<tr><td><b>{}</b></td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n", escape(name),
            !n ? "<span class=\"ok\">within the band</span>"
               : fmt::format("<a href=\"#node-{}\" class=\"{}\">{}</a>", escape(name), n->worse ? "worse" : "better",
                             n->worse ? "outlier, worse" : "outlier, better"),
            n ? std::to_string(n->metrics.size()) : "0", differs.empty() ? "&ndash;" : differs);
    }
    return html::scroll_table(
        "<tr><th>node</th><th>verdict</th><th>metrics outside the band</th><th>environment differences</th></tr>",
        rows);
}

std::string unit_of(const FleetAnalysis& f, const std::string& metric) {
    for (const auto& m : f.metrics)
        if (m.metric == metric) return m.unit;
    return {};
}

// Each outlier: what deviates, and beside it what differs from the fleet's majority.
std::string outlier_cards(const FleetAnalysis& f) {
    std::string out;
    for (const auto& n : f.outliers) {
        out += fmt::format(
            "<div class=\"finding {}\" id=\"node-{}\"><div class=\"ftitle\">{} <span class=\"{}\">{}</span></div>"
            "<div class=\"fid\"><code>{}</code></div><div class=\"pair\">",
            n.worse ? "sev-high" : "sev-low", escape(n.node), escape(n.node), n.worse ? "worse" : "better",
            n.worse ? "worse than the fleet" : "better than the fleet", escape(n.source));
        std::string rows;
        for (const auto& o : n.metrics) {
            const std::string unit = unit_of(f, o.metric);
            rows += fmt::format(
                "<tr><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num {}\">{}</td>"
                "<td class=\"num\">{} .. {}</td><td class=\"num\">{}</td></tr>\n",
                escape(o.metric), escape(units::format(o.value, unit)), o.worse ? "worse" : "better",
                escape(percent(o.relative)), escape(units::format(o.band_low, unit)),
                escape(units::format(o.band_high, unit)), escape(units::format(100 * o.cv, "%")));
        }
        out += "<div><h3>Metrics outside the band</h3>" +
               html::scroll_table(
                   "<tr><th>metric</th><th>value</th><th>from the median</th><th>band</th>"
                   "<th>node cv</th></tr>",
                   rows) +
               "</div>";
        std::string env;
        for (const auto& e : n.environment)
            env += fmt::format("<tr><td><code>{}</code></td><td>{}</td><td>{} <small>({} nodes)</small></td></tr>\n",
                               escape(e.field), escape(e.value.empty() ? "unknown" : e.value),
                               escape(e.majority.empty() ? "unknown" : e.majority), e.majority_nodes);
        out += "<div><h3>Environment differences</h3>" +
               (env.empty()
                    ? std::string("<p class=\"meta\">None recorded: the same driver, kernel, clocks and "
                                  "settings as the majority.</p>")
                    : html::scroll_table("<tr><th>field</th><th>this node</th><th>fleet majority</th></tr>", env)) +
               "</div></div></div>\n";
    }
    return out;
}

}  // namespace

std::string render_fleet_html(const FleetAnalysis& f, const RenderOptions&) {
    std::string out = html::page_start("clprobe fleet");
    out += fmt::format("<h1>Fleet of {} node{}</h1>\n<p class=\"meta\">Device <b>{}</b>{}</p>\n", f.nodes,
                       f.nodes == 1 ? "" : "s", escape(f.device),
                       f.unpaired.empty() ? "" : fmt::format(" &middot; {} report(s) not paired", f.unpaired.size()));
    out += fmt::format(
        "<h2>Nodes</h2>\n<p class=\"meta\">{} outlier(s), {} worse than the fleet. A node is an outlier on a metric "
        "when it lies outside the fleet's band: {} robust standard deviations (1.4826 MAD) around the median, at "
        "least {} of it, widened by the node's own spread.</p>\n",
        f.outliers.size(), f.worse_outliers(), units::sig3(f.options.mad_k),
        units::format(100 * f.options.min_relative_band, "%"));
    out += nodes_table(f);
    out +=
        "<h2>Headline metrics</h2>\n<p class=\"meta\">Each dot is a node, placed by its deviation from the fleet "
        "median (the dark line); the shaded band is where a node counts as the fleet; red: an outlier on the "
        "worse side, green: on the better side; hollow: outside the band but within its own samples' spread, "
        "which widens its band (the tooltip says by how much).</p>\n";
    out += headline_table(f);
    if (!f.outliers.empty()) {
        out += fmt::format("<h2>Outliers ({}, {} worse)</h2>\n", f.outliers.size(), f.worse_outliers());
        out += outlier_cards(f);
    }
    out += "<h2>Findings on only some nodes</h2>\n";
    if (f.partial_findings.empty()) {
        out += "<p class=\"meta\">None: every node has the same findings.</p>\n";
    } else {
        std::string rows;
        for (const auto& p : f.partial_findings) {
            std::string which;
            for (const auto& n : p.nodes)
                which += (which.empty() ? "" : ", ") + escape(n);
            rows += fmt::format("<tr><td><code>{}</code></td><td class=\"num\">{} of {}</td><td>{}</td></tr>\n",
                                escape(p.id), p.nodes.size(), f.nodes, which);
        }
        out += html::scroll_table("<tr><th>finding</th><th>nodes</th><th>which</th></tr>", rows);
    }
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
