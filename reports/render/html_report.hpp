#pragma once
#include <string>

#include "core/report.hpp"

namespace clprobe {
// One self-contained HTML file (inline CSS and SVG, no scripts, no network): measurement trust,
// ranked findings, the roofline with workload points, pipeline breakdowns, size sweeps, variant
// bars, and every probe's table.
std::string render_html(const RunReport& report);
}  // namespace clprobe
