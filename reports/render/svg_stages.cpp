// Pipelines' stages as horizontal bars (render/svg_chart.hpp, stage_chart).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "render/svg_chart.hpp"
#include "render/svg_common.hpp"
#include "render/value_format.hpp"

namespace clprobe::svg {

using namespace detail;

namespace {

enum class RowShape { stacked, partial, overlapping, step_only };

RowShape shape_of(const StageRow& r, double sum) {
    if (r.stages.empty()) return RowShape::step_only;
    if (r.step > 0 && sum > r.step * 1.05) return RowShape::overlapping;
    if (r.step > 0 && sum < r.step * 0.95) return RowShape::partial;
    return RowShape::stacked;
}

// The value axis, broken when the longest row is more than 2.5x the longest stage detail (a step
// of 20 ms whose timed stages add up to 3 ms): the detail keeps 70% of the width on its own linear
// scale and the rest of the range is squeezed after a visible break, so neither row is unreadable.
struct BrokenScale {
    double px0 = 0, px1 = 1;
    double hi = 1;
    double cut = 0;  // the break's value; 0: one linear scale
    double cut_px = 0, resume_px = 0;

    double map(double v) const {
        if (cut <= 0) return px0 + v / hi * (px1 - px0);
        if (v <= cut) return px0 + v / cut * (cut_px - px0);
        return resume_px + (v - cut) / (hi - cut) * (px1 - resume_px);
    }
};

BrokenScale scale_for(double detail, double hi, double px0, double px1) {
    BrokenScale s{px0, px1, hi};
    if (detail > 0 && hi > 2.5 * detail) {
        double lo = 0, cut = detail;
        widen(lo, cut, false);
        s.cut = cut;
        s.cut_px = px0 + 0.7 * (px1 - px0);
        s.resume_px = s.cut_px + 14;
    }
    return s;
}

// Ticks of [lo, hi] drawn where their labels do not collide with the previous one.
std::string ticks_between(const BrokenScale& sx, double lo, double hi, const std::string& unit, double top,
                          double bottom, int width, double& last_right) {
    std::string out;
    for (double t : ticks(lo, hi, false, unit)) {
        if (t < lo || t > hi) continue;
        const double px = sx.map(t);
        const std::string text = units::format(t, unit, true);
        const double half = static_cast<double>(text.size()) * char_px / 2;
        const double x = std::clamp(px, half, width - half);
        if (x - half < last_right + 6) continue;
        last_right = x + half;
        out += fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1:.1f}" y2="{2:.1f}" stroke="#e4e4e4"/>)", px, top,
                           bottom);
        out +=
            fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)", x, bottom + 14, escape(text));
    }
    return out;
}

// Two slanted strokes across a bar or the axis where the scale is broken.
std::string break_mark(const BrokenScale& sx, double y0, double y1) {
    const double x = (sx.cut_px + sx.resume_px) / 2;
    return fmt::format(
        R"(<path class="axis-break" d="M{0:.1f},{2:.1f} L{1:.1f},{3:.1f} M{4:.1f},{2:.1f} L{5:.1f},{3:.1f}" stroke="#555" stroke-width="1.2" fill="none"/>)",
        x - 5, x - 1, y1, y0, x + 1, x + 5);
}

std::string value_axis(const BrokenScale& sx, double top, double bottom, const std::string& unit, int width) {
    double last_right = -1e9;
    std::string out;
    if (sx.cut <= 0) {
        out += ticks_between(sx, 0, sx.hi, unit, top, bottom, width, last_right);
    } else {
        out += ticks_between(sx, 0, sx.cut, unit, top, bottom, width, last_right);
        out += ticks_between(sx, sx.cut, sx.hi, unit, top, bottom, width, last_right);
        // The gap between the two scales, white over the grid, marked on the axis.
        out += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="#fff"/>)", sx.cut_px,
                           top, sx.resume_px - sx.cut_px, bottom - top);
        out += break_mark(sx, bottom - 4, bottom + 4);
    }
    out += fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1:.1f}" y2="{2:.1f}" stroke="#888"/>)", sx.px0, top,
                       bottom);
    return out;
}

// A bar from a to b (values); where it crosses the break it is drawn across the gap with the mark.
std::string bar(const BrokenScale& sx, double a, double b, double y, double h, const std::string& fill,
                const std::string& extra, const std::string& title) {
    const double x0 = sx.map(a), x1 = sx.map(b);
    std::string out = fmt::format(
        R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"{}><title>{}</title></rect>)", x0, y,
        std::max(0.0, x1 - x0), h, fill, extra, escape(title));
    if (sx.cut > 0 && a < sx.cut && b > sx.cut) out += break_mark(sx, y - 2, y + h + 2);
    return out;
}

}  // namespace

std::string stage_chart(const std::vector<StageRow>& rows, const std::string& unit, int width) {
    if (rows.empty()) return "<p><em>no data to plot</em></p>";
    constexpr int top = 8, value_room = 100, lane = 14;
    std::size_t longest = 0;
    std::vector<std::string> names;  // stage names in first-seen order: one colour each
    double hi = 0, detail = 0;
    std::vector<RowShape> shapes;
    std::vector<double> sums;
    for (const auto& r : rows) {
        longest = std::max(longest, r.name.size());
        double sum = 0, largest = 0;
        for (const auto& s : r.stages) {
            sum += std::max(0.0, s.value), largest = std::max(largest, s.value);
            if (std::find(names.begin(), names.end(), s.label) == names.end()) names.push_back(s.label);
        }
        sums.push_back(sum);
        shapes.push_back(shape_of(r, sum));
        const bool overlapping = shapes.back() == RowShape::overlapping;
        hi = std::max({hi, overlapping ? std::max(r.step, largest) : sum, r.step});
        // The detail the scale must keep readable: what the stages span on their own.
        detail = std::max(detail, overlapping ? std::max(r.step, largest) : sum);
    }
    if (hi <= 0) hi = 1;
    double lo = 0;
    widen(lo, hi, false);
    const LabelColumn labels = label_column(longest, width);
    const double plot_left = 24 + labels.width;
    const BrokenScale sx = scale_for(detail, hi, plot_left, double(width - value_room));
    // A stacked row is one lane; an overlapping row a lane for the step and one per stage.
    std::vector<double> row_y;
    double y = top;
    for (std::size_t r = 0; r < rows.size(); ++r) {
        row_y.push_back(y);
        y += lane * (shapes[r] == RowShape::overlapping ? 1 + static_cast<double>(rows[r].stages.size()) : 1.6) + 10;
    }
    const double bottom = y;
    const int height = static_cast<int>(bottom) + 40;
    std::string out = "<figure class=\"chart\">" + open_svg(width, height, "pipeline stages in " + unit);
    out += value_axis(sx, top, bottom, unit, width);
    auto fill_of = [&](const std::string& label) {
        return std::string(
            colour(static_cast<std::size_t>(std::find(names.begin(), names.end(), label) - names.begin())));
    };
    bool any_rest = false, any_step_only = false;
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const auto& row = rows[r];
        const double y0 = row_y[r], sum = sums[r];
        out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end"><title>{}</title>{}</text>)", plot_left - 6,
                           y0 + 13, escape(row.name), escape(shorten(row.name, labels.max_chars)));
        if (shapes[r] == RowShape::overlapping) {
            // The step as an outlined bar, each stage below it from the step's start: they ran at once.
            out += bar(sx, 0, row.step, y0 + 2, lane - 3, "#f2f2f2", R"( stroke="#555")",
                       "step: " + units::format(row.step, unit) + " (stages add up to " + units::format(sum, unit) +
                           ": they overlap)");
            out += value_text(sx.map(row.step), y0 + 12, "step " + units::format(row.step, unit), width - 2, "#222");
            for (std::size_t i = 0; i < row.stages.size(); ++i) {
                const auto& s = row.stages[i];
                const double sy = y0 + lane * static_cast<double>(i + 1);
                out += bar(sx, 0, std::max(0.0, s.value), sy + 2, lane - 3, fill_of(s.label), R"( opacity="0.85")",
                           s.label + ": " + units::format(s.value, unit) + " (overlaps the other stages)");
                out += value_text(sx.map(std::max(0.0, s.value)), sy + 12, s.label + " " + units::format(s.value, unit),
                                  width - 2, "#222");
            }
            continue;
        }
        const double h = lane * 1.6 - 3;
        if (shapes[r] == RowShape::step_only) {
            any_step_only = true;
            out += bar(sx, 0, row.step, y0 + 2, h, "#bbb", "",
                       "step: " + units::format(row.step, unit) + " (no stage times for this variant)");
            out += value_text(sx.map(row.step), y0 + 2 + h / 2 + 4, "step " + units::format(row.step, unit), width - 2,
                              "#222");
            continue;
        }
        double x = 0;
        std::string unprinted;  // values too long for their segment, printed after the row's total
        for (const auto& s : row.stages) {
            const double v = std::max(0.0, s.value);
            const double x0 = sx.map(x), w = sx.map(x + v) - x0;
            out += bar(sx, x, x + v, y0 + 2, h, fill_of(s.label), R"( stroke="#fff")",
                       fmt::format("{}: {} ({:.0f}% of {})", s.label, units::format(v, unit),
                                   sum > 0 ? 100 * v / sum : 0.0, units::format(row.step > 0 ? row.step : sum, unit)));
            const std::string text = units::format(v, unit);
            if (w >= static_cast<double>(text.size()) * char_px + 6)
                out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" fill="#fff">{}</text>)",
                                   x0 + w / 2, y0 + 2 + h / 2 + 4, escape(text));
            else if (sum > 0 && v / sum >= 0.01)
                unprinted += (unprinted.empty() ? "" : ", ") + s.label + " " + text;
            x += v;
        }
        double end = sum;
        if (shapes[r] == RowShape::partial) {
            // The part of the measured step no timed stage covers, drawn so the stages stay in scale.
            any_rest = true;
            const double rest = row.step - sum;
            out += bar(sx, sum, row.step, y0 + 2, h, "#e6e6e6", R"( stroke="#999" stroke-dasharray="3 2")",
                       "rest of the step, in no timed stage: " + units::format(rest, unit));
            const double x0 = sx.map(sum), w = sx.map(row.step) - x0;
            const std::string text = "+" + units::format(rest, unit);
            if (w >= static_cast<double>(text.size()) * char_px + 20)
                out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="start" fill="#333">{}</text>)", x0 + 4,
                                   y0 + 2 + h / 2 + 4, escape(text));
            end = row.step;
        }
        std::string total =
            row.step > 0 ? "step " + units::format(row.step, unit) : "total " + units::format(sum, unit);
        // A short row among long ones: its stages' values follow its total where there is room.
        const std::string with_stages = total + " (" + unprinted + ")";
        if (!unprinted.empty() && sx.map(end) + 4 + static_cast<double>(with_stages.size()) * char_px <= width - 2)
            total = with_stages;
        out += value_text(sx.map(end), y0 + 2 + h / 2 + 4, total, width - 2, "#222");
    }
    const bool time = unit == "s" || unit == "ms" || unit == "us" || unit == "ns";
    out += axis_title((plot_left + width - value_room) / 2, height - 6,
                      std::string(time ? "time" : unit) + (sx.cut > 0 ? " (axis broken: two scales)" : ""), false);
    out += axis_title(12, top + (bottom - top) / 2, "variant", true);
    out += "</svg><div class=\"legend\">";
    for (const auto& n : names)
        out += fmt::format(
            R"(<span><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="{}"/></svg>{}</span>)",
            fill_of(n), escape(n));
    if (any_rest)
        out +=
            R"(<span><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="#e6e6e6" stroke="#999" stroke-dasharray="3 2"/></svg>rest of the step (no timed stage)</span>)";
    if (any_step_only)
        out +=
            R"(<span><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="#bbb"/></svg>step time only (no stages measured)</span>)";
    return out + "</div></figure>";
}

}  // namespace clprobe::svg
