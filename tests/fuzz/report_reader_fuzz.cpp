// Fuzz target: the report reader, and everything that runs on a report it accepts (rules,
// ranking, every renderer, compare). Whatever the bytes, clprobe must answer with a
// ReportFormatError or a report; a crash, a hang or an uncaught exception is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "compare/comparison.hpp"
#include "json/report_json.hpp"
#include "render/html_report.hpp"
#include "render/markdown_report.hpp"
#include "render/text_report.hpp"
#include "rules/analysis.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace clprobe;
    RunReport report;
    try {
        report = report_from_json_text(std::string_view(reinterpret_cast<const char*>(data), size));
    } catch (const ReportFormatError&) {
        return 0;
    }
    analyze(report);
    // A report the reader accepts must survive its own writer.
    const RunReport again = report_from_json_text(report_to_json_text(report));
    (void)render_text(again, {true, false});
    (void)render_markdown(again, {true});
    (void)render_html(again);
    (void)compare_reports(report, again);
    return 0;
}
