#pragma once
// A traced job: every process that used OpenCL wrote its own record stream (one file per process
// in the records folder, src/layer/process_stream.hpp). Here the streams are read, told apart and
// put together: one trace of the whole job for the job's stages and rules, and each process's own
// facts (its end, its lifetime, its stage table). Pure apart from reading the folder.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/trace_facts.hpp"
#include "trace/program_trace.hpp"
#include "trace/trace_analysis.hpp"

namespace clprobe {

// A process clprobe reaped itself: the program it started, or a descendant orphaned on the way
// (clprobe is the job's subreaper).
struct ReapedProcess {
    int pid = 0;
    std::uint64_t end_ns = 0;  // CLOCK_MONOTONIC when reaped
    std::optional<int> exit_code, signal;
};

struct JobRun {
    ChildRun program;                   // the program clprobe started: lifetime, status, argv
    std::vector<ReapedProcess> reaped;  // the program and every orphan clprobe reaped
    std::vector<int> still_running;     // descendants alive when clprobe stopped waiting
    std::uint64_t end_ns = 0;           // when the last process ended, or clprobe stopped waiting
    double wait_limit_seconds = 0;      // how long clprobe waited for descendants at most
};

// Every process's stream in `dir` (files ending in trace_format::stream_suffix), in order of start
// (then pid); a file without a header (a process that died creating it) is left out.
std::vector<ProgramTrace> read_job_records(const std::string& dir);

// One trace of the whole job: each process's devices, queues, memory handles and threads kept apart
// (handles prefixed "PID:", thread numbers moved past the previous process's), kernels merged by
// name, commands in order of their enqueue on the host and numbered again from 1.
ProgramTrace merge_processes(const std::vector<ProgramTrace>& processes);

// How each process ended and what it did, over its own lifetime; times since job.program.start_ns.
std::vector<ProcessFacts> process_facts(const std::vector<ProgramTrace>& processes, const JobRun& job);

// The job's lifetime as one run: the program's start to job.end_ns, with the program's status.
ChildRun job_lifetime(const JobRun& job);

// The job as one program (`merged`: merge_processes(processes)) over job_lifetime, with
// facts.processes filled and facts.run.layer_clean_exit true when no process was cut short.
TraceAnalysis analyse_job(const std::vector<ProgramTrace>& processes, const ProgramTrace& merged, const JobRun& job,
                          const BandwidthRoofs& roofs = {});

}  // namespace clprobe
