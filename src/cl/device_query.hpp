#pragma once
#include <string_view>

#include "cl/cl_api.hpp"
#include "cl/device_catalog.hpp"
#include "core/device_info.hpp"

namespace clprobe {

// Whether the device lists `ext` among its extensions.
bool has_extension(const DeviceInfo& info, std::string_view ext);

// Reads what matters for performance. A query the driver refuses leaves its field at the default
// rather than failing the whole device: a report with one unknown field beats no report.
DeviceInfo query_device_info(const cl::Device& device, const DeviceListing& listing, const PlatformEntry& platform);

}  // namespace clprobe
