// A test-only OpenCL layer that behaves like the laziest driver the spec allows, so that code relying on
// what PoCL happens to do (rather than on what OpenCL promises) fails tests on PoCL. ocl-icd loads it
// from OPENCL_LAYERS; tests/CMakeLists.txt runs the integration suite and a quick diagnose under it.
//
// What it does differently from the driver below (OpenCL 3.0 API spec, sections 5.2.2, 5.11, 5.15):
//   - Deferred transfers. Non-blocking clEnqueue{Write,Read}Buffer(Rect) and clEnqueueFillBuffer wait
//     behind a per-queue "gate", a user event added to their wait list. Gates open (CL_COMPLETE) only at
//     the next synchronisation point on ANY queue: clFlush, clFinish, clWaitForEvents, a blocking read, a
//     map, clReleaseCommandQueue/clReleaseContext, or a poll of CL_EVENT_COMMAND_EXECUTION_STATUS (see
//     below). Until then the driver has not touched the host memory of a non-blocking write: a program
//     that frees or reuses it before the command completes transfers whatever is there at that point.
//     A blocking write does NOT open the gates: it promises only its own host pointer.
//   - Blocking writes return before their event is CL_COMPLETE. The layer copies the host data into a
//     staging copy of its own at once (all a blocking write promises is that the pointer may be reused
//     on return), enqueues the real write non-blocking from the staging copy behind the gate and frees
//     the copy when the command completes (clSetEventCallback).
//   - clGetEventProfilingInfo on an event that is not CL_COMPLETE returns CL_PROFILING_INFO_NOT_AVAILABLE
//     without asking the driver, as the spec allows.
//   - Non-blocking reads poison their destination (0xff bytes: NaN for floats, -1 for integers) before
//     the command is enqueued: its contents are undefined until the command completes, and a program
//     that looks early sees poison rather than a stale copy that happens to be right.
//   - A check that makes use-after-free deterministic: the layer samples the host memory of each
//     non-blocking write when it is enqueued (all of it up to 128 KiB, else the first and last 64 KiB)
//     and compares when the gate opens, before the command can have started. A difference means the
//     program changed or freed that memory while the command was pending, which the spec forbids.
//     CLPROBE_LAZY_ON_VIOLATION chooses what then happens: "abort" (default: a message on stderr, then
//     abort(), so the test fails at the culprit), "warn" (the message only) or "ignore" (transfer the
//     changed memory silently, as a lazy driver would). One legal pattern it would flag: a non-blocking
//     write from memory that an earlier non-blocking read on the same in-order queue fills, when that
//     read is already running as the gate opens; clprobe has none.
// Everything else passes straight through. Nothing is printed on stdout.
//
// Choices that keep it usable (each makes the layer less lazy, never wrong):
//   - Polling CL_EVENT_COMMAND_EXECUTION_STATUS opens the gates first. A program that spins on the status
//     of a command it never flushed would wait forever on this layer; real drivers submit eventually, so
//     such a poll counts as an implied flush rather than a hang.
//   - Blocking clEnqueueWriteBufferRect, blocking image and SVM transfers open the gates and go to the
//     driver as they are (no staging copy).
//   - Staging copies waiting behind gates are bounded: past 512 MiB the gates open (a driver may start
//     work whenever it likes), so timed loops of large blocking writes do not exhaust host memory.
//   - One gate per queue, and any synchronisation point opens all of them: a command on one queue may wait
//     for an event of another, and a wait must never depend on a gate nobody will open.
//
// For its own self-test (tests/lazy_layer/lazy_layer_selftest.cpp) the layer exports
// clprobe_lazy_layer_counts(): the gates still closed and the staging copies not yet freed.
#include <CL/cl_layer.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

cl_icd_dispatch next;  // the layer below (the driver)
cl_icd_dispatch mine;  // what the loader calls

enum class OnViolation { abort_process, warn, ignore };
OnViolation on_violation = OnViolation::abort_process;

constexpr size_t staging_limit = size_t{512} << 20;
constexpr size_t whole_sample_limit = size_t{128} << 10;
constexpr size_t edge_sample = size_t{64} << 10;

std::atomic<size_t> staged_bytes{0};
std::atomic<size_t> staged_commands{0};

// Host memory a pending non-blocking write will read, as it was when the write was enqueued.
struct Watched {
    const char* call;
    const unsigned char* ptr;
    size_t bytes;
    std::vector<unsigned char> head, tail;  // tail: the last tail.size() bytes, when not all is in head
};

Watched watch(const char* call, const void* ptr, size_t bytes) {
    Watched w{call, static_cast<const unsigned char*>(ptr), bytes, {}, {}};
    if (!ptr || bytes == 0 || on_violation == OnViolation::ignore) return w;
    const size_t head = bytes <= whole_sample_limit ? bytes : edge_sample;
    w.head.assign(w.ptr, w.ptr + head);
    if (head < bytes) w.tail.assign(w.ptr + bytes - edge_sample, w.ptr + bytes);
    return w;
}

void check(const Watched& w) {
    if (w.head.empty()) return;
    const bool same =
        std::memcmp(w.ptr, w.head.data(), w.head.size()) == 0 &&
        (w.tail.empty() || std::memcmp(w.ptr + w.bytes - w.tail.size(), w.tail.data(), w.tail.size()) == 0);
    if (same || on_violation == OnViolation::ignore) return;
    std::fprintf(stderr,
                 "clprobe lazy layer: the host memory of a non-blocking %s (%zu bytes at %p) changed between the "
                 "call and the command's start: the program freed or reused it before the command completed, "
                 "which OpenCL does not allow (a lazy driver would transfer the changed bytes)\n",
                 w.call, w.bytes, static_cast<const void*>(w.ptr));
    std::fflush(stderr);
    if (on_violation == OnViolation::abort_process) std::abort();
}

struct Gate {
    cl_event event = nullptr;      // a user event of the queue's context; the layer holds one reference
    std::vector<Watched> watched;  // what the writes behind it will read
};

std::mutex gates_mutex;
std::unordered_map<cl_command_queue, Gate> gates;  // the closed gates, one per queue at most

// Opens every closed gate: checks what the writes behind it will read, then completes the user event.
// The driver is called outside the lock: completing a user event may run callbacks that call back in.
void open_gates() {
    std::unordered_map<cl_command_queue, Gate> taken;
    {
        std::lock_guard lock(gates_mutex);
        if (gates.empty()) return;
        taken.swap(gates);
    }
    for (auto& [queue, gate] : taken) {
        for (const Watched& w : gate.watched)
            check(w);
        next.clSetUserEventStatus(gate.event, CL_COMPLETE);
        next.clReleaseEvent(gate.event);
    }
}

// The queue's closed gate (made when there is none), with a reference for the caller; null when no user
// event can be made, and the command then goes ungated.
cl_event retain_gate(cl_command_queue q) {
    std::lock_guard lock(gates_mutex);
    auto it = gates.find(q);
    if (it == gates.end()) {
        cl_context context = nullptr;
        if (next.clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof context, &context, nullptr) != CL_SUCCESS)
            return nullptr;
        cl_int err = CL_SUCCESS;
        cl_event event = next.clCreateUserEvent(context, &err);
        if (err != CL_SUCCESS || !event) return nullptr;
        it = gates.emplace(q, Gate{event, {}}).first;
    }
    next.clRetainEvent(it->second.event);
    return it->second.event;
}

// Records what a write behind `gate` will read, if that gate is still closed (if another thread opened
// it meanwhile, the command may already be running and there is nothing left to check).
void attach(cl_command_queue q, cl_event gate, Watched&& w) {
    if (w.head.empty()) return;
    std::lock_guard lock(gates_mutex);
    auto it = gates.find(q);
    if (it != gates.end() && it->second.event == gate) it->second.watched.push_back(std::move(w));
}

// Enqueues `command(num_events, events, event)` behind the queue's gate.
template <typename Command>
cl_int gated(cl_command_queue q, cl_uint nwait, const cl_event* wait, cl_event* ev, Watched&& w, Command command) {
    if (nwait > 0 && !wait) return command(nwait, wait, ev);  // let the driver report the bad wait list
    cl_event gate = retain_gate(q);
    if (!gate) return command(nwait, wait, ev);
    std::vector<cl_event> list(wait, wait + nwait);
    list.push_back(gate);
    const cl_int err = command(static_cast<cl_uint>(list.size()), list.data(), ev);
    if (err == CL_SUCCESS) attach(q, gate, std::move(w));
    next.clReleaseEvent(gate);
    return err;
}

struct Staging {
    std::vector<unsigned char> bytes;
};

void CL_CALLBACK free_staging(cl_event, cl_int, void* user) {
    auto* s = static_cast<Staging*>(user);
    staged_bytes -= s->bytes.size();
    staged_commands -= 1;
    delete s;
}

cl_int CL_API_CALL enqueue_write_buffer(cl_command_queue q, cl_mem b, cl_bool blocking, size_t offset, size_t size,
                                        const void* ptr, cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (!blocking)
        return gated(q, nwait, wait, ev, watch("clEnqueueWriteBuffer", ptr, size),
                     [&](cl_uint n, const cl_event* w, cl_event* e) {
                         return next.clEnqueueWriteBuffer(q, b, CL_FALSE, offset, size, ptr, n, w, e);
                     });
    if (!ptr || size == 0) return next.clEnqueueWriteBuffer(q, b, blocking, offset, size, ptr, nwait, wait, ev);
    // Blocking: copy now, transfer later, return before the command completes.
    auto* staging = new Staging{std::vector<unsigned char>(static_cast<const unsigned char*>(ptr),
                                                           static_cast<const unsigned char*>(ptr) + size)};
    cl_event done = nullptr;
    const cl_int err = gated(q, nwait, wait, &done, Watched{}, [&](cl_uint n, const cl_event* w, cl_event* e) {
        return next.clEnqueueWriteBuffer(q, b, CL_FALSE, offset, size, staging->bytes.data(), n, w, e);
    });
    if (err != CL_SUCCESS) {
        delete staging;
        return err;
    }
    staged_bytes += size;
    staged_commands += 1;
    if (next.clSetEventCallback(done, CL_COMPLETE, free_staging, staging) != CL_SUCCESS) {
        open_gates();
        next.clWaitForEvents(1, &done);
        free_staging(done, CL_COMPLETE, staging);
    }
    if (ev)
        *ev = done;
    else
        next.clReleaseEvent(done);
    if (staged_bytes.load() > staging_limit) {
        open_gates();
        next.clFlush(q);
    }
    return CL_SUCCESS;
}

cl_int CL_API_CALL enqueue_write_buffer_rect(cl_command_queue q, cl_mem b, cl_bool blocking,
                                             const size_t* buffer_origin, const size_t* host_origin,
                                             const size_t* region, size_t buffer_row_pitch, size_t buffer_slice_pitch,
                                             size_t host_row_pitch, size_t host_slice_pitch, const void* ptr,
                                             cl_uint nwait, const cl_event* wait, cl_event* ev) {
    auto forward = [&](cl_bool block, cl_uint n, const cl_event* w, cl_event* e) {
        return next.clEnqueueWriteBufferRect(q, b, block, buffer_origin, host_origin, region, buffer_row_pitch,
                                             buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, n, w, e);
    };
    if (blocking) {
        open_gates();
        return forward(CL_TRUE, nwait, wait, ev);
    }
    // Only the first row is watched: enough to catch memory that was freed.
    Watched w;
    if (ptr && host_origin && region) {
        const size_t row = host_row_pitch ? host_row_pitch : region[0];
        const size_t slice = host_slice_pitch ? host_slice_pitch : row * region[1];
        const size_t first = host_origin[2] * slice + host_origin[1] * row + host_origin[0];
        w = watch("clEnqueueWriteBufferRect", static_cast<const unsigned char*>(ptr) + first, region[0]);
    }
    return gated(q, nwait, wait, ev, std::move(w),
                 [&](cl_uint n, const cl_event* wl, cl_event* e) { return forward(CL_FALSE, n, wl, e); });
}

cl_int CL_API_CALL enqueue_read_buffer(cl_command_queue q, cl_mem b, cl_bool blocking, size_t offset, size_t size,
                                       void* ptr, cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (blocking) {
        open_gates();
        return next.clEnqueueReadBuffer(q, b, CL_TRUE, offset, size, ptr, nwait, wait, ev);
    }
    if (ptr && size) std::memset(ptr, 0xff, size);
    return gated(q, nwait, wait, ev, Watched{}, [&](cl_uint n, const cl_event* w, cl_event* e) {
        return next.clEnqueueReadBuffer(q, b, CL_FALSE, offset, size, ptr, n, w, e);
    });
}

cl_int CL_API_CALL enqueue_read_buffer_rect(cl_command_queue q, cl_mem b, cl_bool blocking, const size_t* buffer_origin,
                                            const size_t* host_origin, const size_t* region, size_t buffer_row_pitch,
                                            size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch,
                                            void* ptr, cl_uint nwait, const cl_event* wait, cl_event* ev) {
    auto forward = [&](cl_bool block, cl_uint n, const cl_event* w, cl_event* e) {
        return next.clEnqueueReadBufferRect(q, b, block, buffer_origin, host_origin, region, buffer_row_pitch,
                                            buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, n, w, e);
    };
    if (blocking) {
        open_gates();
        return forward(CL_TRUE, nwait, wait, ev);
    }
    return gated(q, nwait, wait, ev, Watched{},
                 [&](cl_uint n, const cl_event* w, cl_event* e) { return forward(CL_FALSE, n, w, e); });
}

// The pattern is the driver's to copy at the call (the spec lets the program reuse it on return).
cl_int CL_API_CALL enqueue_fill_buffer(cl_command_queue q, cl_mem b, const void* pattern, size_t pattern_size,
                                       size_t offset, size_t size, cl_uint nwait, const cl_event* wait, cl_event* ev) {
    return gated(q, nwait, wait, ev, Watched{}, [&](cl_uint n, const cl_event* w, cl_event* e) {
        return next.clEnqueueFillBuffer(q, b, pattern, pattern_size, offset, size, n, w, e);
    });
}

cl_int CL_API_CALL get_event_profiling_info(cl_event e, cl_profiling_info param, size_t size, void* value,
                                            size_t* size_ret) {
    cl_int status = CL_COMPLETE;
    if (next.clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) == CL_SUCCESS &&
        status != CL_COMPLETE)
        return CL_PROFILING_INFO_NOT_AVAILABLE;
    return next.clGetEventProfilingInfo(e, param, size, value, size_ret);
}

cl_int CL_API_CALL get_event_info(cl_event e, cl_event_info param, size_t size, void* value, size_t* size_ret) {
    if (param == CL_EVENT_COMMAND_EXECUTION_STATUS) open_gates();  // an implied flush, see the top
    return next.clGetEventInfo(e, param, size, value, size_ret);
}

// Synchronisation points: open the gates, then do what was asked.
cl_int CL_API_CALL flush(cl_command_queue q) {
    open_gates();
    return next.clFlush(q);
}

cl_int CL_API_CALL finish(cl_command_queue q) {
    open_gates();
    return next.clFinish(q);
}

cl_int CL_API_CALL wait_for_events(cl_uint n, const cl_event* list) {
    open_gates();
    return next.clWaitForEvents(n, list);
}

cl_int CL_API_CALL release_queue(cl_command_queue q) {
    open_gates();
    return next.clReleaseCommandQueue(q);
}

cl_int CL_API_CALL release_context(cl_context c) {
    open_gates();
    return next.clReleaseContext(c);
}

void* CL_API_CALL map_buffer(cl_command_queue q, cl_mem b, cl_bool blocking, cl_map_flags flags, size_t offset,
                             size_t size, cl_uint nwait, const cl_event* wait, cl_event* ev, cl_int* err) {
    open_gates();
    return next.clEnqueueMapBuffer(q, b, blocking, flags, offset, size, nwait, wait, ev, err);
}

void* CL_API_CALL map_image(cl_command_queue q, cl_mem image, cl_bool blocking, cl_map_flags flags,
                            const size_t* origin, const size_t* region, size_t* row_pitch, size_t* slice_pitch,
                            cl_uint nwait, const cl_event* wait, cl_event* ev, cl_int* err) {
    open_gates();
    return next.clEnqueueMapImage(q, image, blocking, flags, origin, region, row_pitch, slice_pitch, nwait, wait, ev,
                                  err);
}

cl_int CL_API_CALL read_image(cl_command_queue q, cl_mem image, cl_bool blocking, const size_t* origin,
                              const size_t* region, size_t row_pitch, size_t slice_pitch, void* ptr, cl_uint nwait,
                              const cl_event* wait, cl_event* ev) {
    if (blocking) open_gates();
    return next.clEnqueueReadImage(q, image, blocking, origin, region, row_pitch, slice_pitch, ptr, nwait, wait, ev);
}

cl_int CL_API_CALL write_image(cl_command_queue q, cl_mem image, cl_bool blocking, const size_t* origin,
                               const size_t* region, size_t row_pitch, size_t slice_pitch, const void* ptr,
                               cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (blocking) open_gates();
    return next.clEnqueueWriteImage(q, image, blocking, origin, region, row_pitch, slice_pitch, ptr, nwait, wait, ev);
}

cl_int CL_API_CALL svm_memcpy(cl_command_queue q, cl_bool blocking, void* dst, const void* src, size_t size,
                              cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (blocking) open_gates();
    return next.clEnqueueSVMMemcpy(q, blocking, dst, src, size, nwait, wait, ev);
}

cl_int CL_API_CALL svm_map(cl_command_queue q, cl_bool blocking, cl_map_flags flags, void* svm, size_t size,
                           cl_uint nwait, const cl_event* wait, cl_event* ev) {
    open_gates();
    return next.clEnqueueSVMMap(q, blocking, flags, svm, size, nwait, wait, ev);
}

OnViolation parse_on_violation(const char* text) {
    const std::string v = text ? text : "";
    if (v == "warn") return OnViolation::warn;
    if (v == "ignore") return OnViolation::ignore;
    return OnViolation::abort_process;
}

}  // namespace

extern "C" {

// For the self-test: the gates still closed and the blocking writes whose staging copy is not yet freed.
__attribute__((visibility("default"))) void clprobe_lazy_layer_counts(size_t* closed_gates, size_t* staged) {
    if (closed_gates) {
        std::lock_guard lock(gates_mutex);
        *closed_gates = gates.size();
    }
    if (staged) *staged = staged_commands.load();
}

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param, size_t size,
                                                                                      void* value, size_t* size_ret) {
    auto answer = [&](const void* data, size_t n) {
        if (value) {
            if (size < n) return CL_INVALID_VALUE;
            std::memcpy(value, data, n);
        }
        if (size_ret) *size_ret = n;
        return CL_SUCCESS;
    };
    if (param == CL_LAYER_API_VERSION) {
        const cl_layer_api_version v = CL_LAYER_API_VERSION_100;
        return answer(&v, sizeof v);
    }
#ifdef CL_LAYER_NAME
    if (param == CL_LAYER_NAME) {
        static const char name[] = "clprobe lazy driver";
        return answer(name, sizeof name);
    }
#endif
    return CL_INVALID_VALUE;
}

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL
clInitLayer(cl_uint num_entries, const cl_icd_dispatch* target, cl_uint* num_entries_ret,
            const cl_icd_dispatch** layer_dispatch_ret) {
    const cl_uint ours = sizeof(cl_icd_dispatch) / sizeof(void*);
    if (!target || !num_entries_ret || !layer_dispatch_ret || num_entries < ours) return CL_INVALID_VALUE;
    std::memcpy(&next, target, sizeof next);
    mine = next;
    mine.clEnqueueWriteBuffer = enqueue_write_buffer;
    mine.clEnqueueWriteBufferRect = enqueue_write_buffer_rect;
    mine.clEnqueueReadBuffer = enqueue_read_buffer;
    mine.clEnqueueReadBufferRect = enqueue_read_buffer_rect;
    mine.clEnqueueFillBuffer = enqueue_fill_buffer;
    mine.clGetEventProfilingInfo = get_event_profiling_info;
    mine.clGetEventInfo = get_event_info;
    mine.clFlush = flush;
    mine.clFinish = finish;
    mine.clWaitForEvents = wait_for_events;
    mine.clReleaseCommandQueue = release_queue;
    mine.clReleaseContext = release_context;
    mine.clEnqueueMapBuffer = map_buffer;
    mine.clEnqueueMapImage = map_image;
    mine.clEnqueueReadImage = read_image;
    mine.clEnqueueWriteImage = write_image;
    mine.clEnqueueSVMMemcpy = svm_memcpy;
    mine.clEnqueueSVMMap = svm_map;
    on_violation = parse_on_violation(std::getenv("CLPROBE_LAZY_ON_VIOLATION"));
    *num_entries_ret = ours;
    *layer_dispatch_ret = &mine;
    return CL_SUCCESS;
}

}  // extern "C"
