// clprobe entry point: parse, dispatch, and map every failure to one line on stderr and a
// documented exit code (cli/exit_codes.hpp).
#include <fmt/core.h>

#include <new>

#include "cl/cl_error.hpp"
#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "core/atomic_file.hpp"
#include "core/version.hpp"

int main(int argc, char** argv) {
    using namespace clprobe;
    for (int i = 0; i < argc; ++i)
        command_line().emplace_back(argv[i]);

    CLI::App app{"clprobe: finds out why OpenCL work is slow on this machine", "clprobe"};
    app.set_version_flag("--version", tool_version);
    app.require_subcommand(1);
    const std::pair<std::string, CommandRunner> commands[] = {
        {"list", add_list_command(app)},         {"info", add_info_command(app)},
        {"diagnose", add_diagnose_command(app)}, {"report", add_report_command(app)},
        {"compare", add_compare_command(app)},
    };
    // CLI11 reports a stray word as a missing subcommand; name it instead.
    if (argc > 1 && argv[1][0] != '-') {
        const std::string word = argv[1];
        bool known = false;
        for (const auto& c : commands)
            known = known || c.first == word;
        if (!known) {
            fmt::print(stderr, "clprobe: unknown command '{}' (commands: list, info, diagnose, report, compare)\n",
                       word);
            return exit_code::usage;
        }
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        fmt::print(stderr, "clprobe: {}; run 'clprobe --help' for usage\n", e.what());
        return exit_code::usage;
    }

    try {
        for (const auto& [name, run] : commands)
            if (app.got_subcommand(name)) return run();
        return exit_code::usage;
    } catch (const UsageError& e) {
        fmt::print(stderr, "clprobe: {}\n", e.what());
        return exit_code::usage;
    } catch (const OutputError& e) {
        fmt::print(stderr, "clprobe: {}\n", e.what());
        return exit_code::output;
    } catch (const ClError& e) {
        fmt::print(stderr, "clprobe: {}\n", e.what());
        return exit_code::failure;
    } catch (const std::bad_alloc&) {
        fmt::print(stderr, "clprobe: out of memory\n");
        return exit_code::failure;
    } catch (const std::exception& e) {
        fmt::print(stderr, "clprobe: {}\n", e.what());
        return exit_code::failure;
    }
}
