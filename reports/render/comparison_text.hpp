#pragma once
#include <string>

#include "compare/comparison.hpp"
#include "render/render_options.hpp"

namespace clprobe {
// The terminal view of a comparison: verdict counts, moved metrics first, the environment diff
// and its explanations, findings and trust notes in one report only. `verbose` lists every paired
// metric; `color` paints verdicts and headings.
std::string render_comparison_text(const Comparison& c, const RenderOptions& options = {});
}  // namespace clprobe
