#pragma once
// RunOptions <-> JSON, for the request an isolated probe's child reads: the child must run its
// probe exactly as the parent would have (mode, shapes, sweep bounds, budget), so every field
// travels, not only the ones the report's `options` block shows.
#include <nlohmann/json.hpp>

#include "runtime/probe.hpp"

namespace clprobe {

nlohmann::json run_options_to_json(const RunOptions& options);
// Throws std::invalid_argument naming the field for a request this clprobe did not write.
RunOptions run_options_from_json(const nlohmann::json& j);

}  // namespace clprobe
