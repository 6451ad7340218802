#pragma once
// Measured what-ifs of replayed kernels as ranked trace findings (docs/findings.md, "Replay
// findings"): trace.replay.local_size, trace.replay.build_options, trace.replay.placement. Pure.
#include <optional>
#include <vector>

#include "core/report.hpp"
#include "replay/replay_result.hpp"

namespace clprobe::replay {

inline constexpr const char* local_size_finding = "trace.replay.local_size";
inline constexpr const char* build_options_finding = "trace.replay.build_options";
inline constexpr const char* placement_finding = "trace.replay.placement";
inline constexpr const char* binary_cache_finding = "trace.replay.binary_cache";

// A variant may be ranked: it ran, its outputs are identical or within tolerance, and it is faster.
bool rankable(const VariantResult& v);

// t_variant / t_as_captured of medians; nullopt when either did not run.
std::optional<double> time_ratio(const VariantResult& reference, const VariantResult& v);

// The kernel's traced device time saved by the variant, as a share of the program's wall time:
// totals.device_ns x (1 - t_variant / t_as_captured) / wall_ns. nullopt without a positive wall time.
std::optional<double> wall_share(const KernelTotals& totals, double ratio, std::optional<double> wall_ns);

// One finding per kind of variant for every reliable replay whose kernel has totals in `context`
// and whose gain is at least 1% of the wall time: the fastest variant its verdict ranked
// (rules/replay_verdict: side by side, confirmed), ranked; else the fastest that looked at least
// min_replay_speedup faster, as a note saying why it was not ranked. Unreliable or unreproducible
// replays give nothing. A note (trace.replay.binary_cache, no gain) where building the program
// here took longer than the kernel's whole traced device time: the build dominates.
std::vector<Finding> replay_findings(const std::vector<ReplayResult>& results, const ReplayContext& context);

// A measured change beats a heuristic that proposes it. Each trace finding that proposes a change
// a replay of its kernel measured (trace.kernel.no_local_size: a local size) is, by the variants of
// that kind whose outputs held: confirmed when one's verdict ranks it (the finding carries the
// measured factor and the replay's evidence); disproved when none reached min_replay_speedup even
// at the upper bound of its interval (shown as "measured: no gain", never ranked); else left to
// stand, marked "measured: inconclusive". Findings whose change no replay measured are left as they are.
void judge_heuristics(std::vector<Finding>& findings, const std::vector<ReplayResult>& results);

}  // namespace clprobe::replay
