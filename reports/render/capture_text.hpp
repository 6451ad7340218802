#pragma once
// The text report's lines on what `clprobe trace` captured: the window(s) the analysis covers,
// each window's own stage shares and findings, and how the timeline was sampled under --max-size.
// Empty when the whole run was recorded in full.
#include <string>

#include "core/report.hpp"
#include "core/trace_facts.hpp"

namespace clprobe {

std::string render_capture(const RunReport& report, const TraceFacts& facts);

}  // namespace clprobe
