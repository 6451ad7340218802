#pragma once
// Replays captured kernel launches on this machine (docs/replay.md): the launch as captured, then
// what-ifs that keep the kernel's source (local sizes, build options, buffer placement), each timed
// by event profiling and its outputs checked against the captured ones. Never runs the user's
// program again: everything comes from the capture folder.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/report.hpp"
#include "replay/capture.hpp"
#include "replay/replay_result.hpp"

namespace clprobe::replay {

struct ReplayOptions {
    int samples = 7;              // timed launches per variant, after one untimed, checked launch
    std::size_t max_kernels = 0;  // replay at most this many captures (0: all), the longest traced first
    std::function<void(const std::string&)> progress;  // one line per step, for stderr; may be empty
    // The launch as captured, once, its outputs checked and not required to match (variants[0]
    // says how they compared); no timing, no variants, no bandwidth check. What `__count-work`
    // runs under Oclgrind, whose plugin counts the launch's work.
    bool launch_only = false;
    // Non-empty: the first device of the platform of this name, not the device the capture names.
    std::string platform;
    // Appended to the captured build options of the launch as captured (launch_only counting:
    // -cl-opt-disable where the simulator lacks an intrinsic its optimiser formed).
    std::string extra_build_options;
};

// One capture folder, as read, replayed on the device it names (platform and device name).
ReplayResult replay_capture(const CaptureLoad& load, const ReplayOptions& options);

// What the trace command calls after the program ends, and `clprobe replay` without totals:
// the captures under <records_dir>/replay, replayed, each judged reliable against `context`'s
// totals for its kernel, and the findings of the reliable ones ranked among themselves.
struct ReplayRun {
    std::vector<ReplayResult> results;
    std::vector<Finding> findings;  // trace.replay.*: gains are shares of context.wall_ns
};
ReplayRun run_replay(const std::filesystem::path& records_dir, const ReplayContext& context,
                     const ReplayOptions& options);

}  // namespace clprobe::replay
