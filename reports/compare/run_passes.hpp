#pragma once
// The passes of one run (`diagnose --passes N`, RunReport::passes) as compare uses them: each a
// further run of the report's machine and build, and, pooled, how far its figures moved from one
// pass to the next.
#include <optional>
#include <string>
#include <vector>

#include "compare/between_runs.hpp"
#include "core/report.hpp"

namespace clprobe {

// Passes 2..N of `report`, each a report of its own (pass_as_report); empty for a single pass.
std::vector<RunReport> further_pass_reports(const RunReport& report);

// Why `report`'s passes cannot stand for further runs of its device: a pass that names another
// device (a hand-merged file), or nullopt when they can.
std::optional<std::string> foreign_pass(const RunReport& report);

// How far the figures moved between the report's passes (pass 1 included); nullopt for a report
// of one pass.
std::optional<BetweenRunNoise> movement_between_passes(const RunReport& report);

}  // namespace clprobe
