#include "cl/device_session.hpp"

#include "cl/cl_error.hpp"
#include "core/log.hpp"

namespace clprobe {

DeviceSession::DeviceSession(cl::Device device, DeviceInfo info, KernelSources sources, CacheConfig cache)
    : device_(std::move(device)), info_(std::move(info)) {
    try {
        context_ = cl::Context(device_);
    } catch (const cl::Error& e) {
        throw ClError("clCreateContext", e.err());
    }
    try {
        queue_ = cl::CommandQueue(context_, device_, CL_QUEUE_PROFILING_ENABLE);
        profiling_ = true;
    } catch (const cl::Error& e) {
        profiling_reason_ = std::string("profiling queue refused: ") + to_cl_error(e).what();
        Log::warn("{}; timings use the host clock", profiling_reason_);
        try {
            queue_ = cl::CommandQueue(context_, device_, 0);
        } catch (const cl::Error& e2) {
            throw ClError("clCreateCommandQueue", e2.err());
        }
    }
    info_.profiling = profiling_;
    kernels_ = std::make_unique<KernelLibrary>(context_, device_, info_, std::move(sources), std::move(cache));

    if (info_.preferred_work_group_multiple == 0) {
        // Pre-3.0 drivers only answer per kernel; the launch kernel is tiny and built anyway.
        try {
            auto k = kernels_->kernel("peak/launch.cl", "empty");
            info_.preferred_work_group_multiple =
                k.getWorkGroupInfo<CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE>(device_);
        } catch (const std::exception& e) {
            Log::debug("preferred work-group multiple unknown: {}", e.what());
        }
    }
}

cl::CommandQueue DeviceSession::make_queue() {
    try {
        return cl::CommandQueue(context_, device_, profiling_ ? CL_QUEUE_PROFILING_ENABLE : 0);
    } catch (const cl::Error& e) {
        throw ClError("clCreateCommandQueue", e.err());
    }
}

}  // namespace clprobe
