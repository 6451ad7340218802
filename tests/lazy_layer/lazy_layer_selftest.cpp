// Self-test of the lazy driver layer (lazy_layer.cpp): run with OPENCL_LAYERS naming the layer and the
// layer's path as the only argument. Checks behaviour only, never time:
//   - the layer is loaded (this program finds it among the loaded libraries);
//   - a non-blocking write from memory overwritten before clFinish transfers the overwritten contents;
//   - a blocking write returns with its event not complete: profiling info is unavailable until the event
//     is waited for, and the host memory may be reused at once;
//   - a non-blocking read's destination holds poison until the read completes;
//   - releasing the queue leaves no gate closed, and every staging copy is freed;
//   - with the default CLPROBE_LAZY_ON_VIOLATION, freeing a non-blocking write's memory before the
//     command runs aborts the process (checked in a child made before any OpenCL call).
#include <CL/cl.h>
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "FAILED: %s\n", what);
        ++failures;
    }
}

void check(cl_int err, const char* call) {
    if (err != CL_SUCCESS) {
        std::fprintf(stderr, "FAILED: %s returned %d\n", call, err);
        std::exit(1);
    }
}

struct Device {
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
};

Device open_device() {
    cl_platform_id platform = nullptr;
    check(clGetPlatformIDs(1, &platform, nullptr), "clGetPlatformIDs");
    cl_device_id device = nullptr;
    check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr), "clGetDeviceIDs");
    cl_int err = CL_SUCCESS;
    Device d;
    d.context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    check(err, "clCreateContext");
    const cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    d.queue = clCreateCommandQueueWithProperties(d.context, device, props, &err);
    check(err, "clCreateCommandQueueWithProperties");
    return d;
}

using Counts = void (*)(size_t*, size_t*);

// In a child: a non-blocking write whose memory is freed (and reused) before the command can run.
[[noreturn]] void write_from_freed_memory() {
    Device d = open_device();
    cl_int err = CL_SUCCESS;
    const size_t n = 256;
    cl_mem b = clCreateBuffer(d.context, CL_MEM_READ_WRITE, n * sizeof(int), nullptr, &err);
    check(err, "clCreateBuffer");
    {
        std::vector<int> doomed(n, 7);
        check(clEnqueueWriteBuffer(d.queue, b, CL_FALSE, 0, n * sizeof(int), doomed.data(), 0, nullptr, nullptr),
              "clEnqueueWriteBuffer");
        std::fill(doomed.begin(), doomed.end(), 8);  // what a later allocation would do to freed memory
    }
    clFinish(d.queue);  // the layer checks here, and aborts
    std::_Exit(0);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s LAYER.so (with OPENCL_LAYERS naming it)\n", argv[0]);
        return 2;
    }
    const pid_t child = fork();
    if (child == 0) {
        unsetenv("CLPROBE_LAZY_ON_VIOLATION");
        write_from_freed_memory();
    }
    int status = 0;
    waitpid(child, &status, 0);
    expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
           "a non-blocking write from memory changed before it ran did not abort the process");

    // The rest demonstrates laziness itself, which the check would otherwise stop at the first step.
    setenv("CLPROBE_LAZY_ON_VIOLATION", "ignore", 1);
    Device d = open_device();
    void* layer = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
    if (!layer) {
        std::fprintf(stderr, "FAILED: the layer %s is not loaded (OPENCL_LAYERS=%s)\n", argv[1],
                     std::getenv("OPENCL_LAYERS") ? std::getenv("OPENCL_LAYERS") : "");
        return 1;
    }
    const auto counts = reinterpret_cast<Counts>(dlsym(layer, "clprobe_lazy_layer_counts"));
    if (!counts) {
        std::fprintf(stderr, "FAILED: the layer exports no clprobe_lazy_layer_counts\n");
        return 1;
    }

    const size_t n = 1024;
    const size_t bytes = n * sizeof(int);
    cl_int err = CL_SUCCESS;
    cl_mem b = clCreateBuffer(d.context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    check(err, "clCreateBuffer");

    // A non-blocking write reads its host memory no earlier than the next synchronisation point.
    std::vector<int> source(n, 1), back(n, 0);
    check(clEnqueueWriteBuffer(d.queue, b, CL_FALSE, 0, bytes, source.data(), 0, nullptr, nullptr),
          "clEnqueueWriteBuffer (non-blocking)");
    std::fill(source.begin(), source.end(), 2);
    check(clFinish(d.queue), "clFinish");
    check(clEnqueueReadBuffer(d.queue, b, CL_TRUE, 0, bytes, back.data(), 0, nullptr, nullptr), "clEnqueueReadBuffer");
    expect(back == std::vector<int>(n, 2), "the non-blocking write did not transfer the overwritten contents");

    // A blocking write returns before its command completes; its host memory is free for reuse at once.
    std::vector<int> value(n, 3);
    cl_event written = nullptr;
    check(clEnqueueWriteBuffer(d.queue, b, CL_TRUE, 0, bytes, value.data(), 0, nullptr, &written),
          "clEnqueueWriteBuffer (blocking)");
    std::fill(value.begin(), value.end(), 4);
    cl_ulong end = 0;
    expect(clGetEventProfilingInfo(written, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr) ==
               CL_PROFILING_INFO_NOT_AVAILABLE,
           "profiling info of a blocking write was available before its event was waited for");
    size_t closed = 0, staged = 0;
    counts(&closed, &staged);
    expect(closed == 1 && staged == 1, "the blocking write is not waiting behind a gate from a staging copy");
    check(clWaitForEvents(1, &written), "clWaitForEvents");
    cl_int state = CL_QUEUED;
    check(clGetEventInfo(written, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, nullptr), "clGetEventInfo");
    expect(state == CL_COMPLETE, "the waited-for write is not complete");
    expect(clGetEventProfilingInfo(written, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr) == CL_SUCCESS,
           "profiling info of a completed write is not available");
    check(clReleaseEvent(written), "clReleaseEvent");
    check(clEnqueueReadBuffer(d.queue, b, CL_TRUE, 0, bytes, back.data(), 0, nullptr, nullptr), "clEnqueueReadBuffer");
    expect(back == std::vector<int>(n, 3), "the blocking write did not transfer the contents at its call");

    // A non-blocking read's destination is undefined until the read completes: the layer poisons it.
    std::vector<int> early(n, 5);
    cl_event read = nullptr;
    check(clEnqueueReadBuffer(d.queue, b, CL_FALSE, 0, bytes, early.data(), 0, nullptr, &read),
          "clEnqueueReadBuffer (non-blocking)");
    expect(early == std::vector<int>(n, -1), "a pending read's destination is not poisoned");
    check(clWaitForEvents(1, &read), "clWaitForEvents");
    expect(early == std::vector<int>(n, 3), "the non-blocking read did not deliver the buffer");
    check(clReleaseEvent(read), "clReleaseEvent");

    // Work left behind a gate at clReleaseCommandQueue still runs, and every staging copy is freed.
    std::vector<int> last(n, 6);
    check(clEnqueueWriteBuffer(d.queue, b, CL_TRUE, 0, bytes, last.data(), 0, nullptr, nullptr),
          "clEnqueueWriteBuffer (blocking)");
    check(clReleaseCommandQueue(d.queue), "clReleaseCommandQueue");
    counts(&closed, &staged);
    expect(closed == 0, "a gate is still closed after clReleaseCommandQueue");
    // Completion callbacks run on the driver's threads; waiting for them asserts no time.
    for (int i = 0; i < 1000 && staged != 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        counts(nullptr, &staged);
    }
    expect(staged == 0, "a staging copy was never freed");
    check(clReleaseMemObject(b), "clReleaseMemObject");
    check(clReleaseContext(d.context), "clReleaseContext");

    if (failures == 0) std::fprintf(stderr, "lazy layer self-test: all checks passed\n");
    return failures == 0 ? 0 : 1;
}
