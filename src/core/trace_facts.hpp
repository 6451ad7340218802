#pragma once
// What `clprobe trace` found out about the user's program, as plain data: computed from the
// layer's records by src/trace/trace_analysis, stored in the attributes of the trace.program
// probe ("facts"), and read back by reports/rules/trace_rules. Like TopologyFacts it lives in
// core, so a saved trace report is re-analysed without the program, the layer or OpenCL.
//
// Times are seconds of the program's wall clock; bytes are bytes.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/capture_facts.hpp"
#include "core/kernel_work_facts.hpp"

namespace clprobe {

// The program's wall time split into parts that do not overlap and add up to the whole. At each
// moment the first that applies names it: a kernel runs; a transfer or another device command
// runs; a program build runs; the host waits in clFinish/clWaitForEvents/a blocking call; the
// device is idle while the host works between the first and the last OpenCL command; outside that
// window (start-up, teardown, host-only phases).
enum class AppStage { kernel, transfer, build, host_wait, device_idle, host_only };
inline constexpr AppStage all_app_stages[] = {AppStage::kernel,    AppStage::transfer,    AppStage::build,
                                              AppStage::host_wait, AppStage::device_idle, AppStage::host_only};
std::string_view to_string(AppStage stage);
std::optional<AppStage> app_stage_from(std::string_view name);

// The probe whose attributes hold a traced program's facts ("facts"), layer "trace".
inline constexpr const char* trace_probe_id = "trace.program";

// The pipeline id under which the stages are recorded (metric "app.pipeline.stage_time").
inline constexpr std::string_view app_pipeline_id = "app.pipeline";

struct ProgramRunFacts {
    std::vector<std::string> argv;
    double wall_seconds = 0;
    std::optional<int> exit_code;   // set when the program exited
    std::optional<int> signal;      // set when a signal killed it
    bool interrupted = false;       // clprobe was asked to stop (SIGINT/SIGTERM forwarded)
    bool layer_loaded = false;      // the layer wrote its header: the loader loaded it
    bool linked_opencl = false;     // the program mapped an OpenCL library while it ran
    bool layer_clean_exit = false;  // the layer saw a normal exit (its file is complete)
    std::uint64_t records = 0;
    std::uint64_t unreadable_records = 0;
    std::uint64_t opencl_commands = 0;  // successful enqueues
    std::uint64_t failed_commands = 0;
    std::uint64_t commands_without_times = 0;  // never seen complete (the program ended first)
    // The layer's own capture work (--work, --replay) cut out of the wall time and every stage: the
    // program's time is analysed without it.
    double capture_seconds = 0;
};

struct AppStageTime {
    AppStage stage = AppStage::host_only;
    double seconds = 0;
};

struct KernelFacts {
    std::string name;
    std::uint64_t launches = 0;
    double seconds = 0;  // device time, summed
    double median_launch_seconds = 0;
    double bytes = 0;                       // summed sizes of the buffers bound, over all launches (an estimate)
    std::uint64_t global_items = 0;         // largest global size seen
    std::uint64_t auto_local_launches = 0;  // launched with a NULL local size (the driver chose it)
    std::vector<int> pids;                  // the processes that launched it, in order of pid
};

// Transfers of one direction (h2d, d2h, d2d, map, fill, svm) and path (pageable, pinned, svm,
// or the command for device-side ones), with a histogram by size.
struct TransferBin {
    std::uint64_t upper_bytes = 0;  // transfers of at most this many bytes (powers of two)
    std::uint64_t count = 0;
    double bytes = 0, seconds = 0;
    double enqueue_seconds = 0;  // host time inside the enqueue calls
};
struct TransferFacts {
    std::string direction, path;
    std::uint64_t count = 0;
    double bytes = 0, seconds = 0;
    std::uint64_t blocking = 0;
    std::vector<TransferBin> bins;
};

struct SyncFacts {
    std::uint64_t kernels = 0;
    std::uint64_t kernels_followed_by_wait = 0;  // the host waited before the next kernel on its queue
    std::uint64_t gaps_measured = 0;             // of those, followed by another command with device times
    double gap_seconds = 0;  // device idle from such a kernel's end to the start of its queue's next command
    std::uint64_t waits = 0;
    double wait_seconds = 0;  // host time blocked, whether or not the device ran meanwhile
};

struct OverlapFacts {
    double kernel_seconds = 0, transfer_seconds = 0;  // device busy with each (their own unions)
    double overlapped_seconds = 0;                    // both at once
    std::uint32_t queues = 0;                         // queues that ran commands
};

struct BuildFacts {
    std::uint64_t builds = 0;       // build, compile and link calls
    std::uint64_t from_source = 0;  // builds of programs created from source (or IL)
    std::uint64_t from_binary = 0;
    double seconds = 0;
    std::uint64_t repeated = 0;  // builds of a source already built in this run
    double repeated_seconds = 0;
    double source_seconds = 0;  // builds from source, all
};

struct AllocationFacts {
    std::uint64_t allocations = 0;
    std::uint64_t released = 0;
    double peak_bytes = 0;
    double largest_bytes = 0;
    std::uint64_t in_loop = 0;        // created and released while the program was issuing commands
    double in_loop_call_seconds = 0;  // host time inside those create and release calls
    std::uint64_t in_loop_distinct_sizes = 0;
    // The first command on each of those allocations (a transfer, fill or map naming it): where a
    // fresh allocation's cost shows (page faults, first touch, lazy allocation by the driver).
    std::uint64_t in_loop_first_uses = 0;
    double in_loop_first_use_seconds = 0, in_loop_first_use_bytes = 0;
};

// One lane of the job's device work: one process's queues on one device. Two processes on one
// device are two lanes; one process on two devices is two lanes.
struct DeviceLaneFacts {
    int pid = 0;
    std::string device;  // its name
    std::uint64_t commands = 0;
    double busy_seconds = 0;  // the union of its commands' device times
    // Its process's OpenCL window, since the job started: that process's first enqueue to the
    // end of its last command (a lane created but never used is idle over all of it).
    double begin_seconds = 0, end_seconds = 0;
};

// The busiest lane against the lane it out-worked most over the span both were active (the
// intersection of their windows): what the device-balance rule holds against its trigger.
struct DeviceBalanceFacts {
    std::int32_t busiest = -1, least = -1;  // indexes into lanes; -1 when fewer than two lanes overlap
    double shared_seconds = 0;              // the span both were active
    double busiest_busy_seconds = 0, least_busy_seconds = 0;  // their busy time within it
};

// A kernel sequence launched back to back on one queue (no other command between), again and
// again: `sequence` is its period (one name when one kernel is launched repeatedly). Gaps are
// the device idle from one kernel's end to the next one's start in those runs.
struct FusionFacts {
    std::vector<std::string> sequence;
    int pid = 0;
    std::uint64_t occurrences = 0, kernels = 0;
    double kernel_seconds = 0;
    double gap_seconds = 0;            // every gap inside the runs
    std::uint64_t removable_gaps = 0;  // the gaps fusing the sequence removes: inside one occurrence
    double removable_gap_seconds = 0;  // (every gap when the sequence is one kernel: one launch instead)
    double median_kernel_seconds = 0, median_gap_seconds = 0;
};

struct TracedDeviceFacts {
    std::string name, type, vendor;
    double busy_seconds = 0;
    std::uint64_t commands = 0;
};

// How one process of the job ended, as far as clprobe can tell. clprobe reaps the program it
// started and, as the job's subreaper, every descendant orphaned on the way (a daemonised child):
// those have an exact status. Others are reaped by their own parent; their records say the rest.
enum class ProcessEnd {
    exited,           // exit status known: exit_code
    killed,           // killed by `signal` (status known, or the layer saw the fatal signal)
    exit_handler,     // the layer's exit handler ran (exit() or a return from main); status unknown
    no_exit_handler,  // ended without exit handlers (_exit, os._exit, exec, SIGKILL); status unknown
    still_running     // still running when clprobe stopped waiting for the job
};
std::string_view to_string(ProcessEnd end);
std::optional<ProcessEnd> process_end_from(std::string_view name);

// One process of the job that wrote records (used OpenCL), with its own view of its lifetime.
struct ProcessFacts {
    int pid = 0, ppid = 0;
    // exec: the layer was loaded in this process (an exec'd program, or a forked child whose parent
    // never used OpenCL); fork: forked from a process that had the layer loaded
    std::string origin;
    std::string command_line;  // as /proc/PID/cmdline had it, cut to 400 bytes
    std::string rank;          // its launcher's rank (a rank of `trace -- mpirun`); "" when none
    ProcessEnd end = ProcessEnd::no_exit_handler;
    std::optional<int> exit_code, signal;
    double start_seconds = 0;        // since the job started
    double wall_seconds = 0;         // its start to its end (or to its last record while running)
    double records_end_seconds = 0;  // its last record, since the job started
    std::uint64_t opencl_commands = 0;
    std::uint64_t commands_without_times = 0;
    double device_seconds = 0;  // kernel and transfer stages of its own lifetime
    std::vector<AppStageTime> stages;
    // Per ranked trace rule id: the seconds of that rule's pattern in this process alone (its sync
    // gaps, its allocation calls...), which name the process a job's finding concerns.
    std::map<std::string, double> pattern_seconds;
};

// Whether a process of the job was cut short, so that the report lacks part of it: still running
// when clprobe stopped waiting, or killed, except a process its parent ended (SIGTERM, SIGKILL,
// SIGINT or SIGHUP, as a Python pool terminates its workers on close) with every recorded command
// complete while that parent ended on its own. Such a worker's records are whole: the layer's
// records are a shared mapping that outlives the process. A parent that used no OpenCL has no
// records: then the program's own end stands for it (it exited by itself, clprobe did not stop it).
// A crash signal is always cut short.
bool cut_short(const ProcessFacts& p, const std::vector<ProcessFacts>& job, const ProgramRunFacts& run);

inline constexpr std::size_t max_fusion_facts = 5;

struct TraceFacts {
    ProgramRunFacts run;
    // Every process that wrote records, in order of start; empty in reports from before processes
    // were traced one by one (their facts are of the one process the layer recorded).
    std::vector<ProcessFacts> processes;
    std::vector<AppStageTime> stages;
    std::vector<TracedDeviceFacts> devices;
    std::vector<KernelFacts> kernels;  // by device time, largest first
    std::vector<TransferFacts> transfers;
    SyncFacts sync;
    OverlapFacts overlap;
    BuildFacts builds;
    AllocationFacts memory;
    // Capture windows and bounded space; absent when the whole run was recorded in full.
    std::optional<CaptureFacts> capture;
    std::vector<DeviceLaneFacts> lanes;  // in order of pid, then device
    DeviceBalanceFacts balance;
    std::vector<FusionFacts> fusion;  // the largest removable gaps first, at most max_fusion_facts
    // The hottest kernels' counted work (trace --work N), hottest first; empty when not counted.
    std::vector<KernelWorkFacts> work;

    double stage_seconds(AppStage stage) const;
    double device_busy_seconds() const;  // kernel + transfer stages
};

struct ProbeResult;
struct RunReport;

nlohmann::json to_json(const TraceFacts& facts);
// nullopt when the JSON is not in this shape (rules never throw on a hand-edited report).
std::optional<TraceFacts> trace_facts_from_json(const nlohmann::json& j);

// The trace.program probe writes them with one call (attribute "facts"); rules and renderers read
// them back with one: nullopt when the report holds no trace.program result or no readable facts.
void record_trace_facts(ProbeResult& out, const TraceFacts& facts);
std::optional<TraceFacts> trace_facts_of(const RunReport& report);

}  // namespace clprobe
