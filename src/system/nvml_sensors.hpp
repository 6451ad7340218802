#pragma once
// NVIDIA GPU energy through NVML, loaded at run time only (dlopen), so clprobe neither links
// against nor needs the driver's library: nvmlDeviceGetTotalEnergyConsumption (millijoules since
// the driver loaded) where the GPU has it (Volta and later), else nvmlDeviceGetPowerUsage
// (milliwatts) sampled.
#include <string>

#include "system/energy_sensor.hpp"

namespace clprobe {

// Adds a sensor per GPU NVML reports, or a note saying why there is none (the library did not
// load, nvmlInit failed, no GPU, neither call supported).
void discover_nvml_sensors(const std::string& library, SensorDiscovery& out);

}  // namespace clprobe
