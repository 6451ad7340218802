#pragma once
// Turns a ProgramTrace and the child's lifetime into the trace layer's facts and app.*
// measurements. Pure: no OpenCL, no I/O, so tests feed it synthetic traces.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/memory_roofs.hpp"
#include "core/report.hpp"
#include "core/trace_facts.hpp"
#include "trace/program_trace.hpp"

namespace clprobe {

// What clprobe saw of the child from outside.
struct ChildRun {
    std::vector<std::string> argv;
    std::uint64_t start_ns = 0, end_ns = 0;  // CLOCK_MONOTONIC around fork .. reaped
    std::optional<int> exit_code;
    std::optional<int> signal;
    bool interrupted = false;
    bool timed_out = false;  // outlived `clprobe trace --timeout` and was ended by clprobe
    bool linked_opencl = false;
};

struct TraceAnalysis {
    TraceFacts facts;
    std::vector<Measurement> measurements;
};

// `roofs`: this device's measured bandwidth roofs, for each kernel's roofline fraction against
// the roof of its working set's memory level (left out when none was measured).
TraceAnalysis analyse_trace(const ProgramTrace& trace, const ChildRun& run, const BandwidthRoofs& roofs = {});

// The trace.program result the rules and renderers read: the analysis's measurements and its
// facts under attributes "facts".
ProbeResult program_probe_result(TraceAnalysis analysis);

// Per-launch or per-transfer samples kept in a report: at most this many, evenly strided, so a
// program of a million commands still gives a report of a few MiB.
inline constexpr std::size_t max_samples_per_measurement = 2048;

}  // namespace clprobe
