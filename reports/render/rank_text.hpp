#pragma once
// `clprobe fleet` over the trace reports of a job's ranks (fleet/rank_analysis.hpp): the ranks'
// figures side by side, the slowest rank with what accounts for its difference, in the formats of
// the fleet view (text, Markdown, JSON, HTML).
#include <string>

#include "fleet/rank_analysis.hpp"
#include "render/format_table.hpp"
#include "render/render_options.hpp"

namespace clprobe {

// `verbose` lists every cause, not the largest few.
std::string render_ranks_text(const RankAnalysis& ranks, const RenderOptions& options = {});
std::string render_ranks_markdown(const RankAnalysis& ranks, const RenderOptions& options = {});
std::string render_ranks_html(const RankAnalysis& ranks, const RenderOptions& options = {});

// The same names as fleet_formats(): text (first), md, json and html.
const FormatTable<RankAnalysis>& rank_formats();

}  // namespace clprobe
