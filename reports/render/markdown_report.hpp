#pragma once
#include <string>

#include "core/report.hpp"

namespace clprobe {
// A report as Markdown, for pasting into a ticket: context, ranked findings, one table per probe.
std::string render_markdown(const RunReport& report, bool verbose = false);
}  // namespace clprobe
