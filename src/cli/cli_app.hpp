#pragma once
// The command-line grammar, apart from main(): main() runs what it parses, and the option-parsing
// fuzz target (tests/fuzz) parses without running.
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"

namespace clprobe {

struct CliApp {
    CLI::App app{"clprobe: finds out why OpenCL work is slow on this machine", "clprobe"};
    std::vector<std::pair<std::string, CommandRunner>> commands;
};

std::unique_ptr<CliApp> make_cli_app();

// The runner of the chosen command, or the exit code to return at once (help and version are
// printed on stdout, errors as one line on stderr).
std::variant<CommandRunner, int> parse_cli(CliApp& cli, int argc, const char* const* argv);

}  // namespace clprobe
