// clprobe replay RECORDS_DIR: the kernels `clprobe trace --replay N` captured, replayed on this
// machine with measured what-ifs (docs/replay.md). Without the trace's totals it reports each
// kernel's what-if table with speed-ups, but no share of a wall time. Exit 2 when no capture in
// the folder is valid (README, "Exit codes").
#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <system_error>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "core/atomic_file.hpp"
#include "json/replay_json.hpp"
#include "render/replay_text.hpp"
#include "replay/replay_engine.hpp"

namespace clprobe {

namespace {

struct ReplayCommandOptions {
    std::string records_dir;
    std::size_t kernels = 0;
    std::string json_path;
};

int run_replay_command(const ReplayCommandOptions& o) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path dir(o.records_dir);
    if (!fs::is_directory(dir, ec)) throw UsageError(fmt::format("'{}' is not a folder", o.records_dir));
    if (!fs::is_directory(dir / "replay", ec))
        throw UsageError(
            fmt::format("'{}' holds no replay/ folder of captures (record them with `clprobe trace "
                        "--replay N`)",
                        o.records_dir));
    if (!o.json_path.empty()) check_output_path(o.json_path);
    replay::ReplayOptions options;
    options.max_kernels = o.kernels;
    options.progress = [](const std::string& line) { fmt::print(stderr, "clprobe: {}\n", line); };
    const replay::ReplayRun run = replay::run_replay(dir, {}, options);
    if (!o.json_path.empty())
        write_file_atomically(o.json_path, replay::replay_to_json(run.results, run.findings).dump(2) + "\n");
    fmt::print("{}", replay::replay_text(run.results, run.findings));
    // The table and the JSON are written either way (nothing is lost); a script still has to tell
    // a folder of broken captures from a replay that ran.
    const bool any_valid = std::any_of(run.results.begin(), run.results.end(), [](const replay::ReplayResult& r) {
        return r.status != replay::ReplayStatus::invalid;
    });
    if (!any_valid) {
        fmt::print(stderr, "clprobe: '{}' holds no valid capture ({} invalid): nothing was replayed\n", o.records_dir,
                   run.results.size());
        return exit_code::usage;
    }
    return exit_code::ok;
}

}  // namespace

CommandRunner add_replay_command(CLI::App& app) {
    auto opts = std::make_shared<ReplayCommandOptions>();
    CLI::App* cmd = app.add_subcommand(
        "replay",
        "Replay the kernels a trace captured (trace --replay N) with measured what-ifs: local sizes, build "
        "options, buffer placement, each with its outputs checked");
    cmd->add_option("RECORDS_DIR", opts->records_dir, "The trace's records folder (holding replay/)")->required();
    cmd->add_option("--kernels", opts->kernels, "Replay at most N captures, the longest traced first (default: all)")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--json", opts->json_path, "Also write the results as JSON (schema clprobe.replay) to FILE");
    return [opts] { return run_replay_command(*opts); };
}

}  // namespace clprobe
