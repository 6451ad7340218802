#pragma once
// Minimal inline-SVG charts for the HTML report: no scripts, no network, readable when printed.
#include <string>
#include <vector>

namespace clprobe::svg {

std::string escape(std::string_view text);  // for both SVG and HTML text

struct Point {
    double x = 0, y = 0;
};

struct Series {
    std::string name;
    std::vector<Point> points;
    bool dashed = false;
    bool markers = true;
    bool line = true;
};

struct Axis {
    std::string title;
    bool log = false;
};

// A line/scatter chart. Non-positive values are dropped on log axes.
std::string line_chart(const std::vector<Series>& series, const Axis& x, const Axis& y, int width = 640,
                       int height = 360);

struct Bar {
    std::string label;
    double value = 0;
    double low = 0, high = 0;  // whisker (e.g. min..max of the samples); equal to value for none
};

// Horizontal bars with whiskers, sorted as given.
std::string bar_chart(const std::vector<Bar>& bars, const std::string& unit, int width = 640);

struct Segment {
    std::string label;
    double value = 0;
};

// One horizontal stacked bar per row (a pipeline's stages); rows share the scale.
std::string stacked_bars(const std::vector<std::pair<std::string, std::vector<Segment>>>& rows, const std::string& unit,
                         int width = 640);

}  // namespace clprobe::svg
