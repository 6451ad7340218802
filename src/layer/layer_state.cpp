#include "layer/layer_state.hpp"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <new>
#include <string>
#include <thread>

#include "layer/command_log.hpp"
#include "layer/record_line.hpp"
#include "layer/space_budget.hpp"

namespace clprobe::layer {

cl_icd_dispatch next;
std::atomic<bool> g_recording{false};
std::atomic<bool> g_forked_child{false};
std::atomic<uint64_t> binding_version{1};

namespace {
std::atomic<TraceWriter*> g_writer{new TraceWriter};
}

TraceWriter& writer() {
    return *g_writer.load(std::memory_order_acquire);
}

Objects& objects() {
    static Objects* o = new Objects;
    return *o;
}

uint64_t now_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

int thread_id() {
    static std::atomic<int> threads{0};
    thread_local int id = 0;
    if (id == 0) id = ++threads;
    return id;
}

HostMemory Objects::host_memory(const void* ptr) const {
    const auto p = reinterpret_cast<uintptr_t>(ptr);
    if (auto it = mapped.upper_bound(p); it != mapped.begin()) {
        --it;
        if (p < it->first + it->second.bytes) return it->second.pinned ? HostMemory::pinned : HostMemory::pageable;
    }
    if (svm_allocation(ptr).bytes) return HostMemory::svm;
    return HostMemory::pageable;
}

SvmAllocation Objects::svm_allocation(const void* ptr) const {
    const auto p = reinterpret_cast<uintptr_t>(ptr);
    if (auto it = svm.upper_bound(p); it != svm.begin()) {
        --it;
        if (p < it->first + it->second) return {it->first, it->second};
    }
    return {};
}

namespace {

std::string device_text(cl_device_id d, cl_device_info what) {
    size_t size = 0;
    if (next.clGetDeviceInfo(d, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "?";
    std::string s(size, '\0');
    if (next.clGetDeviceInfo(d, what, size, s.data(), nullptr) != CL_SUCCESS) return "?";
    s.resize(s.find('\0') == std::string::npos ? s.size() : s.find('\0'));
    return s;
}

// The devices the current stream has written a D for; a fork()ed child starts a new set.
struct SeenDevices {
    std::mutex mu;
    std::vector<cl_device_id> devices;
};
std::atomic<SeenDevices*> g_seen_devices{new SeenDevices};

// The last queue this thread looked up (queue_state's fast path); forgotten in a fork()ed child.
thread_local cl_command_queue t_last_queue = nullptr;
thread_local QueueState* t_last_state = nullptr;

// D the first time a device shows up. The lock is held while writing so that no Q naming the
// device can precede its D.
void note_device(cl_device_id d) {
    SeenDevices& seen_devices = *g_seen_devices.load(std::memory_order_acquire);
    std::lock_guard lock(seen_devices.mu);
    auto* seen = &seen_devices.devices;
    if (!d || std::find(seen->begin(), seen->end(), d) != seen->end()) return;
    seen->push_back(d);
    cl_device_type type = 0;
    next.clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
    const char* kind = (type & CL_DEVICE_TYPE_GPU)           ? "gpu"
                       : (type & CL_DEVICE_TYPE_CPU)         ? "cpu"
                       : (type & CL_DEVICE_TYPE_ACCELERATOR) ? "accelerator"
                                                             : "other";
    RecordLine line('D');
    line.handle(d).word(kind).text(device_text(d, CL_DEVICE_VENDOR)).text(device_text(d, CL_DEVICE_NAME));
    emit(line.line());
}

void write_queue(cl_command_queue q, cl_device_id device, cl_command_queue_properties asked, bool added, uint64_t t) {
    note_device(device);
    RecordLine line('Q');
    line.num(t).handle(q).handle(device).hex(asked).num(added ? 1 : 0);
    emit(line.line());
}

// Whether the pending command ended; if so appends its T to `out` and drops the layer's reference.
bool poll(const PendingEvent& e, RecordBatch& out) {
    cl_int status = CL_COMPLETE;
    const cl_int rc = next.clGetEventInfo(e.event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
    if (rc != CL_SUCCESS)
        status = rc;  // unreadable despite the layer's reference: report it rather than keep polling
    else if (status > CL_COMPLETE)
        return false;  // queued, submitted or running
    static constexpr cl_profiling_info stamps[4] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                                    CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
    cl_ulong ns[4] = {};
    for (int i = 0; i < 4; ++i) {
        if (next.clGetEventProfilingInfo(e.event, stamps[i], sizeof ns[i], &ns[i], nullptr) != CL_SUCCESS) {
            std::fill(ns, ns + 4, 0);
            break;
        }
    }
    if (e.aggregate) {
        aggregate_time(e.aggregate, ns[2], ns[3], status);
        next.clReleaseEvent(e.event);
        return true;
    }
    RecordLine line('T');
    line.num(e.seq).num(ns[0]).num(ns[1]).num(ns[2]).num(ns[3]).snum(status);
    const std::string_view text = line.line();
    // Under a size cap the T was paid with its E: only the difference is counted now.
    if (g_space_limited.load(std::memory_order_relaxed))
        space_adjust(static_cast<int64_t>(text.size()) - static_cast<int64_t>(t_record_prepay));
    out.add(text);
    next.clReleaseEvent(e.event);
    return true;
}

// With the queue's lock held. Ended events leave the list; the rest keep their order.
void poll_pending(std::deque<PendingEvent>& pending, size_t max_polls, bool stop_at_busy, RecordBatch& out) {
    const size_t n = std::min(max_polls, pending.size());
    size_t ended = 0;
    for (size_t i = 0; i < n; ++i) {
        if (poll(pending[i], out)) {
            pending[i].event = nullptr;
            ++ended;
        } else if (stop_at_busy) {
            break;
        }
    }
    size_t popped = 0;
    while (popped < ended && !pending.empty() && !pending.front().event) {
        pending.pop_front();
        ++popped;
    }
    if (popped < ended) std::erase_if(pending, [](const PendingEvent& e) { return !e.event; });
}

template <typename Mutex>
bool lock_within(std::unique_lock<Mutex>& lock, int ms) {
    for (int i = 0; !lock.try_lock(); ++i) {
        if (i >= ms) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

}  // namespace

void note_queue(cl_command_queue q, cl_device_id device, cl_command_queue_properties asked, bool profiling_added,
                const cl_queue_properties* asked_list, bool answers_array, uint64_t t) {
    {
        std::lock_guard lock(objects().mu);
        auto& slot = objects().queues[q];
        if (!slot) slot = std::make_unique<QueueState>();
        slot->in_order = !(asked & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
        slot->profiling_added = profiling_added;
        slot->device = device;
        slot->asked = asked;
        slot->announced = true;
        slot->answers_array = answers_array;
        slot->asked_list.clear();
        for (const cl_queue_properties* p = asked_list; p && *p; p += 2)
            slot->asked_list.insert(slot->asked_list.end(), p, p + 2);
        if (asked_list) slot->asked_list.push_back(0);
    }
    write_queue(q, device, asked, profiling_added, t);
}

QueueState* queue_state(cl_command_queue q) {
    // Most programs enqueue to one queue per thread: remembering the last lookup skips the lock.
    // Safe because a handle's state is never freed nor replaced.
    if (q == t_last_queue && t_last_state) return t_last_state;
    QueueState* state;
    bool unseen = false, inherited = false;
    cl_device_id device = nullptr;
    cl_command_queue_properties asked = 0;
    bool added = false;
    {
        std::lock_guard lock(objects().mu);
        auto& slot = objects().queues[q];
        if (!slot) {
            slot = std::make_unique<QueueState>();
            unseen = true;
        } else if (!slot->announced) {
            // Created by the parent before a fork: this stream has not said what it is yet.
            inherited = true;
            slot->announced = true;
            device = slot->device;
            asked = slot->asked;
            added = slot->profiling_added;
        }
        state = slot.get();
    }
    if (inherited) write_queue(q, device, asked, added, now_ns());
    if (unseen) {
        // Created behind the layer's back: no profiling was added, so its timestamps may read 0.
        cl_device_id device = nullptr;
        cl_command_queue_properties props = 0;
        next.clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof device, &device, nullptr);
        next.clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, nullptr);
        {
            std::lock_guard lock(objects().mu);
            state->device = device;
            state->asked = props;
            state->announced = true;
        }
        state->in_order = !(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
        write_queue(q, device, props, false, now_ns());
    }
    t_last_queue = q;
    t_last_state = state;
    return state;
}

QueueState* find_queue_state(cl_command_queue q) {
    std::lock_guard lock(objects().mu);
    const auto it = objects().queues.find(q);
    return it == objects().queues.end() ? nullptr : it->second.get();
}

void watch_events(QueueState* qs, const PendingEvent* events, size_t n) {
    // A program that never waits (only flushes, or polls its own events) would otherwise grow the
    // list without bound: past this many, a few of the oldest are polled.
    constexpr size_t crowded = 256;
    constexpr size_t polls_when_crowded = 16;
    bool poll_some;
    {
        std::lock_guard lock(qs->mu);
        qs->pending.insert(qs->pending.end(), events, events + n);
        poll_some = qs->pending.size() > crowded;
    }
    if (poll_some) drain(qs, polls_when_crowded, qs->in_order);
}

void drain(QueueState* qs, size_t max_polls, bool stop_at_busy) {
    RecordBatch out(g_space_limited.load(std::memory_order_relaxed));
    std::lock_guard lock(qs->mu);
    if (!qs->pending.empty()) poll_pending(qs->pending, max_polls, stop_at_busy, out);
}

void reset_objects_after_fork() {
    Objects& o = objects();
    // The child has one thread: a mutex some other thread of the parent held at the fork would stay
    // locked for good, so each is made anew (glibc's mutexes are plain memory).
    new (&o.mu) std::mutex;
    for (auto& [q, s] : o.queues) {
        new (&s->mu) std::mutex;
        s->pending.clear();  // the layer's references to the parent's events, left unreleased
        s->announced = false;
    }
    t_last_queue = nullptr;
    t_last_state = nullptr;
    g_seen_devices.store(new SeenDevices, std::memory_order_release);
    // The old writer maps the parent's file (MAP_SHARED): it is left untouched, never written.
    g_writer.store(new TraceWriter, std::memory_order_release);
}

void shutdown() {
    if (!g_recording.exchange(false)) return;
    // The program is exiting: other threads may still be inside OpenCL, the driver may be partly
    // torn down. So: poll only, skip any lock that stays taken, and leave busy events alone.
    flush_all_staged();
    RecordBatch out(g_space_limited.load(std::memory_order_relaxed));
    std::vector<QueueState*> queues;
    {
        std::unique_lock lock(objects().mu, std::defer_lock);
        if (lock_within(lock, 100)) {
            for (auto& [q, s] : objects().queues)
                queues.push_back(s.get());
        }
    }
    if (next.clGetEventInfo && next.clGetEventProfilingInfo && next.clReleaseEvent) {
        for (QueueState* qs : queues) {
            std::unique_lock lock(qs->mu, std::defer_lock);
            if (!lock_within(lock, 20)) continue;
            poll_pending(qs->pending, SIZE_MAX, false, out);
        }
    }
    out.flush();
    if (g_space_limited.load()) write_aggregates(true);
    RecordLine x('X');
    x.num(now_ns());
    writer().close(x.line());
}

}  // namespace clprobe::layer
