#pragma once
// When a replayed what-if may be ranked (docs/replay.md, "When a what-if is ranked"): its speed-up
// measured side by side with the launch as captured, in a first round and an independent
// confirmation round, each with a bootstrap interval; and, where the kernel's times flip between
// two modes, its speed-up against the launch at its faster mode. Pure: the engine calls it to
// choose what to confirm, the findings and renderers to say what was measured, and `report`
// reaches the same verdicts from a saved report's samples.
#include <optional>
#include <string>

#include "core/speedup_stats.hpp"
#include "replay/replay_result.hpp"

namespace clprobe::replay {

// The smallest speed-up a what-if is ranked for, at the lower bound of each round's interval.
inline constexpr double min_replay_speedup = 1.1;
// Pairs whose reference fell in its fast mode that a bimodal kernel's verdict needs.
inline constexpr std::size_t min_fast_mode_pairs = 3;

struct VariantSpeedups {
    std::optional<SpeedupInterval> first;         // the first round's pairs
    std::optional<SpeedupInterval> confirmation;  // the confirmation round's pairs
    std::optional<SpeedupInterval> pooled;        // every pair: the figure a finding reports
    std::optional<SpeedupInterval> fast_mode;     // pairs whose reference fell in its fast mode
};

struct VariantVerdict {
    VariantSpeedups speedups;
    bool ranked = false;
    std::string why;  // one line: what ranked it, or what kept it from being ranked
    // The speed-up a finding states: pooled, or against the fast mode for a bimodal kernel.
    std::optional<SpeedupInterval> stated() const { return speedups.fast_mode ? speedups.fast_mode : speedups.pooled; }
};

// The two modes of the launch as captured, over every launch of it the replay timed.
std::optional<TimeModes> replay_modes(const ReplayResult& r);

// Whether a variant's first round gained enough to be confirmed: its lower bound at or above
// min_replay_speedup, outputs held.
bool worth_confirming(const VariantResult& v);

VariantVerdict judge_variant(const ReplayResult& r, const VariantResult& v);

// "5.30 ms (41 launches) and 10.4 ms (29)": both modes, for a reason or a table.
std::string modes_text(const TimeModes& m);
// "190 ns", "5.3 ms": a launch time in the unit that reads best.
std::string ns_text(double ns);
// "1.95x [1.80-2.10]"
std::string interval_text(const SpeedupInterval& s);

}  // namespace clprobe::replay
