#include "render/html_timeline.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/trace_facts.hpp"
#include "render/svg_chart.hpp"
#include "render/svg_common.hpp"
#include "render/value_format.hpp"

namespace clprobe::html {

namespace {

using svg::escape;

struct Span {
    double start, end;
    std::string kind, name;
};

struct Lane {
    std::string kind, name;
    std::vector<Span> spans;
};

constexpr std::pair<const char*, const char*> kind_colours[] = {
    {"kernel", "#0072B2"}, {"transfer", "#E69F00"}, {"wait", "#D55E00"}, {"build", "#CC79A7"}, {"enqueue", "#9db7c9"}};

const char* colour_of(const std::string& kind) {
    for (const auto& [k, c] : kind_colours)
        if (kind == k) return c;
    return "#999";
}

std::vector<Lane> lanes_of(const nlohmann::json& timeline) {
    std::vector<Lane> lanes;
    if (!timeline.contains("lanes") || !timeline["lanes"].is_array()) return lanes;
    for (const auto& l : timeline["lanes"]) {
        Lane lane{l.value("kind", ""), l.value("name", ""), {}};
        if (l.contains("spans") && l["spans"].is_array())
            for (const auto& s : l["spans"])
                if (s.is_array() && s.size() == 4 && s[0].is_number() && s[1].is_number())
                    lane.spans.push_back({s[0].get<double>(), s[1].get<double>(),
                                          s[2].is_string() ? s[2].get<std::string>() : "",
                                          s[3].is_string() ? s[3].get<std::string>() : ""});
        lanes.push_back(std::move(lane));
    }
    return lanes;
}

// Device idle gaps on a queue lane inside [from, to]: the largest few between its spans.
std::vector<std::pair<double, double>> idle_gaps(const Lane& lane, double from, double to) {
    std::vector<std::pair<double, double>> gaps;
    for (std::size_t i = 1; i < lane.spans.size(); ++i) {
        const double a = std::max(from, lane.spans[i - 1].end), b = std::min(to, lane.spans[i].start);
        if (b > a) gaps.push_back({a, b});
    }
    std::sort(gaps.begin(), gaps.end(), [](auto& x, auto& y) { return x.second - x.first > y.second - y.first; });
    const double floor = (to - from) * 0.005;
    while (!gaps.empty() && gaps.back().second - gaps.back().first < floor)
        gaps.pop_back();
    if (gaps.size() > 40) gaps.resize(40);
    return gaps;
}

std::string timeline_svg(const std::vector<Lane>& lanes, double from, double to, const std::string& label) {
    using namespace svg::detail;
    constexpr int width = 1000, left = 190, right = 16, top = 10, lane_h = 26;
    const int height = top + lane_h * static_cast<int>(lanes.size()) + 44;
    const Scale sx{from, to, false, double(left), double(width - right)};
    const double bottom = top + lane_h * static_cast<double>(lanes.size());
    std::string out = "<figure class=\"chart\">" + open_svg(width, height, label);
    out.replace(out.find("class=\"plot\""), 12, "class=\"plot timeline\"");
    for (double t : ticks(from, to, false, "s")) {
        if (t < from) continue;
        const double px = sx.map(t);
        out +=
            fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2:.1f}" stroke="#e4e4e4"/>)", px, top, bottom);
        const std::string text = units::format(t, "s", true);
        const double half = static_cast<double>(text.size()) * char_px / 2;
        out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)",
                           std::clamp(px, double(left) + half, width - half), bottom + 14, escape(text));
    }
    for (std::size_t i = 0; i < lanes.size(); ++i) {
        const Lane& lane = lanes[i];
        const double y = top + lane_h * static_cast<double>(i);
        out += fmt::format(R"(<g class="lane" data-kind="{}">)", escape(lane.kind));
        out += fmt::format(R"(<rect x="{}" y="{:.1f}" width="{}" height="{}" fill="{}"/>)", left, y + 2,
                           width - right - left, lane_h - 4, i % 2 ? "#fafafa" : "#f3f3f3");
        out += fmt::format(R"(<text x="{}" y="{:.1f}" text-anchor="end"><title>{}</title>{}</text>)", left - 6, y + 17,
                           escape(lane.name), escape(shorten(lane.name, 28)));
        if (lane.kind == "queue")
            for (const auto& [a, b] : idle_gaps(lane, from, to))
                out += fmt::format(
                    R"svg(<rect class="gap" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{}" fill="url(#idle)" stroke="#c62828" stroke-width="0.6"><title>device idle {}</title></rect>)svg",
                    sx.map(a), y + 2, std::max(1.0, sx.map(b) - sx.map(a)), lane_h - 4,
                    escape(units::format(b - a, "s")));
        for (const auto& s : lane.spans) {
            if (s.end < from || s.start > to) continue;
            const double a = sx.map(std::max(from, s.start)), b = sx.map(std::min(to, s.end));
            const bool host = lane.kind == "thread";
            const double inset = host && s.kind == "enqueue" ? 9 : 5;
            out += fmt::format(
                R"(<rect x="{:.1f}" y="{:.1f}" width="{:.2f}" height="{:.0f}" fill="{}"><title>{} {}: {} at {}</title></rect>)",
                a, y + inset, std::max(0.6, b - a), lane_h - 2 * inset, colour_of(s.kind), escape(s.kind),
                escape(s.name), escape(units::format(s.end - s.start, "s")), escape(units::format(s.start, "s")));
        }
        out += "</g>";
    }
    out += axis_title((left + width - right) / 2.0, height - 6, "time since the program started", false);
    out += axis_title(12, top + (bottom - top) / 2, "lane", true);
    out +=
        R"svg(<defs><pattern id="idle" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="3" height="6" fill="#f4b4b4"/></pattern></defs>)svg";
    out += "</svg><div class=\"legend\">";
    for (const auto& [k, c] : kind_colours)
        out += fmt::format(
            R"(<span><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="{}"/></svg>{}</span>)",
            c, k);
    out +=
        R"(<span><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="#f4b4b4" stroke="#c62828"/></svg>device idle (largest gaps)</span>)";
    return out + "</div></figure>\n";
}

// The one-second window (or a tenth of a shorter run) where the queues were busiest.
std::pair<double, double> busiest_window(const std::vector<Lane>& lanes, double wall) {
    const double w = wall > 2 ? 1.0 : wall / 10;
    double best_at = 0, best = -1;
    for (int step = 0; step <= 100; ++step) {
        const double a = (wall - w) * step / 100.0, b = a + w;
        double busy = 0;
        for (const auto& l : lanes)
            if (l.kind == "queue")
                for (const auto& s : l.spans)
                    busy += std::max(0.0, std::min(b, s.end) - std::max(a, s.start));
        if (busy > best) best = busy, best_at = a;
    }
    return {best_at, best_at + w};
}

}  // namespace

std::string timeline_section(const RunReport& r) {
    const ProbeResult* program = nullptr;
    for (const auto& p : r.results)
        if (p.id == trace_probe_id) program = &p;
    if (!program || !program->attributes.contains("timeline")) return {};
    const auto& timeline = program->attributes["timeline"];
    const auto lanes = lanes_of(timeline);
    const double wall = timeline.value("wall_seconds", 0.0);
    if (lanes.empty() || !(wall > 0)) return {};
    std::string out =
        "<h2>Timeline</h2>\n<p class=\"meta\">One lane per command queue (device execution of each "
        "command) and per host thread (its waits, builds and enqueue calls). Hatched red: the device's "
        "largest idle gaps, where the findings' waits show. Neighbouring commands closer than the page "
        "can show are merged (the tooltip counts them).";
    if (program->attributes.contains("perfetto_file") && program->attributes["perfetto_file"].is_string()) {
        const std::string file = program->attributes["perfetto_file"].get<std::string>();
        out += fmt::format(
            " Every command: <a href=\"file://{0}\"><code>{0}</code></a> (open it in "
            "<a href=\"https://ui.perfetto.dev\">Perfetto</a>).",
            escape(file));
    }
    out += "</p>\n<details open><summary>Whole run (" + escape(units::format(wall, "s")) + ")</summary>\n";
    out += timeline_svg(lanes, 0, wall, "timeline of the whole run");
    out += "</details>\n";
    const auto [a, b] = busiest_window(lanes, wall);
    out += fmt::format("<details><summary>Busiest {} ({} .. {})</summary>\n", wall > 2 ? "second" : "tenth",
                       escape(units::format(a, "s")), escape(units::format(b, "s")));
    // The zoomed section shows the same lanes; the test counts lanes in the first timeline only.
    std::string zoom = timeline_svg(lanes, a, b, "timeline of the busiest part");
    for (std::size_t at = zoom.find("class=\"lane\""); at != std::string::npos; at = zoom.find("class=\"lane\"", at))
        zoom.replace(at, 12, "class=\"zlane\"");
    zoom.replace(zoom.find("plot timeline"), 13, "plot zoomed");
    for (std::size_t at = zoom.find("#idle)"); at != std::string::npos; at = zoom.find("#idle)", at))
        zoom.replace(at, 6, "#idle-zoom)");
    zoom.replace(zoom.find("id=\"idle\""), 9, "id=\"idle-zoom\"");
    return out + zoom + "</details>\n";
}

}  // namespace clprobe::html
