#pragma once
// What `fleet` keeps of one node's report: its headline figures, environment and finding ids.
// A few kilobytes where the report was hundreds, so a thousand nodes fit in bounded memory.
#include <map>
#include <string>
#include <vector>

#include "core/cost_model.hpp"
#include "core/report.hpp"
#include "fleet/node_environment.hpp"

namespace clprobe {

struct HeadlineFigure {
    std::string unit;
    bool higher_is_better = true;
    double median = 0;
    double cv = 0;  // the node's own spread: coefficient of variation of its samples
};

struct NodeSummary {
    std::string source;  // the report file
    std::string node;    // host name, with "/rank" under a launcher
    std::string device;  // device type and name: reports of other devices do not pair
    NodeEnvironment environment;
    std::map<std::string, HeadlineFigure> headlines;  // by metric id
    std::vector<std::string> findings;                // finding ids, sorted
    std::vector<WorkloadEconomics> economics;         // throughput, energy and cost per workload
};

NodeSummary summarize_node(const RunReport& report, std::string source);

// "gpu: NVIDIA H200", or "no device".
std::string device_key(const RunReport& report);

}  // namespace clprobe
