#pragma once
// What the trace layer keeps between calls: the dispatch table below it, the objects it tracks
// (memory, kernels and their buffer arguments, queues and the events waiting for timestamps) and
// the writer. Everything is allocated once and never freed: the program may still call OpenCL from
// its own static destructors after the layer's exit handler has run.
#include <CL/cl_layer.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "layer/trace_format.hpp"
#include "layer/trace_writer.hpp"

namespace clprobe::layer {

extern cl_icd_dispatch next;  // the layer below (in the end, the driver)

// On from a clInitLayer that opened the trace file until the exit handler ran (or, in a fork()ed
// child, never). When off, every hook only forwards.
extern std::atomic<bool> g_recording;
// Set in a fork()ed child when the whole job shares one file (CLPROBE_TRACE_FILE): it must not
// touch the parent's file nor call the driver from the layer's own bookkeeping (writing out a stage
// at thread exit, say). With a records folder the child gets a stream of its own instead.
extern std::atomic<bool> g_forked_child;
// Set in a fork()ed child that has a records folder until its first OpenCL call opens its stream
// (process_stream.cpp): a child that never uses OpenCL, or only execs, leaves no file behind.
extern std::atomic<bool> g_stream_pending;
bool open_pending_stream();
inline bool recording() {
    if (g_recording.load(std::memory_order_relaxed)) return true;
    return g_stream_pending.load(std::memory_order_relaxed) && open_pending_stream();
}

// The current stream's writer: a fork()ed child replaces it (reset_objects_after_fork).
TraceWriter& writer();
inline void emit(std::string_view records) {
    writer().write(records);
}

// Records gathered on the stack and written together: one lock, one copy. On the stack rather than
// in a thread_local buffer because it is also used while the thread's thread_locals are destroyed.
class RecordBatch {
  public:
    RecordBatch() = default;
    // `prepaid`: the records' bytes were counted against the size cap already (space_budget.hpp).
    explicit RecordBatch(bool prepaid) : prepaid_(prepaid) {}
    RecordBatch(const RecordBatch&) = delete;
    RecordBatch& operator=(const RecordBatch&) = delete;
    ~RecordBatch() { flush(); }

    void add(std::string_view record) {
        if (used_ + record.size() > sizeof text_) flush();
        std::memcpy(text_ + used_, record.data(), record.size());
        used_ += record.size();
    }
    void flush() {
        if (used_ && prepaid_)
            writer().write_prepaid({text_, used_});
        else if (used_)
            emit({text_, used_});
        used_ = 0;
    }

  private:
    char text_[4096];
    size_t used_ = 0;
    bool prepaid_ = false;
};

uint64_t now_ns();  // CLOCK_MONOTONIC
int thread_id();    // 1, 2, ... in order of first call

// An event the layer holds a reference to until it can read the command's device timestamps.
struct Aggregate;  // space_budget.hpp
struct PendingEvent {
    cl_event event;
    uint64_t seq;
    // A command kept out of a sampled timeline: its device time goes to this aggregate, no T.
    Aggregate* aggregate = nullptr;
};

struct QueueState {
    std::mutex mu;  // guards pending
    std::deque<PendingEvent> pending;
    std::atomic<bool> in_order{true};  // commands finish in order, so polling can stop at the first busy one
    std::atomic<bool> profiling_added{false};
    // Under Objects::mu. For a queue whose property list the layer amended: the list the program
    // gave, answered for CL_QUEUE_PROPERTIES_ARRAY instead of the amended one.
    std::vector<cl_queue_properties> asked_list;
    bool answers_array = false;
    // Under Objects::mu. What its Q record says, and whether the current stream has it yet: a
    // fork()ed child's stream writes the Q of a queue inherited from the parent on first use.
    cl_device_id device = nullptr;
    cl_command_queue_properties asked = 0;
    bool announced = false;
};

struct MemInfo {
    uint64_t bytes = 0;
    uint32_t refs = 1;          // the program's references, counted through retain/release
    uint32_t element_size = 0;  // images: bytes per pixel
    bool host_backed = false;   // CL_MEM_ALLOC_HOST_PTR or CL_MEM_USE_HOST_PTR (its own or its parent's)
};

// A region clEnqueueMapBuffer/clEnqueueMapImage returned, until unmapped.
struct MappedRegion {
    uint64_t bytes = 0;
    uint32_t count = 0;  // the same pointer may be mapped more than once
    bool pinned = false;
    cl_mem mem = nullptr;
};

// A buffer bound as a kernel argument: a cl_mem, or an SVM allocation (by its base address).
struct KernelArg {
    cl_uint index;
    uintptr_t key;
    bool svm;
};

struct KernelInfo {
    cl_program program = nullptr;
    uint32_t refs = 1;
    std::vector<KernelArg> args;
};

using trace_format::HostMemory;

struct SvmAllocation {
    uintptr_t base = 0;
    uint64_t bytes = 0;
};

struct Objects {
    std::mutex mu;  // guards everything below; held only for lookups and updates, never across a driver call
    std::unordered_map<cl_mem, MemInfo> mems;
    std::map<uintptr_t, uint64_t> svm;                 // base -> bytes
    std::unordered_map<uintptr_t, uint64_t> svm_maps;  // clEnqueueSVMMap pointer -> bytes
    std::map<uintptr_t, MappedRegion> mapped;          // mapped host pointer -> region
    std::unordered_map<cl_kernel, KernelInfo> kernels;
    // Never erased, so a QueueState* stays valid for good; a queue handle the driver reuses gets
    // the same state back, reset by note_queue.
    std::unordered_map<cl_command_queue, std::unique_ptr<QueueState>> queues;

    // mapped.size() + svm.size(), readable without the lock: zero lets transfers skip it.
    std::atomic<size_t> host_ranges{0};
    void count_host_ranges() { host_ranges.store(mapped.size() + svm.size(), std::memory_order_relaxed); }

    // With mu held.
    HostMemory host_memory(const void* p) const;
    SvmAllocation svm_allocation(const void* p) const;
};
Objects& objects();

// Bumped whenever what a kernel launch would count as its buffers may have changed (an argument
// set, a buffer or SVM allocation freed, a kernel released), so launches can reuse a cached count.
extern std::atomic<uint64_t> binding_version;

// A queue the program created: writes D for a new device, then Q.
void note_queue(cl_command_queue q, cl_device_id device, cl_command_queue_properties asked, bool profiling_added,
                const cl_queue_properties* asked_list, bool answers_array, uint64_t t);
// The state of a queue the program enqueued to successfully; a queue the layer did not see
// created (made through an extension entry point that bypasses layers) is recorded on first use.
QueueState* queue_state(cl_command_queue q);
// The state of a queue the layer knows, or null; creates nothing.
QueueState* find_queue_state(cl_command_queue q);

// Keeps the events (the layer owns one reference to each) until their timestamps can be read as T
// for their seq.
void watch_events(QueueState* qs, const PendingEvent* events, size_t n);
// Polls up to `max_polls` of the queue's oldest pending events; for each that ended writes T and
// releases it. Never waits.
void drain(QueueState* qs, size_t max_polls, bool stop_at_busy);

// The normal-exit handler: T for what completed, X, the file cut to its length. Idempotent.
void shutdown();

// In a fork()ed child (its only thread, before anything else runs): locks the parent's other threads
// may have held are made free, the parent's pending events are forgotten (they are the parent's to
// read), queues and devices are to be announced again in the child's stream, and a new writer
// replaces the one mapping the parent's file. No driver call.
void reset_objects_after_fork();

}  // namespace clprobe::layer
