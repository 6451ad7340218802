// clprobe_layer_stress: an OpenCL program that works the trace layer (src/layer) hard from many
// threads at once and checks that the layer changed nothing it can see: its own results, its events
// (status, profiling), its queues' properties. tests/layer/check_trace.py runs it with and without
// the layer and checks the trace against the counts printed on the last line of stdout.
//
// Usage: clprobe_layer_stress [--threads N] [--iterations N] [--pace-us N]
//            [--crash abort|kill|segv|exit --crash-after N]   die mid-flight after N kernel enqueues
//        clprobe_layer_stress --bench N                       N tiny kernels, each followed by clFinish;
//                                                              prints the wall time and the median
//                                                              time of one kernel + clFinish
// Exit 0 on success, 1 on a wrong result, 2 on a failed OpenCL call.
#include <CL/cl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

const char* const kernel_source = R"CLC(
__kernel void add1(__global int* a, __global const int* one) {
    size_t i = get_global_id(0);
    a[i] += one[i];
}
__kernel void tiny(__global int* a) {
    a[get_global_id(0)] += 1;
}
)CLC";

constexpr size_t elements = 256;  // per thread buffer
constexpr size_t buffer_bytes = elements * sizeof(cl_int);

std::mutex report_mu;

[[noreturn]] void cl_failed(const char* what, cl_int rc, int line) {
    std::lock_guard lock(report_mu);
    std::fprintf(stderr, "layer_stress: %s failed with %d (line %d)\n", what, rc, line);
    std::exit(2);
}

[[noreturn]] void wrong(const std::string& what) {
    std::lock_guard lock(report_mu);
    std::fprintf(stderr, "layer_stress: wrong result: %s\n", what.c_str());
    std::exit(1);
}

#define CL_OK(call)                                             \
    do {                                                        \
        const cl_int rc_ = (call);                              \
        if (rc_ != CL_SUCCESS) cl_failed(#call, rc_, __LINE__); \
    } while (0)

// What the trace must show, counted as the program goes.
struct Expected {
    std::atomic<long> kernels{0};
    std::atomic<long> finishes{0};
    std::atomic<long> blocking{0};
    std::atomic<long> wait_events{0};
    std::atomic<long> released_mem{0};  // cl_mem objects freed (their last release)
    std::atomic<long> released_svm{0};
    std::atomic<long> queues_unprofiled{0};
    std::atomic<long> pinned_transfers{0};
};
Expected expected;

enum class Crash { none, abort, kill, segv, exit };
Crash crash = Crash::none;
long crash_after = 0;
int pace_us = 0;  // host work (a sleep) after each kernel, as a program that does more than enqueue
std::atomic<long> kernels_enqueued{0};

// Dies the chosen way once enough kernels were enqueued: the trace must stay readable up to there.
void maybe_crash() {
    if (crash == Crash::none || ++kernels_enqueued != crash_after) return;
    switch (crash) {
        case Crash::abort:
            std::abort();
        case Crash::kill:
            std::raise(SIGKILL);
            break;
        case Crash::segv: {
            // A wild store to an unmapped page (not null: UBSan would stop at a null store first).
            volatile uintptr_t address = 16;
            *reinterpret_cast<volatile int*>(address) = 1;
            break;
        }
        case Crash::exit:
            std::exit(0);
        case Crash::none:
            break;
    }
}

struct Setup {
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    cl_context context = nullptr;
    cl_program program = nullptr;
    cl_kernel prototype = nullptr;  // cloned by odd threads
    bool svm = false;
    bool images = false;
};

Setup open_device() {
    Setup s;
    cl_uint n = 0;
    CL_OK(clGetPlatformIDs(0, nullptr, &n));
    std::vector<cl_platform_id> platforms(n);
    CL_OK(clGetPlatformIDs(n, platforms.data(), nullptr));
    // A GPU if there is one, else the first device.
    for (int pass = 0; pass < 2 && !s.device; ++pass) {
        for (cl_platform_id p : platforms) {
            cl_device_id d = nullptr;
            if (clGetDeviceIDs(p, pass == 0 ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_ALL, 1, &d, nullptr) == CL_SUCCESS) {
                s.platform = p;
                s.device = d;
                break;
            }
        }
    }
    if (!s.device) cl_failed("finding a device", CL_DEVICE_NOT_FOUND, __LINE__);
    cl_int rc = CL_SUCCESS;
    s.context = clCreateContext(nullptr, 1, &s.device, nullptr, nullptr, &rc);
    CL_OK(rc);
    const char* source = kernel_source;
    s.program = clCreateProgramWithSource(s.context, 1, &source, nullptr, &rc);
    CL_OK(rc);
    CL_OK(clBuildProgram(s.program, 1, &s.device, nullptr, nullptr, nullptr));
    s.prototype = clCreateKernel(s.program, "add1", &rc);
    CL_OK(rc);
    cl_device_svm_capabilities svm = 0;
    if (clGetDeviceInfo(s.device, CL_DEVICE_SVM_CAPABILITIES, sizeof svm, &svm, nullptr) == CL_SUCCESS)
        s.svm = svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER;
    cl_bool images = CL_FALSE;
    clGetDeviceInfo(s.device, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, nullptr);
    s.images = images;
    return s;
}

cl_mem make_buffer(const Setup& s, cl_mem_flags flags, size_t bytes, void* host = nullptr) {
    cl_int rc = CL_SUCCESS;
    cl_mem m = clCreateBuffer(s.context, flags, bytes, host, &rc);
    CL_OK(rc);
    return m;
}

void release_mem(cl_mem m) {
    CL_OK(clReleaseMemObject(m));
    ++expected.released_mem;
}

// Queue kinds by thread, so that both creation calls are seen with and without profiling.
cl_command_queue make_queue(const Setup& s, int index, bool& profiling) {
    cl_int rc = CL_SUCCESS;
    cl_command_queue q = nullptr;
    profiling = index % 4 < 2;
    switch (index % 4) {
        case 0: {
            const cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
            q = clCreateCommandQueueWithProperties(s.context, s.device, props, &rc);
            break;
        }
        case 1:
            q = clCreateCommandQueue(s.context, s.device, CL_QUEUE_PROFILING_ENABLE, &rc);
            break;
        case 2:
            if (index % 8 == 2) {
                q = clCreateCommandQueueWithProperties(s.context, s.device, nullptr, &rc);
            } else {
                const cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, 0, 0};
                q = clCreateCommandQueueWithProperties(s.context, s.device, props, &rc);
            }
            break;
        default:
            q = clCreateCommandQueue(s.context, s.device, 0, &rc);
            break;
    }
    CL_OK(rc);
    if (!profiling) ++expected.queues_unprofiled;
    // The layer turns profiling on behind the program's back; the program must not see it.
    cl_command_queue_properties props = 0;
    CL_OK(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, nullptr));
    if (bool(props & CL_QUEUE_PROFILING_ENABLE) != profiling) wrong("queue properties differ from those asked");
    return q;
}

// A program event must behave as without the layer: complete after a wait, profiling as asked.
void check_event(cl_event ev, bool profiling) {
    CL_OK(clWaitForEvents(1, &ev));
    ++expected.wait_events;
    cl_int status = -1;
    CL_OK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr));
    if (status != CL_COMPLETE) wrong("event not complete after clWaitForEvents");
    cl_ulong start = 0, end = 0;
    const cl_int a = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
    const cl_int b = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
    if (profiling && (a != CL_SUCCESS || b != CL_SUCCESS || end < start || end == 0))
        wrong("profiling info of a profiling queue's event");
    if (!profiling && (a != CL_PROFILING_INFO_NOT_AVAILABLE || b != CL_PROFILING_INFO_NOT_AVAILABLE))
        wrong("profiling info available on a queue created without profiling");
}

void worker(const Setup& s, int index, int iterations) {
    cl_int rc = CL_SUCCESS;
    bool profiling = false;
    cl_command_queue q = make_queue(s, index, profiling);
    cl_kernel k = index % 2 ? clCloneKernel(s.prototype, &rc) : clCreateKernel(s.program, "add1", &rc);
    CL_OK(rc);

    std::vector<cl_int> host(elements, 0), ones(elements, 1);
    cl_mem a = make_buffer(s, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, buffer_bytes, host.data());
    cl_mem one = make_buffer(s, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, buffer_bytes, ones.data());
    cl_mem pinned = make_buffer(s, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, buffer_bytes);
    cl_mem scratch = make_buffer(s, CL_MEM_READ_WRITE, buffer_bytes);
    // An extra reference: the trace must show one release (R) only, at the last one.
    CL_OK(clRetainMemObject(scratch));
    CL_OK(clSetKernelArg(k, 0, sizeof a, &a));
    CL_OK(clSetKernelArg(k, 1, sizeof one, &one));

    const size_t global = elements;
    std::vector<cl_int> got(elements);
    for (int it = 1; it <= iterations; ++it) {
        // Kernels: some with an event kept, some with none, some whose event the program drops at once.
        cl_event ev = nullptr;
        const int style = it % 3;
        CL_OK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, it % 2 ? nullptr : &global, 0, nullptr,
                                     style == 1 ? nullptr : &ev));
        ++expected.kernels;
        maybe_crash();
        if (pace_us) std::this_thread::sleep_for(std::chrono::microseconds(pace_us));
        if (style == 2) CL_OK(clReleaseEvent(ev));
        if (style == 0 && it % 30 == 0) check_event(ev, profiling);
        if (style == 0) CL_OK(clReleaseEvent(ev));

        if (it % 10 == 0) {
            cl_event wev = nullptr;
            CL_OK(clEnqueueWriteBuffer(q, scratch, CL_FALSE, 0, buffer_bytes, ones.data(), 0, nullptr, &wev));
            check_event(wev, profiling);
            CL_OK(clReleaseEvent(wev));
        }
        if (it % 25 == 0) {
            CL_OK(clEnqueueReadBuffer(q, a, CL_TRUE, 0, buffer_bytes, got.data(), 0, nullptr, nullptr));
            ++expected.blocking;
            for (cl_int v : got)
                if (v != it)
                    wrong("thread " + std::to_string(index) + " read " + std::to_string(v) + " after " +
                          std::to_string(it) + " kernels");
        }
        if (it % 50 == 0) {
            // A read into a mapped ALLOC_HOST_PTR buffer: pinned host memory.
            auto* mapped = static_cast<cl_int*>(
                clEnqueueMapBuffer(q, pinned, CL_TRUE, CL_MAP_WRITE, 0, buffer_bytes, 0, nullptr, nullptr, &rc));
            CL_OK(rc);
            ++expected.blocking;
            cl_event rev = nullptr;
            CL_OK(clEnqueueReadBuffer(q, a, CL_FALSE, 0, buffer_bytes, mapped, 0, nullptr, &rev));
            ++expected.pinned_transfers;
            check_event(rev, profiling);
            CL_OK(clReleaseEvent(rev));
            if (mapped[elements - 1] != it) wrong("pinned read-back");
            CL_OK(clEnqueueUnmapMemObject(q, pinned, mapped, 0, nullptr, nullptr));
        }
        if (it % 20 == 0) {
            CL_OK(clFinish(q));
            ++expected.finishes;
        }
    }
    CL_OK(clFinish(q));
    ++expected.finishes;
    CL_OK(clEnqueueReadBuffer(q, a, CL_TRUE, 0, buffer_bytes, got.data(), 0, nullptr, nullptr));
    ++expected.blocking;
    if (std::any_of(got.begin(), got.end(), [&](cl_int v) { return v != iterations; })) wrong("final values");

    CL_OK(clReleaseKernel(k));
    release_mem(a);
    release_mem(one);
    release_mem(pinned);
    CL_OK(clReleaseMemObject(scratch));  // the extra reference: not a free
    release_mem(scratch);
    CL_OK(clReleaseCommandQueue(q));
}

// One of each other command kind on the main thread, checked.
void other_commands(const Setup& s) {
    cl_int rc = CL_SUCCESS;
    bool profiling = false;
    cl_command_queue q = make_queue(s, 3, profiling);
    std::vector<cl_int> src(elements), dst(elements, 0);
    for (size_t i = 0; i < elements; ++i)
        src[i] = static_cast<cl_int>(i);
    cl_mem a = make_buffer(s, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, buffer_bytes, src.data());
    cl_mem b = make_buffer(s, CL_MEM_READ_WRITE, buffer_bytes);
    const cl_buffer_region half{0, buffer_bytes / 2};
    cl_mem sub = clCreateSubBuffer(a, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &half, &rc);
    CL_OK(rc);

    CL_OK(clEnqueueCopyBuffer(q, a, b, 0, 0, buffer_bytes, 0, nullptr, nullptr));
    const cl_int seven = 7;
    CL_OK(clEnqueueFillBuffer(q, b, &seven, sizeof seven, 0, sizeof(cl_int) * 4, 0, nullptr, nullptr));
    const size_t origin[3] = {0, 0, 0}, region[3] = {sizeof(cl_int) * 16, 2, 1};
    CL_OK(clEnqueueCopyBufferRect(q, a, b, origin, origin, region, 64, 0, 64, 0, 0, nullptr, nullptr));
    CL_OK(clEnqueueWriteBufferRect(q, sub, CL_TRUE, origin, origin, region, 64, 0, 64, 0, src.data(), 0, nullptr,
                                   nullptr));
    ++expected.blocking;
    CL_OK(
        clEnqueueReadBufferRect(q, b, CL_TRUE, origin, origin, region, 64, 0, 64, 0, dst.data(), 0, nullptr, nullptr));
    ++expected.blocking;
    if (dst[0] != 0 || dst[5] != 5 || dst[16] != 16) wrong("rect copy");
    cl_event marker = nullptr;
    CL_OK(clEnqueueMarkerWithWaitList(q, 0, nullptr, &marker));
    CL_OK(clEnqueueBarrierWithWaitList(q, 1, &marker, nullptr));
    CL_OK(clEnqueueMigrateMemObjects(q, 1, &b, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, nullptr, nullptr));
    check_event(marker, profiling);
    CL_OK(clReleaseEvent(marker));

    // A kernel with the same buffer bound twice counts it once.
    cl_kernel k = clCreateKernel(s.program, "add1", &rc);
    CL_OK(rc);
    CL_OK(clSetKernelArg(k, 0, sizeof a, &a));
    CL_OK(clSetKernelArg(k, 1, sizeof a, &a));
    const size_t global = elements;
    CL_OK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
    ++expected.kernels;
    CL_OK(clEnqueueReadBuffer(q, a, CL_TRUE, 0, buffer_bytes, dst.data(), 0, nullptr, nullptr));
    ++expected.blocking;
    if (dst[3] != 6) wrong("kernel on a doubly bound buffer");

    if (s.svm) {
        auto* svm = static_cast<cl_int*>(clSVMAlloc(s.context, CL_MEM_READ_WRITE, buffer_bytes, 0));
        if (!svm) wrong("clSVMAlloc");
        CL_OK(clEnqueueSVMMemFill(q, svm, &seven, sizeof seven, buffer_bytes, 0, nullptr, nullptr));
        CL_OK(clEnqueueSVMMemcpy(q, CL_TRUE, dst.data(), svm, buffer_bytes, 0, nullptr, nullptr));
        ++expected.blocking;
        if (dst[9] != 7) wrong("SVM fill and copy");
        CL_OK(clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, svm, buffer_bytes, 0, nullptr, nullptr));
        ++expected.blocking;
        svm[0] = 1;
        CL_OK(clEnqueueSVMUnmap(q, svm, 0, nullptr, nullptr));
        cl_kernel t = clCreateKernel(s.program, "tiny", &rc);
        CL_OK(rc);
        CL_OK(clSetKernelArgSVMPointer(t, 0, svm));
        CL_OK(clEnqueueNDRangeKernel(q, t, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
        ++expected.kernels;
        CL_OK(clFinish(q));
        ++expected.finishes;
        CL_OK(clReleaseKernel(t));
        void* ptrs[] = {svm};
        CL_OK(clEnqueueSVMFree(q, 1, ptrs, nullptr, nullptr, 0, nullptr, nullptr));
        ++expected.released_svm;
    }
    if (s.images) {
        const cl_image_format format{CL_RGBA, CL_UNSIGNED_INT8};
        cl_image_desc desc{};
        desc.image_type = CL_MEM_OBJECT_IMAGE2D;
        desc.image_width = 8;
        desc.image_height = 8;
        cl_mem image = clCreateImage(s.context, CL_MEM_READ_WRITE, &format, &desc, nullptr, &rc);
        if (rc == CL_SUCCESS) {
            const size_t image_region[3] = {8, 8, 1};
            std::vector<unsigned char> pixels(8 * 8 * 4, 3), back(8 * 8 * 4, 0);
            CL_OK(
                clEnqueueWriteImage(q, image, CL_TRUE, origin, image_region, 0, 0, pixels.data(), 0, nullptr, nullptr));
            ++expected.blocking;
            CL_OK(clEnqueueReadImage(q, image, CL_TRUE, origin, image_region, 0, 0, back.data(), 0, nullptr, nullptr));
            ++expected.blocking;
            if (back != pixels) wrong("image round trip");
            release_mem(image);
        }
    }
    CL_OK(clFinish(q));
    ++expected.finishes;
    CL_OK(clReleaseKernel(k));
    release_mem(sub);
    release_mem(b);
    release_mem(a);
    CL_OK(clReleaseCommandQueue(q));
}

int bench(const Setup& s, long count) {
    cl_int rc = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueue(s.context, s.device, 0, &rc);
    CL_OK(rc);
    cl_kernel k = clCreateKernel(s.program, "tiny", &rc);
    CL_OK(rc);
    cl_mem a = make_buffer(s, CL_MEM_READ_WRITE, 64 * sizeof(cl_int));
    const cl_int zero = 0;
    CL_OK(clEnqueueFillBuffer(q, a, &zero, sizeof zero, 0, 64 * sizeof(cl_int), 0, nullptr, nullptr));
    CL_OK(clSetKernelArg(k, 0, sizeof a, &a));
    CL_OK(clFinish(q));
    const size_t global = 64;
    // Per-iteration times too: their median shrugs off the preemptions a busy machine inflicts on the total.
    std::vector<float> each(static_cast<size_t>(count));
    const auto t0 = std::chrono::steady_clock::now();
    auto last_end = t0;
    for (long i = 0; i < count; ++i) {
        CL_OK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
        CL_OK(clFinish(q));
        const auto now = std::chrono::steady_clock::now();
        each[static_cast<size_t>(i)] = std::chrono::duration<float, std::micro>(now - last_end).count();
        last_end = now;
    }
    const double ms = std::chrono::duration<double, std::milli>(last_end - t0).count();
    std::sort(each.begin(), each.end());
    cl_int last = 0;
    CL_OK(clEnqueueReadBuffer(q, a, CL_TRUE, 0, sizeof last, &last, 0, nullptr, nullptr));
    if (last != count) wrong("bench result");
    std::printf("bench kernels=%ld ms=%.1f us_per_kernel=%.2f median_us=%.2f p10_us=%.2f\n", count, ms,
                ms * 1000.0 / count, each[each.size() / 2], each[each.size() / 10]);
    clReleaseMemObject(a);
    clReleaseKernel(k);
    clReleaseCommandQueue(q);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    int threads = 8, iterations = 300;
    long bench_count = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
        if (!value) {
            std::fprintf(stderr, "usage: %s [--threads N] [--iterations N] [--crash HOW --crash-after N] [--bench N]\n",
                         argv[0]);
            return 2;
        }
        ++i;
        if (arg == "--threads")
            threads = std::atoi(value);
        else if (arg == "--iterations")
            iterations = std::atoi(value);
        else if (arg == "--pace-us")
            pace_us = std::atoi(value);
        else if (arg == "--crash-after")
            crash_after = std::atol(value);
        else if (arg == "--bench")
            bench_count = std::atol(value);
        else if (arg == "--crash") {
            const std::string how = value;
            crash = how == "abort"  ? Crash::abort
                    : how == "kill" ? Crash::kill
                    : how == "segv" ? Crash::segv
                    : how == "exit" ? Crash::exit
                                    : Crash::none;
        }
    }

    Setup s = open_device();
    if (bench_count > 0) return bench(s, bench_count);

    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back(worker, std::cref(s), t, iterations);
    for (auto& t : pool)
        t.join();
    other_commands(s);

    CL_OK(clReleaseKernel(s.prototype));
    CL_OK(clReleaseProgram(s.program));
    CL_OK(clReleaseContext(s.context));
    // The counts the trace checker compares the trace with.
    std::printf(
        "expect kernels=%ld finishes=%ld blocking=%ld wait_events=%ld released_mem=%ld released_svm=%ld "
        "queues_unprofiled=%ld pinned_transfers=%ld threads=%d\n",
        expected.kernels.load(), expected.finishes.load(), expected.blocking.load(), expected.wait_events.load(),
        expected.released_mem.load(), expected.released_svm.load(), expected.queues_unprofiled.load(),
        expected.pinned_transfers.load(), threads);
    return 0;
}
