#include "render/report_formats.hpp"

#include "json/report_json.hpp"
#include "render/csv_export.hpp"
#include "render/gbench_export.hpp"
#include "render/html_report.hpp"
#include "render/markdown_report.hpp"
#include "render/text_report.hpp"

namespace clprobe {

namespace {

// The report itself; no option changes the interchange format.
std::string render_json(const RunReport& report, const RenderOptions&) {
    return report_to_json_text(report);
}

constexpr ReportFormat formats[] = {
    {"text", "the terminal report", render_text},
    {"md", "Markdown, for a ticket", render_markdown},
    {"json", "the report itself, for `report` and `compare`", render_json},
    {"html", "one self-contained page with charts", render_html},
    {"csv", "one row per measurement", render_csv},
    {"gbench", "google-benchmark JSON, for its compare.py", render_gbench},
};

constexpr FormatTable<RunReport> table(formats, "report");

}  // namespace

std::span<const ReportFormat> report_formats() {
    return table.rows();
}

const ReportFormat& report_format(std::string_view name) {
    return table.find(name);
}

std::vector<std::string> report_format_names() {
    return table.names();
}

std::string report_formats_help() {
    return table.help();
}

}  // namespace clprobe
