#pragma once
// GPU energy or power through hwmon: the amdgpu, i915 and xe drivers register a hwmon device per
// card with energy1_input (a microjoule counter) or power1_average / power1_input (microwatts).
#include <string>

#include "system/energy_sensor.hpp"

namespace clprobe {

// The drivers whose hwmon figures are a GPU's: other hwmon devices (CPU temperature, fans) are
// not energy sources.
bool is_gpu_hwmon(std::string_view driver_name);

// Adds a sensor per readable GPU hwmon device under sysfs_root/class/hwmon (its energy counter
// when it has one, else its power reading), or a note saying why there is none.
void discover_hwmon_sensors(const std::string& sysfs_root, SensorDiscovery& out);

}  // namespace clprobe
