#pragma once
// The ranks of one job, each traced on its own (`mpirun -np N clprobe trace --json 'r-{rank}.json'
// -- app`), side by side: per rank its wall time, device busy, kernel, transfer and host-wait time;
// the slowest rank against the median of the others, and which of its kernels, transfers and host
// waits account for the difference (finding fleet.rank.slow). Pure; docs/fleet.md has the rule.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fleet/fleet_analysis.hpp"
#include "fleet/rank_summary.hpp"

namespace clprobe {

struct RankOptions {
    // A rank is slow when it exceeds the median of the other ranks by more than both of these: a
    // share of that median, and the other ranks' own spread (mad_k x 1.4826 MAD, from 3 of them).
    double min_relative = 0.10;
    double mad_k = 3.5;
};

struct RankFigures {
    std::string rank, source, host, device;
    double wall_seconds = 0;
    double device_busy_seconds = 0;  // kernel + transfer stages
    double kernel_seconds = 0, transfer_seconds = 0, build_seconds = 0, host_wait_seconds = 0;
    double device_idle_seconds = 0, host_only_seconds = 0;
    double opencl_seconds = 0;  // kernel + transfer + build + host wait (RankSummary::opencl_seconds)
    std::uint64_t opencl_commands = 0, host_waits = 0;
};

// One part of the slow rank's time against the other ranks' median of the same part.
struct RankCause {
    std::string kind;  // "stage" (a stage of the wall time), "kernel", "transfer" or "host_wait"
    std::string name;  // the stage, the kernel, the transfer kind ("h2d pageable"); "" for host_wait
    double seconds = 0, reference_seconds = 0;
    double count = 0, reference_count = 0;  // launches, transfers or waits (the reference a median)
    double excess_seconds() const { return seconds - reference_seconds; }
};

struct SlowRank {
    std::string rank, source;
    // "wall_time": it ran longest. "opencl_time": every rank's wall time is alike (the job
    // synchronises its ranks) but this one spent the most time on its OpenCL work or waiting for it.
    std::string basis;
    double value = 0, reference = 0;  // its seconds on the basis, and the other ranks' median
    double threshold = 0;             // the excess past which it is called slow
    bool slow = false;                // value - reference > threshold: the finding fires
    std::vector<RankCause> stages;    // every stage, largest excess first
    std::vector<RankCause> causes;    // kernels, transfers and host waits with a positive excess, largest first
    double excess() const { return value - reference; }
    double relative() const { return reference > 0 ? value / reference - 1 : 0; }
};

struct RankFinding {
    std::string id;  // fleet.rank.slow
    std::string rank, source;
    std::string title;
    std::vector<std::string> evidence;
};

struct RankAnalysis {
    RankOptions options;
    std::vector<RankFigures> ranks;          // in rank order (numeric where the ranks are numbers)
    RankFigures median;                      // each figure's median over the ranks (rank "median")
    std::optional<int> size;                 // the ranks the launcher announced, when the reports agree
    std::vector<std::string> missing_ranks;  // 0..size-1 without a report
    std::optional<SlowRank> slowest;         // from two ranks on
    std::vector<RankFinding> findings;
    std::vector<UnpairedReport> unpaired;
};

RankAnalysis analyze_ranks(std::vector<RankSummary> ranks, std::vector<UnpairedReport> unpaired,
                           const RankOptions& options = {});

}  // namespace clprobe
