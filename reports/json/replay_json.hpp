#pragma once
// The replay's results as JSON (docs/report-schema.md, "Replay"), and read back from a saved
// report's trace.replay section for its renderers. Pure.
#include <vector>

#include <nlohmann/json.hpp>

#include "core/report.hpp"
#include "replay/replay_result.hpp"

namespace clprobe::replay {

inline constexpr const char* replay_schema = "clprobe.replay";
inline constexpr int replay_schema_version = 1;
// The id of the trace report's result whose attributes.replay is this JSON (clprobe trace --replay).
inline constexpr const char* replay_probe_id = "trace.replay";

nlohmann::json replay_result_to_json(const ReplayResult& r);
// {"schema", "schema_version", "replays": [...], "findings": [...]}
nlohmann::json replay_to_json(const std::vector<ReplayResult>& results, const std::vector<Finding>& findings);

// The results of a section written by replay_to_json. Lenient, as a renderer needs: a key it cannot
// read keeps its default, a variant's summary is recomputed from its samples, and a section of
// another schema or shape gives no results.
std::vector<ReplayResult> replay_results_from_json(const nlohmann::json& section);

}  // namespace clprobe::replay
