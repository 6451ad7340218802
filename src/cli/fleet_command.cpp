// clprobe fleet REPORT...: many nodes' reports of one device type side by side; which nodes are
// outside the fleet's noise band, and what in their environment differs (docs/fleet.md).
#include <fmt/core.h>

#include <memory>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "fleet/fleet_files.hpp"
#include "render/fleet_formats.hpp"

namespace clprobe {

namespace {

struct FleetCliOptions {
    std::vector<std::string> reports;
    std::string format = "text";  // a name from fleet_formats(); --json, --html and --md set it too
    bool fail_on_outlier = false;
    bool verbose = false;
};

int run_fleet(const FleetCliOptions& o) {
    const FleetAnalysis f = analyze_fleet_files(o.reports);
    if (f.nodes < 2) {
        std::string why;
        for (const auto& u : f.unpaired)
            why += fmt::format("; {}", u.reason);
        throw UsageError(
            fmt::format("fleet needs two or more readable reports of one device; {} of the {} given "
                        "qualify{}",
                        f.nodes, o.reports.size(), why));
    }
    // Colour (--color) is for the terminal view only.
    fmt::print("{}", fleet_formats().find(o.format).render(f, {o.verbose, o.format == "text" && color_stdout()}));
    if (o.fail_on_outlier && f.worse_outliers() > 0) {
        std::string names;
        for (const auto& n : f.outliers)
            if (n.worse) names += (names.empty() ? "" : ", ") + n.node;
        fmt::print(stderr, "clprobe: {} node(s) worse than the fleet beyond its noise band: {}\n", f.worse_outliers(),
                   names);
        return exit_code::outlier;
    }
    return exit_code::ok;
}

}  // namespace

CommandRunner add_fleet_command(CLI::App& app) {
    auto opts = std::make_shared<FleetCliOptions>();
    CLI::App* cmd = app.add_subcommand(
        "fleet", "Compare many nodes' reports: the fleet's spread, outlier nodes and what differs on them");
    cmd->add_option("reports", opts->reports, "Saved reports, one per node or rank (two or more)")->required();
    auto* format = cmd->add_option("--format", opts->format, "Print the fleet as " + fleet_formats().help())
                       ->check(CLI::IsMember(fleet_formats().names()))
                       ->capture_default_str();
    // Shorthands for --format, kept for the scripts that use them; no two of them together.
    auto shorthand = [&](const char* flag, std::string name, const char* help) {
        return cmd
            ->add_flag_callback(
                flag, [opts, name] { opts->format = name; }, help)
            ->excludes(format);
    };
    auto* json = shorthand("--json", "json", "Print the fleet analysis as JSON (docs/fleet.schema.json)");
    auto* html = shorthand("--html", "html", "Print a self-contained HTML page");
    auto* md = shorthand("--md", "md", "Print Markdown");
    json->excludes(html)->excludes(md);
    html->excludes(md);
    cmd->add_flag("--fail-on-outlier", opts->fail_on_outlier,
                  "Exit with code 5 when a node is worse than the fleet beyond the noise band (scheduler prologs)");
    cmd->add_flag("-v,--verbose", opts->verbose, "Name every node of a finding present on only some nodes");
    return [opts] { return run_fleet(*opts); };
}

}  // namespace clprobe
