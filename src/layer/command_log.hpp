#pragma once
// Enqueues (E) and host waits (W) are staged per thread and written in batches, because the time
// the layer spends between an enqueue and the program's wait, or between that wait and the next
// enqueue, costs far more than itself: on PoCL's CPU device a tiny kernel followed by clFinish
// takes about 10 us when the next enqueue comes within a few tens of ns of clFinish returning
// (the worker thread has not gone to sleep yet) and about 17 us otherwise. Formatting, writing and
// reading timestamps in those gaps (~1 us) cost ~25%; staging a copy of the call costs ~30 ns.
//
// A thread's stage is written out: when it holds `stage_capacity` entries; at the thread's next
// enqueue or wait (before the driver call) once the program spent `stage_idle_ns` away from
// OpenCL since the last one (its own work then let the driver's threads go idle anyway, so the
// layer's time costs only itself) or the oldest entry is older than `stage_max_age_ns`; before
// the thread writes any other record (so the file keeps each thread's order); when the thread
// exits; and at the exit handler, for all threads. Commands' events are watched once their E is
// written; T records follow when the commands have ended (polled after each batch, at a queue's
// release and at exit).
//
// What a crash loses: the entries still staged. A program that does host work between its OpenCL
// calls loses at most its last call or two per thread; one enqueueing in a tight loop, at most
// `stage_capacity` entries per thread (the last `stage_max_age_ns` at most when it keeps calling).
#include <CL/cl_layer.h>

#include <cstdint>

#include "layer/layer_state.hpp"

namespace clprobe::layer {

inline constexpr unsigned stage_capacity = 64;
inline constexpr uint64_t stage_max_age_ns = 10'000'000;
inline constexpr uint64_t stage_idle_ns = 50'000;

// One staged record: an E (kind command) or a W (kind wait).
struct StagedCall {
    enum class Kind : uint8_t { command, wait };
    uint64_t t0 = 0;
    uint64_t t1 = 0;
    uint64_t bytes = 0;
    cl_command_queue queue = nullptr;
    cl_kernel kernel = nullptr;
    cl_mem mem = nullptr;      // E's optional <mem>: what a transfer, fill, map or copy works on
    cl_event event = nullptr;  // the layer's reference, watched for T once E is written
    const char* name = "";     // the command, or the wait's op (static strings)
    size_t global[3] = {1, 1, 1};
    size_t local[3] = {1, 1, 1};
    cl_int status = CL_SUCCESS;
    uint32_t buffers = 0;
    Kind kind = Kind::command;
    HostMemory host = HostMemory::none;
    uint8_t dims = 0;  // 0: not a kernel launch, sizes "-"
    bool blocking = false;
    bool local_auto = false;
};

// Appends to the calling thread's stage; writes the stage out when full or old.
void stage(const StagedCall& call);
// At an enqueue's or wait's entry (`now`, before the driver call): writes out the calling thread's
// stage when due (see above). True when it wrote something (the caller's clock read is then stale).
bool flush_staged_if_due(uint64_t now);
// Writes out the calling thread's stage.
void flush_staged();
// Writes out every thread's staged E and W records from a fatal signal's handler: no waiting for a
// lock, no driver call (no events watched, no T), so whatever the crashed thread held cannot
// deadlock it. Stages or a writer that are locked at that moment are lost.
void flush_staged_on_signal();
// Writes out every thread's stage (the exit handler). Gives up on a stage whose thread keeps it
// locked.
void flush_all_staged();
// In a fork()ed child (its only thread): the stages' locks made free, the parent's staged calls
// dropped (they are in the parent's stream), every stage but the forking thread's free for reuse,
// and commands numbered from 1 again in the child's stream.
void reset_stages_after_fork();

}  // namespace clprobe::layer
