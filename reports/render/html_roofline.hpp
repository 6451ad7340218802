#pragma once
// The roofline of the HTML report: this run's compute roofs and a bandwidth roof per memory level,
// each labelled with its level and value; workload points numbered (a key below the chart lists
// them), coloured by workload and shaped by the memory level their working set lives in. A traced
// program's kernels, which have bytes but no FLOP count, are drawn as a bandwidth-only strip
// against the memory roofs.
#include <string>

#include "core/report.hpp"

namespace clprobe::html {

std::string roofline_section(const RunReport& report);

}  // namespace clprobe::html
