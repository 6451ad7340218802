#pragma once
// The text report's summary of a traced program: how it ended, where its wall time went stage by
// stage, its heaviest kernels and its transfers. Empty for reports that are not trace reports.
#include <string>
#include <vector>

#include "core/report.hpp"
#include "core/trace_facts.hpp"

namespace clprobe {

std::string render_trace_summary(const RunReport& report);

// Shared with the HTML page (render/html_trace_summary.cpp), so both say it the same way:
// "exit code 0", "killed by signal 9"; and what a stage of the wall time is, in words.
std::string run_ending(const ProgramRunFacts& run);
std::string stage_words(AppStage stage);
// How a process of the job ended: "exit 0", "CRASHED signal 6", "STILL RUNNING".
std::string process_ending(const ProcessFacts& p);
// How deep `p` sits under the other processes listed (its parent's depth + 1; 0 for the top).
int process_depth(const std::vector<ProcessFacts>& processes, const ProcessFacts& p);

}  // namespace clprobe
