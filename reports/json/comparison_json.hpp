#pragma once
#include <nlohmann/json.hpp>

#include "compare/comparison.hpp"

namespace clprobe {
// Schema "clprobe.comparison" version 1 (docs/report-schema.md, section Comparison).
nlohmann::json comparison_to_json(const Comparison& c);
}  // namespace clprobe
