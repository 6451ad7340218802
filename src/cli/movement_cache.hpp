#pragma once
// How far this machine's figures move between runs, as its last runs measured it
// (docs/report-schema.md, "Passes"): every complete `diagnose` of the shipped kernels keeps its
// first pass's results in the user's cache folder (the last few runs of one host, device, driver
// and set of options), so a later `compare` of that configuration holds each change against the
// movement between those separate runs, and says so: a single-pass report would otherwise call every
// figure that moved by more than its own run's spread, and passes of one run meet one state of the
// machine (docs/report-schema.md, "Passes").
#include <optional>
#include <string>

#include "compare/between_runs.hpp"
#include "core/report.hpp"

namespace clprobe {

// The host, device (and its compute units), driver and options (mode, layers, workloads, shapes, probe selection; not
// the pass count or the prices) a movement is true of; from a saved report, so compare can look it up for the report it
// is given.
std::string movement_cache_key(const RunReport& report);

// How many earlier runs are kept, and how many a known movement needs.
inline constexpr std::size_t movement_runs_kept = 6;
inline constexpr std::size_t movement_runs_needed = 3;

// The movement between the kept runs of `report`'s key, `report` itself left out, with known_from
// saying which runs; nullopt: too few kept, or an entry that cannot be used (`why` says what).
std::optional<BetweenRunNoise> load_known_movement(const RunReport& report, std::string& why);

// Keeps `report`'s first pass for its key, the oldest beyond movement_runs_kept dropped (written
// whole or not at all); "" or why it could not.
std::string remember_run(const RunReport& report);

}  // namespace clprobe
