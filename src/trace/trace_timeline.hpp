#pragma once
// The traced program's timeline as Chrome trace-event JSON (Perfetto, chrome://tracing): one row
// per command queue with each command's device execution, and one host row per program thread
// with its waits, builds and enqueue calls. Times are microseconds from the child's start.
#include <functional>
#include <string>
#include <string_view>

#include "trace/program_trace.hpp"
#include "trace/trace_analysis.hpp"

namespace clprobe {

// The timeline's JSON text, one line, handed to `sink` in pieces of about a MiB. Event by event:
// as one JSON document, a million-command trace's timeline took 2 GB of heap and its text another
// 0.75 GB before a byte was written.
void write_program_timeline(const ProgramTrace& trace, const ChildRun& run,
                            const std::function<void(std::string_view)>& sink);
// The whole text at once (tests, the fuzzer).
std::string program_timeline_text(const ProgramTrace& trace, const ChildRun& run);

}  // namespace clprobe
