#pragma once
// Every platform and device the ICD loader offers. A platform whose calls fail is kept with its
// error instead of hiding the platforms after it.
#include <optional>
#include <string>
#include <vector>

#include "cl/cl_api.hpp"
#include "core/device_selector.hpp"

namespace clprobe {

struct PlatformEntry {
    int index = 0;
    std::string name, vendor, version;
    std::optional<std::string> error;  // e.g. "clGetDeviceIDs: CL_OUT_OF_HOST_MEMORY (-6)"
};

struct DeviceCatalog {
    std::optional<std::string> error;  // set when no platform could be listed at all
    std::vector<PlatformEntry> platforms;
    std::vector<DeviceListing> listings;  // flat, in selector order
    std::vector<cl::Device> devices;      // parallel to listings
};

DeviceCatalog enumerate_devices();

std::string device_type_name(cl_device_type type);

}  // namespace clprobe
