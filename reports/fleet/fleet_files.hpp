#pragma once
// `clprobe fleet` over files: each report is read, re-analysed by the current rules and reduced
// to its NodeSummary before the next is read, so memory stays bounded by the summaries.
#include <string>
#include <vector>

#include "fleet/fleet_analysis.hpp"
#include "fleet/rank_summary.hpp"

namespace clprobe {

// The files read and reduced: diagnose reports as nodes, trace reports as ranks (one report per
// rank of a traced job), each list in the order of the paths.
struct FleetFiles {
    std::vector<NodeSummary> nodes;
    std::vector<RankSummary> ranks;
    std::vector<UnpairedReport> unpaired;
};
FleetFiles read_fleet_files(const std::vector<std::string>& paths);

// A file that cannot be read as a report (missing, not JSON, another schema version) is listed
// in FleetAnalysis::unpaired with the reader's reason.
FleetAnalysis analyze_fleet_files(const std::vector<std::string>& paths, const FleetOptions& options = {});

}  // namespace clprobe
