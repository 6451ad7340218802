#include "render/fleet_text.hpp"

#include <fmt/core.h>

#include <cmath>

#include "compare/machine_choice.hpp"

namespace clprobe {

namespace {

std::string paint(bool color, const char* code, std::string_view s) {
    return color ? fmt::format("\x1b[{}m{}\x1b[0m", code, s) : std::string(s);
}

std::string or_unknown(const std::string& s) {
    return s.empty() ? "unknown" : s;
}

std::string node_list(const std::vector<std::string>& nodes, bool verbose) {
    const std::size_t shown = verbose ? nodes.size() : std::min<std::size_t>(nodes.size(), 8);
    std::string out;
    for (std::size_t i = 0; i < shown; ++i)
        out += (i ? ", " : "") + nodes[i];
    if (shown < nodes.size()) out += fmt::format(" and {} more", nodes.size() - shown);
    return out;
}

std::string metric_line(const MetricOutlier& o, const FleetMetric& m) {
    return fmt::format("{} {:.4g} {} vs fleet {:.4g} ({:+.1f}%, band {:.4g}..{:.4g}, node cv {:.1f}%)", o.metric,
                       o.value, m.unit, m.median, 100 * o.relative, o.band_low, o.band_high, 100 * o.cv);
}

const FleetMetric& metric_named(const FleetAnalysis& f, const std::string& id) {
    for (const auto& m : f.metrics)
        if (m.metric == id) return m;
    return f.metrics.front();  // every outlier comes from one of the metrics
}

void outliers_text(std::string& out, const FleetAnalysis& f, bool color) {
    out += fmt::format("\nOutliers: {} node(s), {} worse than the fleet\n", f.outliers.size(), f.worse_outliers());
    for (const auto& n : f.outliers) {
        out += fmt::format("  {} ({}): {}\n", n.node, n.source,
                           n.worse ? paint(color, "31", "worse") : paint(color, "32", "better"));
        for (const auto& o : n.metrics)
            out += fmt::format("    {}\n", metric_line(o, metric_named(f, o.metric)));
        if (n.environment.empty()) out += "    environment: same as the fleet's majority in every recorded field\n";
        for (const auto& e : n.environment)
            out += fmt::format("    differs: {} = {} (fleet majority: {}, {} nodes)\n", e.field, or_unknown(e.value),
                               or_unknown(e.majority), e.majority_nodes);
    }
}

}  // namespace

std::string render_fleet_text(const FleetAnalysis& f, const RenderOptions& options) {
    const bool verbose = options.verbose, color = options.color;
    std::string out =
        fmt::format("Fleet: {} node(s) of {}; {} report(s) not paired\n", f.nodes, f.device, f.unpaired.size());
    out += fmt::format(
        "Band: median +- (max({} x 1.4826 MAD, {:.0f}% of the median) + {} x the node's cv x the median); outliers "
        "need {} or more nodes\n",
        f.options.mad_k, 100 * f.options.min_relative_band, f.options.cv_k, f.options.min_nodes);
    out += fmt::format("\n  {:<44} {:>8} {:>11} {:>7} {:>23} {:>8}\n", "headline metric", "unit", "median", "spread",
                       "range", "outliers");
    for (const auto& m : f.metrics)
        out += fmt::format("  {:<44} {:>8} {:>11.4g} {:>6.1f}% {:>11.4g}..{:<10.4g} {:>8}\n", m.metric, m.unit,
                           m.median, 100 * m.spread, m.min, m.max,
                           m.nodes < f.options.min_nodes ? std::string("-") : std::to_string(m.outliers.size()));
    outliers_text(out, f, color);
    out += fmt::format("\nFindings on only some nodes: {}\n", f.partial_findings.size());
    for (const auto& p : f.partial_findings)
        out += fmt::format("  {}: {} of {} ({})\n", p.id, p.nodes.size(), f.nodes, node_list(p.nodes, verbose));
    if (!f.unpaired.empty()) {
        out += fmt::format("\nNot paired: {}\n", f.unpaired.size());
        for (const auto& u : f.unpaired)
            out += fmt::format("  {}: {}\n", u.source, u.reason);
    }
    // Which node to run each workload on: best, best value, cheapest.
    return out + render_machine_choices(choose_machines(f.machines));
}

std::string render_fleet_markdown(const FleetAnalysis& f, const RenderOptions& options) {
    const bool verbose = options.verbose;
    std::string out = fmt::format("# Fleet of {} node(s): {}\n\n", f.nodes, f.device);
    out += "| headline metric | unit | median | spread | min | max | outliers |\n|---|---|---|---|---|---|---|\n";
    for (const auto& m : f.metrics)
        out += fmt::format("| `{}` | {} | {:.4g} | {:.1f}% | {:.4g} | {:.4g} | {} |\n", m.metric, m.unit, m.median,
                           100 * m.spread, m.min, m.max, m.outliers.size());
    out += fmt::format("\n## Outliers ({}, {} worse)\n\n", f.outliers.size(), f.worse_outliers());
    for (const auto& n : f.outliers) {
        out += fmt::format("### {} ({})\n\n", n.node, n.worse ? "worse" : "better");
        for (const auto& o : n.metrics)
            out += fmt::format("- {}\n", metric_line(o, metric_named(f, o.metric)));
        for (const auto& e : n.environment)
            out += fmt::format("- differs: `{}` = {} (fleet majority: {}, {} nodes)\n", e.field, or_unknown(e.value),
                               or_unknown(e.majority), e.majority_nodes);
        out += "\n";
    }
    out += "## Findings on only some nodes\n\n";
    for (const auto& p : f.partial_findings)
        out += fmt::format("- `{}`: {} of {} ({})\n", p.id, p.nodes.size(), f.nodes, node_list(p.nodes, verbose));
    if (!f.unpaired.empty()) {
        out += "\n## Not paired\n\n";
        for (const auto& u : f.unpaired)
            out += fmt::format("- `{}`: {}\n", u.source, u.reason);
    }
    return out + render_machine_choices_markdown(choose_machines(f.machines));
}

}  // namespace clprobe
