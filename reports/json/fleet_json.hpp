#pragma once
#include <nlohmann/json.hpp>

#include "fleet/fleet_analysis.hpp"

namespace clprobe {
// Schema "clprobe.fleet" version 1 (docs/fleet.schema.json, docs/fleet.md).
nlohmann::json fleet_to_json(const FleetAnalysis& fleet);
}  // namespace clprobe
