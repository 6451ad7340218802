#pragma once
// The formats a fleet analysis renders to, in one table: `fleet --format`, its shorthands
// (--json, --html, --md), --help and the shell completion take their lists from it.
#include "fleet/fleet_analysis.hpp"
#include "render/format_table.hpp"

namespace clprobe {

using FleetFormat = OutputFormat<FleetAnalysis>;

// text (the default, first), md, json and html.
const FormatTable<FleetAnalysis>& fleet_formats();

}  // namespace clprobe
