#include "cl/device_catalog.hpp"

#include "cl/cl_error.hpp"

namespace clprobe {

std::string device_type_name(cl_device_type type) {
    if (type & CL_DEVICE_TYPE_GPU) return "gpu";
    if (type & CL_DEVICE_TYPE_CPU) return "cpu";
    if (type & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
    if (type & CL_DEVICE_TYPE_CUSTOM) return "custom";
    return "other";
}

namespace {
std::string platform_string(cl_platform_id p, cl_platform_info what) {
    std::size_t size = 0;
    if (clGetPlatformInfo(p, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
    std::string s(size, '\0');
    if (clGetPlatformInfo(p, what, size, s.data(), nullptr) != CL_SUCCESS) return {};
    while (!s.empty() && s.back() == '\0')
        s.pop_back();
    return s;
}
}  // namespace

DeviceCatalog enumerate_devices() {
    DeviceCatalog cat;
    // The C API directly: the bindings throw on CL_PLATFORM_NOT_FOUND_KHR, which is the ordinary
    // "nothing installed" answer of the ICD loader and deserves its own message.
    cl_uint count = 0;
    cl_int err = clGetPlatformIDs(0, nullptr, &count);
    if (err != CL_SUCCESS || count == 0) {
        cat.error =
            err != CL_SUCCESS ? ClError("clGetPlatformIDs", err).what() : std::string("clGetPlatformIDs: no platforms");
        return cat;
    }
    std::vector<cl_platform_id> ids(count);
    err = clGetPlatformIDs(count, ids.data(), nullptr);
    if (err != CL_SUCCESS) {
        cat.error = ClError("clGetPlatformIDs", err).what();
        return cat;
    }
    int flat = 0;
    for (cl_uint p = 0; p < count; ++p) {
        PlatformEntry entry;
        entry.index = static_cast<int>(p);
        entry.name = platform_string(ids[p], CL_PLATFORM_NAME);
        entry.vendor = platform_string(ids[p], CL_PLATFORM_VENDOR);
        entry.version = platform_string(ids[p], CL_PLATFORM_VERSION);
        cl_uint ndev = 0;
        err = clGetDeviceIDs(ids[p], CL_DEVICE_TYPE_ALL, 0, nullptr, &ndev);
        std::vector<cl_device_id> devs;
        if (err == CL_SUCCESS && ndev > 0) {
            devs.resize(ndev);
            err = clGetDeviceIDs(ids[p], CL_DEVICE_TYPE_ALL, ndev, devs.data(), nullptr);
        }
        if (err != CL_SUCCESS && err != CL_DEVICE_NOT_FOUND) {
            entry.error = ClError("clGetDeviceIDs", err).what();
            devs.clear();
        }
        for (cl_uint d = 0; d < devs.size(); ++d) {
            cl::Device device(devs[d], /*retainObject=*/false);
            DeviceListing l;
            l.platform_index = static_cast<int>(p);
            l.device_index = static_cast<int>(d);
            l.flat_index = flat++;
            l.platform_name = entry.name;
            try {
                l.device_name = device.getInfo<CL_DEVICE_NAME>();
                l.device_name.erase(l.device_name.find_last_not_of('\0') + 1);
                l.type = device_type_name(device.getInfo<CL_DEVICE_TYPE>());
            } catch (const cl::Error& e) {
                l.device_name = std::string("(unreadable: ") + to_cl_error(e).what() + ")";
                l.type = "other";
            }
            cat.listings.push_back(std::move(l));
            cat.devices.push_back(std::move(device));
        }
        cat.platforms.push_back(std::move(entry));
    }
    return cat;
}

}  // namespace clprobe
