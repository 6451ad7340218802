// clprobe entry point: parse, dispatch, and map every failure to one line on stderr and a
// documented exit code (cli/exit_codes.hpp).
#include <fmt/core.h>

#include <new>

#include "cl/cl_error.hpp"
#include "cli/cli_app.hpp"
#include "cli/cli_common.hpp"
#include "cli/exit_codes.hpp"
#include "core/atomic_file.hpp"

int main(int argc, char** argv) {
    using namespace clprobe;
    for (int i = 0; i < argc; ++i)
        command_line().emplace_back(argv[i]);

    auto cli = make_cli_app();
    auto parsed = parse_cli(*cli, argc, argv);
    if (const int* code = std::get_if<int>(&parsed)) return *code;
    try {
        return std::get<CommandRunner>(parsed)();
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
