// Bar charts for the HTML pages: variants as horizontal bars, pipelines' stages (render/svg_chart.hpp).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "render/svg_chart.hpp"
#include "render/svg_common.hpp"
#include "render/value_format.hpp"

namespace clprobe::svg {

using namespace detail;

namespace {

// The label column: as wide as the longest label needs, at most 40% of the chart; longer labels
// are shortened in the middle (their full text is the row's tooltip).
struct LabelColumn {
    double width = 0;
    std::size_t max_chars = 0;
};

LabelColumn label_column(std::size_t longest, int width) {
    const auto cap = static_cast<std::size_t>(0.4 * width / char_px);
    const std::size_t chars = std::min(longest, cap);
    return {static_cast<double>(chars) * char_px + 12, cap};
}

// A value axis along the bottom: grid lines, ticks in the unit, and the axis title.
std::string value_axis(const Scale& sx, double top, double bottom, const std::string& unit, int width) {
    std::string out;
    for (double t : ticks(sx.lo, sx.hi, false, unit)) {
        const double px = sx.map(t);
        out += fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1:.1f}" y2="{2:.1f}" stroke="#e4e4e4"/>)", px, top,
                           bottom);
        const std::string text = units::format(t, unit, true);
        const double half = static_cast<double>(text.size()) * char_px / 2;
        out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)",
                           std::clamp(px, half, width - half), bottom + 14, escape(text));
    }
    out += fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1:.1f}" y2="{2:.1f}" stroke="#888"/>)", sx.px0, top,
                       bottom);
    return out;
}

// A value printed right of x, or inside the bar's end when it would leave the chart.
std::string value_text(double x, double y, const std::string& text, double right_edge, const char* outside_fill) {
    const double w = static_cast<double>(text.size()) * char_px;
    if (x + 4 + w <= right_edge)
        return fmt::format(R"(<text x="{:.1f}" y="{:.1f}" fill="{}">{}</text>)", x + 4, y, outside_fill, escape(text));
    return fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end" fill="#fff">{}</text>)", x - 4, y,
                       escape(text));
}

}  // namespace

std::string bar_chart(const std::vector<Bar>& bars, const std::string& unit, const std::string& category, int width,
                      const std::vector<Reference>& references) {
    if (bars.empty()) return "<p><em>no data to plot</em></p>";
    constexpr int row = 20, value_room = 80;
    // Reference labels stack above the bars, one line each.
    const int top = 8 + 14 * static_cast<int>(references.size());
    std::size_t longest = 0;
    for (const auto& b : bars)
        longest = std::max(longest, b.label.size());
    const LabelColumn labels = label_column(longest, width);
    const double plot_left = 24 + labels.width;
    const int height = top + row * static_cast<int>(bars.size()) + 40;
    double hi = 0;
    for (const auto& b : bars)
        hi = std::max({hi, b.value, b.high});
    for (const auto& ref : references)
        hi = std::max(hi, ref.value);
    if (hi <= 0) hi = 1;
    double lo = 0;
    widen(lo, hi, false);
    const double bottom = top + row * static_cast<double>(bars.size());
    const Scale sx{0, hi, false, plot_left, double(width - value_room)};
    std::string out = "<figure class=\"chart\">" + open_svg(width, height, category + " by " + unit);
    out += value_axis(sx, top, bottom, unit, width);
    for (std::size_t i = 0; i < bars.size(); ++i) {
        const auto& b = bars[i];
        const double y = top + row * static_cast<double>(i);
        out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end"><title>{}</title>{}</text>)", plot_left - 6,
                           y + 14, escape(b.label), escape(shorten(b.label, labels.max_chars)));
        out += fmt::format(
            R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{}" fill="{}"><title>{}: {} (samples {} .. {})</title></rect>)",
            plot_left, y + 4, std::max(0.0, sx.map(b.value) - plot_left), row - 7, colour(0), escape(b.label),
            escape(units::format(b.value, unit)), escape(units::format(b.low, unit)),
            escape(units::format(b.high, unit)));
        if (b.high > b.low)
            out += fmt::format(R"(<line x1="{:.1f}" x2="{:.1f}" y1="{:.1f}" y2="{:.1f}" stroke="#333"/>)",
                               sx.map(b.low), sx.map(b.high), y + row / 2.0, y + row / 2.0);
        out += value_text(sx.map(std::max(b.value, b.high)), y + 14, units::format(b.value, unit), width - 2, "#222");
    }
    for (std::size_t i = 0; i < references.size(); ++i) {
        const double px = sx.map(references[i].value), ly = 18 + 14 * static_cast<double>(i);
        const double w = static_cast<double>(references[i].label.size()) * char_px;
        out += fmt::format(
            R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1:.1f}" y2="{2:.1f}" stroke="#555" stroke-dasharray="5 3"/>)", px,
            ly - 4, bottom);
        // The label ends at the line when it would leave the chart on the right.
        const bool before = px + 4 + w > width - 2;
        out += fmt::format(R"(<text class="line-label" x="{:.1f}" y="{:.1f}"{} fill="#555">{}</text>)",
                           before ? px - 4 : px + 4, ly, before ? R"( text-anchor="end")" : "",
                           escape(references[i].label));
    }
    out += axis_title((plot_left + width - value_room) / 2, height - 6, unit, false);
    out += axis_title(12, top + (bottom - top) / 2, category, true);
    return out + "</svg></figure>";
}

std::string stage_chart(const std::vector<StageRow>& rows, const std::string& unit, int width) {
    if (rows.empty()) return "<p><em>no data to plot</em></p>";
    constexpr int top = 8, value_room = 90, lane = 14;
    std::size_t longest = 0;
    std::vector<std::string> names;  // stage names in first-seen order: one colour each
    double hi = 0;
    std::vector<bool> overlapping;
    for (const auto& r : rows) {
        longest = std::max(longest, r.name.size());
        double sum = 0, largest = 0;
        for (const auto& s : r.stages) {
            sum += std::max(0.0, s.value), largest = std::max(largest, s.value);
            if (std::find(names.begin(), names.end(), s.label) == names.end()) names.push_back(s.label);
        }
        overlapping.push_back(r.step > 0 && sum > r.step * 1.05);
        hi = std::max({hi, overlapping.back() ? std::max(r.step, largest) : sum, r.step});
    }
    if (hi <= 0) hi = 1;
    double lo = 0;
    widen(lo, hi, false);
    const LabelColumn labels = label_column(longest, width);
    const double plot_left = 24 + labels.width;
    const Scale sx{0, hi, false, plot_left, double(width - value_room)};
    // A sequential row is one lane; an overlapping row a lane for the step and one per stage.
    std::vector<double> row_y;
    double y = top;
    for (std::size_t r = 0; r < rows.size(); ++r) {
        row_y.push_back(y);
        y += lane * (overlapping[r] ? 1 + static_cast<double>(rows[r].stages.size()) : 1.6) + 10;
    }
    const double bottom = y;
    const int height = static_cast<int>(bottom) + 40;
    std::string out = "<figure class=\"chart\">" + open_svg(width, height, "pipeline stages in " + unit);
    out += value_axis(sx, top, bottom, unit, width);
    auto fill_of = [&](const std::string& label) {
        return colour(static_cast<std::size_t>(std::find(names.begin(), names.end(), label) - names.begin()));
    };
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const auto& row = rows[r];
        const double y0 = row_y[r];
        out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end"><title>{}</title>{}</text>)", plot_left - 6,
                           y0 + 13, escape(row.name), escape(shorten(row.name, labels.max_chars)));
        double sum = 0;
        for (const auto& s : row.stages)
            sum += std::max(0.0, s.value);
        if (overlapping[r]) {
            // The step as an outlined bar, each stage below it from the step's start: they ran at once.
            out += fmt::format(
                R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{}" fill="#f2f2f2" stroke="#555"><title>step: {} (stages add up to {}: they overlap)</title></rect>)",
                plot_left, y0 + 2, sx.map(row.step) - plot_left, lane - 3, escape(units::format(row.step, unit)),
                escape(units::format(sum, unit)));
            out += value_text(sx.map(row.step), y0 + 12, "step " + units::format(row.step, unit), width - 2, "#222");
            for (std::size_t i = 0; i < row.stages.size(); ++i) {
                const auto& s = row.stages[i];
                const double sy = y0 + lane * static_cast<double>(i + 1);
                out += fmt::format(
                    R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{}" fill="{}" opacity="0.85"><title>{}: {} (overlaps the other stages)</title></rect>)",
                    plot_left, sy + 2, std::max(0.0, sx.map(s.value) - plot_left), lane - 3, fill_of(s.label),
                    escape(s.label), escape(units::format(s.value, unit)));
                out += value_text(sx.map(std::max(0.0, s.value)), sy + 12, s.label + " " + units::format(s.value, unit),
                                  width - 2, "#222");
            }
            continue;
        }
        double x = 0;
        const double h = lane * 1.6 - 3;
        for (const auto& s : row.stages) {
            const double v = std::max(0.0, s.value);
            const double x0 = sx.map(x), w = sx.map(x + v) - x0;
            out += fmt::format(
                R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}" stroke="#fff"><title>{}: {} ({:.0f}% of {})</title></rect>)",
                x0, y0 + 2, w, h, fill_of(s.label), escape(s.label), escape(units::format(v, unit)),
                sum > 0 ? 100 * v / sum : 0.0, escape(units::format(sum, unit)));
            const std::string text = units::format(v, unit);
            if (w >= static_cast<double>(text.size()) * char_px + 6)
                out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" fill="#fff">{}</text>)",
                                   x0 + w / 2, y0 + 2 + h / 2 + 4, escape(text));
            x += v;
        }
        out +=
            value_text(sx.map(sum), y0 + 2 + h / 2 + 4,
                       (row.step > 0 ? "step " + units::format(row.step, unit) : "total " + units::format(sum, unit)),
                       width - 2, "#222");
    }
    const bool time = unit == "s" || unit == "ms" || unit == "us" || unit == "ns";
    out += axis_title((plot_left + width - value_room) / 2, height - 6, time ? "time" : unit, false);
    out += axis_title(12, top + (bottom - top) / 2, "variant", true);
    out += "</svg><div class=\"legend\">";
    for (const auto& n : names)
        out += fmt::format(
            R"(<span><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="{}"/></svg>{}</span>)",
            fill_of(n), escape(n));
    return out + "</div></figure>";
}

}  // namespace clprobe::svg
