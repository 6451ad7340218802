#pragma once
// The patterns the trace rules look for, counted over a ProgramTrace: waits after kernels, builds
// of the same source, allocations inside the command loop, the device-memory peak.
#include "core/trace_facts.hpp"
#include "trace/device_clock.hpp"
#include "trace/program_trace.hpp"
#include "trace/trace_analysis.hpp"

namespace clprobe {

ProgramRunFacts run_facts(const ProgramTrace& trace, const ChildRun& run);
// A kernel counts as followed by a wait when the thread that enqueued it blocked (clFinish,
// clWaitForEvents, a blocking call) before the next kernel was enqueued on its queue.
SyncFacts sync_facts(const ProgramTrace& trace, const AlignedTimes& aligned);
BuildFacts build_facts(const ProgramTrace& trace);
// "In the loop": created after the program's first command and released before its last one.
AllocationFacts allocation_facts(const ProgramTrace& trace, const AlignedTimes& aligned);
std::vector<TracedDeviceFacts> device_facts(const ProgramTrace& trace, const AlignedTimes& aligned);

}  // namespace clprobe
