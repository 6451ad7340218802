#pragma once
// CPU package, DRAM and platform energy through Linux powercap: the RAPL zones Intel's and AMD's
// drivers both register (intel-rapl:N, intel-rapl:N:M; amd-rapl:N on kernels that name them so),
// each an energy_uj counter that wraps at max_energy_range_uj.
#include <string>

#include "system/energy_sensor.hpp"

namespace clprobe {

// Adds a sensor per readable package, dram and psys zone under sysfs_root/class/powercap, or a note
// saying why there is none (no zone; energy_uj readable by root only).
void discover_powercap_sensors(const std::string& sysfs_root, SensorDiscovery& out);

}  // namespace clprobe
