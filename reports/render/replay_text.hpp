#pragma once
// The replay's what-if table per kernel, as text (docs/replay.md). Pure.
#include <string>
#include <vector>

#include "core/report.hpp"
#include "replay/replay_result.hpp"

namespace clprobe::replay {

// One block per capture: status, reliability, then each variant's median, spread, samples,
// speed-up over the launch as captured and output check; a variant that changes the answer is
// marked "changed, not ranked". With `context` totals, the findings follow with their share.
std::string replay_text(const std::vector<ReplayResult>& results, const std::vector<Finding>& findings);

}  // namespace clprobe::replay
