#pragma once
// Bounded space (`clprobe trace --max-size`): the record streams of every process of the job
// together stay under a cap. The bytes written are counted in a small file shared by the job's
// processes (mapped MAP_SHARED, updated with atomic adds), so forked children and exec'd
// descendants all draw on one budget.
//
// Below half the cap (less a reserve) every command is recorded. From then on the layer keeps a
// sampled timeline: 1 in K commands (and waits) gets its E/T (W) records, K a power of two that
// doubles whenever the bytes used run ahead of an allowance growing as soft * e / (e + tau) (e: time
// since the job started, tau: when half the budget was used), and halves when well behind it. So
// the timeline thins out as 1/t^2 over a long run instead of stopping. Every command left out of
// the timeline is still counted exactly: per (queue, command, kernel), its count, bytes and device
// time (its event is still watched), written as cumulative A records (every second while sampling,
// and at exit from the reserve). Past the soft limit nothing but A, Z and X is written.
//
// Environment: CLPROBE_TRACE_MAX_BYTES (the cap), CLPROBE_TRACE_SPACE (the shared counter file:
// three uint64, bytes used, when half was used, the job's start, all CLOCK_MONOTONIC ns).
// Records: Z <t> <K> <dropped_writes> when K changes and at exit;
//          A <t> <queue> <command> <kernel> <count> <timed> <failed> <device_ns> <min_ns> <max_ns>
//            <bytes> <host_memory> cumulative for the commands kept out of the timeline.
#include <CL/cl_layer.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace clprobe::layer {

// One key's commands kept out of the timeline.
struct Aggregate {
    cl_command_queue queue = nullptr;
    const char* command = "";  // static names
    cl_kernel kernel = nullptr;
    const char* host = "none";  // E's <host_memory>
    uint64_t count = 0, timed = 0, failed = 0, device_ns = 0, min_ns = UINT64_MAX, max_ns = 0, bytes = 0;
    bool changed = false;  // since the last A records
};

extern std::atomic<bool> g_space_limited;

// Reads the environment (clInitLayer).
void init_space_budget();

// Bytes a command's E takes for its T ahead of it (a T line is at most this long), so a command
// admitted into the timeline always gets its device times: space_adjust settles the difference.
inline constexpr size_t t_record_prepay = 112;

// Takes `n` bytes of the budget for a write; false (nothing taken) when it would pass the soft
// limit, or the cap for `reserved` writes (A at exit, Z, X).
bool space_take(size_t n, bool reserved);

// Corrects the bytes counted for a write paid ahead (a T): `delta` = written - paid.
void space_adjust(int64_t delta);

// Once per batch of staged calls: adjusts K to the allowance at `now` (writes Z when it changes).
void update_sampling(uint64_t now);
// Whether the next command (wait) goes into the timeline.
bool keep_command();
bool keep_wait();

// Counts a command kept out of the timeline; the returned slot takes its device time later.
Aggregate* aggregate_command(cl_command_queue q, const char* command, cl_kernel kernel, const char* host,
                             uint64_t bytes, bool failed);
// Its device time once it ended (status 0) or the error it ended with.
void aggregate_time(Aggregate* a, uint64_t start, uint64_t end, int status);

// A records for every key changed since the last call; `final` at exit (then from the reserve,
// followed by a Z with the dropped count).
void write_aggregates(bool final);

// In a fork()ed child: the parent's counts are the parent's.
void reset_space_after_fork();

}  // namespace clprobe::layer
