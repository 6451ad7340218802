#pragma once
// Inline-SVG charts for the HTML pages: no scripts, no network, readable when printed. Each chart
// is a <figure class="chart"> holding one <svg class="plot"> that scales down with the page
// (viewBox, max-width 100%) and, where it has one, an HTML legend below it that wraps and scrolls
// inside its own box instead of being clipped by the SVG. Every plot names both axes
// (class "axis-title"), ticks them in the values' units and prints values with three significant
// digits (render/value_format.hpp).
#include <string>
#include <string_view>
#include <vector>

namespace clprobe::svg {

std::string escape(std::string_view text);  // for both SVG and HTML text

enum class Marker { circle, square, triangle, diamond, cross };

struct Point {
    double x = 0, y = 0;
    std::string key;  // short text drawn beside the marker (a number the legend explains)
};

struct Series {
    std::string name;
    std::vector<Point> points;
    bool dashed = false;
    bool markers = true;
    bool line = true;
    std::string colour;  // empty: the palette's colour for the series' index
    Marker marker = Marker::circle;
    std::string line_label;     // drawn on the line itself (a roof's level and value)
    bool label_at_end = false;  // line_label near the last point instead of the first
    bool in_legend = true;
};

struct Axis {
    std::string title;
    bool log = false;
    std::string unit;  // ticks and tooltips print values in it (seconds, bytes and rates rescaled)
};

// A line/scatter chart. Non-positive values are dropped on log axes.
std::string line_chart(const std::vector<Series>& series, const Axis& x, const Axis& y, int width = 760,
                       int height = 380);

struct Bar {
    std::string label;
    double value = 0;
    double low = 0, high = 0;  // whisker (e.g. min..max of the samples); equal to value for none
};

struct Reference {
    std::string label;  // "memory roof 35.2 GB/s"
    double value = 0;
};

// Horizontal bars with whiskers, in the order given, each with its value printed beside it, and
// reference values (roofs) as labelled vertical lines. category names what the rows are
// ("variant"), for the vertical axis title.
std::string bar_chart(const std::vector<Bar>& bars, const std::string& unit, const std::string& category,
                      int width = 760, const std::vector<Reference>& references = {});

struct Segment {
    std::string label;
    double value = 0;
};

struct StageRow {
    std::string name;
    std::vector<Segment> stages;
    double step = 0;  // the measured step time; 0 when none was measured
};

// One row per pipeline variant. Stages that add up to the step (within 5%) are stacked one after
// another; stages whose sum exceeds the measured step overlap, and are drawn as overlapping bars
// from the step's start under the step's own bar; a step longer than its stages shows the rest as
// its own dashed segment; a row without stages is the step alone. When the longest row is more
// than 2.5x the stages' extent the axis is broken (two linear scales), so short stages stay
// readable beside a long step. Each row prints its total.
std::string stage_chart(const std::vector<StageRow>& rows, const std::string& unit, int width = 760);

}  // namespace clprobe::svg
