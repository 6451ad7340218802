#include "render/html_timeline.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <vector>

#include "core/trace_facts.hpp"
#include "render/svg_chart.hpp"
#include "render/svg_common.hpp"
#include "render/timeline_view.hpp"
#include "render/value_format.hpp"

namespace clprobe::html {

namespace {

using svg::escape;

struct KindStyle {
    const char* kind;
    const char* colour;
    const char* legend;
};

// One colour per kind, distinct from each other and from the gaps' hatching (Okabe-Ito).
constexpr KindStyle kinds[] = {
    {"kernel", "#0072B2", "kernel (device)"},      {"transfer", "#E69F00", "transfer (device)"},
    {"enqueue", "#56B4E9", "enqueue call (host)"}, {"wait", "#D55E00", "wait: host blocked on the device"},
    {"build", "#CC79A7", "program build (host)"},
};

const char* colour_of(const std::string& kind) {
    for (const auto& k : kinds)
        if (kind == k.kind) return k.colour;
    return "#999";
}

struct GapStyle {
    GapKind kind;
    const char* id;
    const char* fill;
    const char* stroke;
    const char* legend;
};

constexpr GapStyle gap_styles[] = {
    {GapKind::host_wait, "host_wait", "#f4b4b4", "#c62828", "device idle, host waiting for it"},
    {GapKind::build, "build", "#ecc9de", "#8e3b6b", "device idle, host building a program"},
    {GapKind::host_work, "host_work", "#d9d9d9", "#666", "device idle, host busy elsewhere"},
};

const GapStyle& style_of(GapKind kind) {
    for (const auto& g : gap_styles)
        if (g.kind == kind) return g;
    return gap_styles[2];
}

std::string row_label(const TimelineRow& row) {
    if (row.kind != "thread") return row.name;
    const std::string what = row.activity == "enqueue" ? "enqueue calls"
                             : row.activity == "wait"  ? "waits"
                             : row.activity == "build" ? "builds"
                                                       : row.activity;
    return row.name + " \u00b7 " + what;
}

std::string swatch(const char* fill, const char* stroke = nullptr) {
    return fmt::format(
        R"(<svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="{}"{}/></svg>)", fill,
        stroke ? fmt::format(R"( stroke="{}")", stroke) : "");
}

std::string finding_links(const std::vector<const Finding*>& findings) {
    std::string out;
    for (const auto* f : findings)
        out += fmt::format(R"({}<a href="#finding-{}"><code>{}</code></a>)", out.empty() ? ": " : ", ", escape(f->id),
                           escape(f->id));
    return out;
}

// The legend: every kind drawn in this view, then every kind of gap drawn, with the findings
// that speak of it linked to their cards.
std::string legend(const std::set<std::string>& drawn_kinds, const std::set<GapKind>& drawn_gaps,
                   const RunReport& report) {
    std::string out = "<div class=\"legend\">";
    for (const auto& k : kinds)
        if (drawn_kinds.count(k.kind))
            out += fmt::format(R"(<span data-kind="{}">{}{}</span>)", k.kind, swatch(k.colour), k.legend);
    for (const auto& g : gap_styles)
        if (drawn_gaps.count(g.kind))
            out += fmt::format(R"(<span data-gap="{}">{}{}{}</span>)", g.id, swatch(g.fill, g.stroke), g.legend,
                               finding_links(findings_about(report, g.kind)));
    return out + "</div>";
}

struct View {
    double from = 0, to = 1;
    std::string label;      // the SVG's accessible name
    std::string svg_class;  // "timeline" for the whole run (the browser check counts its lanes), "zoomed"
    std::string id_prefix;  // pattern ids differ between the two SVGs of one page
};

std::string timeline_svg(const std::vector<TimelineRow>& rows, const View& v, const RunReport& report) {
    using namespace svg::detail;
    constexpr int width = 1000, left = 210, right = 16, top = 10, queue_h = 26, thread_h = 18, group_gap = 6;
    std::vector<double> row_y;
    double y = top;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (i > 0 && (rows[i].kind != rows[i - 1].kind || rows[i].name != rows[i - 1].name)) y += group_gap;
        row_y.push_back(y);
        y += rows[i].kind == "queue" ? queue_h : thread_h;
    }
    const double bottom = y;
    const int height = static_cast<int>(bottom) + 44;
    const Scale sx{v.from, v.to, false, double(left), double(width - right)};
    const double pixel = (v.to - v.from) / (width - right - left);
    // On a phone the timeline keeps a readable width and scrolls sideways inside its own box.
    std::string out = "<figure class=\"chart\"><div class=\"scroll\">" + open_svg(width, height, v.label);
    out.replace(out.find("class=\"plot\""), 12, "class=\"plot " + v.svg_class + "\"");
    out += "<defs>";
    for (const auto& g : gap_styles)
        out += fmt::format(
            R"svg(<pattern id="{}{}" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="3" height="6" fill="{}"/></pattern>)svg",
            v.id_prefix, g.id, g.fill);
    out += "</defs>";
    for (double t : ticks(v.from, v.to, false, "s")) {
        if (t < v.from) continue;
        const double px = sx.map(t);
        out +=
            fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2:.1f}" stroke="#e4e4e4"/>)", px, top, bottom);
        const std::string text = units::format(t, "s", true);
        const double half = static_cast<double>(text.size()) * char_px / 2;
        out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)",
                           std::clamp(px, double(left) + half, width - half), bottom + 14, escape(text));
    }
    std::set<std::string> drawn_kinds;
    std::set<GapKind> drawn_gaps;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const TimelineRow& row = rows[i];
        const double ry = row_y[i], h = row.kind == "queue" ? queue_h : thread_h;
        out += fmt::format(R"(<g class="lane" data-kind="{}"{}>)", escape(row.kind),
                           row.activity.empty() ? "" : fmt::format(R"( data-activity="{}")", escape(row.activity)));
        out += fmt::format(R"(<rect x="{}" y="{:.1f}" width="{}" height="{:.0f}" fill="{}"/>)", left, ry + 1,
                           width - right - left, h - 2, i % 2 ? "#fafafa" : "#f3f3f3");
        const std::string label = row_label(row);
        out += fmt::format(R"(<text x="{}" y="{:.1f}" text-anchor="end"><title>{}</title>{}</text>)", left - 6,
                           ry + h / 2 + 4, escape(label), escape(shorten(label, 31)));
        if (row.kind == "queue")
            for (const auto& g : idle_gaps(row, rows, v.from, v.to, pixel)) {
                const GapStyle& s = style_of(g.kind);
                drawn_gaps.insert(g.kind);
                out += fmt::format(
                    R"svg(<rect class="gap" data-gap="{}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.0f}" fill="url(#{}{})" stroke="{}" stroke-width="0.6"><title>{}: {} at {}</title></rect>)svg",
                    s.id, sx.map(g.start), ry + 1, std::max(1.0, sx.map(g.end) - sx.map(g.start)), h - 2, v.id_prefix,
                    s.id, s.stroke, s.legend, escape(units::format(g.end - g.start, "s")),
                    escape(units::format(g.start, "s")));
            }
        const double inset = row.kind == "queue" ? 5 : 3;
        for (const auto& s : row.spans) {
            if (s.end < v.from || s.start > v.to) continue;
            drawn_kinds.insert(s.kind);
            const double a = sx.map(std::max(v.from, s.start)), b = sx.map(std::min(v.to, s.end));
            out += fmt::format(
                R"(<rect class="span" data-kind="{}" x="{:.1f}" y="{:.1f}" width="{:.2f}" height="{:.0f}" fill="{}"><title>{} {}: {} at {}</title></rect>)",
                escape(s.kind), a, ry + inset, std::max(0.6, b - a), h - 2 * inset, colour_of(s.kind), escape(s.kind),
                escape(s.name), escape(units::format(s.end - s.start, "s")), escape(units::format(s.start, "s")));
        }
        out += "</g>";
    }
    out += axis_title((left + width - right) / 2.0, height - 6, "time since the program started", false);
    // The vertical title fits a timeline of a few lanes in its short form.
    const std::string_view title = bottom - top > 19 * char_px + 4 ? "queue / host thread" : "lane";
    out += axis_title(12, top + (bottom - top) / 2, title, true);
    return out + "</svg></div>" + legend(drawn_kinds, drawn_gaps, report) + "</figure>\n";
}

// A link the browser opens: an absolute path as a file: URL, a relative one as it is (beside the page).
std::string perfetto_link(const std::string& file) {
    const std::string href = !file.empty() && file.front() == '/' ? "file://" + file : file;
    return fmt::format(
        " Every command, unmerged: <a class=\"perfetto\" href=\"{}\"><code>{}</code></a> (open it in "
        "<a href=\"https://ui.perfetto.dev\">Perfetto</a>).",
        escape(href), escape(file));
}

}  // namespace

std::string timeline_section(const RunReport& r) {
    const ProbeResult* program = nullptr;
    for (const auto& p : r.results)
        if (p.id == trace_probe_id) program = &p;
    if (!program || !program->attributes.contains("timeline")) return {};
    const auto& timeline = program->attributes["timeline"];
    const auto rows = timeline_rows(timeline);
    const double wall = timeline.value("wall_seconds", 0.0);
    if (rows.empty() || !(wall > 0)) return {};
    std::string out =
        "<h2>Timeline</h2>\n<p class=\"meta\">One lane per command queue (device execution of each command) and, "
        "per host thread, one lane for each of its enqueue calls, waits and builds. Hatched: the device idle "
        "between commands, coloured by what the host did meanwhile; the legend links the findings that speak of "
        "those gaps. Neighbouring commands closer than the page can show are merged (the tooltip counts them); "
        "gaps narrower than a pixel show in the busiest section.";
    if (program->attributes.contains("perfetto_file") && program->attributes["perfetto_file"].is_string())
        out += perfetto_link(program->attributes["perfetto_file"].get<std::string>());
    out += "</p>\n<details open><summary>Whole run (" + escape(units::format(wall, "s")) + ")</summary>\n";
    out += timeline_svg(rows, {0, wall, "timeline of the whole run", "timeline", "whole-"}, r);
    out += "</details>\n";
    const double width = wall > 2 ? 1.0 : wall / 10;
    const auto [a, b] = busiest_window(rows, wall, width);
    out += fmt::format("<details><summary>Busiest {} ({} .. {})</summary>\n", wall > 2 ? "second" : "tenth",
                       escape(units::format(a, "s")), escape(units::format(b, "s")));
    out += timeline_svg(rows, {a, b, "timeline of the busiest part", "zoomed", "zoom-"}, r);
    return out + "</details>\n";
}

}  // namespace clprobe::html
