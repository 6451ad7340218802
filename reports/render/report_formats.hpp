#pragma once
// The formats a report renders to, in one table: `report --format`, `diagnose`'s outputs, the
// --help text and the shell completion all take their lists from it, so a new format is one row.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/report.hpp"
#include "render/format_table.hpp"

namespace clprobe {

// A row: name (the --format value: text, md, json, html, csv, gbench), description, render.
using ReportFormat = OutputFormat<RunReport>;
using ReportRenderer = ReportFormat::Renderer;

// Every format, `text` first (the default).
std::span<const ReportFormat> report_formats();

// The row of a name from report_formats(); throws std::out_of_range for any other name (the CLI
// checks names against report_format_names() before they get here).
const ReportFormat& report_format(std::string_view name);

std::vector<std::string> report_format_names();

// "text (the terminal report), md (Markdown, for a ticket), ... or gbench (...)": for --help.
std::string report_formats_help();

}  // namespace clprobe
