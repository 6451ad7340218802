#pragma once
// One selected device, opened: context, an in-order queue (with profiling when the device allows
// it), its DeviceInfo and its kernel library. Probes receive this, never raw OpenCL globals.
#include <memory>
#include <string>

#include "cl/cl_api.hpp"
#include "cl/kernel_library.hpp"
#include "core/device_info.hpp"

namespace clprobe {

class DeviceSession {
  public:
    DeviceSession(cl::Device device, DeviceInfo info, KernelSources sources, CacheConfig cache);

    const DeviceInfo& info() const { return info_; }
    cl::Context& context() { return context_; }
    cl::Device& device() { return device_; }
    cl::CommandQueue& queue() { return queue_; }
    KernelLibrary& kernels() { return *kernels_; }

    // True when queue() timestamps commands; otherwise timings fall back to the host clock.
    bool profiling() const { return profiling_; }
    const std::string& profiling_fallback_reason() const { return profiling_reason_; }

    // An extra in-order queue on the same context (for probes that need concurrency).
    cl::CommandQueue make_queue();

  private:
    cl::Device device_;
    DeviceInfo info_;
    cl::Context context_;
    cl::CommandQueue queue_;
    bool profiling_ = false;
    std::string profiling_reason_;
    std::unique_ptr<KernelLibrary> kernels_;
};

}  // namespace clprobe
