#pragma once
#include <string>

#include "core/report.hpp"
#include "render/render_options.hpp"

namespace clprobe {
// One self-contained HTML file (inline CSS and SVG, no scripts, no network): measurement trust,
// ranked findings, the roofline with workload points, pipeline breakdowns, size sweeps, variant
// bars, and every probe's table. Every measurement is shown, so no option applies.
std::string render_html(const RunReport& report, const RenderOptions& options = {});
}  // namespace clprobe
