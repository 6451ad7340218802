#include "fleet/fleet_files.hpp"

#include <exception>

#include "core/atomic_file.hpp"
#include "json/report_json.hpp"
#include "rules/analysis.hpp"

namespace clprobe {

FleetAnalysis analyze_fleet_files(const std::vector<std::string>& paths, const FleetOptions& options) {
    std::vector<NodeSummary> nodes;
    std::vector<UnpairedReport> unpaired;
    nodes.reserve(paths.size());
    for (const auto& path : paths) {
        try {
            RunReport r = report_from_json_text(read_file(path, max_report_bytes));
            // Every node judged by the same (current) rules: a finding on only some nodes is
            // then their numbers, not the rules of the clprobe version that wrote them.
            analyze(r);
            nodes.push_back(summarize_node(r, path));
        } catch (const std::exception& e) {
            unpaired.push_back({path, std::string("cannot read report: ") + e.what()});
        }
    }
    return analyze_fleet(std::move(nodes), std::move(unpaired), options);
}

}  // namespace clprobe
