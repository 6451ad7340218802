#pragma once
#include <string>

#include "fleet/fleet_analysis.hpp"
#include "render/render_options.hpp"

namespace clprobe {
// The terminal view of a fleet: per headline metric the median, robust spread and outliers; each
// outlier with the environment differences that can explain it; findings on only some nodes; the
// reports not paired. `verbose` names every node of a partial finding.
std::string render_fleet_text(const FleetAnalysis& fleet, const RenderOptions& options = {});
// The same as Markdown tables, for a ticket.
std::string render_fleet_markdown(const FleetAnalysis& fleet, const RenderOptions& options = {});
// One self-contained HTML page (inline CSS, no scripts); every node is shown, so no option applies.
std::string render_fleet_html(const FleetAnalysis& fleet, const RenderOptions& options = {});
}  // namespace clprobe
