#pragma once
// The report files a command writes when its run ends, in any format of the report format table
// (render/report_formats.hpp). `--save FORMAT=FILE` (repeatable) and a command's shorthands
// (--json FILE, --html FILE, trace's -o FILE) feed one list, which is expanded ({host}, {rank})
// and checked before the run, so a path that cannot be written fails before a long run, and
// written after it, each file whole or not at all.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/launcher_env.hpp"
#include "core/report.hpp"
#include "render/render_options.hpp"

namespace clprobe {

struct ReportOutput {
    std::string format;  // a name from report_format_names()
    std::string path;    // "-": stdout, where the command allows it
};

class ReportOutputs {
  public:
    // --save FORMAT=FILE, repeatable; CLI11 refuses a format not in the table, or no '=' (exit 2).
    CLI::Option* add_save_option(CLI::App* cmd);
    // An option NAME FILE that stands for --save FORMAT=FILE.
    CLI::Option* add_shorthand(CLI::App* cmd, const std::string& name, std::string format, const std::string& help);

    // Placeholders expanded, at most one output on stdout ('-'), every file's folder writable.
    // Throws UsageError or OutputError.
    void prepare(const LauncherEnv& launcher);

    // The format that goes to stdout ('-') instead of the command's default, if one does.
    std::optional<std::string> stdout_format() const;
    bool has_format(std::string_view format) const;

    // Every output but the stdout one, atomically and without colour, each with "... written to
    // FILE" on stderr. Throws OutputError at the first file that cannot be written.
    void write(const RunReport& report, RenderOptions options) const;

  private:
    std::vector<ReportOutput> outputs_;
};

}  // namespace clprobe
