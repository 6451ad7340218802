#pragma once
// Many nodes' reports -> FleetAnalysis: per headline metric the fleet's median and robust spread,
// the nodes outside a noise band built from the median absolute deviation and each node's own cv,
// the environment differences that can explain each outlier, findings on only some nodes, and
// the reports that could not be paired. Pure; the rule is documented in docs/fleet.md.
#include <cstddef>
#include <string>
#include <vector>

#include "compare/machine_choice.hpp"
#include "fleet/node_summary.hpp"

namespace clprobe {

struct FleetOptions {
    double mad_k = 3.5;               // band half-width in robust standard deviations (1.4826 MAD)
    double cv_k = 2;                  // widening by the node's own spread: cv_k * cv * fleet median
    double min_relative_band = 0.05;  // floor of the MAD part, as a fraction of the median
    std::size_t min_nodes = 3;        // fewer nodes with a metric: no outliers are called for it
};

struct UnpairedReport {
    std::string source;
    std::string reason;  // unreadable, other schema version, another device
};

struct MetricOutlier {
    std::string metric;
    std::string node, source;
    double value = 0;
    double cv = 0;
    double relative = 0;  // value / fleet median - 1
    double band_low = 0, band_high = 0;
    bool worse = true;  // in the direction the metric counts as worse
};

struct FleetMetric {
    std::string metric, unit;
    bool higher_is_better = true;
    std::size_t nodes = 0;
    double median = 0;
    double mad = 0;     // median absolute deviation, unscaled
    double spread = 0;  // 1.4826 * MAD / median: the fleet's robust coefficient of variation
    double min = 0, max = 0;
    std::vector<MetricOutlier> outliers;  // sorted by distance from the median, largest first
    // Every node's value in the fleet's order, and the band's half-width before a node's own
    // spread widens it: the HTML page draws each metric's distribution from them.
    struct NodeValue {
        std::string node;
        double value = 0;
        double cv = 0;  // the node's own spread, which widens its band
    };
    std::vector<NodeValue> values;
    double band_half_width = 0;
};

struct EnvironmentDeviation {
    std::string field;
    std::string value;     // this node's
    std::string majority;  // the most common value among the fleet's nodes
    std::size_t majority_nodes = 0;
};

// A node outside the band on at least one headline metric.
struct NodeOutlier {
    std::string node, source;
    std::vector<MetricOutlier> metrics;
    std::vector<EnvironmentDeviation> environment;  // what differs from the fleet's majority
    bool worse = false;                             // at least one metric is worse than the fleet
};

struct PartialFinding {
    std::string id;
    std::vector<std::string> nodes;  // the nodes that have it
};

struct FleetAnalysis {
    std::string device;  // the device type and name every paired report shares
    std::size_t nodes = 0;
    FleetOptions options;
    std::vector<FleetMetric> metrics;  // by metric id
    std::vector<NodeOutlier> outliers;
    std::vector<PartialFinding> partial_findings;  // on some nodes, not all
    std::vector<UnpairedReport> unpaired;
    // Each node's workload figures, for the best / best value / cheapest choice (compare/machine_choice).
    std::vector<MachineFigures> machines;
    std::size_t worse_outliers() const;
};

// Groups the summaries by device (the largest group is the fleet; the rest are listed as
// unpaired), then analyses the fleet. `unpaired` holds reports already rejected on reading.
FleetAnalysis analyze_fleet(std::vector<NodeSummary> nodes, std::vector<UnpairedReport> unpaired,
                            const FleetOptions& options = {});

}  // namespace clprobe
