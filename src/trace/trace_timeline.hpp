#pragma once
// The traced program's timeline as Chrome trace-event JSON (Perfetto, chrome://tracing): one row
// per command queue with each command's device execution, and one host row per program thread
// with its waits, builds and enqueue calls. Times are microseconds from the child's start.
#include <nlohmann/json.hpp>

#include "trace/program_trace.hpp"
#include "trace/trace_analysis.hpp"

namespace clprobe {

nlohmann::json program_timeline(const ProgramTrace& trace, const ChildRun& run);

}  // namespace clprobe
