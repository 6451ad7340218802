#pragma once
// Pieces the SVG charts share (render/svg_chart.cpp, render/svg_bars.cpp): palette, scales, ticks.
#include <string>
#include <string_view>
#include <vector>

namespace clprobe::svg::detail {

const char* colour(std::size_t i);  // Okabe-Ito, colour-blind safe, then darker shades

struct Scale {
    double lo = 0, hi = 1;
    bool log = false;
    double px0 = 0, px1 = 1;  // pixel range (px1 may be < px0 for the y axis)
    double map(double v) const;
};

// Extends [lo, hi] to round numbers: decades on log axes, a little headroom on linear ones.
void widen(double& lo, double& hi, bool log);
// Tick values: decades (with 2 and 5 on short ranges) or powers of two for bytes on log axes.
std::vector<double> ticks(double lo, double hi, bool log, std::string_view unit);

std::string open_svg(int width, int height, std::string_view label);
// An axis title; vertical titles are rotated. class "axis-title x|y" marks them for tests.
std::string axis_title(double x, double y, std::string_view text, bool vertical);

// Text shortened in the middle to at most max_chars (the start and the end usually differ).
std::string shorten(std::string_view text, std::size_t max_chars);

constexpr double char_px = 6.2;  // average advance of an 11 px sans-serif glyph

// The label column of a bar chart: as wide as the longest label needs, at most 40% of the chart;
// longer labels are shortened in the middle (their full text is the row's tooltip).
struct LabelColumn {
    double width = 0;
    std::size_t max_chars = 0;
};
LabelColumn label_column(std::size_t longest, int width);

// A value printed right of x, or inside the bar's end (in white) when it would leave the chart.
std::string value_text(double x, double y, const std::string& text, double right_edge, const char* outside_fill);

}  // namespace clprobe::svg::detail
