#include "render/svg_chart.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace clprobe::svg {

namespace {

// Colour-blind-safe palette (Okabe-Ito), cycled.
constexpr const char* palette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                   "#E69F00", "#56B4E9", "#F0E442", "#000000"};
const char* colour(std::size_t i) {
    return palette[i % std::size(palette)];
}

struct Scale {
    double lo = 0, hi = 1;
    bool log = false;
    double px0 = 0, px1 = 1;  // pixel range (px1 may be < px0 for the y axis)

    double map(double v) const {
        const double t =
            log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (v - lo) / (hi - lo);
        return px0 + t * (px1 - px0);
    }
};

// Extends [lo, hi] to round numbers: decades on log axes, a little headroom on linear ones.
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

std::vector<double> ticks(double lo, double hi, bool log) {
    std::vector<double> t;
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
    for (double v = std::ceil(lo / step) * step; v <= hi + 1e-9; v += step)
        t.push_back(v);
    return t;
}

std::string number(double v) {
    if (v != 0 && (std::fabs(v) >= 1e5 || std::fabs(v) < 1e-2)) return fmt::format("{:.0e}", v);
    return fmt::format("{:.4g}", v);
}

}  // namespace

std::string escape(std::string_view text) {
    std::string out;
    for (char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::string line_chart(const std::vector<Series>& series, const Axis& x, const Axis& y, int width, int height) {
    constexpr int left = 70, right = 170, top = 16, bottom = 48;
    double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
    for (const auto& s : series)
        for (const auto& p : s.points) {
            if ((x.log && p.x <= 0) || (y.log && p.y <= 0) || !std::isfinite(p.x) || !std::isfinite(p.y)) continue;
            xlo = std::min(xlo, p.x), xhi = std::max(xhi, p.x), ylo = std::min(ylo, p.y), yhi = std::max(yhi, p.y);
        }
    if (!std::isfinite(xlo)) return "<p><em>no data to plot</em></p>";
    widen(xlo, xhi, x.log);
    widen(ylo, yhi, y.log);
    const Scale sx{xlo, xhi, x.log, double(left), double(width - right)};
    const Scale sy{ylo, yhi, y.log, double(height - bottom), double(top)};

    std::string out = fmt::format(
        R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" font-family="sans-serif" font-size="11">)",
        width, height);
    out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#888"/>)", left, top,
                       width - left - right, height - top - bottom);
    for (double t : ticks(xlo, xhi, x.log)) {
        const double px = sx.map(t);
        out += fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2}" stroke="#ddd"/>)", px, top,
                           height - bottom);
        out += fmt::format(R"(<text x="{:.1f}" y="{}" text-anchor="middle">{}</text>)", px, height - bottom + 14,
                           number(t));
    }
    for (double t : ticks(ylo, yhi, y.log)) {
        const double py = sy.map(t);
        out += fmt::format(R"(<line x1="{0}" x2="{1}" y1="{2:.1f}" y2="{2:.1f}" stroke="#ddd"/>)", left, width - right,
                           py);
        out += fmt::format(R"(<text x="{}" y="{:.1f}" text-anchor="end">{}</text>)", left - 4, py + 4, number(t));
    }
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">{}</text>)", (left + width - right) / 2, height - 10,
                       escape(x.title));
    out += fmt::format(R"svg(<text transform="translate(14,{}) rotate(-90)" text-anchor="middle">{}</text>)svg",
                       (top + height - bottom) / 2, escape(y.title));

    for (std::size_t i = 0; i < series.size(); ++i) {
        const auto& s = series[i];
        std::string path;
        for (const auto& p : s.points) {
            if ((x.log && p.x <= 0) || (y.log && p.y <= 0)) continue;
            path += fmt::format("{}{:.1f},{:.1f} ", path.empty() ? "M" : "L", sx.map(p.x), sy.map(p.y));
        }
        if (s.line && !path.empty())
            out += fmt::format(R"(<path d="{}" fill="none" stroke="{}" stroke-width="2"{}/>)", path, colour(i),
                               s.dashed ? R"( stroke-dasharray="6 4")" : "");
        if (s.markers)
            for (const auto& p : s.points) {
                if ((x.log && p.x <= 0) || (y.log && p.y <= 0)) continue;
                out += fmt::format(
                    R"(<circle cx="{:.1f}" cy="{:.1f}" r="3.5" fill="{}"><title>{}: {} , {}</title></circle>)",
                    sx.map(p.x), sy.map(p.y), colour(i), escape(s.name), number(p.x), number(p.y));
            }
        const int ly = top + 14 + static_cast<int>(i) * 16;
        out += fmt::format(R"(<rect x="{}" y="{}" width="12" height="4" fill="{}"/>)", width - right + 10, ly - 4,
                           colour(i));
        out += fmt::format(R"(<text x="{}" y="{}">{}</text>)", width - right + 26, ly, escape(s.name));
    }
    return out + "</svg>";
}

std::string bar_chart(const std::vector<Bar>& bars, const std::string& unit, int width) {
    if (bars.empty()) return "<p><em>no data to plot</em></p>";
    constexpr int label_width = 260, row = 18, top = 8, right = 70;
    const int height = top + row * static_cast<int>(bars.size()) + 24;
    double hi = 0;
    for (const auto& b : bars)
        hi = std::max({hi, b.value, b.high});
    if (hi <= 0) hi = 1;
    const Scale sx{0, hi * 1.05, false, double(label_width), double(width - right)};
    std::string out = fmt::format(
        R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" font-family="sans-serif" font-size="11">)",
        width, height);
    for (std::size_t i = 0; i < bars.size(); ++i) {
        const auto& b = bars[i];
        const double y = top + row * static_cast<double>(i);
        out += fmt::format(R"(<text x="{}" y="{:.1f}" text-anchor="end">{}</text>)", label_width - 6, y + 12,
                           escape(b.label));
        out += fmt::format(
            R"(<rect x="{}" y="{:.1f}" width="{:.1f}" height="{}" fill="{}"><title>{} {}</title></rect>)", label_width,
            y + 3, sx.map(b.value) - label_width, row - 6, colour(0), number(b.value), escape(unit));
        if (b.high > b.low)
            out += fmt::format(R"(<line x1="{:.1f}" x2="{:.1f}" y1="{:.1f}" y2="{:.1f}" stroke="#333"/>)",
                               sx.map(b.low), sx.map(b.high), y + row / 2.0, y + row / 2.0);
        out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}">{}</text>)", sx.map(std::max(b.value, b.high)) + 4, y + 12,
                           number(b.value));
    }
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">{}</text>)", (label_width + width - right) / 2,
                       height - 6, escape(unit));
    return out + "</svg>";
}

std::string stacked_bars(const std::vector<std::pair<std::string, std::vector<Segment>>>& rows, const std::string& unit,
                         int width) {
    if (rows.empty()) return "<p><em>no data to plot</em></p>";
    constexpr int label_width = 200, row = 28, top = 8, right = 20;
    double hi = 0;
    for (const auto& [name, segs] : rows) {
        double total = 0;
        for (const auto& s : segs)
            total += std::max(0.0, s.value);
        hi = std::max(hi, total);
    }
    if (hi <= 0) hi = 1;
    const int legend_rows = 2;
    const int height = top + row * static_cast<int>(rows.size()) + 24 + legend_rows * 14;
    const Scale sx{0, hi * 1.02, false, double(label_width), double(width - right)};
    std::string out = fmt::format(
        R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" font-family="sans-serif" font-size="11">)",
        width, height);
    std::vector<std::string> legend;
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const double y = top + row * static_cast<double>(r);
        out += fmt::format(R"(<text x="{}" y="{:.1f}" text-anchor="end">{}</text>)", label_width - 6, y + 17,
                           escape(rows[r].first));
        double x = 0;
        for (const auto& s : rows[r].second) {
            auto it = std::find(legend.begin(), legend.end(), s.label);
            const std::size_t ci = static_cast<std::size_t>(it - legend.begin());
            if (it == legend.end()) legend.push_back(s.label);
            const double w = sx.map(x + std::max(0.0, s.value)) - sx.map(x);
            out += fmt::format(
                R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{}" fill="{}"><title>{}: {} {}</title></rect>)",
                sx.map(x), y + 4, w, row - 8, colour(ci), escape(s.label), number(s.value), escape(unit));
            x += std::max(0.0, s.value);
        }
    }
    const int ly = top + row * static_cast<int>(rows.size()) + 14;
    for (std::size_t i = 0; i < legend.size(); ++i) {
        const int lx = label_width + static_cast<int>(i % 4) * 110, yy = ly + static_cast<int>(i / 4) * 14;
        out += fmt::format(R"(<rect x="{}" y="{}" width="10" height="10" fill="{}"/><text x="{}" y="{}">{}</text>)", lx,
                           yy - 9, colour(i), lx + 14, yy, escape(legend[i]));
    }
    out += fmt::format(R"(<text x="{}" y="{}">{}</text>)", width - right - 60, height - 4, escape(unit));
    return out + "</svg>";
}

}  // namespace clprobe::svg
