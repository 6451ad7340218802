#pragma once
// The text report's summary of a traced program: how it ended, where its wall time went stage by
// stage, its heaviest kernels and its transfers. Empty for reports that are not trace reports.
#include <string>

#include "core/report.hpp"

namespace clprobe {

std::string render_trace_summary(const RunReport& report);

}  // namespace clprobe
