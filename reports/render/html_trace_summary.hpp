#pragma once
// A traced program's summary on its HTML page, in the page's own tables and bars: how it ended,
// where its wall time went stage by stage (a share bar each, in the timeline's colours), its
// heaviest kernels against the memory roof and its transfers. The text report says the same in
// render/trace_summary_text. Empty for reports that are not trace reports.
#include <string>

#include "core/report.hpp"

namespace clprobe::html {

std::string trace_summary_section(const RunReport& report);

}  // namespace clprobe::html
