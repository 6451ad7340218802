#include "cli/cli_app.hpp"

#include <fmt/core.h>

#include "cli/cli_common.hpp"
#include "cli/exit_codes.hpp"
#include "runtime/provenance_query.hpp"

namespace clprobe {

namespace {

std::string version_text(const Provenance& p) {
    std::string out = fmt::format("clprobe {}", p.clprobe_version);
    for (const auto& [id, value] : provenance_fields(p))
        if (id != "clprobe_version") out += fmt::format("\n{:<22} {}", id, value);
    return out;
}

}  // namespace

std::unique_ptr<CliApp> make_cli_app() {
    auto cli = std::make_unique<CliApp>();
    // The first line stays "clprobe X.Y.Z" (help2man and scripts read it); the provenance follows.
    cli->app.set_version_flag("--version", [] { return version_text(current_provenance()); });
    cli->app.require_subcommand(1);
    // Global options (--color) also after the command: `clprobe report F --color=always`.
    cli->app.fallthrough();
    add_color_option(cli->app);
    cli->commands = {
        {"list", add_list_command(cli->app)},           {"info", add_info_command(cli->app)},
        {"diagnose", add_diagnose_command(cli->app)},   {"report", add_report_command(cli->app)},
        {"compare", add_compare_command(cli->app)},     {"trace", add_trace_command(cli->app)},
        {"fleet", add_fleet_command(cli->app)},         {"replay", add_replay_command(cli->app)},
        {"capture", add_capture_command(cli->app)},     {"__probe-child", add_probe_child_command(cli->app)},
        {"__prebuild", add_prebuild_command(cli->app)}, {"__count-work", add_count_work_command(cli->app)},
    };
    return cli;
}

std::variant<CommandRunner, int> parse_cli(CliApp& cli, int argc, const char* const* argv) {
    // CLI11 reports a stray word as a missing subcommand; name it instead.
    if (argc > 1 && argv[1][0] != '-') {
        const std::string word = argv[1];
        bool known = false;
        for (const auto& c : cli.commands)
            known = known || c.first == word;
        if (!known) {
            fmt::print(stderr,
                       "clprobe: unknown command '{}' (commands: list, info, diagnose, report, compare, trace, fleet, "
                       "capture, replay)\n",
                       word);
            return exit_code::usage;
        }
    }
    try {
        cli.app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return cli.app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return cli.app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return cli.app.exit(e);
    } catch (const CLI::ParseError& e) {
        fmt::print(stderr, "clprobe: {}; run 'clprobe --help' for usage\n", e.what());
        return exit_code::usage;
    }
    for (const auto& [name, run] : cli.commands)
        if (cli.app.got_subcommand(name)) return run;
    return exit_code::usage;
}

}  // namespace clprobe
