#pragma once
// How far this machine's figures move between runs, as the last `diagnose --passes N` (N >= 2) of
// a device measured it (docs/report-schema.md, "Passes"): kept in the user's cache folder, so a
// later `compare` of two single-pass reports of that device holds each change against the movement
// the machine is known to have, and says so, instead of calling every figure that moved by more
// than its own run's spread.
#include <optional>
#include <string>

#include "compare/between_runs.hpp"
#include "core/report.hpp"

namespace clprobe {

// The host, device, driver and run mode a movement is true of; from a saved report, so compare can
// look it up for the report it is given.
std::string movement_cache_key(const RunReport& report);

struct KnownMovement {
    BetweenRunNoise noise;  // known_from says where it was measured
    std::string path;
};

// The movement kept for `report`'s key, or nullopt: none kept, or an entry that cannot be used
// (`why` says what: unreadable, of another key).
std::optional<KnownMovement> load_known_movement(const RunReport& report, std::string& why);

// Keeps the movement between `report`'s passes for its key (written whole or not at all); "" or
// why it could not. Nothing is kept for a single pass.
std::string save_known_movement(const RunReport& report);

}  // namespace clprobe
