#include "cl/device_query.hpp"

#include <fmt/core.h>

#include <sstream>

#include "core/text.hpp"

namespace clprobe {

namespace {

// cl_nv_device_attribute_query is not in Khronos' cl_ext.h; these are NVIDIA's values.
constexpr cl_device_info nv_pci_bus_id = 0x4008;
constexpr cl_device_info nv_pci_slot_id = 0x4009;
constexpr cl_device_info nv_pci_domain_id = 0x400A;

template <cl_device_info Info, typename T>
void read_into(const cl::Device& d, T& out) {
    try {
        out = static_cast<T>(d.getInfo<Info>());
    } catch (const cl::Error&) {
    }
}

// OpenCL's strings carry their terminating NUL (and some drivers pad with spaces).
std::string trimmed(const std::string& s) {
    return std::string(text::trim(std::string_view(s.c_str())));
}

template <typename T>
bool raw_query(const cl::Device& d, cl_device_info what, T& out) {
    return clGetDeviceInfo(d(), what, sizeof(T), &out, nullptr) == CL_SUCCESS;
}

void read_pci_address(const cl::Device& d, DeviceInfo& info) {
    if (has_extension(info, "cl_khr_pci_bus_info")) {
        cl_device_pci_bus_info_khr bus{};
        if (raw_query(d, CL_DEVICE_PCI_BUS_INFO_KHR, bus)) {
            info.pci_address =
                fmt::format("{:04x}:{:02x}:{:02x}.{:x}", bus.pci_domain, bus.pci_bus, bus.pci_device, bus.pci_function);
            info.pci_address_source = "cl_khr_pci_bus_info";
            return;
        }
    }
    if (has_extension(info, "cl_nv_device_attribute_query")) {
        cl_uint bus = 0, slot = 0, domain = 0;
        if (raw_query(d, nv_pci_bus_id, bus) && raw_query(d, nv_pci_slot_id, slot)) {
            raw_query(d, nv_pci_domain_id, domain);  // older drivers lack it: domain 0
            // NVIDIA packs the slot as (device << 3) | function.
            info.pci_address = fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, slot >> 3, slot & 7);
            info.pci_address_source = "cl_nv_device_attribute_query";
            return;
        }
    }
    if (has_extension(info, "cl_amd_device_attribute_query")) {
        cl_device_topology_amd topo{};
        if (raw_query(d, CL_DEVICE_TOPOLOGY_AMD, topo) && topo.raw.type == CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD) {
            info.pci_address = fmt::format("0000:{:02x}:{:02x}.{:x}", static_cast<unsigned>(topo.pcie.bus) & 0xff,
                                           static_cast<unsigned>(topo.pcie.device) & 0xff,
                                           static_cast<unsigned>(topo.pcie.function) & 0xff);
            info.pci_address_source = "cl_amd_device_attribute_query";
        }
    }
}

}  // namespace

DeviceInfo query_device_info(const cl::Device& d, const DeviceListing& listing, const PlatformEntry& platform) {
    DeviceInfo info;
    info.selector = std::to_string(listing.platform_index) + ":" + std::to_string(listing.device_index);
    info.platform_index = listing.platform_index;
    info.device_index = listing.device_index;
    info.flat_index = listing.flat_index;
    info.platform_name = platform.name;
    info.platform_vendor = platform.vendor;
    info.platform_version = platform.version;
    info.name = listing.device_name;
    info.type = listing.type;

    read_into<CL_DEVICE_VENDOR>(d, info.vendor);
    read_into<CL_DRIVER_VERSION>(d, info.driver_version);
    read_into<CL_DEVICE_VERSION>(d, info.device_version);
    read_into<CL_DEVICE_OPENCL_C_VERSION>(d, info.opencl_c_version);
    info.vendor = trimmed(info.vendor);
    info.driver_version = trimmed(info.driver_version);
    info.device_version = trimmed(info.device_version);
    info.opencl_c_version = trimmed(info.opencl_c_version);

    read_into<CL_DEVICE_MAX_COMPUTE_UNITS>(d, info.compute_units);
    read_into<CL_DEVICE_MAX_CLOCK_FREQUENCY>(d, info.max_clock_mhz);
    read_into<CL_DEVICE_GLOBAL_MEM_SIZE>(d, info.global_mem_bytes);
    read_into<CL_DEVICE_GLOBAL_MEM_CACHE_SIZE>(d, info.global_mem_cache_bytes);
    read_into<CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE>(d, info.global_mem_cacheline_bytes);
    read_into<CL_DEVICE_LOCAL_MEM_SIZE>(d, info.local_mem_bytes);
    cl_device_local_mem_type local_type = CL_GLOBAL;
    read_into<CL_DEVICE_LOCAL_MEM_TYPE>(d, local_type);
    info.local_mem_dedicated = local_type == CL_LOCAL;
    read_into<CL_DEVICE_MAX_MEM_ALLOC_SIZE>(d, info.max_alloc_bytes);
    read_into<CL_DEVICE_MAX_WORK_GROUP_SIZE>(d, info.max_work_group_size);
    cl_bool unified = CL_FALSE;
    read_into<CL_DEVICE_HOST_UNIFIED_MEMORY>(d, unified);
    info.host_unified_memory = unified == CL_TRUE;
    std::size_t timer_res = 0;
    read_into<CL_DEVICE_PROFILING_TIMER_RESOLUTION>(d, timer_res);
    info.timer_resolution_ns = static_cast<double>(timer_res);
    cl_command_queue_properties qprops = 0;
    read_into<CL_DEVICE_QUEUE_PROPERTIES>(d, qprops);
    info.profiling = (qprops & CL_QUEUE_PROFILING_ENABLE) != 0;
    read_into<CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT>(d, info.native_vector_width_float);
    read_into<CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE>(d, info.native_vector_width_double);
    read_into<CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF>(d, info.native_vector_width_half);

    // Only OpenCL 3.0 drivers answer this device-level query; the session falls back to asking a
    // built kernel (CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE) when it stays 0.
    std::size_t wg_multiple = 0;
    if (raw_query(d, CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, wg_multiple))
        info.preferred_work_group_multiple = wg_multiple;

    std::string extensions;
    read_into<CL_DEVICE_EXTENSIONS>(d, extensions);
    std::istringstream words(extensions);
    for (std::string w; words >> w;)
        info.extensions.push_back(w);

    cl_device_fp_config double_config = 0;
    raw_query(d, CL_DEVICE_DOUBLE_FP_CONFIG, double_config);
    info.fp64 = has_extension(info, "cl_khr_fp64") || double_config != 0;
    info.fp16 = has_extension(info, "cl_khr_fp16");
    read_pci_address(d, info);
    return info;
}

bool has_extension(const DeviceInfo& info, std::string_view ext) {
    for (const auto& e : info.extensions)
        if (e == ext) return true;
    return false;
}

}  // namespace clprobe
