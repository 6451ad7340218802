#pragma once
// Each subcommand registers its options on the CLI11 app and returns the function to run after
// parsing; main() runs the one the user chose.
#include <functional>

#include <CLI/CLI.hpp>

namespace clprobe {

using CommandRunner = std::function<int()>;

CommandRunner add_list_command(CLI::App& app);
CommandRunner add_info_command(CLI::App& app);
CommandRunner add_diagnose_command(CLI::App& app);
CommandRunner add_report_command(CLI::App& app);
CommandRunner add_compare_command(CLI::App& app);
CommandRunner add_trace_command(CLI::App& app);
CommandRunner add_fleet_command(CLI::App& app);
// `clprobe replay RECORDS_DIR`: captured kernels replayed with measured what-ifs (cli/replay_command.cpp).
CommandRunner add_replay_command(CLI::App& app);
// `clprobe capture open|close`: a window of a dormant trace (cli/trace_capture.cpp).
CommandRunner add_capture_command(CLI::App& app);
// Hidden: the child side of an isolated probe (runtime/probe_isolation.hpp).
CommandRunner add_probe_child_command(CLI::App& app);
// Hidden: one builder of kernel programs ahead of diagnose's device probes (runtime/program_prebuild.hpp).
CommandRunner add_prebuild_command(CLI::App& app);
// Hidden: counts one captured launch's work under Oclgrind (cli/trace_command_work.hpp).
CommandRunner add_count_work_command(CLI::App& app);

}  // namespace clprobe
