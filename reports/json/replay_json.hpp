#pragma once
// The replay's results as JSON (docs/report-schema.md, "Replay"). Pure, write-only.
#include <vector>

#include <nlohmann/json.hpp>

#include "core/report.hpp"
#include "replay/replay_result.hpp"

namespace clprobe::replay {

inline constexpr const char* replay_schema = "clprobe.replay";
inline constexpr int replay_schema_version = 1;

nlohmann::json replay_result_to_json(const ReplayResult& r);
// {"schema", "schema_version", "replays": [...], "findings": [...]}
nlohmann::json replay_to_json(const std::vector<ReplayResult>& results, const std::vector<Finding>& findings);

}  // namespace clprobe::replay
