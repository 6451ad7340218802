// A fault-injection OpenCL layer for clprobe's reliability tests. ocl-icd loads the layers named
// in OPENCL_LAYERS and routes every call through them; this one passes calls to the real driver
// unless a rule in CLPROBE_FAULTS says to fail or stall them.
//
// CLPROBE_FAULTS: rules separated by ';', each a list of key=value separated by ',':
//   call=clCreateBuffer        the entry point (required)
//   error=CL_OUT_OF_RESOURCES  the error to return (a name below or a number); without it, no failure
//   nth=3                      only the 3rd call (1-based); default: every call
//   min_bytes=1048576          clCreateBuffer / clEnqueue{Read,Write}Buffer: only transfers this large
//   stall_ms=2000              sleep this long before passing the call on (a slow or hung device)
//   profiling=1                clCreateCommandQueue*: only queues that ask for profiling
//   kernel=grad_row            clEnqueueNDRangeKernel: only kernels whose name contains this
//   action=segv|abort|hang     a driver that faults (raise SIGSEGV), aborts (abort()), or never
//                              returns from the call (sleeps forever; only SIGKILL ends it)
// CLPROBE_FAULT_MARK=PATH: a file created just before an action runs, so a test knows the fault
// was reached (a process stuck in the driver says nothing else).
// Example: CLPROBE_FAULTS="call=clCreateBuffer,error=CL_MEM_OBJECT_ALLOCATION_FAILURE,min_bytes=67108864"
//          CLPROBE_FAULTS="call=clEnqueueNDRangeKernel,kernel=grad_row_part,action=segv"
#include <CL/cl_layer.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <sstream>
#include <string>
#include <thread>

namespace {

struct Rule {
    std::string call;
    bool fails = false;
    cl_int error = 0;
    long nth = 0;
    size_t min_bytes = 0;
    int stall_ms = 0;
    bool profiling_only = false;
    std::string kernel;  // part of the kernel's name
    enum class Action { none, segv, abort, hang } action = Action::none;
    std::atomic<long> calls{0};
};

[[noreturn]] void hang_forever() {
    // pause() returns after a handled signal (clprobe's SIGTERM handler): sleep again, as a
    // driver stuck in the hardware would.
    for (;;)
        ::pause();
}

void act(Rule::Action action) {
    if (action == Rule::Action::none) return;
    if (const char* mark = std::getenv("CLPROBE_FAULT_MARK"); mark && *mark) {
        std::FILE* f = std::fopen(mark, "w");
        if (f) std::fclose(f);
    }
    switch (action) {
        case Rule::Action::segv:
            std::raise(SIGSEGV);
            break;
        case Rule::Action::abort:
            std::abort();
        case Rule::Action::hang:
            hang_forever();
        case Rule::Action::none:
            break;
    }
}

std::deque<Rule>& rules() {
    static std::deque<Rule> r;
    return r;
}

cl_int error_code(const std::string& text) {
    static const std::map<std::string, cl_int> names = {
        {"CL_DEVICE_NOT_AVAILABLE", CL_DEVICE_NOT_AVAILABLE},
        {"CL_MEM_OBJECT_ALLOCATION_FAILURE", CL_MEM_OBJECT_ALLOCATION_FAILURE},
        {"CL_OUT_OF_RESOURCES", CL_OUT_OF_RESOURCES},
        {"CL_OUT_OF_HOST_MEMORY", CL_OUT_OF_HOST_MEMORY},
        {"CL_BUILD_PROGRAM_FAILURE", CL_BUILD_PROGRAM_FAILURE},
        {"CL_INVALID_QUEUE_PROPERTIES", CL_INVALID_QUEUE_PROPERTIES},
        {"CL_INVALID_VALUE", CL_INVALID_VALUE},
        {"CL_INVALID_OPERATION", CL_INVALID_OPERATION},
    };
    auto it = names.find(text);
    return it != names.end() ? it->second : static_cast<cl_int>(std::strtol(text.c_str(), nullptr, 10));
}

void parse_rules(const char* spec) {
    std::stringstream all(spec ? spec : "");
    for (std::string one; std::getline(all, one, ';');) {
        if (one.empty()) continue;
        Rule& r = rules().emplace_back();
        std::stringstream fields(one);
        for (std::string kv; std::getline(fields, kv, ',');) {
            const auto eq = kv.find('=');
            if (eq == std::string::npos) continue;
            const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
            if (k == "call")
                r.call = v;
            else if (k == "error")
                r.fails = true, r.error = error_code(v);
            else if (k == "nth")
                r.nth = std::strtol(v.c_str(), nullptr, 10);
            else if (k == "min_bytes")
                r.min_bytes = std::strtoull(v.c_str(), nullptr, 10);
            else if (k == "stall_ms")
                r.stall_ms = static_cast<int>(std::strtol(v.c_str(), nullptr, 10));
            else if (k == "profiling")
                r.profiling_only = v == "1";
            else if (k == "kernel")
                r.kernel = v;
            else if (k == "action")
                r.action = v == "segv"    ? Rule::Action::segv
                           : v == "abort" ? Rule::Action::abort
                           : v == "hang"  ? Rule::Action::hang
                                          : Rule::Action::none;
        }
    }
}

// The first rule for `call` that applies; it stalls here if asked. Returns the error to inject,
// or CL_SUCCESS to pass the call on.
cl_int inject(const char* call, size_t bytes = 0, bool profiling = false, const std::string& kernel = {}) {
    for (Rule& r : rules()) {
        if (r.call != call) continue;
        if (r.min_bytes && bytes < r.min_bytes) continue;
        if (r.profiling_only && !profiling) continue;
        if (!r.kernel.empty() && kernel.find(r.kernel) == std::string::npos) continue;
        const long n = ++r.calls;
        if (r.nth && n != r.nth) continue;
        if (r.stall_ms) std::this_thread::sleep_for(std::chrono::milliseconds(r.stall_ms));
        act(r.action);
        if (r.fails) return r.error;
    }
    return CL_SUCCESS;
}

cl_icd_dispatch next;  // the layer below (the driver)
cl_icd_dispatch mine;  // what the loader calls

template <typename T>
T fail_with(cl_int code, cl_int* errcode_ret) {
    if (errcode_ret) *errcode_ret = code;
    return nullptr;
}

cl_int CL_API_CALL get_device_ids(cl_platform_id p, cl_device_type t, cl_uint n, cl_device_id* d, cl_uint* nr) {
    if (cl_int e = inject("clGetDeviceIDs")) return e;
    return next.clGetDeviceIDs(p, t, n, d, nr);
}

cl_context CL_API_CALL create_context(const cl_context_properties* props, cl_uint n, const cl_device_id* d,
                                      void(CL_CALLBACK* notify)(const char*, const void*, size_t, void*), void* user,
                                      cl_int* err) {
    if (cl_int e = inject("clCreateContext")) return fail_with<cl_context>(e, err);
    return next.clCreateContext(props, n, d, notify, user, err);
}

cl_command_queue CL_API_CALL create_queue(cl_context c, cl_device_id d, cl_command_queue_properties props,
                                          cl_int* err) {
    if (cl_int e = inject("clCreateCommandQueue", 0, props & CL_QUEUE_PROFILING_ENABLE))
        return fail_with<cl_command_queue>(e, err);
    return next.clCreateCommandQueue(c, d, props, err);
}

cl_command_queue CL_API_CALL create_queue_with_properties(cl_context c, cl_device_id d,
                                                          const cl_queue_properties* props, cl_int* err) {
    bool profiling = false;
    for (const cl_queue_properties* p = props; p && *p; p += 2)
        if (p[0] == CL_QUEUE_PROPERTIES && (p[1] & CL_QUEUE_PROFILING_ENABLE)) profiling = true;
    if (cl_int e = inject("clCreateCommandQueue", 0, profiling)) return fail_with<cl_command_queue>(e, err);
    return next.clCreateCommandQueueWithProperties(c, d, props, err);
}

cl_mem CL_API_CALL create_buffer(cl_context c, cl_mem_flags f, size_t size, void* host, cl_int* err) {
    if (cl_int e = inject("clCreateBuffer", size)) return fail_with<cl_mem>(e, err);
    return next.clCreateBuffer(c, f, size, host, err);
}

cl_int CL_API_CALL build_program(cl_program p, cl_uint n, const cl_device_id* d, const char* options,
                                 void(CL_CALLBACK* notify)(cl_program, void*), void* user) {
    if (cl_int e = inject("clBuildProgram")) return e;
    return next.clBuildProgram(p, n, d, options, notify, user);
}

std::string kernel_name(cl_kernel k) {
    char name[256] = {};
    if (next.clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, nullptr) != CL_SUCCESS) return {};
    return name;
}

cl_int CL_API_CALL enqueue_ndrange(cl_command_queue q, cl_kernel k, cl_uint dims, const size_t* offset,
                                   const size_t* global, const size_t* local, cl_uint nwait, const cl_event* wait,
                                   cl_event* ev) {
    if (cl_int e = inject("clEnqueueNDRangeKernel", 0, false, kernel_name(k))) return e;
    return next.clEnqueueNDRangeKernel(q, k, dims, offset, global, local, nwait, wait, ev);
}

cl_int CL_API_CALL enqueue_read(cl_command_queue q, cl_mem b, cl_bool blocking, size_t offset, size_t size, void* ptr,
                                cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (cl_int e = inject("clEnqueueReadBuffer", size)) return e;
    return next.clEnqueueReadBuffer(q, b, blocking, offset, size, ptr, nwait, wait, ev);
}

cl_int CL_API_CALL enqueue_write(cl_command_queue q, cl_mem b, cl_bool blocking, size_t offset, size_t size,
                                 const void* ptr, cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (cl_int e = inject("clEnqueueWriteBuffer", size)) return e;
    return next.clEnqueueWriteBuffer(q, b, blocking, offset, size, ptr, nwait, wait, ev);
}

cl_int CL_API_CALL finish(cl_command_queue q) {
    if (cl_int e = inject("clFinish")) return e;
    return next.clFinish(q);
}

}  // namespace

extern "C" {

CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param, size_t size, void* value, size_t* size_ret) {
    if (param == CL_LAYER_API_VERSION) {
        const cl_layer_api_version v = CL_LAYER_API_VERSION_100;
        if (size_ret) *size_ret = sizeof v;
        if (value) {
            if (size < sizeof v) return CL_INVALID_VALUE;
            std::memcpy(value, &v, sizeof v);
        }
        return CL_SUCCESS;
    }
    if (param == CL_LAYER_NAME) {
        static const char name[] = "clprobe fault injection";
        if (size_ret) *size_ret = sizeof name;
        if (value) {
            if (size < sizeof name) return CL_INVALID_VALUE;
            std::memcpy(value, name, sizeof name);
        }
        return CL_SUCCESS;
    }
    return CL_INVALID_VALUE;
}

CL_API_ENTRY cl_int CL_API_CALL clInitLayer(cl_uint num_entries, const cl_icd_dispatch* target,
                                            cl_uint* num_entries_ret, const cl_icd_dispatch** layer_dispatch_ret) {
    const cl_uint ours = sizeof(cl_icd_dispatch) / sizeof(void*);
    if (!target || !num_entries_ret || !layer_dispatch_ret || num_entries < ours) return CL_INVALID_VALUE;
    std::memcpy(&next, target, sizeof next);
    mine = next;
    mine.clGetDeviceIDs = get_device_ids;
    mine.clCreateContext = create_context;
    mine.clCreateCommandQueue = create_queue;
    mine.clCreateCommandQueueWithProperties = create_queue_with_properties;
    mine.clCreateBuffer = create_buffer;
    mine.clBuildProgram = build_program;
    mine.clEnqueueNDRangeKernel = enqueue_ndrange;
    mine.clEnqueueReadBuffer = enqueue_read;
    mine.clEnqueueWriteBuffer = enqueue_write;
    mine.clFinish = finish;
    parse_rules(std::getenv("CLPROBE_FAULTS"));
    *num_entries_ret = ours;
    *layer_dispatch_ret = &mine;
    return CL_SUCCESS;
}

}  // extern "C"
