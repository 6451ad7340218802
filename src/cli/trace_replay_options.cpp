#include "cli/trace_replay_options.hpp"

#include <fmt/core.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "cli/cli_common.hpp"
#include "core/atomic_file.hpp"
#include "core/byte_size.hpp"

namespace clprobe {

void add_replay_options(CLI::App* cmd, ReplayOptions& o) {
    cmd->add_option("--replay", o.replay_kernels,
                    "Capture kernel launches (one per kernel, its 1st, with its buffers before and after) so the "
                    "N kernels with the most device time can be replayed standalone; 0: off (default)")
        ->check(CLI::Range(0, 1000000));
    cmd->add_option("--capture-at", o.capture_at,
                    "Which launch of each kernel --replay or --work captures (default: the 1st with --replay, so "
                    "a kernel launched once is captured too; the 2nd with --work alone)")
        ->check(CLI::Range(1, 1000000));
    cmd->add_option("--replay-budget", o.budget,
                    "Bytes of buffer inputs plus outputs each process may capture for --replay (64K, 256M, 1G; "
                    "default 256M); a kernel past it is recorded as skipped with the reason");
}

void check_replay_options(ReplayOptions& o) {
    const auto size = parse_byte_size(o.budget);
    if (!size) throw UsageError(fmt::format("--replay-budget {}: not a size (64K, 256M, 1G, or bytes)", o.budget));
    if (*size == 0) throw UsageError(fmt::format("--replay-budget {}: must be more than 0", o.budget));
    o.budget_bytes = *size;
}

std::vector<std::string> prepare_replay(ReplayOptions& o, const std::string& records_dir) {
    if (!o.capturing()) return {};
    o.dir = records_dir + "/replay";
    std::error_code ec;
    std::filesystem::remove_all(o.dir, ec);
    if (ec) throw OutputError(fmt::format("--replay: cannot clear {}: {}", o.dir, ec.message()));
    // Private, as the records folder: the captures hold the program's buffers and sources.
    if (::mkdir(o.dir.c_str(), 0700) != 0)
        throw OutputError(fmt::format("--replay: cannot create {}: {}", o.dir, std::strerror(errno)));
    std::vector<std::string> env{"CLPROBE_REPLAY_DIR=" + o.dir, fmt::format("CLPROBE_REPLAY_BUDGET={}", o.budget_bytes),
                                 fmt::format("CLPROBE_REPLAY_AT={}", o.capture_launch())};
    // Counting a launch's work needs its inputs only: without --replay the outputs are not kept.
    if (!o.enabled()) env.emplace_back("CLPROBE_REPLAY_INPUTS_ONLY=1");
    return env;
}

}  // namespace clprobe
