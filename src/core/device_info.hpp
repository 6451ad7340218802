#pragma once
// What clprobe knows about one OpenCL device: plain data, filled by src/cl/device_query.cpp,
// stored in every report so saved reports can be analysed without the device.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace clprobe {

struct DeviceInfo {
    std::string selector;  // "P:D", the selector that names this device in `clprobe list`
    int platform_index = 0;
    int device_index = 0;
    int flat_index = 0;

    std::string platform_name, platform_vendor, platform_version;
    std::string name, vendor, type;  // type: gpu, cpu, accelerator, custom or other
    std::string driver_version, device_version, opencl_c_version;

    std::uint32_t compute_units = 0;
    std::uint32_t max_clock_mhz = 0;
    std::uint64_t global_mem_bytes = 0;
    std::uint64_t global_mem_cache_bytes = 0;
    std::uint32_t global_mem_cacheline_bytes = 0;
    std::uint64_t local_mem_bytes = 0;
    bool local_mem_dedicated = false;  // false: "local" memory is emulated in global memory
    std::uint64_t max_alloc_bytes = 0;
    std::uint64_t max_work_group_size = 0;
    std::uint64_t preferred_work_group_multiple = 0;  // 0 when the device would not say

    bool fp16 = false;  // cl_khr_fp16 advertised
    bool fp64 = false;  // cl_khr_fp64 advertised or double precision config non-zero
    bool host_unified_memory = false;
    bool profiling = false;  // queue profiling supported
    double timer_resolution_ns = 0;

    std::uint32_t native_vector_width_float = 0;
    std::uint32_t native_vector_width_double = 0;
    std::uint32_t native_vector_width_half = 0;

    std::optional<std::string> pci_address;  // DDDD:BB:DD.F
    std::string pci_address_source;          // which query produced it
    std::vector<std::string> extensions;
};

struct HostInfo {
    std::string hostname, os, kernel, cpu_model;
    std::uint32_t logical_cpus = 0;
};

}  // namespace clprobe
