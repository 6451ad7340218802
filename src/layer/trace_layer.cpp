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
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "layer/hooks.hpp"
#include "layer/layer_state.hpp"
#include "layer/record_line.hpp"
#include "layer/trace_format.hpp"

namespace clprobe::layer {
namespace {

cl_icd_dispatch mine;  // what the loader calls

void at_exit() {
    shutdown();
}

// After fork() the child shares the file mapping and holds copies of locks other threads may have
// held: it must not record (nor run the exit handler's shutdown).
void in_fork_child() {
    g_forked_child.store(true);
    g_recording.store(false);
    writer().abandon();
}

bool start_recording() {
    const char* path = std::getenv(trace_format::file_env);
    if (!path || !*path) return false;
    size_t chunk = size_t{8} << 20;
    if (const char* text = std::getenv("CLPROBE_TRACE_CHUNK_BYTES"))
        chunk = std::max<size_t>(std::strtoull(text, nullptr, 10), 64 * 1024);
    if (!writer().open(path, chunk)) return false;
    RecordLine header('H');
    header.num(trace_format::version).num(static_cast<uint64_t>(getpid())).num(now_ns());
    emit(header.line());
    g_recording.store(true);
    pthread_atfork(nullptr, nullptr, in_fork_child);
    arm_exit_handler();
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
