#pragma once
// The replay's what-if table per kernel, as text (docs/replay.md), and the cells the HTML report
// shows of the same table. Pure.
#include <string>
#include <vector>

#include "core/report.hpp"
#include "replay/replay_result.hpp"

namespace clprobe::replay {

// One block per capture: status, reliability, then each variant's median, spread, samples,
// speed-up over the launch as captured and output check; a variant that changes the answer is
// marked "changed, not ranked". With `context` totals, the findings follow with their share.
std::string replay_text(const std::vector<ReplayResult>& results, const std::vector<Finding>& findings);

// One row of a replayed capture's what-if table, as the text and HTML tables print it.
// speedup: the stated speed-up side by side with its 95% interval ("1.95x [1.80-2.10]");
// verdict: "ranked", or why not in a few words ("within noise", "not confirmed", "bimodal").
struct WhatIfRow {
    std::string what_if, variant, median, spread, samples, speedup, outputs, verdict;
};
std::vector<WhatIfRow> what_if_rows(const ReplayResult& r);
// "Replay of `k` (capture 12-0, pid 12) on P / D", the block's heading.
std::string replay_heading(const ReplayResult& r);
// The line under it: the status and reason of a capture not replayed, else its reliability.
std::string replay_verdict(const ReplayResult& r);
// Lines under the table: the two modes of a bimodal kernel, and each variant's verdict in full.
std::vector<std::string> replay_notes(const ReplayResult& r);

// The what-if tables of a saved report's trace.replay section (empty without one), for the text
// report: with `-q -o FILE` or a saved report read back, this is where the table is.
std::string replay_section_text(const RunReport& report);

}  // namespace clprobe::replay
