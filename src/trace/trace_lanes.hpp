#pragma once
// The traced program's timeline, condensed for the HTML page: one lane per command queue (each
// command's device execution) and one per host thread and activity ("activity": its waits, builds
// or enqueue calls, so that no kind is merged into another), as
// spans [start, end, kind, name] in seconds from the child's start. Neighbouring spans of one kind
// closer than the page can show are merged, so a program of a million commands still gives at most
// max_spans_per_lane spans a lane. Stored in trace.program's attributes ("timeline").
#include <cstddef>

#include <nlohmann/json.hpp>

#include "trace/program_trace.hpp"
#include "trace/trace_analysis.hpp"

namespace clprobe {

inline constexpr std::size_t max_spans_per_lane = 1500;

nlohmann::json timeline_lanes(const ProgramTrace& trace, const ChildRun& run);

}  // namespace clprobe
