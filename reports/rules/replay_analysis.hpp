#pragma once
// The replay's findings of a trace report, from its trace.replay section (docs/replay.md): what the
// trace command adds after its replay, and what `clprobe report` adds again from a saved report, by
// one path, so both reach the same findings. Pure.
#include "core/report.hpp"

namespace clprobe::replay {

// Where the report holds a trace.replay result: its measured what-ifs as findings (replay_findings,
// against the traced program's kernel totals and wall time) appended to report.findings, and the
// heuristics a replay measured confirmed or disproved (judge_heuristics). Before classification
// and ranking. Nothing otherwise.
void add_replay_findings(RunReport& report);

}  // namespace clprobe::replay
