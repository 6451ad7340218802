#include "render/svg_chart.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "render/svg_common.hpp"
#include "render/value_format.hpp"

namespace clprobe::svg {

using namespace detail;

namespace {

struct Box {
    double x0, y0, x1, y1;
    bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

// Places short texts beside their anchors without covering one another or leaving the plot:
// the first of a few candidate positions that is free wins; when none is, the least crowded.
class LabelPlacer {
  public:
    explicit LabelPlacer(Box area) : area_(area) {}

    void reserve(const Box& b) { taken_.push_back(b); }

    // Returns the text's anchor (start) position for a text of chars glyphs next to (x, y).
    std::pair<double, double> place(double x, double y, std::size_t chars, double gap = 5) {
        const double w = static_cast<double>(chars) * char_px, h = 11;
        const std::pair<double, double> candidates[] = {
            {x + gap, y + 4},   {x - gap - w, y + 4},           {x - w / 2, y - gap - 1},   {x - w / 2, y + gap + h},
            {x + gap, y - gap}, {x - gap - w, y + gap + h - 2}, {x + gap, y + gap + h - 2}, {x - gap - w, y - gap}};
        std::size_t best = 0, best_hits = std::numeric_limits<std::size_t>::max();
        for (std::size_t i = 0; i < std::size(candidates); ++i) {
            const auto [tx, ty] = candidates[i];
            const Box b{tx, ty - h + 2, tx + w, ty + 2};
            if (b.x0 < area_.x0 || b.x1 > area_.x1 || b.y0 < area_.y0 || b.y1 > area_.y1) continue;
            const auto hits = static_cast<std::size_t>(
                std::count_if(taken_.begin(), taken_.end(), [&](const Box& t) { return t.overlaps(b); }));
            if (hits < best_hits) best = i, best_hits = hits;
            if (hits == 0) break;
        }
        auto [tx, ty] = candidates[best];
        tx = std::clamp(tx, area_.x0, std::max(area_.x0, area_.x1 - w));
        ty = std::clamp(ty, area_.y0 + h - 2, area_.y1 - 2);
        taken_.push_back({tx, ty - h + 2, tx + w, ty + 2});
        return {tx, ty};
    }

  private:
    Box area_;
    std::vector<Box> taken_;
};

std::string marker_shape(Marker m, double x, double y, const std::string& fill, double r = 4) {
    switch (m) {
        case Marker::circle:
            return fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="{:.1f}" fill="{}")", x, y, r, fill);
        case Marker::square:
            return fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}")", x - r, y - r,
                               2 * r, 2 * r, fill);
        case Marker::triangle:
            return fmt::format(R"(<path d="M{:.1f},{:.1f}L{:.1f},{:.1f}L{:.1f},{:.1f}Z" fill="{}")", x, y - r - 1,
                               x + r + 1, y + r, x - r - 1, y + r, fill);
        case Marker::diamond:
            return fmt::format(
                R"(<path d="M{0:.1f},{1:.1f}L{2:.1f},{3:.1f}L{0:.1f},{4:.1f}L{5:.1f},{3:.1f}Z" fill="{6}")", x,
                y - r - 1, x + r + 1, y, y + r + 1, x - r - 1, fill);
        case Marker::cross:
            return fmt::format(
                R"(<path d="M{:.1f},{:.1f}L{:.1f},{:.1f}M{:.1f},{:.1f}L{:.1f},{:.1f}" stroke="{}" stroke-width="2.5")",
                x - r, y - r, x + r, y + r, x - r, y + r, x + r, y - r, fill);
    }
    return {};
}

// The legend's swatch for a series: its marker or its line, in a tiny SVG of its own.
std::string swatch(const Series& s, const std::string& fill) {
    std::string out = R"(<svg width="22" height="12" aria-hidden="true">)";
    if (s.line)
        out += fmt::format(R"(<line x1="1" x2="21" y1="6" y2="6" stroke="{}" stroke-width="2"{}/>)", fill,
                           s.dashed ? R"( stroke-dasharray="5 3")" : "");
    if (s.markers) out += marker_shape(s.marker, 11, 6, fill, 3.5) + "/>";
    return out + "</svg>";
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
    constexpr int left = 78, right = 16, top = 14, bottom = 46;
    double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
    auto drawable = [&](const Point& p) {
        return !((x.log && p.x <= 0) || (y.log && p.y <= 0) || !std::isfinite(p.x) || !std::isfinite(p.y));
    };
    for (const auto& s : series)
        for (const auto& p : s.points)
            if (drawable(p))
                xlo = std::min(xlo, p.x), xhi = std::max(xhi, p.x), ylo = std::min(ylo, p.y), yhi = std::max(yhi, p.y);
    if (!std::isfinite(xlo)) return "<p><em>no data to plot</em></p>";
    widen(xlo, xhi, x.log);
    widen(ylo, yhi, y.log);
    const Scale sx{xlo, xhi, x.log, double(left), double(width - right)};
    const Scale sy{ylo, yhi, y.log, double(height - bottom), double(top)};

    std::string out = "<figure class=\"chart\">" + open_svg(width, height, y.title + " against " + x.title);
    out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#888"/>)", left, top,
                       width - left - right, height - top - bottom);
    for (double t : ticks(xlo, xhi, x.log, x.unit)) {
        const double px = sx.map(t);
        out += fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2}" stroke="#e4e4e4"/>)", px, top,
                           height - bottom);
        const std::string text = units::format(t, x.unit, true);
        const double half = static_cast<double>(text.size()) * char_px / 2;
        out += fmt::format(R"(<text x="{:.1f}" y="{}" text-anchor="middle">{}</text>)",
                           std::clamp(px, half, width - half), height - bottom + 14, escape(text));
    }
    for (double t : ticks(ylo, yhi, y.log, y.unit)) {
        const double py = sy.map(t);
        out += fmt::format(R"(<line x1="{0}" x2="{1}" y1="{2:.1f}" y2="{2:.1f}" stroke="#e4e4e4"/>)", left,
                           width - right, py);
        out += fmt::format(R"(<text x="{}" y="{:.1f}" text-anchor="end">{}</text>)", left - 4,
                           std::max(py + 4, double(top) + 4), escape(units::format(t, y.unit, true)));
    }
    out += axis_title((left + width - right) / 2.0, height - 10, x.title, false);
    out += axis_title(14, (top + height - bottom) / 2.0, y.title, true);

    LabelPlacer placer({double(left) + 2, double(top) + 2, double(width - right) - 2, double(height - bottom) - 2});
    // Markers first, so that labels keep off every marker, not only the ones drawn before them.
    for (const auto& s : series)
        if (s.markers)
            for (const auto& p : s.points)
                if (drawable(p)) placer.reserve({sx.map(p.x) - 5, sy.map(p.y) - 5, sx.map(p.x) + 5, sy.map(p.y) + 5});

    std::string legend, labels;
    for (std::size_t i = 0; i < series.size(); ++i) {
        const auto& s = series[i];
        const std::string fill = s.colour.empty() ? colour(i) : s.colour;
        std::string path;
        std::vector<Point> shown;
        for (const auto& p : s.points)
            if (drawable(p)) {
                path += fmt::format("{}{:.1f},{:.1f} ", path.empty() ? "M" : "L", sx.map(p.x), sy.map(p.y));
                shown.push_back(p);
            }
        if (shown.empty()) continue;
        if (s.line)
            out += fmt::format(R"(<path d="{}" fill="none" stroke="{}" stroke-width="2"{}><title>{}</title></path>)",
                               path, fill, s.dashed ? R"( stroke-dasharray="6 4")" : "", escape(s.name));
        if (s.markers)
            for (const auto& p : shown)
                out += marker_shape(s.marker, sx.map(p.x), sy.map(p.y), fill) +
                       fmt::format("><title>{}{}: {}, {}</title></{}>", escape(s.name),
                                   p.key.empty() ? "" : " (" + escape(p.key) + ")", escape(units::format(p.x, x.unit)),
                                   escape(units::format(p.y, y.unit)),
                                   s.marker == Marker::circle   ? "circle"
                                   : s.marker == Marker::square ? "rect"
                                                                : "path");
        for (const auto& p : shown)
            if (!p.key.empty()) {
                const auto [tx, ty] = placer.place(sx.map(p.x), sy.map(p.y), p.key.size());
                labels += fmt::format(R"(<text class="point-key" x="{:.1f}" y="{:.1f}" fill="{}">{}</text>)", tx, ty,
                                      fill, escape(p.key));
            }
        if (!s.line_label.empty()) {
            const Point& p = s.label_at_end ? shown.back() : shown.front();
            const double px = sx.map(p.x), py = sy.map(p.y);
            const auto [tx, ty] = s.label_at_end ? placer.place(px - 4, py - 10, s.line_label.size(), 0)
                                                 : placer.place(px, py - 12, s.line_label.size(), 2);
            labels += fmt::format(R"(<text class="line-label" x="{:.1f}" y="{:.1f}" fill="{}">{}</text>)", tx, ty, fill,
                                  escape(s.line_label));
        }
        if (s.in_legend) legend += "<span>" + swatch(s, fill) + escape(s.name) + "</span>";
    }
    out += labels + "</svg>";
    if (!legend.empty()) out += "<div class=\"legend\">" + legend + "</div>";
    return out + "</figure>";
}

}  // namespace clprobe::svg
