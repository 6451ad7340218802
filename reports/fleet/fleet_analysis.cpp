#include "fleet/fleet_analysis.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/stats.hpp"

namespace clprobe {

namespace {

// The largest group of reports of one device is the fleet; the others are listed, not mixed in.
std::vector<NodeSummary> pick_fleet(std::vector<NodeSummary> nodes, std::vector<UnpairedReport>& unpaired,
                                    std::string& device) {
    std::map<std::string, std::size_t> counts;
    for (const auto& n : nodes)
        ++counts[n.device];
    for (const auto& [name, count] : counts)
        if (device.empty() || count > counts[device]) device = name;
    std::vector<NodeSummary> fleet;
    for (auto& n : nodes) {
        if (n.device == device)
            fleet.push_back(std::move(n));
        else
            unpaired.push_back({n.source, fmt::format("another device: {} (the fleet's is {})", n.device, device)});
    }
    return fleet;
}

struct Point {
    const NodeSummary* node;
    const HeadlineFigure* figure;
};

MetricOutlier outlier_of(const FleetMetric& m, const Point& p, double half_width) {
    MetricOutlier o;
    o.metric = m.metric;
    o.node = p.node->node;
    o.source = p.node->source;
    o.value = p.figure->median;
    o.cv = p.figure->cv;
    o.relative = o.value / m.median - 1;
    o.band_low = m.median - half_width;
    o.band_high = m.median + half_width;
    o.worse = m.higher_is_better ? o.value < m.median : o.value > m.median;
    return o;
}

FleetMetric analyze_metric(const std::string& metric, const std::vector<Point>& points, const FleetOptions& opt) {
    FleetMetric m;
    m.metric = metric;
    m.unit = points.front().figure->unit;
    m.higher_is_better = points.front().figure->higher_is_better;
    m.nodes = points.size();
    std::vector<double> values;
    values.reserve(points.size());
    for (const auto& p : points) {
        values.push_back(p.figure->median);
        m.values.push_back({p.node->node, p.figure->median, p.figure->cv});
    }
    m.median = median_of(values);
    m.mad = median_absolute_deviation(values, m.median);
    m.spread = m.median > 0 ? mad_to_stddev * m.mad / m.median : 0;
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    m.min = *lo;
    m.max = *hi;
    if (points.size() < opt.min_nodes || m.median <= 0) return m;
    // The fleet's robust spread, floored so that identical nodes do not make every small
    // difference an outlier, widened by the node's own noise so a noisy node is not one.
    const double fleet_part = std::max(opt.mad_k * mad_to_stddev * m.mad, opt.min_relative_band * m.median);
    m.band_half_width = fleet_part;
    for (const auto& p : points) {
        const double half = fleet_part + opt.cv_k * p.figure->cv * m.median;
        if (std::fabs(p.figure->median - m.median) > half) m.outliers.push_back(outlier_of(m, p, half));
    }
    std::sort(m.outliers.begin(), m.outliers.end(),
              [](const auto& a, const auto& b) { return std::fabs(a.relative) > std::fabs(b.relative); });
    return m;
}

using Majority = std::map<std::string, std::pair<std::string, std::size_t>, std::less<>>;

Majority majority_environment(const std::vector<NodeSummary>& nodes) {
    std::map<std::string, std::map<std::string, std::size_t>, std::less<>> counts;
    for (const auto& n : nodes)
        for (auto& [field, value] : environment_fields(n.environment))
            ++counts[std::string(field)][value];
    Majority out;
    for (const auto& [field, values] : counts) {
        const auto best = std::max_element(values.begin(), values.end(),
                                           [](const auto& a, const auto& b) { return a.second < b.second; });
        out[field] = {best->first, best->second};
    }
    return out;
}

std::vector<EnvironmentDeviation> deviations(const NodeSummary& node, const Majority& majority) {
    std::vector<EnvironmentDeviation> out;
    for (auto& [field, value] : environment_fields(node.environment)) {
        const auto it = majority.find(field);
        if (it == majority.end() || it->second.first == value) continue;
        out.push_back({std::string(field), value, it->second.first, it->second.second});
    }
    return out;
}

std::vector<NodeOutlier> outliers_by_node(const std::vector<FleetMetric>& metrics,
                                          const std::vector<NodeSummary>& nodes) {
    std::map<std::string, NodeOutlier> by_source;
    for (const auto& m : metrics)
        for (const auto& o : m.outliers) {
            NodeOutlier& n = by_source[o.source];
            n.node = o.node;
            n.source = o.source;
            n.metrics.push_back(o);
            n.worse = n.worse || o.worse;
        }
    const Majority majority = majority_environment(nodes);
    std::vector<NodeOutlier> out;
    for (const auto& node : nodes)
        if (auto it = by_source.find(node.source); it != by_source.end()) {
            it->second.environment = deviations(node, majority);
            out.push_back(std::move(it->second));
        }
    auto largest = [](const NodeOutlier& n) {
        double d = 0;
        for (const auto& m : n.metrics)
            d = std::max(d, std::fabs(m.relative));
        return d;
    };
    std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
        return a.worse != b.worse ? a.worse : largest(a) > largest(b);
    });
    return out;
}

std::vector<PartialFinding> partial_findings(const std::vector<NodeSummary>& nodes) {
    std::map<std::string, std::vector<std::string>> by_id;
    for (const auto& n : nodes)
        for (const auto& id : n.findings)
            by_id[id].push_back(n.node);
    std::vector<PartialFinding> out;
    for (auto& [id, on] : by_id)
        if (on.size() < nodes.size()) out.push_back({id, std::move(on)});
    return out;
}

}  // namespace

std::size_t FleetAnalysis::worse_outliers() const {
    return static_cast<std::size_t>(
        std::count_if(outliers.begin(), outliers.end(), [](const auto& o) { return o.worse; }));
}

FleetAnalysis analyze_fleet(std::vector<NodeSummary> nodes, std::vector<UnpairedReport> unpaired,
                            const FleetOptions& options) {
    FleetAnalysis a;
    a.options = options;
    a.unpaired = std::move(unpaired);
    const std::vector<NodeSummary> fleet = pick_fleet(std::move(nodes), a.unpaired, a.device);
    a.nodes = fleet.size();
    std::map<std::string, std::vector<Point>> points;
    for (const auto& n : fleet)
        for (const auto& [metric, figure] : n.headlines)
            points[metric].push_back({&n, &figure});
    for (const auto& [metric, p] : points)
        a.metrics.push_back(analyze_metric(metric, p, options));
    a.outliers = outliers_by_node(a.metrics, fleet);
    a.partial_findings = partial_findings(fleet);
    for (const auto& n : fleet)
        a.machines.push_back({n.node, n.economics});
    return a;
}

}  // namespace clprobe
