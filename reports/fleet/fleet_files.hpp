#pragma once
// `clprobe fleet` over files: each report is read, re-analysed by the current rules and reduced
// to its NodeSummary before the next is read, so memory stays bounded by the summaries.
#include <string>
#include <vector>

#include "fleet/fleet_analysis.hpp"

namespace clprobe {

// A file that cannot be read as a report (missing, not JSON, another schema version) is listed
// in FleetAnalysis::unpaired with the reader's reason.
FleetAnalysis analyze_fleet_files(const std::vector<std::string>& paths, const FleetOptions& options = {});

}  // namespace clprobe
