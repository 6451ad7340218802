// clprobe_trace_app: a small OpenCL "user program" for `clprobe trace` tests. Each mode plants one
// performance anti-pattern (or, for `clean`, none) that the trace analysis must name as its top
// finding; a few more modes exercise the tracer itself (threads, a crash, an exit from a loop,
// stdin/stdout pass-through) or measure its overhead.
//
// Usage: clprobe_trace_app MODE [--exit CODE] [--steps N]
//        clprobe_trace_app --list
//
// Written against the plain OpenCL C API, the way a user would, and linked with nothing of clprobe.
// Every mode checks its results on the host (exit 1 and a message on stderr when wrong; exit 2 for
// a failed OpenCL call or a usage error), prints only deterministic text on stdout (mode, counts,
// a checksum; never a timing), so a traced and an untraced run print the same bytes, writes one
// line on stderr, and exits with --exit CODE (default 0).
#include <CL/cl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

// All kernels of every mode in one program, built once per process (the rebuild mode builds it per
// batch on purpose). PoCL compiles a program with LLVM (about a second cold), so the kernels are few
// and small; most modes only need add_one.
const char* const kernel_source = R"CLC(
// The small, cheap kernel most modes launch many times.
__kernel void add_one(__global uint* data) {
    size_t i = get_global_id(0);
    data[i] += 1u;
}

// One step of pageable_uploads: fold the freshly uploaded data into a running sum.
__kernel void accumulate(__global uint* acc, __global const uint* in) {
    size_t i = get_global_id(0);
    acc[i] += in[i];
}

// A fast, memory-bound kernel.
__kernel void copy_vec(__global const uint* src, __global uint* dst) {
    size_t i = get_global_id(0);
    dst[i] = src[i];
}

// Compute-bound on purpose: each work-item walks a 64-entry table `iterations` times, recomputing
// a hash it could have computed once; it reads almost no memory.
__kernel void slow_kernel(__global const uint* table, __global uint* out, uint iterations) {
    uint gid = (uint)get_global_id(0);
    uint h = gid;
    for (uint k = 0; k < iterations; ++k) {
        h = h * 1664525u + table[(h ^ k) & 63u] + 1013904223u;
    }
    out[gid] = h;
}
)CLC";

constexpr unsigned slow_table_size = 64;

// The host's copy of slow_kernel, for checking its output.
uint32_t slow_reference(const std::vector<uint32_t>& table, uint32_t gid, uint32_t iterations) {
    uint32_t h = gid;
    for (uint32_t k = 0; k < iterations; ++k) {
        h = h * 1664525u + table[(h ^ k) & 63u] + 1013904223u;
    }
    return h;
}

[[noreturn]] void cl_failed(const char* what, cl_int err) {
    std::fprintf(stderr, "trace_app: %s failed: OpenCL error %d\n", what, static_cast<int>(err));
    std::exit(2);
}

void check(cl_int err, const char* what) {
    if (err != CL_SUCCESS) cl_failed(what, err);
}

// A wrong result: exit 1 with the reason.
void expect(bool ok, const std::string& what) {
    if (ok) return;
    std::fprintf(stderr, "trace_app: wrong result: %s\n", what.c_str());
    std::exit(1);
}

// FNV-1a 64 over the verified result's 32-bit words (word-wise: bytewise would cost the clean mode
// more host time than its kernels), so stdout shows the same data was computed in every run.
constexpr uint64_t checksum_seed = 14695981039346656037ull;

uint64_t checksum(const uint32_t* data, size_t count, uint64_t h = checksum_seed) {
    for (size_t i = 0; i < count; ++i) {
        h ^= data[i];
        h *= 1099511628211ull;
    }
    return h;
}

uint64_t checksum(const std::vector<uint32_t>& v, uint64_t h = checksum_seed) {
    return checksum(v.data(), v.size(), h);
}

struct Cl {
    cl_device_id device = nullptr;
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    int version_major = 1;
};

// The first GPU of any platform; else the first device of the first platform that has one.
cl_device_id pick_device() {
    cl_uint count = 0;
    check(clGetPlatformIDs(0, nullptr, &count), "clGetPlatformIDs");
    std::vector<cl_platform_id> platforms(count);
    if (count == 0) cl_failed("finding a platform", CL_DEVICE_NOT_FOUND);
    check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
    for (cl_device_type type :
         {static_cast<cl_device_type>(CL_DEVICE_TYPE_GPU), static_cast<cl_device_type>(CL_DEVICE_TYPE_ALL)}) {
        for (cl_platform_id platform : platforms) {
            cl_device_id device = nullptr;
            cl_uint found = 0;
            if (clGetDeviceIDs(platform, type, 1, &device, &found) == CL_SUCCESS && found > 0) return device;
        }
    }
    cl_failed("finding a device", CL_DEVICE_NOT_FOUND);
}

cl_command_queue make_queue(const Cl& cl) {
    cl_int err = CL_SUCCESS;
    cl_command_queue queue = nullptr;
    // An in-order queue without profiling, as most programs make it; the 2.0 call where the
    // device has it, the 1.x one otherwise.
    if (cl.version_major >= 2) {
        queue = clCreateCommandQueueWithProperties(cl.context, cl.device, nullptr, &err);
    } else {
        queue = clCreateCommandQueue(cl.context, cl.device, 0, &err);
    }
    check(err, "creating a command queue");
    return queue;
}

Cl open_device() {
    Cl cl;
    cl.device = pick_device();
    char version[256] = {};
    check(clGetDeviceInfo(cl.device, CL_DEVICE_VERSION, sizeof(version) - 1, version, nullptr), "clGetDeviceInfo");
    if (std::strncmp(version, "OpenCL ", 7) == 0) cl.version_major = std::atoi(version + 7);
    cl_int err = CL_SUCCESS;
    cl.context = clCreateContext(nullptr, 1, &cl.device, nullptr, nullptr, &err);
    check(err, "clCreateContext");
    cl.queue = make_queue(cl);
    return cl;
}

cl_program build_program(const Cl& cl) {
    cl_int err = CL_SUCCESS;
    const char* source = kernel_source;
    cl_program program = clCreateProgramWithSource(cl.context, 1, &source, nullptr, &err);
    check(err, "clCreateProgramWithSource");
    err = clBuildProgram(program, 1, &cl.device, nullptr, nullptr, nullptr);
    if (err != CL_SUCCESS) {
        size_t size = 0;
        clGetProgramBuildInfo(program, cl.device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
        std::string log(size, '\0');
        clGetProgramBuildInfo(program, cl.device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
        std::fprintf(stderr, "trace_app: build log:\n%s\n", log.c_str());
        cl_failed("clBuildProgram", err);
    }
    return program;
}

cl_kernel make_kernel(cl_program program, const char* name) {
    cl_int err = CL_SUCCESS;
    cl_kernel kernel = clCreateKernel(program, name, &err);
    check(err, "clCreateKernel");
    return kernel;
}

cl_mem make_buffer(const Cl& cl, cl_mem_flags flags, size_t bytes) {
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(cl.context, flags, bytes, nullptr, &err);
    check(err, "clCreateBuffer");
    return mem;
}

void set_arg(cl_kernel kernel, cl_uint index, cl_mem mem) {
    check(clSetKernelArg(kernel, index, sizeof(cl_mem), &mem), "clSetKernelArg");
}

void set_arg(cl_kernel kernel, cl_uint index, cl_uint value) {
    check(clSetKernelArg(kernel, index, sizeof(cl_uint), &value), "clSetKernelArg");
}

// A 1-D launch; the driver picks the work-group size.
void launch(cl_command_queue queue, cl_kernel kernel, size_t global) {
    check(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
          "clEnqueueNDRangeKernel");
}

// With a local size: the largest power of two that divides `global` and the kernel allows.
void launch_grouped(cl_command_queue queue, cl_device_id device, cl_kernel kernel, size_t global) {
    size_t allowed = 1;
    check(clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof allowed, &allowed, nullptr),
          "clGetKernelWorkGroupInfo");
    size_t local = 1;
    while (local * 2 <= allowed && global % (local * 2) == 0)
        local *= 2;
    check(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr),
          "clEnqueueNDRangeKernel");
}

void fill_zero(cl_command_queue queue, cl_mem mem, size_t bytes) {
    const cl_uint zero = 0;
    check(clEnqueueFillBuffer(queue, mem, &zero, sizeof(zero), 0, bytes, 0, nullptr, nullptr), "clEnqueueFillBuffer");
}

std::vector<uint32_t> read_back(cl_command_queue queue, cl_mem mem, size_t count) {
    std::vector<uint32_t> host(count);
    check(clEnqueueReadBuffer(queue, mem, CL_TRUE, 0, count * sizeof(uint32_t), host.data(), 0, nullptr, nullptr),
          "clEnqueueReadBuffer");
    return host;
}

// Every element equals `value`.
void expect_all(const std::vector<uint32_t>& v, uint32_t value, const char* what) {
    for (size_t i = 0; i < v.size(); ++i) {
        if (v[i] != value) {
            expect(false, std::string(what) + ": element " + std::to_string(i) + " is " + std::to_string(v[i]) +
                              ", expected " + std::to_string(value));
        }
    }
}

void print_checksum(uint64_t h) {
    std::printf("checksum %016llx\n", static_cast<unsigned long long>(h));
}

// --- the modes ----------------------------------------------------------------------------------

constexpr size_t small_items = 4096;  // work-items of the "small kernel" modes

// Planted: a wait after every kernel. The kernels are tiny, so the host's clFinish round trips,
// not the device work, make up the run time. The launches pass a local size: left to the driver,
// Intel's CPU runtime splits the 4096 items into groups whose dispatch costs 4x a single group's
// (replay measured 2.0 vs 0.5 us), a second real pattern of comparable size beside the planted one.
// `steps` tiny kernels, each waited for; every item of the result should equal `steps`. The
// fork_workers mode runs it in each child.
std::vector<uint32_t> waited_kernels(Cl& cl, int steps) {
    cl_program program = build_program(cl);
    cl_kernel add_one = make_kernel(program, "add_one");
    cl_mem data = make_buffer(cl, CL_MEM_READ_WRITE, small_items * sizeof(uint32_t));
    fill_zero(cl.queue, data, small_items * sizeof(uint32_t));
    set_arg(add_one, 0, data);
    for (int i = 0; i < steps; ++i) {
        launch_grouped(cl.queue, cl.device, add_one, small_items);
        check(clFinish(cl.queue), "clFinish");
    }
    return read_back(cl.queue, data, small_items);
}

void run_sync_each(Cl& cl, int steps) {
    auto result = waited_kernels(cl, steps);
    expect_all(result, static_cast<uint32_t>(steps), "sync_each");
    std::printf("kernels %d\nfinishes %d\n", steps, steps);
    print_checksum(checksum(result));
}

// Planted: the whole data set (32 MiB) uploaded again every step from ordinary (pageable) malloc'd
// memory with a blocking write, although only its first 16 KiB change between steps and the kernel
// only reads those (a kernel over all 32 MiB would cost as much as the upload on a CPU device).
// The host's own work per step is small too, so the uploads, not the host or the kernels,
// dominate; one finish per step keeps the steps apart as a real loop would.
void run_pageable_uploads(Cl& cl, int steps) {
    constexpr size_t count = size_t{8} << 20;  // 32 MiB of uint
    constexpr size_t bytes = count * sizeof(uint32_t);
    constexpr size_t changed = 4096;  // elements the host updates each step
    cl_program program = build_program(cl);
    cl_kernel accumulate = make_kernel(program, "accumulate");
    cl_mem in = make_buffer(cl, CL_MEM_READ_ONLY, bytes);
    cl_mem acc = make_buffer(cl, CL_MEM_READ_WRITE, changed * sizeof(uint32_t));  // the running sums
    fill_zero(cl.queue, acc, changed * sizeof(uint32_t));
    set_arg(accumulate, 0, acc);
    set_arg(accumulate, 1, in);
    auto* host = static_cast<uint32_t*>(std::malloc(bytes));
    if (host == nullptr) cl_failed("malloc", CL_OUT_OF_HOST_MEMORY);
    for (size_t i = 0; i < count; ++i)
        host[i] = static_cast<uint32_t>(i * 7);
    for (int step = 0; step < steps; ++step) {
        for (size_t i = 0; i < changed; ++i)
            host[i] = static_cast<uint32_t>(i * 7 + step);
        check(clEnqueueWriteBuffer(cl.queue, in, CL_TRUE, 0, bytes, host, 0, nullptr, nullptr), "clEnqueueWriteBuffer");
        launch(cl.queue, accumulate, changed);
        check(clFinish(cl.queue), "clFinish");
    }
    std::free(host);
    auto result = read_back(cl.queue, acc, changed);
    // acc[i] = sum over steps of (7 i + step), modulo 2^32.
    const auto n = static_cast<uint32_t>(steps);
    const uint32_t step_sum = static_cast<uint32_t>(static_cast<uint64_t>(steps) * (steps - 1) / 2);
    for (size_t i = 0; i < changed; ++i) {
        const uint32_t want = n * static_cast<uint32_t>(i * 7) + step_sum;
        if (result[i] != want) expect(false, "pageable_uploads: element " + std::to_string(i));
    }
    std::printf("uploads %d\nupload_bytes %zu\nkernels %d\n", steps, bytes, steps);
    print_checksum(checksum(result));
}

// Planted: thousands of 64-byte writes, each paying a command's fixed cost, where one write of
// the whole range would do. They are non-blocking and finished once, so waiting is not the issue.
void run_tiny_transfers(Cl& cl, int steps) {
    constexpr size_t piece = 64;
    constexpr size_t piece_items = piece / sizeof(uint32_t);
    const size_t count = static_cast<size_t>(steps) * piece_items;
    cl_program program = build_program(cl);
    cl_kernel add_one = make_kernel(program, "add_one");
    cl_mem data = make_buffer(cl, CL_MEM_READ_WRITE, count * sizeof(uint32_t));
    std::vector<uint32_t> host(count);
    for (size_t i = 0; i < count; ++i)
        host[i] = static_cast<uint32_t>(i * 3 + 1);
    for (int k = 0; k < steps; ++k) {
        check(clEnqueueWriteBuffer(cl.queue, data, CL_FALSE, k * piece, piece, host.data() + k * piece_items, 0,
                                   nullptr, nullptr),
              "clEnqueueWriteBuffer");
    }
    // One kernel consumes the uploaded data, as the program's real work would.
    set_arg(add_one, 0, data);
    launch(cl.queue, add_one, count);
    check(clFinish(cl.queue), "clFinish");
    auto result = read_back(cl.queue, data, count);
    for (size_t i = 0; i < count; ++i) {
        if (result[i] != host[i] + 1) expect(false, "tiny_transfers: element " + std::to_string(i));
    }
    std::printf("writes %d\nwrite_bytes %zu\nkernels 1\n", steps, piece);
    print_checksum(checksum(result));
}

// Planted: the same program source created and built again in every batch (and its kernel made
// again), so compilation, not the few small kernels, takes the time.
void run_rebuild(Cl& cl, int steps) {
    constexpr int kernels_per_batch = 5;
    cl_mem data = make_buffer(cl, CL_MEM_READ_WRITE, small_items * sizeof(uint32_t));
    fill_zero(cl.queue, data, small_items * sizeof(uint32_t));
    for (int batch = 0; batch < steps; ++batch) {
        cl_program program = build_program(cl);
        cl_kernel add_one = make_kernel(program, "add_one");
        set_arg(add_one, 0, data);
        for (int k = 0; k < kernels_per_batch; ++k)
            launch(cl.queue, add_one, small_items);
        check(clFinish(cl.queue), "clFinish");
        check(clReleaseKernel(add_one), "clReleaseKernel");
        check(clReleaseProgram(program), "clReleaseProgram");
    }
    auto result = read_back(cl.queue, data, small_items);
    expect_all(result, static_cast<uint32_t>(steps * kernels_per_batch), "rebuild");
    std::printf("builds %d\nkernels %d\n", steps, steps * kernels_per_batch);
    print_checksum(checksum(result));
}

// Planted: a fresh 4 MiB buffer created and released every iteration instead of one reused.
// Syncing only every 50 iterations keeps waits from being what the trace sees first.
void run_alloc_loop(Cl& cl, int steps) {
    constexpr size_t count = size_t{1} << 20;  // 4 MiB of uint
    constexpr size_t bytes = count * sizeof(uint32_t);
    constexpr int sync_every = 50;
    cl_program program = build_program(cl);
    cl_kernel add_one = make_kernel(program, "add_one");
    std::vector<uint32_t> last;
    int finishes = 0;
    for (int it = 0; it < steps; ++it) {
        cl_mem data = make_buffer(cl, CL_MEM_READ_WRITE, bytes);
        const cl_uint pattern = static_cast<cl_uint>(it);
        check(clEnqueueFillBuffer(cl.queue, data, &pattern, sizeof(pattern), 0, bytes, 0, nullptr, nullptr),
              "clEnqueueFillBuffer");
        set_arg(add_one, 0, data);
        launch(cl.queue, add_one, count);
        if (it == steps - 1) {
            last = read_back(cl.queue, data, count);
            expect_all(last, pattern + 1, "alloc_loop");
        }
        check(clReleaseMemObject(data), "clReleaseMemObject");
        if ((it + 1) % sync_every == 0) {
            check(clFinish(cl.queue), "clFinish");
            ++finishes;
        }
    }
    check(clFinish(cl.queue), "clFinish");
    ++finishes;
    std::printf("allocations %d\nallocation_bytes %zu\nkernels %d\nfinishes %d\n", steps, bytes, steps, finishes);
    print_checksum(checksum(last));
}

std::vector<uint32_t> slow_table() {
    std::vector<uint32_t> table(slow_table_size);
    for (unsigned i = 0; i < slow_table_size; ++i)
        table[i] = i * 2654435761u;
    return table;
}

// Checks a spread of slow_kernel's outputs against the host (all of them would take as long as
// the kernel on one core).
void expect_slow_output(const std::vector<uint32_t>& out, const std::vector<uint32_t>& table, uint32_t iterations,
                        const char* what) {
    for (size_t gid = 0; gid < out.size(); gid += 61) {
        if (out[gid] != slow_reference(table, static_cast<uint32_t>(gid), iterations)) {
            expect(false, std::string(what) + ": slow_kernel output " + std::to_string(gid));
        }
    }
}

// Planted: one slow kernel among fast ones. The fast copies move 16 MiB each but finish in a few
// ms; slow_kernel reads a 256-byte table and burns compute, and takes most of the device time.
// One finish at the end, so neither waits nor transfers stand out.
void run_slow_kernel(Cl& cl, int steps) {
    constexpr size_t count = size_t{4} << 20;  // 16 MiB of uint
    constexpr size_t bytes = count * sizeof(uint32_t);
    constexpr int copies_per_round = 4;
    constexpr size_t slow_items = 4096;
    constexpr uint32_t iterations = 18000;  // about 0.25 s a launch on PoCL with 2 cores
    cl_program program = build_program(cl);
    cl_kernel copy = make_kernel(program, "copy_vec");
    cl_kernel slow = make_kernel(program, "slow_kernel");
    cl_mem src = make_buffer(cl, CL_MEM_READ_ONLY, bytes);
    cl_mem dst = make_buffer(cl, CL_MEM_WRITE_ONLY, bytes);
    cl_mem table = make_buffer(cl, CL_MEM_READ_ONLY, slow_table_size * sizeof(uint32_t));
    cl_mem out = make_buffer(cl, CL_MEM_WRITE_ONLY, slow_items * sizeof(uint32_t));
    std::vector<uint32_t> input(count);
    for (size_t i = 0; i < count; ++i)
        input[i] = static_cast<uint32_t>(i ^ 0x5a5a5a5au);
    const auto host_table = slow_table();
    check(clEnqueueWriteBuffer(cl.queue, src, CL_FALSE, 0, bytes, input.data(), 0, nullptr, nullptr),
          "clEnqueueWriteBuffer");
    check(clEnqueueWriteBuffer(cl.queue, table, CL_FALSE, 0, slow_table_size * sizeof(uint32_t), host_table.data(), 0,
                               nullptr, nullptr),
          "clEnqueueWriteBuffer");
    set_arg(copy, 0, src);
    set_arg(copy, 1, dst);
    set_arg(slow, 0, table);
    set_arg(slow, 1, out);
    set_arg(slow, 2, iterations);
    for (int round = 0; round < steps; ++round) {
        for (int c = 0; c < copies_per_round; ++c)
            launch(cl.queue, copy, count);
        launch(cl.queue, slow, slow_items);
    }
    check(clFinish(cl.queue), "clFinish");
    auto copied = read_back(cl.queue, dst, count);
    expect(copied == input, "slow_kernel: copy_vec output differs from its input");
    auto slow_out = read_back(cl.queue, out, slow_items);
    expect_slow_output(slow_out, host_table, iterations, "slow_kernel");
    std::printf("fast_kernels %d\nslow_kernels %d\nfinishes 1\n", steps * copies_per_round, steps);
    print_checksum(checksum(slow_out, checksum(copied)));
}

// Nothing planted: buffers made once, input handed over by mapping a host-visible
// (CL_MEM_ALLOC_HOST_PTR) buffer with CL_MAP_WRITE_INVALIDATE_REGION instead of copying it, large
// kernels enqueued back to back, the result read through one blocking map, one finish. The kernels
// stay memory-bound (a compute-heavy one would read as far below the memory roof), and there are
// enough of them (~2 ms each on PoCL) that device work fills the run: the fixed costs every mode
// pays (process start, ~30 ms building from source with a warm PoCL cache) and the host's own
// fill and check of the data then stay small shares of it.
void run_clean(Cl& cl, int steps) {
    constexpr size_t count = size_t{8} << 20;  // 32 MiB of uint
    constexpr size_t bytes = count * sizeof(uint32_t);
    cl_program program = build_program(cl);
    cl_kernel copy = make_kernel(program, "copy_vec");
    cl_kernel add_one = make_kernel(program, "add_one");
    cl_mem in = make_buffer(cl, CL_MEM_READ_ONLY | CL_MEM_ALLOC_HOST_PTR, bytes);
    cl_mem out = make_buffer(cl, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes);
    cl_int err = CL_SUCCESS;
    auto* mapped_in = static_cast<uint32_t*>(
        clEnqueueMapBuffer(cl.queue, in, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, bytes, 0, nullptr, nullptr, &err));
    check(err, "clEnqueueMapBuffer");
    for (size_t i = 0; i < count; ++i)
        mapped_in[i] = static_cast<uint32_t>(i * 5 + 3);
    check(clEnqueueUnmapMemObject(cl.queue, in, mapped_in, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
    set_arg(copy, 0, in);
    set_arg(copy, 1, out);
    set_arg(add_one, 0, out);
    launch(cl.queue, copy, count);
    for (int k = 1; k < steps; ++k)
        launch(cl.queue, add_one, count);
    auto* mapped_out = static_cast<uint32_t*>(
        clEnqueueMapBuffer(cl.queue, out, CL_TRUE, CL_MAP_READ, 0, bytes, 0, nullptr, nullptr, &err));
    check(err, "clEnqueueMapBuffer");
    const auto added = static_cast<uint32_t>(steps - 1);
    for (size_t i = 0; i < count; ++i) {
        if (mapped_out[i] != static_cast<uint32_t>(i * 5 + 3) + added) {
            expect(false, "clean: element " + std::to_string(i));
        }
    }
    const uint64_t h = checksum(mapped_out, count);
    check(clEnqueueUnmapMemObject(cl.queue, out, mapped_out, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
    check(clFinish(cl.queue), "clFinish");
    std::printf("kernels %d\nmaps 2\nfinishes 1\n", steps);
    print_checksum(h);
}

// Four threads, each with its own queue (and kernel object: clSetKernelArg is not thread-safe)
// on the shared context; checks that the tracer keeps per-thread records apart and whole.
void run_threads(Cl& cl, int steps) {
    constexpr int thread_count = 4;
    constexpr size_t count = 16384;
    cl_program program = build_program(cl);
    struct Result {
        std::vector<uint32_t> halfway, final;
    };
    std::vector<Result> results(thread_count);
    std::vector<std::thread> threads;
    for (int t = 0; t < thread_count; ++t) {
        threads.emplace_back([&, t] {
            cl_command_queue queue = make_queue(cl);
            cl_kernel add_one = make_kernel(program, "add_one");
            cl_mem data = make_buffer(cl, CL_MEM_READ_WRITE, count * sizeof(uint32_t));
            std::vector<uint32_t> init(count);
            for (size_t i = 0; i < count; ++i)
                init[i] = static_cast<uint32_t>(i + t * 1000003u);
            Result& r = results[t];
            r.halfway.resize(count);
            r.final.resize(count);
            check(clEnqueueWriteBuffer(queue, data, CL_FALSE, 0, count * sizeof(uint32_t), init.data(), 0, nullptr,
                                       nullptr),
                  "clEnqueueWriteBuffer");
            set_arg(add_one, 0, data);
            const int half = steps / 2;
            for (int k = 0; k < half; ++k)
                launch(queue, add_one, count);
            check(clEnqueueReadBuffer(queue, data, CL_FALSE, 0, count * sizeof(uint32_t), r.halfway.data(), 0, nullptr,
                                      nullptr),
                  "clEnqueueReadBuffer");
            for (int k = half; k < steps; ++k)
                launch(queue, add_one, count);
            check(clEnqueueReadBuffer(queue, data, CL_FALSE, 0, count * sizeof(uint32_t), r.final.data(), 0, nullptr,
                                      nullptr),
                  "clEnqueueReadBuffer");
            check(clFinish(queue), "clFinish");
            check(clReleaseMemObject(data), "clReleaseMemObject");
            check(clReleaseKernel(add_one), "clReleaseKernel");
            check(clReleaseCommandQueue(queue), "clReleaseCommandQueue");
        });
    }
    for (auto& thread : threads)
        thread.join();
    uint64_t h = checksum_seed;
    for (int t = 0; t < thread_count; ++t) {
        for (size_t i = 0; i < count; ++i) {
            const auto base = static_cast<uint32_t>(i + t * 1000003u);
            if (results[t].halfway[i] != base + static_cast<uint32_t>(steps / 2) ||
                results[t].final[i] != base + static_cast<uint32_t>(steps)) {
                expect(false, "threads: thread " + std::to_string(t) + " element " + std::to_string(i));
            }
        }
        h = checksum(results[t].final, checksum(results[t].halfway, h));
    }
    std::printf("threads %d\nkernels %d\ntransfers %d\nfinishes %d\n", thread_count, thread_count * steps,
                thread_count * 3, thread_count);
    print_checksum(h);
}

// Dies of SIGABRT midway, with kernels still in flight: the trace is cut without the layer's
// normal shutdown and clprobe must still read what was written. Finishes every 10 kernels (and
// checks the data there) so some kernels have completed before the crash.
void run_abort(Cl& cl, int steps) {
    constexpr int finish_every = 10;
    cl_program program = build_program(cl);
    cl_kernel add_one = make_kernel(program, "add_one");
    cl_mem data = make_buffer(cl, CL_MEM_READ_WRITE, small_items * sizeof(uint32_t));
    fill_zero(cl.queue, data, small_items * sizeof(uint32_t));
    set_arg(add_one, 0, data);
    const int midway = std::max(1, steps / 2);
    std::vector<uint32_t> verified(small_items, 0);
    int verified_value = 0;
    for (int i = 0; i < steps; ++i) {
        launch(cl.queue, add_one, small_items);
        if ((i + 1) % finish_every == 0) {
            check(clFinish(cl.queue), "clFinish");
            verified = read_back(cl.queue, data, small_items);
            expect_all(verified, static_cast<uint32_t>(i + 1), "abort");
            verified_value = i + 1;
        }
        if (i + 1 == midway) {
            std::printf("kernels %d of %d\nverified %d\n", i + 1, steps, verified_value);
            print_checksum(checksum(verified));
            std::printf("aborting\n");
            std::fflush(stdout);
            std::fprintf(stderr, "trace_app: abort: calling abort()\n");
            std::abort();
        }
    }
}

// Calls std::exit from inside the enqueue loop with kernels still queued and nothing released:
// the layer must still finish its trace from its exit-time shutdown. A first batch is finished and
// checked so the mode verifies something.
void run_exit_midway(Cl& cl, int steps, int code) {
    constexpr int checked = 10;
    cl_program program = build_program(cl);
    cl_kernel add_one = make_kernel(program, "add_one");
    cl_mem data = make_buffer(cl, CL_MEM_READ_WRITE, small_items * sizeof(uint32_t));
    fill_zero(cl.queue, data, small_items * sizeof(uint32_t));
    set_arg(add_one, 0, data);
    for (int i = 0; i < checked; ++i)
        launch(cl.queue, add_one, small_items);
    check(clFinish(cl.queue), "clFinish");
    auto result = read_back(cl.queue, data, small_items);
    expect_all(result, checked, "exit_midway");
    for (int i = 0; i < steps; ++i) {
        launch(cl.queue, add_one, small_items);
        if (i + 1 == std::max(1, steps / 2)) {
            std::printf("kernels %d then %d unfinished of %d\n", checked, i + 1, steps);
            print_checksum(checksum(result));
            std::printf("exiting with %d\n", code);
            std::fprintf(stderr, "trace_app: exit_midway: calling exit(%d)\n", code);
            std::exit(code);  // stdio is flushed; OpenCL objects are never released
        }
    }
}

// Two tiny kernels launched back to back, again and again, with a finish only every 500 pairs:
// the device idles between launches about as long as each runs (a fusion candidate).
void run_short_pairs(Cl& cl, int steps) {
    constexpr int finish_every = 500;
    cl_program program = build_program(cl);
    cl_kernel add_one = make_kernel(program, "add_one");
    cl_kernel copy = make_kernel(program, "copy_vec");
    cl_mem data = make_buffer(cl, CL_MEM_READ_WRITE, small_items * sizeof(uint32_t));
    cl_mem out = make_buffer(cl, CL_MEM_READ_WRITE, small_items * sizeof(uint32_t));
    fill_zero(cl.queue, data, small_items * sizeof(uint32_t));
    set_arg(add_one, 0, data);
    set_arg(copy, 0, data);
    set_arg(copy, 1, out);
    for (int i = 0; i < steps; ++i) {
        launch(cl.queue, add_one, small_items);
        launch(cl.queue, copy, small_items);
        if ((i + 1) % finish_every == 0) check(clFinish(cl.queue), "clFinish");
    }
    auto result = read_back(cl.queue, out, small_items);
    expect_all(result, static_cast<uint32_t>(steps), "short_pairs");
    std::printf("kernels %d\n", 2 * steps);
    print_checksum(checksum(result));
}

// --- modes for `clprobe trace --replay` (the capture the replay reads; docs/trace.md) ------------
// Their kernels live in a program of their own, built with options, so the other modes compile
// nothing more. Inputs are exact small floats, so the capture test computes the expected bytes.
const char* const replay_source = R"CLC(
// A word in a comment or a string is not a call: printf("%f", y[i]) here, and the string below,
// must not make the layer skip this program (OpenMM's PME kernels mention printf in a comment).
__constant char replay_note[] = "printf(\"%d\", 1); enqueue_kernel(q, f, r, b) is only text";

__kernel void replay_saxpy(__global const float* x, __global float* y, float a) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}

// (v + 2^24) - 2^24 rounds v to a multiple of 2 in IEEE arithmetic; -cl-fast-relaxed-math lets
// the compiler reassociate it to v, which changes the result.
__kernel void replay_rounding(__global const float* in, __global float* out) {
    size_t i = get_global_id(0);
    float v = in[i];
    out[i] = (v + 16777216.0f) - 16777216.0f;
}

// A dependent chain of multiply-adds and divisions: -cl-mad-enable and -cl-fast-relaxed-math
// change its speed, its result only in the last bits.
__kernel void replay_mad_chain(__global const float* in, __global float* out, uint steps) {
    size_t i = get_global_id(0);
    float acc = in[i];
    for (uint k = 0; k < steps; ++k) acc = (acc * 0.999f + 0.001f * (float)(k & 7u)) / 1.0001f;
    out[i] = acc;
}
)CLC";
constexpr const char* replay_options = "-cl-std=CL1.2";

cl_program build_replay_program(const Cl& cl) {
    cl_int err = CL_SUCCESS;
    const char* source = replay_source;
    cl_program program = clCreateProgramWithSource(cl.context, 1, &source, nullptr, &err);
    check(err, "clCreateProgramWithSource");
    check(clBuildProgram(program, 1, &cl.device, replay_options, nullptr, nullptr), "clBuildProgram (replay)");
    return program;
}

cl_mem upload(const Cl& cl, const std::vector<float>& host) {
    cl_mem mem = make_buffer(cl, CL_MEM_READ_WRITE, host.size() * sizeof(float));
    check(
        clEnqueueWriteBuffer(cl.queue, mem, CL_TRUE, 0, host.size() * sizeof(float), host.data(), 0, nullptr, nullptr),
        "clEnqueueWriteBuffer");
    return mem;
}

std::vector<float> download(const Cl& cl, cl_mem mem, size_t count) {
    std::vector<float> host(count);
    check(clEnqueueReadBuffer(cl.queue, mem, CL_TRUE, 0, count * sizeof(float), host.data(), 0, nullptr, nullptr),
          "clEnqueueReadBuffer");
    return host;
}

uint64_t float_checksum(const std::vector<float>& v, uint64_t h = checksum_seed) {
    std::vector<uint32_t> words(v.size());
    std::memcpy(words.data(), v.data(), v.size() * sizeof(float));
    return checksum(words, h);
}

void set_arg(cl_kernel kernel, cl_uint index, float value) {
    check(clSetKernelArg(kernel, index, sizeof(float), &value), "clSetKernelArg");
}

// y += 2 * x, `steps` times, on `items` work-items with the given local size (0: the driver's).
// x[i] = i / 2 and y[i] = 1 start, so y[i] = 1 + steps * i exactly.
std::vector<float> saxpy_runs(Cl& cl, cl_program program, size_t items, size_t local, int steps) {
    cl_kernel saxpy = make_kernel(program, "replay_saxpy");
    std::vector<float> x(items), y(items, 1.0f);
    for (size_t i = 0; i < items; ++i)
        x[i] = static_cast<float>(i) * 0.5f;
    cl_mem xb = upload(cl, x), yb = upload(cl, y);
    set_arg(saxpy, 0, xb);
    set_arg(saxpy, 1, yb);
    set_arg(saxpy, 2, 2.0f);
    for (int s = 0; s < steps; ++s)
        check(
            clEnqueueNDRangeKernel(cl.queue, saxpy, 1, nullptr, &items, local ? &local : nullptr, 0, nullptr, nullptr),
            "clEnqueueNDRangeKernel");
    auto result = download(cl, yb, items);
    for (size_t i = 0; i < items; ++i)
        expect(result[i] == 1.0f + static_cast<float>(steps) * static_cast<float>(i),
               "replay_saxpy: element " + std::to_string(i));
    clReleaseMemObject(xb);
    clReleaseMemObject(yb);
    clReleaseKernel(saxpy);
    return result;
}

// in[i] = (i % 64) / 4; out[i]: in[i] rounded to a multiple of 2 through 2^24 (the host's own
// IEEE arithmetic gives the expected value).
std::vector<float> rounding_runs(Cl& cl, cl_program program, size_t items, int steps) {
    cl_kernel rounding = make_kernel(program, "replay_rounding");
    std::vector<float> in(items);
    for (size_t i = 0; i < items; ++i)
        in[i] = static_cast<float>(i % 64) * 0.25f;
    cl_mem inb = upload(cl, in), outb = make_buffer(cl, CL_MEM_READ_WRITE, items * sizeof(float));
    set_arg(rounding, 0, inb);
    set_arg(rounding, 1, outb);
    for (int s = 0; s < steps; ++s)
        launch(cl.queue, rounding, items);
    auto result = download(cl, outb, items);
    for (size_t i = 0; i < items; ++i) {
        volatile float sum = in[i] + 16777216.0f;  // volatile: rounded to float here, as in the kernel
        const float want = sum - 16777216.0f;
        expect(result[i] == want, "replay_rounding: element " + std::to_string(i));
    }
    clReleaseMemObject(inb);
    clReleaseMemObject(outb);
    clReleaseKernel(rounding);
    return result;
}

// Planted for replay: a poor explicit local size (2 work-items per group) on a global size that
// runs far faster in larger groups.
void run_replay_poor_local(Cl& cl, int steps, size_t local) {
    cl_program program = build_replay_program(cl);
    const auto y = saxpy_runs(cl, program, 16384, local, steps);
    std::printf("kernels %d\n", steps);
    print_checksum(float_checksum(y));
}

// Planted for replay: a kernel whose results change under -cl-fast-relaxed-math.
void run_replay_fast_math(Cl& cl, int steps) {
    cl_program program = build_replay_program(cl);
    const auto out = rounding_runs(cl, program, 1024, steps);
    std::printf("kernels %d\n", steps);
    print_checksum(float_checksum(out));
}

// Planted for replay: a kernel whose time depends on -cl-mad-enable / -cl-fast-relaxed-math
// while its result stays within a small tolerance. The same input every launch, so each
// launch writes the same output.
void run_replay_build_options(Cl& cl, int steps) {
    cl_program program = build_replay_program(cl);
    cl_kernel chain = make_kernel(program, "replay_mad_chain");
    constexpr size_t items = 4096;
    constexpr cl_uint chain_steps = 2000;
    std::vector<float> in(items);
    for (size_t i = 0; i < items; ++i)
        in[i] = static_cast<float>(i % 100) * 0.25f;
    cl_mem inb = upload(cl, in), outb = make_buffer(cl, CL_MEM_READ_WRITE, items * sizeof(float));
    set_arg(chain, 0, inb);
    set_arg(chain, 1, outb);
    set_arg(chain, 2, chain_steps);
    for (int s = 0; s < steps; ++s)
        launch(cl.queue, chain, items);
    const auto out = download(cl, outb, items);
    for (size_t i = 0; i < items; i += 97) {
        float acc = in[i];
        for (cl_uint k = 0; k < chain_steps; ++k)
            acc = (acc * 0.999f + 0.001f * static_cast<float>(k & 7u)) / 1.0001f;
        expect(std::fabs(out[i] - acc) <= 1e-3f * std::max(1.0f, std::fabs(acc)),
               "replay_mad_chain: element " + std::to_string(i));
    }
    clReleaseMemObject(inb);
    clReleaseMemObject(outb);
    clReleaseKernel(chain);
    std::printf("kernels %d\n", steps);
    print_checksum(float_checksum(out));
}

// Planted for replay: a kernel whose buffers (2 x 4 MiB, in and out) exceed a small
// --replay-budget, then a small kernel that fits.
void run_replay_too_large(Cl& cl, int steps) {
    cl_program program = build_replay_program(cl);
    const auto y = saxpy_runs(cl, program, size_t{1} << 20, 0, steps);
    const auto out = rounding_runs(cl, program, 1024, steps);
    std::printf("kernels %d\n", 2 * steps);
    print_checksum(float_checksum(out, float_checksum(y)));
}

// Images for replay: a kernel reading a 2-D image through a sampler argument into a write-only
// image, and one launched with clEnqueueTask that sums an image into a buffer. A program of their
// own, so that no other mode compiles them and a device without images builds nothing of it.
const char* const image_source = R"CLC(
__kernel void replay_image_scale(__read_only image2d_t src, sampler_t smp, __write_only image2d_t dst, float k) {
    int2 p = (int2)((int)get_global_id(0), (int)get_global_id(1));
    write_imagef(dst, p, read_imagef(src, smp, p) * k);
}

// One work-item: every pixel in order, so the sum is the same on every run.
__kernel void replay_image_sum(__read_only image2d_t img, __global float4* out) {
    const sampler_t s = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;
    float4 acc = (float4)(0.0f);
    for (int y = 0; y < get_image_height(img); ++y)
        for (int x = 0; x < get_image_width(img); ++x) acc += read_imagef(img, s, (int2)(x, y));
    out[0] = acc;
}
)CLC";

cl_mem make_rgba_image(const Cl& cl, cl_mem_flags flags, size_t width, size_t height) {
    const cl_image_format format{CL_RGBA, CL_FLOAT};
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = width;
    desc.image_height = height;
    cl_int err = CL_SUCCESS;
    cl_mem image = clCreateImage(cl.context, flags, &format, &desc, nullptr, &err);
    check(err, "clCreateImage");
    return image;
}

void write_rgba_image(const Cl& cl, cl_mem image, size_t width, size_t height, const std::vector<float>& pixels) {
    const size_t origin[3] = {0, 0, 0}, region[3] = {width, height, 1};
    check(clEnqueueWriteImage(cl.queue, image, CL_TRUE, origin, region, 0, 0, pixels.data(), 0, nullptr, nullptr),
          "clEnqueueWriteImage");
}

// Planted for replay's image capture: `steps` rounds of dst = src x k (k = 1, 2, ...; a 2-D range
// in groups of 8x4) and sum = the pixels of dst (clEnqueueTask). src(x, y) = (x/4, y/2, (x+y)/8, 1):
// every value and sum is exact in float, so the capture test computes the bytes each launch saw.
// Exit 77 where the device has no images.
void run_replay_image(Cl& cl, int steps) {
    cl_bool images = CL_FALSE;
    check(clGetDeviceInfo(cl.device, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, nullptr), "clGetDeviceInfo");
    if (!images) {
        std::fprintf(stderr, "trace_app: the device has no image support (CL_DEVICE_IMAGE_SUPPORT false)\n");
        std::exit(77);
    }
    constexpr size_t width = 64, height = 32;
    cl_int err = CL_SUCCESS;
    const char* source = image_source;
    cl_program program = clCreateProgramWithSource(cl.context, 1, &source, nullptr, &err);
    check(err, "clCreateProgramWithSource");
    check(clBuildProgram(program, 1, &cl.device, replay_options, nullptr, nullptr), "clBuildProgram (image)");
    cl_kernel scale = make_kernel(program, "replay_image_scale"), sum = make_kernel(program, "replay_image_sum");
    std::vector<float> pixels(width * height * 4);
    for (size_t y = 0; y < height; ++y)
        for (size_t x = 0; x < width; ++x) {
            float* p = &pixels[(y * width + x) * 4];
            p[0] = static_cast<float>(x) * 0.25f;
            p[1] = static_cast<float>(y) * 0.5f;
            p[2] = static_cast<float>(x + y) * 0.125f;
            p[3] = 1.0f;
        }
    // dst is read_write: the sum kernel reads what the scale kernel wrote.
    cl_mem src = make_rgba_image(cl, CL_MEM_READ_ONLY, width, height);
    cl_mem dst = make_rgba_image(cl, CL_MEM_READ_WRITE, width, height);
    write_rgba_image(cl, src, width, height, pixels);
    write_rgba_image(cl, dst, width, height, std::vector<float>(pixels.size(), 0.0f));
    cl_mem out = make_buffer(cl, CL_MEM_READ_WRITE, 4 * sizeof(float));
    cl_sampler sampler = nullptr;
    if (cl.version_major >= 2) {
        const cl_sampler_properties props[] = {CL_SAMPLER_NORMALIZED_COORDS,
                                               CL_FALSE,
                                               CL_SAMPLER_ADDRESSING_MODE,
                                               CL_ADDRESS_CLAMP_TO_EDGE,
                                               CL_SAMPLER_FILTER_MODE,
                                               CL_FILTER_NEAREST,
                                               0};
        sampler = clCreateSamplerWithProperties(cl.context, props, &err);
    } else {
        sampler = clCreateSampler(cl.context, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST, &err);
    }
    check(err, "creating a sampler");
    set_arg(scale, 0, src);
    check(clSetKernelArg(scale, 1, sizeof sampler, &sampler), "clSetKernelArg");
    set_arg(scale, 2, dst);
    set_arg(sum, 0, dst);
    set_arg(sum, 1, out);
    const size_t global[2] = {width, height}, local[2] = {8, 4};
    for (int s = 1; s <= steps; ++s) {
        set_arg(scale, 3, static_cast<float>(s));
        check(clEnqueueNDRangeKernel(cl.queue, scale, 2, nullptr, global, local, 0, nullptr, nullptr),
              "clEnqueueNDRangeKernel");
        check(clEnqueueTask(cl.queue, sum, 0, nullptr, nullptr), "clEnqueueTask");
    }
    std::vector<float> scaled(pixels.size());
    const size_t origin[3] = {0, 0, 0}, region[3] = {width, height, 1};
    check(clEnqueueReadImage(cl.queue, dst, CL_TRUE, origin, region, 0, 0, scaled.data(), 0, nullptr, nullptr),
          "clEnqueueReadImage");
    const auto total = download(cl, out, 4);
    float want[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < pixels.size(); ++i) {
        const float v = pixels[i] * static_cast<float>(steps);
        expect(scaled[i] == v, "replay_image_scale: element " + std::to_string(i));
        want[i % 4] += v;
    }
    for (int c = 0; c < 4; ++c)
        expect(total[c] == want[c], "replay_image_sum: channel " + std::to_string(c));
    clReleaseSampler(sampler);
    clReleaseMemObject(out);
    clReleaseMemObject(dst);
    clReleaseMemObject(src);
    clReleaseKernel(sum);
    clReleaseKernel(scale);
    clReleaseProgram(program);
    std::printf("kernels %d\ntasks %d\n", steps, steps);
    print_checksum(float_checksum(total, float_checksum(scaled)));
}

// Overhead benchmark (not an anti-pattern test): the tracer's per-call cost dominates when every
// launch is tiny and synchronised.
void run_many_small(Cl& cl, int steps) {
    constexpr size_t items = 64;
    cl_program program = build_program(cl);
    cl_kernel add_one = make_kernel(program, "add_one");
    cl_mem data = make_buffer(cl, CL_MEM_READ_WRITE, items * sizeof(uint32_t));
    fill_zero(cl.queue, data, items * sizeof(uint32_t));
    set_arg(add_one, 0, data);
    for (int i = 0; i < steps; ++i) {
        launch(cl.queue, add_one, items);
        check(clFinish(cl.queue), "clFinish");
    }
    auto result = read_back(cl.queue, data, items);
    expect_all(result, static_cast<uint32_t>(steps), "many_small");
    std::printf("kernels %d\nfinishes %d\n", steps, steps);
    print_checksum(checksum(result));
}

// For capture windows and bounded space (not a planted pattern): `steps` tiny kernels launched on
// a fixed schedule, kernel k at start + k * period (absolute deadlines, so the spacing does not
// drift with the launches' own cost), each finished before the next; the run is mostly sleep, so
// a long run costs the machine little. Period 0: as fast as the device goes, finished every 64
// launches (the bounded-space benchmark's launch-heavy load). "paced started" on stderr once the
// first launch is due, for tests that act while it runs.
void run_paced(Cl& cl, int steps, int period_ms) {
    constexpr size_t items = 64;
    cl_program program = build_program(cl);
    cl_kernel add_one = make_kernel(program, "add_one");
    cl_mem data = make_buffer(cl, CL_MEM_READ_WRITE, items * sizeof(uint32_t));
    fill_zero(cl.queue, data, items * sizeof(uint32_t));
    set_arg(add_one, 0, data);
    check(clFinish(cl.queue), "clFinish");
    std::fprintf(stderr, "trace_app: paced started\n");
    timespec start{};
    clock_gettime(CLOCK_MONOTONIC, &start);
    const int64_t start_ns = int64_t{start.tv_sec} * 1000000000 + start.tv_nsec;
    for (int i = 0; i < steps; ++i) {
        if (period_ms > 0) {
            const int64_t due = start_ns + int64_t{i} * period_ms * 1000000;
            const timespec at{static_cast<time_t>(due / 1000000000), static_cast<long>(due % 1000000000)};
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) != 0) {
            }
        }
        launch(cl.queue, add_one, items);
        if (period_ms > 0 || i % 64 == 63) check(clFinish(cl.queue), "clFinish");
    }
    auto result = read_back(cl.queue, data, items);
    expect_all(result, static_cast<uint32_t>(steps), "paced");
    std::printf("kernels %d\nperiod_ms %d\n", steps, period_ms);
    print_checksum(checksum(result));
}

// Overhead benchmark: a few long kernels (about 100 ms each on PoCL with 2 cores), where the
// tracer's per-call cost should vanish.
void run_long_kernels(Cl& cl, int steps) {
    constexpr size_t items = 4096;
    constexpr uint32_t iterations = 10000;
    cl_program program = build_program(cl);
    cl_kernel slow = make_kernel(program, "slow_kernel");
    cl_mem table = make_buffer(cl, CL_MEM_READ_ONLY, slow_table_size * sizeof(uint32_t));
    cl_mem out = make_buffer(cl, CL_MEM_WRITE_ONLY, items * sizeof(uint32_t));
    const auto host_table = slow_table();
    check(clEnqueueWriteBuffer(cl.queue, table, CL_FALSE, 0, slow_table_size * sizeof(uint32_t), host_table.data(), 0,
                               nullptr, nullptr),
          "clEnqueueWriteBuffer");
    set_arg(slow, 0, table);
    set_arg(slow, 1, out);
    set_arg(slow, 2, iterations);
    for (int i = 0; i < steps; ++i)
        launch(cl.queue, slow, items);
    check(clFinish(cl.queue), "clFinish");
    auto result = read_back(cl.queue, out, items);
    expect_slow_output(result, host_table, iterations, "long_kernels");
    std::printf("kernels %d\nfinishes 1\n", steps);
    print_checksum(checksum(result));
}

// Runs a couple of kernels, then copies stdin to stdout byte for byte and prints nothing else
// there: checks that a tracer passes the child's standard streams through untouched.
void run_echo(Cl& cl, int steps) {
    cl_program program = build_program(cl);
    cl_kernel add_one = make_kernel(program, "add_one");
    cl_mem data = make_buffer(cl, CL_MEM_READ_WRITE, small_items * sizeof(uint32_t));
    fill_zero(cl.queue, data, small_items * sizeof(uint32_t));
    set_arg(add_one, 0, data);
    for (int i = 0; i < steps; ++i)
        launch(cl.queue, add_one, small_items);
    check(clFinish(cl.queue), "clFinish");
    expect_all(read_back(cl.queue, data, small_items), static_cast<uint32_t>(steps), "echo");
    char buffer[65536];
    size_t got = 0;
    while ((got = std::fread(buffer, 1, sizeof(buffer), stdin)) > 0) {
        if (std::fwrite(buffer, 1, got, stdout) != got) {
            std::fprintf(stderr, "trace_app: echo: writing stdout failed\n");
            std::exit(2);
        }
    }
    if (std::ferror(stdin)) {
        std::fprintf(stderr, "trace_app: echo: reading stdin failed\n");
        std::exit(2);
    }
}

// Forked workers, as Python's multiprocessing makes them: the parent touches OpenCL first (so the
// layer is loaded before the fork), then forks two children that each open the device, launch
// `steps` kernels with a clFinish after each, check the result, release their queue (as a Python
// worker's objects are released when its function returns) and leave with _exit (no exit
// handlers, like os._exit). The parent waits for both and prints for them, so stdout is the same
// whatever order they run in. Exit 1 when a worker failed.
int run_fork_workers(int steps) {
    constexpr int workers = 2;
    cl_uint count = 0;
    check(clGetPlatformIDs(0, nullptr, &count), "clGetPlatformIDs");
    std::fflush(stdout);
    pid_t pids[workers] = {};
    for (int w = 0; w < workers; ++w) {
        pids[w] = fork();
        if (pids[w] < 0) {
            std::fprintf(stderr, "trace_app: fork_workers: fork failed\n");
            return 2;
        }
        if (pids[w] == 0) {
            Cl cl = open_device();
            const auto result = waited_kernels(cl, steps);
            const bool ok = std::all_of(result.begin(), result.end(),
                                        [&](uint32_t v) { return v == static_cast<uint32_t>(steps); });
            // Released as a Python worker's objects are when its function returns; then _exit.
            clReleaseCommandQueue(cl.queue);
            _exit(ok ? 0 : 1);
        }
    }
    int failed = 0;
    for (pid_t pid : pids) {
        int status = 0;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
    }
    std::printf("workers %d\nkernels %d each\nfailed %d\n", workers, steps, failed);
    return failed ? 1 : 0;
}

struct Mode {
    const char* name;
    int default_steps;  // what --steps overrides
};

// Defaults sized so each test mode runs roughly 0.3-2 s on PoCL with 2 CPU cores, the planted cost
// well above what every run pays anyway (~0.1 s to start, ~30 ms to build from a warm PoCL cache).
// PoCL's calls are cheap (a launch + clFinish ~20 us, a 64-byte write ~2 us), hence the large
// counts for sync_each and tiny_transfers.
constexpr Mode modes[] = {
    {"sync_each", 10000},         // kernels, each followed by clFinish
    {"pageable_uploads", 40},     // steps of upload + kernel + finish
    {"tiny_transfers", 50000},    // 64-byte writes
    {"rebuild", 10},              // batches, each building the program
    {"alloc_loop", 300},          // iterations, each allocating a 4 MiB buffer
    {"slow_kernel", 3},           // rounds of 4 fast copies + 1 slow kernel
    {"clean", 400},               // large kernels back to back
    {"threads", 200},             // kernels per thread (4 threads)
    {"abort", 50},                // planned kernels; aborts after half
    {"exit_midway", 50},          // planned unfinished kernels; exits after half
    {"many_small", 20000},        // synchronised tiny kernels
    {"long_kernels", 10},         // kernels of about 100 ms
    {"echo", 2},                  // kernels before echoing stdin
    {"fork_workers", 100},        // kernels per forked worker (2 workers)
    {"paced", 400},               // kernels on a fixed schedule, one per --period ms (default 50)
    {"short_pairs", 5000},        // pairs of tiny kernels back to back
    {"replay_poor_local", 6},     // saxpy launches in groups of 2 work-items (--local N)
    {"replay_fast_math", 3},      // launches of a kernel that -cl-fast-relaxed-math changes
    {"replay_build_options", 4},  // launches of a multiply-add and division chain
    {"replay_too_large", 3},      // launches each of a 2 x 4 MiB kernel and a small one
    {"replay_image", 3},          // rounds of an image kernel (2-D range) and an image sum (task)
};

[[noreturn]] void usage(const char* problem) {
    if (problem != nullptr) std::fprintf(stderr, "trace_app: %s\n", problem);
    std::fprintf(stderr,
                 "usage: clprobe_trace_app MODE [--exit CODE] [--steps N] [--period MS] [--local N]\n       "
                 "clprobe_trace_app --list\n");
    std::exit(2);
}

int parse_int(const char* text, const char* option) {
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || value < -1000000000L || value > 1000000000L) {
        usage((std::string("bad value for ") + option + ": " + text).c_str());
    }
    return static_cast<int>(value);
}

}  // namespace

int main(int argc, char** argv) {
    std::string_view mode_name;
    std::optional<int> exit_code;
    std::optional<int> steps;
    int period_ms = 50;
    size_t poor_local = 2;  // replay_poor_local's local size (--local)
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--list") {
            for (const Mode& mode : modes)
                std::printf("%s\n", mode.name);
            return 0;
        } else if (arg == "--period") {
            if (i + 1 >= argc) usage("--period needs a value");
            period_ms = parse_int(argv[i + 1], argv[i]);
            if (period_ms < 0) usage("--period must be at least 0");
            ++i;
        } else if (arg == "--local") {
            if (i + 1 >= argc) usage("--local needs a value");
            const int value = parse_int(argv[i + 1], argv[i]);
            if (value < 1 || 16384 % value != 0) usage("--local must divide 16384");
            poor_local = static_cast<size_t>(value);
            ++i;
        } else if (arg == "--exit" || arg == "--steps") {
            if (i + 1 >= argc) usage((std::string(arg) + " needs a value").c_str());
            const int value = parse_int(argv[i + 1], argv[i]);
            ++i;
            if (arg == "--exit") {
                exit_code = value;
            } else {
                if (value < 1) usage("--steps must be at least 1");
                steps = value;
            }
        } else if (mode_name.empty() && !arg.starts_with("-")) {
            mode_name = arg;
        } else {
            usage((std::string("unexpected argument: ") + argv[i]).c_str());
        }
    }
    if (mode_name.empty()) usage("no mode given");
    const Mode* mode = nullptr;
    for (const Mode& m : modes) {
        if (mode_name == m.name) mode = &m;
    }
    if (mode == nullptr) usage((std::string("unknown mode: ") + std::string(mode_name)).c_str());
    const int n = steps.value_or(mode->default_steps);
    if (mode_name == "fork_workers") {
        // Forks before the parent opens a device: a driver's threads do not survive fork().
        std::printf("mode %s\n", mode->name);
        const int rc = run_fork_workers(n);
        std::fflush(stdout);
        std::fprintf(stderr, "trace_app: %s done\n", mode->name);
        return rc ? rc : exit_code.value_or(0);
    }

    Cl cl = open_device();
    // echo's stdout is exactly its stdin; every other mode says which it is.
    if (mode_name != "echo") std::printf("mode %s\n", mode->name);
    if (mode_name == "sync_each") {
        run_sync_each(cl, n);
    } else if (mode_name == "pageable_uploads") {
        run_pageable_uploads(cl, n);
    } else if (mode_name == "tiny_transfers") {
        run_tiny_transfers(cl, n);
    } else if (mode_name == "rebuild") {
        run_rebuild(cl, n);
    } else if (mode_name == "alloc_loop") {
        run_alloc_loop(cl, n);
    } else if (mode_name == "slow_kernel") {
        run_slow_kernel(cl, n);
    } else if (mode_name == "clean") {
        run_clean(cl, n);
    } else if (mode_name == "threads") {
        run_threads(cl, n);
    } else if (mode_name == "abort") {
        run_abort(cl, n);
    } else if (mode_name == "exit_midway") {
        run_exit_midway(cl, n, exit_code.value_or(5));
    } else if (mode_name == "many_small") {
        run_many_small(cl, n);
    } else if (mode_name == "long_kernels") {
        run_long_kernels(cl, n);
    } else if (mode_name == "echo") {
        run_echo(cl, n);
    } else if (mode_name == "paced") {
        run_paced(cl, n, period_ms);
    } else if (mode_name == "short_pairs") {
        run_short_pairs(cl, n);
    } else if (mode_name == "replay_poor_local") {
        run_replay_poor_local(cl, n, poor_local);
    } else if (mode_name == "replay_fast_math") {
        run_replay_fast_math(cl, n);
    } else if (mode_name == "replay_build_options") {
        run_replay_build_options(cl, n);
    } else if (mode_name == "replay_too_large") {
        run_replay_too_large(cl, n);
    } else if (mode_name == "replay_image") {
        run_replay_image(cl, n);
    }
    std::fflush(stdout);
    std::fprintf(stderr, "trace_app: %s done\n", mode->name);
    return exit_code.value_or(0);
}
