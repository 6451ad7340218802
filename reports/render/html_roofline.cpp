#include "render/html_roofline.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "core/memory_roofs.hpp"
#include "core/roofline_facts.hpp"
#include "core/trace_facts.hpp"
#include "render/html_page.hpp"
#include "render/svg_chart.hpp"
#include "render/value_format.hpp"

namespace clprobe::html {

namespace {

using svg::escape;

svg::Marker marker_of(const std::string& level) {
    if (level == "memory" || level.empty()) return svg::Marker::circle;
    if (level == "L3") return svg::Marker::square;
    if (level == "L2") return svg::Marker::triangle;
    if (level == "L1") return svg::Marker::diamond;
    return svg::Marker::cross;
}

const char* marker_name(svg::Marker m) {
    switch (m) {
        case svg::Marker::circle:
            return "&#9679;";
        case svg::Marker::square:
            return "&#9632;";
        case svg::Marker::triangle:
            return "&#9650;";
        case svg::Marker::diamond:
            return "&#9670;";
        case svg::Marker::cross:
            return "&#10006;";
    }
    return "";
}

constexpr const char* workload_colours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                            "#E69F00", "#56B4E9", "#8C564B", "#000000"};
constexpr const char* roof_colour = "#555";

struct Roof {
    std::string level;
    double gb_per_s = 0;
};

// The memory roofs: kernel.peak.bandwidth for memory, then every cache level's measured roof.
std::vector<Roof> memory_roofs(const RunReport& r, double memory_gb_per_s) {
    std::vector<Roof> roofs{{"memory", memory_gb_per_s}};
    if (const auto facts = memory_roof_facts_of(r.results))
        for (const auto& level : facts->roofs)
            if (level.level != "memory") roofs.push_back({level.level, level.gb_per_s});
    return roofs;
}

// Traced kernels against the memory roofs: their bytes over their device time, no FLOPs needed.
std::string bandwidth_strip(const RunReport& r, const std::vector<Roof>& roofs) {
    const auto facts = trace_facts_of(r);
    if (!facts) return {};
    std::vector<svg::Bar> bars;
    for (const auto& k : facts->kernels)
        if (k.seconds > 0 && k.bytes > 0) {
            const double gbs = k.bytes / k.seconds * 1e-9;
            bars.push_back({k.name, gbs, gbs, gbs});
        }
    if (bars.empty()) return {};
    std::vector<svg::Reference> refs;
    for (const auto& roof : roofs)
        refs.push_back({roof.level + " roof " + units::format(roof.gb_per_s, "GB/s"), roof.gb_per_s});
    return "<h3>Traced kernels against the memory roofs</h3>\n<p class=\"meta\">The program's kernels have no FLOP "
           "count: each is drawn at the bandwidth it reached (the bytes of the buffers bound to it over its device "
           "time), beside the measured roofs.</p>\n" +
           svg::bar_chart(bars, "GB/s", "kernel", 760, refs);
}

}  // namespace

std::string roofline_section(const RunReport& r) {
    const auto* bw = find_measurement(r, "kernel.peak.bandwidth");
    if (!bw) return {};
    const auto roofs = memory_roofs(r, bw->summary.median);
    const auto* fp32 = find_measurement(r, "kernel.peak.fp32");
    std::string out = "<h2>Roofline</h2>\n";
    if (!fp32) return out + bandwidth_strip(r, roofs);
    const auto* fp64 = find_measurement(r, "kernel.peak.fp64");
    const double fp32_peak = fp32->summary.median;

    std::vector<svg::Series> series;
    auto roof = [&](double compute, double bandwidth, const std::string& name, const std::string& label, bool dashed,
                    bool at_end) {
        svg::Series s{name, {}, dashed, false, true, roof_colour};
        for (double ai = 1.0 / 16; ai <= 256 * 1.0001; ai *= 1.25)
            s.points.push_back({ai, std::min(compute, ai * bandwidth), ""});
        s.line_label = label;
        s.label_at_end = at_end;
        series.push_back(std::move(s));
    };
    for (std::size_t i = 0; i < roofs.size(); ++i) {
        const auto& m = roofs[i];
        const std::string label = m.level + " " + units::format(m.gb_per_s, "GB/s");
        roof(fp32_peak, m.gb_per_s, label + " roof", label, i > 0, false);
    }
    // The compute roofs, labelled at their right end (drawn on top of the memory roofs' flat parts).
    roof(fp32_peak, 1e12, "fp32 " + units::format(fp32_peak, "GFLOP/s"), "fp32 " + units::format(fp32_peak, "GFLOP/s"),
         false, true);
    if (fp64)
        roof(fp64->summary.median, bw->summary.median, "fp64 " + units::format(fp64->summary.median, "GFLOP/s"),
             "fp64 " + units::format(fp64->summary.median, "GFLOP/s"), true, true);

    // Points: one series per (workload, level), numbered in report order; the key lists them.
    std::map<std::string, std::size_t> workload_index;
    std::string key_rows;
    int number = 0;
    std::map<std::string, bool> levels_seen;
    for (const auto& p : r.results) {
        const auto points = roofline_points_of(p);
        if (points.empty()) continue;
        const std::size_t w = workload_index.emplace(p.id, workload_index.size()).first->second;
        const char* fill = workload_colours[w % std::size(workload_colours)];
        for (const auto& pt : points) {
            ++number;
            const svg::Marker marker = marker_of(pt.level);
            levels_seen[pt.level.empty() ? "memory" : pt.level] = true;
            svg::Series s{pt.label.empty() ? p.id : pt.label,
                          {{pt.intensity, pt.gflops, std::to_string(number)}},
                          false,
                          true,
                          false,
                          fill,
                          marker};
            s.in_legend = false;
            series.push_back(std::move(s));
            const double bound = std::min(fp32_peak, pt.intensity * pt.roof_gb_per_s.value_or(bw->summary.median));
            key_rows += fmt::format(
                "<tr><td class=\"num\"><b>{}</b></td><td style=\"color:{}\">{}</td><td><code>{}</code></td><td>{}</td>"
                "<td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
                number, fill, marker_name(marker), escape(p.id), escape(pt.label), escape(pt.level),
                escape(units::format(pt.intensity, "FLOP/B")), escape(units::format(pt.gflops, "GFLOP/s")),
                bound > 0 ? units::format(100 * pt.gflops / bound, "%") : "n/a");
        }
    }
    out += fmt::format(
        "<p class=\"meta\">Ceilings measured in this run: a bandwidth roof per memory level (<code>kernel.peak."
        "bandwidth</code> for memory, <code>kernel.roof.bandwidth</code> for the caches) times the arithmetic "
        "intensity, under the compute roof <code>kernel.peak.fp32</code>{}. Numbered points are workload variants: "
        "colour = workload, marker = the memory level their working set lives in.</p>\n",
        fp64 ? " (and <code>kernel.peak.fp64</code>)" : "");
    out += svg::line_chart(series, {"arithmetic intensity", true, "FLOP/B"}, {"throughput", true, "GFLOP/s"}, 760, 420);
    if (!key_rows.empty()) {
        std::string workloads;
        for (const auto& [id, w] : workload_index)
            workloads += fmt::format("<span><b style=\"color:{}\">&#9632;</b> <code>{}</code></span>",
                                     workload_colours[w % std::size(workload_colours)], escape(id));
        std::string markers;
        for (const auto& [level, seen] : levels_seen)
            markers += fmt::format("<span>{} {}</span>", marker_name(marker_of(level)), escape(level));
        out += "<div class=\"legend\">" + workloads + markers + "</div>\n";
        out += "<details open><summary>Key to the numbered points</summary>" +
               scroll_table(
                   "<tr><th>#</th><th></th><th>workload</th><th>variant</th><th>level</th><th>intensity</"
                   "th><th>throughput</th><th>of its roof</th></tr>",
                   key_rows) +
               "</details>\n";
    }
    return out + bandwidth_strip(r, roofs);
}

}  // namespace clprobe::html
