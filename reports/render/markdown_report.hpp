#pragma once
#include <string>

#include "core/report.hpp"
#include "render/render_options.hpp"

namespace clprobe {
// A report as Markdown, for pasting into a ticket: context, ranked findings, one table per probe.
// Uses verbose.
std::string render_markdown(const RunReport& report, const RenderOptions& options = {});
}  // namespace clprobe
