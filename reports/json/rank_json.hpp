#pragma once
#include <nlohmann/json.hpp>

#include "fleet/rank_analysis.hpp"

namespace clprobe {
// Schema "clprobe.fleet.ranks" version 1: `clprobe fleet --json` over trace reports (docs/fleet.md,
// Ranks of a traced job).
nlohmann::json ranks_to_json(const RankAnalysis& ranks);
}  // namespace clprobe
