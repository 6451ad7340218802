#pragma once
// The job's processes on the trace report's HTML page: one row each, under its parent, with how it
// ended, its lifetime, its OpenCL commands, its device time and its rank under an MPI launcher
// (the text report's process tree, render/trace_summary_text.cpp, says the same).
#include <string>

#include "core/trace_facts.hpp"

namespace clprobe::html {

// "" when the facts list no processes (reports from before processes were traced one by one).
std::string trace_processes_table(const TraceFacts& facts);

}  // namespace clprobe::html
