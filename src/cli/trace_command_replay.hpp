#pragma once
// trace --replay N, after the program ends: the hottest captured kernels replayed on this device
// (src/replay), their what-if table in the report (probe trace.replay) and their measured
// findings ranked with the trace's own.
#include <vector>

#include "cli/trace_replay_options.hpp"
#include "core/report.hpp"
#include "replay/replay_result.hpp"
#include "trace/program_trace.hpp"

namespace clprobe {

// Each kernel's traced totals, by name, over every process of the job: device time summed over
// the launches the layer timed (sampled-out launches in the aggregates included), launch count,
// and its timed launches by shape, with each process's order of them (the replay's like-for-like
// reliability: replay_result's find_like_launches).
replay::ReplayContext replay_context_of(const std::vector<ProgramTrace>& processes, double wall_seconds);

// Replays up to o.replay_kernels captures under records_dir/replay (the longest traced first),
// adds the probe result trace.replay, then analyses the report again: its findings, the replay's
// among them (rules/replay_analysis), as `clprobe report` finds them in the saved report.
// Progress on stderr unless quiet.
void add_replays(RunReport& report, const std::vector<ProgramTrace>& processes, const std::string& records_dir,
                 const ReplayOptions& o, bool quiet);

}  // namespace clprobe
