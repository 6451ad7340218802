#pragma once
// `clprobe trace --replay N --replay-budget SIZE` (docs/trace.md, "Capture for replay"): the
// options, and what the layer needs to capture kernel launches for clprobe's replay: the folder
// <records>/replay and its environment (src/layer/replay_capture.hpp reads it).
#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace clprobe {

struct ReplayOptions {
    // --replay N: how many of the hottest kernels (by traced device time) clprobe replays after the
    // program; 0 (the default) captures nothing. The layer captures every distinct kernel that fits
    // the budget; the choice of N among them is made from the trace.
    int replay_kernels = 0;
    std::string budget = "256M";     // --replay-budget, as given
    std::uint64_t budget_bytes = 0;  // parsed by check_replay_options
    std::string dir;                 // <records>/replay once prepared
    // --capture-at K: which launch of each kernel the layer captures. 0 (not given): the 1st with
    // --replay, so a hot kernel launched once (darktable launches each of its kernels once per
    // image) is captured too; the 2nd for --work alone, whose inputs-only captures count work.
    int capture_at = 0;
    int capture_launch() const { return capture_at > 0 ? capture_at : enabled() ? 1 : 2; }
    // --work counts the hottest kernels from the same captures: the layer captures for it too.
    bool capture_for_work = false;
    bool enabled() const { return replay_kernels > 0; }
    bool capturing() const { return enabled() || capture_for_work; }
};

void add_replay_options(CLI::App* cmd, ReplayOptions& o);

// Bad values: UsageError with one line (exit 2). Before anything runs.
void check_replay_options(ReplayOptions& o);

// With replay on: <records>/replay made empty (captures of an earlier trace in a --records
// folder removed), and the layer's environment; nothing when off. Throws OutputError when the
// folder cannot be made.
std::vector<std::string> prepare_replay(ReplayOptions& o, const std::string& records_dir);

}  // namespace clprobe
