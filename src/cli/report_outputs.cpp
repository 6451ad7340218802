#include "cli/report_outputs.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "cli/cli_common.hpp"
#include "cli/launch_env.hpp"
#include "core/atomic_file.hpp"
#include "core/log.hpp"
#include "render/report_formats.hpp"

namespace clprobe {

namespace {

constexpr std::string_view save_type = "FORMAT=FILE";

// What is wrong with a --save value, or "" when nothing is: CLI11 prints it after "--save: ".
std::string save_problem(const std::string& spec) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos) return fmt::format("'{}' is not {} (e.g. md=report.md)", spec, save_type);
    const auto names = report_format_names();
    const std::string format = spec.substr(0, eq);
    if (std::find(names.begin(), names.end(), format) == names.end())
        return fmt::format("'{}': no format '{}' (one of {})", spec, format, fmt::join(names, ", "));
    if (eq + 1 == spec.size()) return fmt::format("'{}': no FILE after '='", spec);
    return "";
}

// "report written to r.json" as diagnose always said it; "MD report written to r.md" for the others.
std::string written_what(std::string_view format) {
    if (format == "json") return "report";
    std::string upper(format);
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
    return upper + " report";
}

}  // namespace

CLI::Option* ReportOutputs::add_save_option(CLI::App* cmd) {
    const CLI::Validator format_and_file([](std::string& spec) { return save_problem(spec); }, "", "FORMAT=FILE");
    return cmd
        ->add_option_function<std::vector<std::string>>(
            "--save",
            [this](const std::vector<std::string>& specs) {
                for (const auto& spec : specs) {
                    const auto eq = spec.find('=');
                    outputs_.push_back({spec.substr(0, eq), spec.substr(eq + 1)});
                }
            },
            "Also write the report as FORMAT to FILE; repeatable; FORMAT: " + report_formats_help())
        ->check(format_and_file)
        ->allow_extra_args(false)
        ->type_name(std::string(save_type));
}

CLI::Option* ReportOutputs::add_shorthand(CLI::App* cmd, const std::string& name, std::string format,
                                          const std::string& help) {
    return cmd->add_option_function<std::string>(
        name,
        [this, format](const std::string& path) {
            if (!path.empty()) outputs_.push_back({format, path});  // --json '' asked for nothing, as before
        },
        help);
}

void ReportOutputs::prepare(const LauncherEnv& launcher) {
    for (auto& output : outputs_)
        output.path = expand_output_placeholders(output.path, launcher);
    if (std::count_if(outputs_.begin(), outputs_.end(), [](const ReportOutput& o) { return o.path == "-"; }) > 1)
        throw UsageError("only one report can go to stdout ('-')");
    for (const auto& output : outputs_)
        if (output.path != "-") check_output_path(output.path);
}

std::optional<std::string> ReportOutputs::stdout_format() const {
    for (const auto& output : outputs_)
        if (output.path == "-") return output.format;
    return std::nullopt;
}

bool ReportOutputs::has_format(std::string_view format) const {
    return std::any_of(outputs_.begin(), outputs_.end(), [&](const ReportOutput& o) { return o.format == format; });
}

void ReportOutputs::write(const RunReport& report, RenderOptions options) const {
    options.color = false;  // a file is read later, elsewhere: --color is about the terminal
    for (const auto& output : outputs_) {
        if (output.path == "-") continue;
        write_file_atomically(output.path, report_format(output.format).render(report, options));
        Log::info("{} written to {}", written_what(output.format), output.path);
    }
}

}  // namespace clprobe
