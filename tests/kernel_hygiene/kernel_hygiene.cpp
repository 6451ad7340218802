// Runs every embedded kernel once on tiny shapes, for Oclgrind's checks (memory errors, data races,
// uninitialised reads): `oclgrind --check-api --data-races --uninitialized --log LOG
// clprobe_kernel_hygiene`, then LOG must be empty. The shapes keep each kernel's host contract
// (divisibility, sizes) exactly as the probes do, only much smaller, so Oclgrind's simulation
// stays fast. When you add a kernel, add a run here too.
#include <fmt/core.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cl/cl_error.hpp"
#include "cl/device_catalog.hpp"
#include "cl/device_query.hpp"
#include "cl/device_session.hpp"
#include "cl/kernel_sources.hpp"

using namespace clprobe;

namespace {

void run(DeviceSession& s, cl::Kernel& k, std::size_t global, std::size_t local) {
    s.queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(global), cl::NDRange(local));
    s.queue().finish();
}

void bandwidth_kernels(DeviceSession& s) {
    constexpr std::size_t local = 4, groups = 2, items = local * groups;
    constexpr cl_uint per_item = 4;  // the read kernels unroll by 4
    const std::size_t max_floats = items * per_item * 16;
    std::vector<float> init(max_floats);
    for (std::size_t i = 0; i < init.size(); ++i)
        init[i] = static_cast<float>(i & 7);
    cl::Buffer a(s.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, max_floats * sizeof(float), init.data());
    cl::Buffer b(s.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, max_floats * sizeof(float), init.data());
    cl::Buffer sums(s.context(), CL_MEM_READ_WRITE, items * 16 * sizeof(float));
    for (const char* pattern : {"interleaved", "chunked"})
        for (int w : {1, 2, 4, 8, 16}) {
            cl::Kernel read = s.kernels().kernel("peak/bandwidth.cl", fmt::format("read_{}_v{}", pattern, w).c_str());
            read.setArg(0, a);
            read.setArg(1, sums);
            read.setArg(2, per_item);
            run(s, read, items, local);
            cl::Kernel write = s.kernels().kernel("peak/bandwidth.cl", fmt::format("write_{}_v{}", pattern, w).c_str());
            write.setArg(0, b);
            write.setArg(1, per_item);
            write.setArg(2, 1.0f);
            run(s, write, items, local);
            cl::Kernel copy = s.kernels().kernel("peak/bandwidth.cl", fmt::format("copy_{}_v{}", pattern, w).c_str());
            copy.setArg(0, a);
            copy.setArg(1, b);
            copy.setArg(2, per_item);
            run(s, copy, items, local);
        }
}

void compute_kernels(DeviceSession& s, const char* options, std::size_t element_bytes) {
    constexpr std::size_t local = 4, items = 8;
    cl::Buffer out(s.context(), CL_MEM_WRITE_ONLY, items * 16 * element_bytes);
    for (int w : {1, 2, 4, 8, 16}) {
        cl::Kernel k = s.kernels().kernel("peak/compute.cl", fmt::format("fma_v{}", w).c_str(), options);
        k.setArg(0, out);
        if (element_bytes == 8) {
            k.setArg(1, 0.875);
            k.setArg(2, 0.125);
        } else {
            k.setArg(1, 0.875f);
            k.setArg(2, 0.125f);
        }
        k.setArg(3, cl_uint{3});
        run(s, k, items, local);
    }
}

}  // namespace

int main() {
    try {
        DeviceCatalog cat = enumerate_devices();
        if (cat.error || cat.listings.empty()) {
            std::fprintf(stderr, "kernel_hygiene: no OpenCL device\n");
            return 2;
        }
        const auto& l = cat.listings.front();
        // CLPROBE_KERNEL_DIR runs edited kernels (and lets a test show that a planted bug is caught).
        const char* dir = std::getenv("CLPROBE_KERNEL_DIR");
        DeviceSession s(cat.devices.front(), query_device_info(cat.devices.front(), l, cat.platforms.front()),
                        dir ? KernelSources::from_directory(dir) : KernelSources::embedded(), CacheConfig{false, {}});
        std::printf("kernel_hygiene on %s\n", s.info().name.c_str());
        cl::Kernel empty = s.kernels().kernel("peak/launch.cl", "empty");
        run(s, empty, 1, 1);
        bandwidth_kernels(s);
        compute_kernels(s, "-D REAL=float", 4);
        if (s.info().fp64) compute_kernels(s, "-D REAL=double -D REAL_IS_DOUBLE", 8);
        std::printf("kernel_hygiene: every kernel ran\n");
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kernel_hygiene: %s\n", e.what());
        return 1;
    }
}
