#pragma once
// What the trace layer recorded about one run of a user's program, as typed data: the reader
// (trace_reader.hpp) fills it from the layer's file, the analysis (trace_analysis.hpp) turns it
// into the trace layer's facts and measurements, the timeline writer draws it. Tests build it by
// hand, so every rule is checked on synthetic traces without running anything.
//
// Host times are ns of CLOCK_MONOTONIC (steady_clock), the clock clprobe also reads the child's
// start and end with; device times are ns of the device's own clock until the analysis aligns them.
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "layer/trace_format.hpp"

namespace clprobe {

enum class CommandKind {
    kernel,  // NDRange, task, native kernel
    write,   // host -> device (buffer, rect, image)
    read,    // device -> host
    copy,    // device -> device
    fill,    // device memory set from a pattern
    map,     // map of a buffer or image (zero-copy hand-over or a driver copy)
    unmap,
    svm,      // SVM memcpy/fill/map/unmap/free/migrate
    migrate,  // clEnqueueMigrateMemObjects
    sync,     // marker, barrier
    other
};
std::string_view to_string(CommandKind kind);
// The layer's command name ("read_rect", "ndrange"...) to its kind.
CommandKind command_kind_of(std::string_view command);
// A command that moves data between host and device memory (write, read, map): what the
// transfer stage and the transfer rules count.
bool is_transfer(CommandKind kind);

// The trace format's own enum: one list of host memory kinds for the layer and the reader.
using trace_format::HostMemory;
inline std::string_view to_string(HostMemory memory) {
    return trace_format::host_memory_name(memory);
}

struct DeviceTimes {
    std::uint64_t queued = 0, submit = 0, start = 0, end = 0;  // the device's clock, ns
    int status = 0;                                            // 0 complete, < 0 the error it ended with
};

struct TracedCommand {
    std::uint64_t seq = 0;
    std::uint64_t host_begin = 0, host_end = 0;  // the enqueue call on the host
    std::uint32_t thread = 0;
    std::uint32_t queue = 0;  // index into ProgramTrace::queues
    std::string command;      // the layer's name: "kernel", "write_rect"...
    CommandKind kind = CommandKind::other;
    std::int32_t kernel = -1;  // index into ProgramTrace::kernel_names; -1 for non-kernels
    std::uint64_t bytes = 0;
    bool blocking = false;
    HostMemory host_memory = HostMemory::none;
    std::uint64_t global_items = 0;  // product of the global size; 0 for non-kernels
    std::string global, local;       // "gx,gy,gz", as recorded
    std::uint32_t buffers = 0;
    std::string mem;  // the memory object a transfer, fill, copy (destination) or map works on; "" unknown
    std::optional<DeviceTimes> device;  // absent when the layer never saw it complete
};

struct TracedWait {
    std::uint64_t host_begin = 0, host_end = 0;
    std::uint32_t thread = 0;
    std::string op;                      // finish, wait_events, blocking_read...
    std::optional<std::uint32_t> queue;  // index into queues; absent for wait_events
};

struct TracedQueue {
    std::string handle;
    std::int32_t device = -1;  // index into devices
    std::uint64_t created = 0;
    bool profiling_added = false;
    // The process of a job trace that created it (merge_processes); 0 in one process's own trace,
    // whose ProgramTrace::pid it is.
    int pid = 0;
};

struct TracedDevice {
    std::string handle, type, vendor, name;
};

struct TracedAllocation {
    std::string handle;
    std::string kind;  // buffer, subbuffer, image, pipe, svm
    std::uint64_t bytes = 0;
    std::uint64_t flags = 0;
    std::uint64_t created_begin = 0, created_end = 0;
    std::optional<std::uint64_t> released_begin, released_end;
};

struct TracedBuild {
    std::uint64_t host_begin = 0, host_end = 0;
    std::string op;      // build, compile, link
    std::string origin;  // source, binary, il, builtin, link ("" when the program was not seen created)
    std::uint64_t source_hash = 0;
    int status = 0;
    std::uint32_t thread = 0;
    // The process of a job trace that built it (merge_processes): a build is a repeat only within
    // one process; two processes building one source at once are not a build to save.
    int pid = 0;
};

// The O record: where the process came from.
struct ProcessOrigin {
    int ppid = 0;
    std::string origin;       // exec, fork
    std::uint64_t start = 0;  // the process's start (CLOCK_MONOTONIC ns), 0 unknown
    std::string command_line;
};

// Commands of one (queue, command, kernel) the layer kept out of a sampled timeline (--max-size):
// counted exactly, with their device time, but without E/T records of their own (A records).
struct TracedAggregate {
    std::uint32_t queue = 0;  // index into ProgramTrace::queues
    std::string command;
    CommandKind kind = CommandKind::other;
    std::int32_t kernel = -1;  // index into kernel_names; -1 for non-kernels
    std::uint64_t count = 0;   // successful and failed enqueues
    std::uint64_t timed = 0;   // of those, seen complete with device times
    std::uint64_t failed = 0;  // enqueues that returned an error
    std::uint64_t device_ns = 0, min_ns = 0, max_ns = 0;
    std::uint64_t bytes = 0;
    HostMemory host_memory = HostMemory::none;
};

// Bounded space (Z records): whether the layer sampled its timeline, from when, how sparsely.
struct TraceSampling {
    bool limited = false;                // a Z record: the layer ran under --max-size
    std::optional<std::uint64_t> since;  // host time of the first period above 1
    std::uint64_t max_period = 1;        // the sparsest: 1 in max_period commands kept
    std::uint64_t dropped_writes = 0;    // writes refused at the limit (the last Z's count)
};

struct ProgramTrace {
    int format_version = 0;
    int pid = 0;
    std::optional<ProcessOrigin> origin;  // absent in files of layers before per-process streams
    // V records: the launcher variables the process had (its MPI rank), by name.
    std::map<std::string, std::string> environment;
    std::optional<int> fatal_signal;  // an S record: the signal that reached the process
    std::optional<std::uint64_t> fatal_signal_at;
    std::uint64_t last_record = 0;  // the latest host time in any record
    std::uint64_t layer_start = 0;  // H record: when the layer was initialised
    bool clean_exit = false;        // an X record: the layer saw a normal process exit
    std::optional<std::uint64_t> layer_end;
    std::uint64_t records = 0;
    std::uint64_t unreadable_lines = 0;  // malformed lines skipped

    std::vector<TracedDevice> devices;
    std::vector<TracedQueue> queues;
    std::vector<std::string> kernel_names;
    // In seq order. A deque: a million-command trace grows without the vector's reallocation, which
    // held the old and the new copy at once (1.05 GiB peak heap for 10^6 commands, heaptrack).
    std::deque<TracedCommand> commands;
    std::vector<TracedWait> waits;
    std::vector<TracedAllocation> allocations;
    std::vector<TracedBuild> builds;
    std::uint64_t failed_commands = 0;        // enqueues that returned an error
    std::vector<TracedAggregate> aggregates;  // commands kept out of a sampled timeline
    TraceSampling sampling;
    // C records: the layer's own work capturing launches (--work, --replay), host clock [begin, end):
    // not the program's time, so the analysis cuts it out (trace/capture_time.hpp).
    std::vector<std::pair<std::uint64_t, std::uint64_t>> captures;

    bool empty() const { return format_version == 0; }
    std::string_view kernel_name(const TracedCommand& c) const;
    // The process that enqueued the command (its queue's process in a job trace, else pid).
    int pid_of(const TracedCommand& c) const;
};

}  // namespace clprobe
