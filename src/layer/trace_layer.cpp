// clprobe's trace layer. `clprobe trace -- PROGRAM` runs the program with OPENCL_LAYERS naming this
// library and CLPROBE_TRACE_FILE naming the file; ocl-icd then routes every OpenCL call through the
// dispatch table clInitLayer returns here. The layer records what the program asks of OpenCL in the
// format of trace_format.hpp and forwards every call unchanged: results, out-parameters, events and
// callbacks are the driver's. Without CLPROBE_TRACE_FILE (or when the file cannot be made) the table
// is the layer below's, untouched.
//
// Where things are: object_hooks.cpp (queues, memory, programs, kernels), enqueue_hooks.cpp (every
// enqueue and wait), command_log.cpp (E and W staged per thread, written in batches: why is there),
// layer_state.cpp (tracked objects, pending events and their T records, the exit handler),
// trace_writer.cpp (the crash-safe file).
//
// Environment, besides trace_format.hpp's:
//   CLPROBE_TRACE_CHUNK_BYTES  size of the file chunks the writer maps (default 8 MiB); tests make
//                              it small to cross chunk boundaries often
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "layer/capture_control.hpp"
#include "layer/command_log.hpp"
#include "layer/hooks.hpp"
#include "layer/layer_state.hpp"
#include "layer/process_stream.hpp"
#include "layer/record_line.hpp"
#include "layer/replay_capture.hpp"
#include "layer/space_budget.hpp"
#include "layer/trace_format.hpp"

namespace clprobe::layer {
namespace {

cl_icd_dispatch mine;  // what the loader calls

void at_exit() {
    shutdown();
}

// Signals that end the process without running exit handlers: the calls still staged per thread
// would be lost. The layer's handler writes them out, then hands the signal to the handler it
// displaced (a program's, a driver's compiler's such as LLVM's crash handler) or, when that was the
// default action, restores it and raises the signal again, so the process ends as it would have.
// Ignored signals are left alone.
constexpr int fatal_signals[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTERM, SIGINT, SIGHUP, SIGQUIT};
constexpr int max_signal = 65;
struct sigaction displaced[max_signal];
std::mutex arming;

struct sigaction original[max_signal];  // before the layer armed at all
bool seen[max_signal];

bool is_ours(const struct sigaction& a);

// Without the lazy open of recording(): a signal handler must not create files.
bool recording_now() {
    return g_recording.load(std::memory_order_relaxed);
}

void call_displaced(int signal_number, siginfo_t* info, void* context) {
    const struct sigaction& before = displaced[signal_number];
    if (before.sa_flags & SA_SIGINFO) {
        if (before.sa_sigaction) before.sa_sigaction(signal_number, info, context);
    } else if (before.sa_handler == SIG_DFL) {
        // The signal is blocked while this handler runs: raised again, it is delivered right
        // after the return, with the default action.
        signal(signal_number, SIG_DFL);
        ::raise(signal_number);
        return;
    } else if (before.sa_handler != SIG_IGN) {
        before.sa_handler(signal_number);
    }
    // A handler that uninstalled itself by restoring what it had displaced (LLVM's crash handler
    // does, then lets the fault recur or raises the signal again) put the layer's back: what it
    // meant to restore is what the process had before the layer, so the next delivery goes there.
    struct sigaction now {};
    if (sigaction(signal_number, nullptr, &now) == 0 && is_ours(now))
        displaced[signal_number] = original[signal_number];
}

std::atomic<bool> chaining[max_signal];

void on_fatal_signal(int signal_number, siginfo_t* info, void* context) {
    const int saved_errno = errno;
    if (chaining[signal_number].exchange(true)) {
        // Entered again from inside the displaced handler (it restored the layer's handler and
        // raised the signal at once): it has given the signal up, so it goes where it would have
        // gone without the layer.
        displaced[signal_number] = original[signal_number];
        call_displaced(signal_number, info, context);
        return;
    }
    flush_staged_on_signal();
    // Says how the process ended when nothing else will: a process clprobe does not reap itself
    // (a grandchild, a forked worker) is otherwise only a file without its X.
    if (recording_now()) {
        RecordLine s('S');
        s.num(now_ns()).num(static_cast<uint64_t>(signal_number));
        writer().write_if_free(s.line());
    }
    errno = saved_errno;
    call_displaced(signal_number, info, context);
    chaining[signal_number].store(false);
    errno = saved_errno;
}

bool is_ours(const struct sigaction& a) {
    return (a.sa_flags & SA_SIGINFO) && a.sa_sigaction == on_fatal_signal;
}

}  // namespace

void arm_fatal_signal_flush() {
    std::lock_guard lock(arming);
    for (int signal_number : fatal_signals) {
        struct sigaction current {};
        if (sigaction(signal_number, nullptr, &current) != 0) continue;
        if (is_ours(current) || (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN)) continue;
        if (!seen[signal_number]) original[signal_number] = current, seen[signal_number] = true;
        displaced[signal_number] = current;
        struct sigaction action {};
        action.sa_sigaction = on_fatal_signal;
        action.sa_mask = current.sa_mask;
        // Never SA_NODEFER: a handler that raises the signal again from inside must find it blocked.
        action.sa_flags = SA_SIGINFO | (current.sa_flags & (SA_ONSTACK | SA_RESTART));
        sigaction(signal_number, &action, nullptr);
    }
}

namespace {

bool start_recording() {
    init_space_budget();  // before the stream's first records, which count against it
    if (!open_process_stream()) return false;
    init_capture_control();
    init_replay_capture();
    pthread_atfork(nullptr, nullptr, on_fork_child);
    arm_exit_handler();
    arm_fatal_signal_flush();
    return true;
}

}  // namespace

// Handlers run last-registered first. The driver may register its own teardown when it first
// initialises its devices, which comes after clInitLayer; registering again when the program creates
// its first queue puts the layer's handler ahead of such teardown, so its final polls still find a
// working driver. shutdown() runs once, whichever registration fires first.
void arm_exit_handler() {
    std::atexit(at_exit);
}

}  // namespace clprobe::layer

using namespace clprobe::layer;

extern "C" {

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
        static const char name[] = "clprobe trace layer";
        return answer(name, sizeof name);
    }
#endif
    return CL_INVALID_VALUE;
}

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL
clInitLayer(cl_uint num_entries, const cl_icd_dispatch* target, cl_uint* num_entries_ret,
            const cl_icd_dispatch** layer_dispatch_ret) {
    if (!target || !num_entries_ret || !layer_dispatch_ret) return CL_INVALID_VALUE;
    static std::once_flag once;
    std::call_once(once, [&] {
        // A loader with a shorter table than these headers: the entries it lacks stay null, and
        // hook() leaves them so.
        const cl_uint ours = sizeof(cl_icd_dispatch) / sizeof(void*);
        std::memset(&next, 0, sizeof next);
        std::memcpy(&next, target, std::min(num_entries, ours) * sizeof(void*));
        mine = next;
        if (start_recording()) {
            install_object_hooks(mine);
            install_enqueue_hooks(mine);
        }
    });
    *num_entries_ret = sizeof(cl_icd_dispatch) / sizeof(void*);
    *layer_dispatch_ret = &mine;
    return CL_SUCCESS;
}

}  // extern "C"
