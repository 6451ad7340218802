#pragma once
// Capture windows and bounded space on the analysis side (docs/trace.md, "Capture windows and
// bounded space"). Pure: no OpenCL, no I/O, so tests feed it synthetic traces and control texts.
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/capture_facts.hpp"
#include "core/trace_facts.hpp"
#include "trace/job_trace.hpp"
#include "trace/program_trace.hpp"

namespace clprobe {

// A stretch of the host clock (CLOCK_MONOTONIC ns) whose enqueues are analysed: [begin, end).
struct CaptureWindow {
    std::uint64_t begin_ns = 0, end_ns = 0;
};

// The windows a control file describes (lines "open <t_ns>" / "close <t_ns>", as `clprobe
// trace-window` and clprobe's SIGUSR1 handler append them), clipped to [start_ns, end_ns]; a
// window still open at the end closes there. Malformed lines are skipped; an open while open and
// a close while closed change nothing.
std::vector<CaptureWindow> windows_from_control(std::string_view text, std::uint64_t start_ns, std::uint64_t end_ns);

// The trace with only the commands, waits, builds and allocations whose host start falls inside
// one of `windows`, commands numbered again from 1. Aggregates (commands sampled out under
// --max-size carry no time) are kept only with `keep_aggregates`.
ProgramTrace cut_to_windows(const ProgramTrace& trace, const std::vector<CaptureWindow>& windows, bool keep_aggregates);

// The job as the analysis of its windows sees it: from the first window's start to the last one's
// end (`windowed` false: the job as it ran). No window: an empty stretch at the job's end.
JobRun in_windows(const JobRun& job, const std::vector<CaptureWindow>& windows, bool windowed);

// Adds the commands the layer kept out of its timeline to the per-kernel and per-transfer
// totals and to the command count, so those stay exact under sampling.
void add_aggregates(const ProgramTrace& trace, TraceFacts& facts);

// The sampling part of CaptureFacts from a (merged) trace; times since `start_ns`.
void describe_sampling(const ProgramTrace& trace, std::uint64_t start_ns, CaptureFacts& out);

}  // namespace clprobe
