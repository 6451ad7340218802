#pragma once
// A traced program's timeline on its HTML page: one lane per command queue and per host thread
// (trace.program's "timeline" attribute, src/trace/trace_lanes.hpp), kernels, transfers, waits,
// builds and enqueue calls coloured by kind, the device's idle gaps marked, and sections to zoom
// without JavaScript (the whole run, then its busiest second). Links the Perfetto file when the
// trace wrote one. Empty for reports without a timeline.
#include <string>

#include "core/report.hpp"

namespace clprobe::html {

std::string timeline_section(const RunReport& report);

}  // namespace clprobe::html
