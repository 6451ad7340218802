#include "render/report_formats.hpp"

#include <stdexcept>

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

}  // namespace

std::span<const ReportFormat> report_formats() {
    return formats;
}

const ReportFormat& report_format(std::string_view name) {
    for (const auto& f : formats)
        if (f.name == name) return f;
    throw std::out_of_range("no report format '" + std::string(name) + "'");
}

std::vector<std::string> report_format_names() {
    std::vector<std::string> names;
    for (const auto& f : formats)
        names.emplace_back(f.name);
    return names;
}

std::string report_formats_help() {
    std::string out;
    for (std::size_t i = 0; i < std::size(formats); ++i) {
        if (i > 0) out += i + 1 == std::size(formats) ? " or " : ", ";
        out += std::string(formats[i].name) + " (" + std::string(formats[i].description) + ")";
    }
    return out;
}

}  // namespace clprobe
