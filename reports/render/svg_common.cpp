#include "render/svg_common.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "render/svg_chart.hpp"
#include "render/value_format.hpp"

namespace clprobe::svg::detail {

namespace {
constexpr const char* palette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
                                   "#000000", "#8C564B", "#7F7F7F", "#B8860B", "#1F3A93", "#A83232"};
}

const char* colour(std::size_t i) {
    return palette[i % std::size(palette)];
}

double Scale::map(double v) const {
    const double t = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (v - lo) / (hi - lo);
    return px0 + t * (px1 - px0);
}

void widen(double& lo, double& hi, bool log) {
    if (!(lo < hi)) {
        const double v = std::isfinite(lo) ? lo : 1;
        lo = log ? v / 2 : v - std::max(1.0, std::fabs(v) * 0.5);
        hi = log ? v * 2 : v + std::max(1.0, std::fabs(v) * 0.5);
    }
    if (log) {
        lo = std::pow(10.0, std::floor(std::log10(lo)));
        hi = std::pow(10.0, std::ceil(std::log10(hi)));
    } else {
        lo = std::min(0.0, lo);
        hi = hi * 1.08;
    }
}

std::vector<double> ticks(double lo, double hi, bool log, std::string_view unit) {
    std::vector<double> t;
    if (log && units::is_bytes(unit)) {
        // Powers of two, every 2^step so that at most 8 ticks remain: 1 KiB, 4 KiB, 16 KiB...
        const int first = static_cast<int>(std::ceil(std::log2(lo))),
                  last = static_cast<int>(std::floor(std::log2(hi)));
        const int step = std::max(1, (last - first + 7) / 8);
        for (int e = first; e <= last; e += step)
            t.push_back(std::ldexp(1.0, e));
        return t;
    }
    if (log) {
        const bool few_decades = std::log10(hi / lo) <= 2.5;
        for (double d = lo; d <= hi * 1.0001; d *= 10) {
            t.push_back(d);
            if (few_decades && d * 2 < hi) t.push_back(d * 2);
            if (few_decades && d * 5 < hi) t.push_back(d * 5);
        }
        return t;
    }
    const double raw = (hi - lo) / 5;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double step = raw / mag < 2 ? 2 * mag : raw / mag < 5 ? 5 * mag : 10 * mag;
    for (double v = std::ceil(lo / step) * step; v <= hi + 1e-9 * step; v += step)
        t.push_back(std::fabs(v) < 1e-9 * step ? 0 : v);
    return t;
}

std::string open_svg(int width, int height, std::string_view label) {
    return fmt::format(
        R"(<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
        R"(role="img" aria-label="{2}" font-family="sans-serif" font-size="11">)",
        width, height, escape(label));
}

std::string axis_title(double x, double y, std::string_view text, bool vertical) {
    if (vertical)
        return fmt::format(
            R"svg(<text class="axis-title y" transform="translate({:.1f},{:.1f}) rotate(-90)" text-anchor="middle" font-weight="bold">{}</text>)svg",
            x, y, escape(text));
    return fmt::format(
        R"(<text class="axis-title x" x="{:.1f}" y="{:.1f}" text-anchor="middle" font-weight="bold">{}</text>)", x, y,
        escape(text));
}

std::string shorten(std::string_view text, std::size_t max_chars) {
    if (text.size() <= max_chars || max_chars < 5) return std::string(text);
    const std::size_t head = (max_chars - 1) / 2, tail = max_chars - 1 - head;
    return std::string(text.substr(0, head)) + "\u2026" + std::string(text.substr(text.size() - tail));
}

LabelColumn label_column(std::size_t longest, int width) {
    const auto cap = static_cast<std::size_t>(0.4 * width / char_px);
    const std::size_t chars = std::min(longest, cap);
    return {static_cast<double>(chars) * char_px + 12, cap};
}

std::string value_text(double x, double y, const std::string& text, double right_edge, const char* outside_fill) {
    const double w = static_cast<double>(text.size()) * char_px;
    if (x + 4 + w <= right_edge)
        return fmt::format(R"(<text x="{:.1f}" y="{:.1f}" fill="{}">{}</text>)", x + 4, y, outside_fill, escape(text));
    return fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end" fill="#fff">{}</text>)", x - 4, y,
                       escape(text));
}

}  // namespace clprobe::svg::detail
