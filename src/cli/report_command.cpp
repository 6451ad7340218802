// clprobe report FILE: re-analyse a saved report with the current rules, without OpenCL, and
// render it as text, Markdown, JSON or HTML, or export its measurements as CSV or google-benchmark JSON.
#include <fmt/core.h>

#include <memory>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "json/report_json.hpp"
#include "render/report_formats.hpp"
#include "rules/analysis.hpp"

namespace clprobe {

namespace {

struct ReportOptions {
    std::string file;
    std::string format = "text";
    bool verbose = false;
};

int run_report(const ReportOptions& o) {
    RunReport report = load_report(o.file);
    analyze(report);  // today's rules (and trust notes) on yesterday's measurements
    fmt::print("{}", report_format(o.format).render(report, {o.verbose, color_stdout()}));
    return exit_code::ok;
}

}  // namespace

CommandRunner add_report_command(CLI::App& app) {
    auto opts = std::make_shared<ReportOptions>();
    CLI::App* cmd =
        app.add_subcommand("report", "Re-analyse a saved JSON report with the current rules (no OpenCL needed)");
    cmd->add_option("file", opts->file, "Report written by `clprobe diagnose --json`")->required();
    cmd->add_option("--format", opts->format, report_formats_help())
        ->check(CLI::IsMember(report_format_names()))
        ->capture_default_str();
    cmd->add_flag("-v,--verbose", opts->verbose, "Show every measurement");
    return [opts] { return run_report(*opts); };
}

}  // namespace clprobe
