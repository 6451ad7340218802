// Bar charts for the HTML pages: variants as horizontal bars (render/svg_chart.hpp).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "render/svg_chart.hpp"
#include "render/svg_common.hpp"
#include "render/value_format.hpp"

namespace clprobe::svg {

using namespace detail;

namespace {

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

}  // namespace clprobe::svg
