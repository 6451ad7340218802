#include "render/fleet_formats.hpp"

#include "json/fleet_json.hpp"
#include "render/fleet_text.hpp"

namespace clprobe {

namespace {

// The analysis itself (docs/fleet.schema.json); no option changes it.
std::string render_fleet_json(const FleetAnalysis& fleet, const RenderOptions&) {
    return fleet_to_json(fleet).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

constexpr FleetFormat formats[] = {{"text", "the terminal view", render_fleet_text},
                                   {"md", "Markdown tables, for a ticket", render_fleet_markdown},
                                   {"json", "the analysis as data, docs/fleet.schema.json", render_fleet_json},
                                   {"html", "one self-contained page", render_fleet_html}};

constexpr FormatTable<FleetAnalysis> table(formats, "fleet");

}  // namespace

const FormatTable<FleetAnalysis>& fleet_formats() {
    return table;
}

}  // namespace clprobe
