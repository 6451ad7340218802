#pragma once
// Every energy source of the machine in one call: powercap (CPU packages, DRAM, platform), hwmon
// (amdgpu, i915, xe) and NVML. Where they are read from comes from the environment, so tests and
// users can point them at fixture trees and libraries: CLPROBE_SYSFS_ROOT (default /sys) and
// CLPROBE_NVML_LIBRARY (default libnvidia-ml.so.1).
#include <string>

#include "system/energy_sensor.hpp"

namespace clprobe {

struct EnergySources {
    std::string sysfs_root = "/sys";
    std::string nvml_library = "libnvidia-ml.so.1";
};

EnergySources energy_sources_from_environment();

SensorDiscovery discover_energy_sensors(const EnergySources& sources);

// Why no sensor was found: the notes of every source, one sentence ("no readable energy sensor:
// powercap: ...; hwmon: ...; NVML: ...").
std::string no_sensor_reason(const SensorDiscovery& discovery);

}  // namespace clprobe
