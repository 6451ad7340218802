// clprobe fleet REPORT...: many nodes' reports of one device type side by side; which nodes are
// outside the fleet's noise band, and what in their environment differs (docs/fleet.md).
#include <fmt/core.h>

#include <memory>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "fleet/fleet_files.hpp"
#include "fleet/rank_analysis.hpp"
#include "render/fleet_formats.hpp"
#include "render/rank_text.hpp"

namespace clprobe {

namespace {

struct FleetCliOptions {
    std::vector<std::string> reports;
    std::string format = "text";  // a name from fleet_formats(); --json, --html and --md set it too
    bool fail_on_outlier = false;
    bool verbose = false;
};

// Trace reports, one per rank of a traced job: the ranks side by side and the slow one explained.
int run_ranks(const FleetCliOptions& o, FleetFiles files) {
    if (files.ranks.size() < 2)
        throw UsageError(fmt::format("fleet needs two or more readable reports; {} of the {} given qualify",
                                     files.ranks.size(), o.reports.size()));
    const RankAnalysis a = analyze_ranks(std::move(files.ranks), std::move(files.unpaired));
    fmt::print("{}", rank_formats().find(o.format).render(a, {o.verbose, o.format == "text" && color_stdout()}));
    if (o.fail_on_outlier && !a.findings.empty()) {
        fmt::print(stderr, "clprobe: rank {} is slower than the other ranks beyond the threshold\n",
                   a.findings.front().rank);
        return exit_code::outlier;
    }
    return exit_code::ok;
}

int run_fleet(const FleetCliOptions& o) {
    FleetFiles files = read_fleet_files(o.reports);
    if (!files.ranks.empty() && !files.nodes.empty())
        throw UsageError(fmt::format(
            "fleet compares either diagnose reports (nodes) or trace reports (ranks of one job), not both: {} "
            "diagnose and {} trace report(s) given (e.g. {} and {})",
            files.nodes.size(), files.ranks.size(), files.nodes.front().source, files.ranks.front().source));
    if (!files.ranks.empty()) return run_ranks(o, std::move(files));
    const FleetAnalysis f = analyze_fleet(std::move(files.nodes), std::move(files.unpaired));
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
                  "Exit with code 5 when a node is worse than the fleet beyond the noise band (scheduler prologs), or, "
                  "over trace reports, when a rank is slow (fleet.rank.slow)");
    cmd->add_flag("-v,--verbose", opts->verbose, "Name every node of a finding present on only some nodes");
    return [opts] { return run_fleet(*opts); };
}

}  // namespace clprobe
