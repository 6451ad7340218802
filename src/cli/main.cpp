// clprobe entry point: parse, dispatch, and map every failure to one line on stderr and a
// documented exit code (cli/exit_codes.hpp).
#include <fmt/core.h>

#include <csignal>
#include <new>
#include <system_error>

#include "cl/cl_error.hpp"
#include "cli/cli_app.hpp"
#include "cli/cli_common.hpp"
#include "cli/exit_codes.hpp"
#include "cli/stdout_check.hpp"
#include "core/atomic_file.hpp"

namespace {

// Runs the chosen command and maps every exception to one line on stderr and an exit code.
int run_command(const clprobe::CommandRunner& run) {
    using namespace clprobe;
    try {
        return run();
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
    } catch (const std::system_error& e) {
        // fmt::print throws when stdout refuses a large write: finish_stdout names that failure.
        if (!stdout_failed()) {
            fmt::print(stderr, "clprobe: {}\n", e.what());
            return exit_code::failure;
        }
        note_stdout_error(e.code().value());
        return exit_code::output;
    } catch (const std::exception& e) {
        fmt::print(stderr, "clprobe: {}\n", e.what());
        return exit_code::failure;
    }
}

}  // namespace

int main(int argc, char** argv) {
    using namespace clprobe;
    // A closed pipe or FIFO then fails the write with EPIPE, which ends in exit code 3 and one
    // line, instead of killing clprobe before it can say so. `trace` restores the default for
    // the program it runs (probes/trace/program_runner.cpp): an ignored signal survives exec.
    std::signal(SIGPIPE, SIG_IGN);
    for (int i = 0; i < argc; ++i)
        command_line().emplace_back(argv[i]);

    auto cli = make_cli_app();
    auto parsed = parse_cli(*cli, argc, argv);
    // Help and version go to stdout too.
    if (const int* code = std::get_if<int>(&parsed)) return finish_stdout(*code);
    return finish_stdout(run_command(std::get<CommandRunner>(parsed)));
}
