#pragma once
// The record format the trace layer (src/layer/trace_layer.cpp) writes and clprobe's trace
// reader (src/trace/trace_reader.cpp) reads. This header is the whole contract between them: the
// layer links nothing else of clprobe.
//
// The file is text, one record per line, fields separated by a single TAB, the record type first.
// Lines are written whole (never interleaved between threads). The reader skips NUL bytes (the
// unused tail of a preallocated chunk) and empty lines, and ignores a last line without its
// newline (a record cut by a crash). Unknown record types are skipped, so newer layers stay
// readable by older readers.
//
// Conventions:
//   <t>, <t0>, <t1>  host time in ns of CLOCK_MONOTONIC (the clock std::chrono::steady_clock reads
//                    on Linux, so clprobe can place the records on the child's lifetime)
//   handles          OpenCL objects as hex pointers without 0x ("55d0c2a4f130"); 0 for none
//   <thread>         small integer the layer gives each calling thread, from 1 in order of first call
//   names            kernel and device names with TAB, CR and LF replaced by spaces
//
// Records:
//   H <version> <pid> <t>                                   first line: format version, process, time
//   O <ppid> <origin> <start> <command line>                second line: the parent process; origin
//                                                           exec (the layer was loaded in this process:
//                                                           an exec'd program, or a forked child whose
//                                                           parent never used OpenCL) or fork (a child
//                                                           forked from a process that had the layer);
//                                                           start: the process's start (exec: from
//                                                           /proc, 10 ms resolution; fork: the fork),
//                                                           0 unknown; the command line with NULs as
//                                                           spaces, cut to 400 bytes
//   D <device> <type> <vendor> <name>                       a device the program used (first seen);
//                                                           type: cpu, gpu, accelerator, other
//   Q <t> <queue> <device> <properties_hex> <profiling_added>
//                                                           a queue created (either creation call);
//                                                           properties as the program asked them,
//                                                           profiling_added 1 when the layer turned
//                                                           CL_QUEUE_PROFILING_ENABLE on
//   M <t0> <t1> <mem> <bytes> <flags_hex> <kind> <status>   an allocation: kind buffer, subbuffer,
//                                                           image, pipe, svm; t0..t1 the call;
//                                                           status the cl_int result (svm: 0 or -1)
//   R <t0> <t1> <mem>                                       the release that freed it (reference
//                                                           count reached zero), or clSVMFree
//   P <t> <program> <origin> <hash_hex> <bytes>             a program created; origin: source,
//                                                           binary, il, builtin, link; hash: FNV-1a
//                                                           64 of the source text or binary (0 for
//                                                           builtin/link), bytes its length
//   B <t0> <t1> <program> <op> <status> <thread>            clBuildProgram (op build), clCompileProgram
//                                                           (compile), clLinkProgram (link: <program>
//                                                           is the linked result, 0 on failure)
//   K <kernel> <program> <name>                             a kernel object created
//   E <seq> <t0> <t1> <thread> <queue> <command> <kernel> <bytes> <blocking> <host_memory>
//     <global> <local> <buffers> <status> [<mem>]
//                                                           an enqueue: seq numbers commands from 1;
//                                                           t0..t1 the call on the host; command see
//                                                           below; kernel 0 unless a kernel command;
//                                                           bytes: transfers the bytes moved, kernels
//                                                           the summed sizes of the distinct buffers
//                                                           bound as arguments (an estimate of what
//                                                           the kernel touches); blocking 0/1;
//                                                           host_memory: pinned (inside a mapped
//                                                           region of a CL_MEM_ALLOC_HOST_PTR or
//                                                           CL_MEM_USE_HOST_PTR buffer), pageable
//                                                           (any other host pointer), svm, none;
//                                                           global and local sizes "gx,gy,gz"
//                                                           (local "0" when the driver chooses, "-"
//                                                           for non-kernels); buffers: how many
//                                                           buffer arguments were counted; status:
//                                                           the cl_int the call returned (no T
//                                                           record follows a failed call); mem
//                                                           (optional, format 1 readers accept its
//                                                           absence): the memory object a transfer,
//                                                           fill, map or copy (its destination)
//                                                           works on, 0 for others
//   T <seq> <queued> <submit> <start> <end> <exec_status>   device timestamps (ns, the device's
//                                                           clock) of command <seq>, read once it
//                                                           completed; exec_status 0 (CL_COMPLETE)
//                                                           or the negative error the command ended
//                                                           with (then timestamps may be 0)
//   W <t0> <t1> <thread> <op> <queue>                       the host blocked: op finish,
//                                                           wait_events, or blocking_<command> for a
//                                                           blocking enqueue (queue 0 for wait_events)
//   S <t> <signal>                                          a fatal signal reached the process (the
//                                                           layer's handler, before the program's or
//                                                           the default action): a crash, or SIGTERM,
//                                                           SIGINT, SIGHUP, SIGQUIT
//   A <t> <queue> <command> <kernel> <count> <timed> <failed> <device_ns> <min_ns> <max_ns> <bytes>
//     <host_memory>                                         under a size cap (space_budget.hpp): the
//                                                           commands of one queue, command, kernel
//                                                           and host memory kept out of the sampled
//                                                           timeline (no E/T of their own), cumulative
//                                                           (a later A of the key replaces an earlier)
//   Z <t> <period> <dropped_writes>                         under a size cap: 1 in <period> commands
//                                                           keeps its records from <t> on; written when
//                                                           the period changes and at exit
//   X <t>                                                   the layer shut down at a normal exit
//   C <t0> <t1> <thread>                                    the layer's own work capturing a launch for
//                                                           replay or work counting (its waits, reads and
//                                                           files around the launch), host clock: the
//                                                           analysis cuts it out of the program's time
//   V <name> <value>                                        after O: a variable of the process's
//                                                           environment that CLPROBE_TRACE_ENV names
//                                                           (a launcher's rank: which MPI rank the
//                                                           process is); only those that are set
//
// Commands (<command> of E): kernel (clEnqueueNDRangeKernel), task, native_kernel, write, read,
// copy, fill, write_rect, read_rect, copy_rect, map, unmap, write_image, read_image, copy_image,
// copy_image_to_buffer, copy_buffer_to_image, map_image, fill_image, migrate, marker, barrier,
// svm_memcpy, svm_memfill, svm_map, svm_unmap, svm_free, svm_migrate.
//
// Environment the layer reads:
//   CLPROBE_TRACE_DIR    a folder: every process of the job writes its own file there,
//                        <pid>.rec (<pid>-<n>.rec when that name is taken), created exclusively;
//                        a fork()ed child opens its own on its first OpenCL call
//   CLPROBE_TRACE_FILE   without CLPROBE_TRACE_DIR: one file (truncated) that the first process to
//                        lock it owns; other processes and forked children record nothing
//   CLPROBE_TRACE_ENV    names, separated by commas, of variables to record in V records
//   Without either the layer only forwards calls.
//   CLPROBE_TRACE_WINDOW, CLPROBE_TRACE_CONTROL   capture windows (capture_control.hpp)
//   CLPROBE_TRACE_MAX_BYTES, CLPROBE_TRACE_SPACE  the size cap and its shared counter (space_budget.hpp)
#include <cstddef>
#include <iterator>
#include <string_view>

namespace clprobe::trace_format {

inline constexpr int version = 1;
inline constexpr const char* file_env = "CLPROBE_TRACE_FILE";
inline constexpr const char* dir_env = "CLPROBE_TRACE_DIR";
inline constexpr const char* environment_env = "CLPROBE_TRACE_ENV";
// The name of a process's file in the records folder ends so.
inline constexpr std::string_view stream_suffix = ".rec";

// The E record's <host_memory>: the layer writes host_memory_name, the reader parses it back with
// host_memory_of (an unknown word reads as none, so a newer layer's kinds stay readable).
enum class HostMemory { none, pageable, pinned, svm };

// The words, in HostMemory's order.
inline constexpr std::string_view host_memory_words[] = {"none", "pageable", "pinned", "svm"};

constexpr std::string_view host_memory_name(HostMemory kind) {
    const auto i = static_cast<std::size_t>(kind);
    return i < std::size(host_memory_words) ? host_memory_words[i] : host_memory_words[0];
}

constexpr HostMemory host_memory_of(std::string_view word) {
    for (std::size_t i = 1; i < std::size(host_memory_words); ++i)
        if (word == host_memory_words[i]) return static_cast<HostMemory>(i);
    return HostMemory::none;
}

}  // namespace clprobe::trace_format
