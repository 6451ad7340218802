#include "system/energy_sensors.hpp"

#include <cstdlib>

#include "system/hwmon_sensors.hpp"
#include "system/nvml_sensors.hpp"
#include "system/powercap_sensors.hpp"

namespace clprobe {

std::string_view to_string(SensorKind kind) {
    return kind == SensorKind::energy_counter ? "energy_counter" : "power_sampler";
}

EnergySources energy_sources_from_environment() {
    EnergySources sources;
    if (const char* root = std::getenv("CLPROBE_SYSFS_ROOT"); root && *root) sources.sysfs_root = root;
    if (const char* lib = std::getenv("CLPROBE_NVML_LIBRARY"); lib && *lib) sources.nvml_library = lib;
    while (sources.sysfs_root.size() > 1 && sources.sysfs_root.back() == '/')
        sources.sysfs_root.pop_back();
    return sources;
}

SensorDiscovery discover_energy_sensors(const EnergySources& sources) {
    SensorDiscovery out;
    discover_powercap_sensors(sources.sysfs_root, out);
    discover_hwmon_sensors(sources.sysfs_root, out);
    discover_nvml_sensors(sources.nvml_library, out);
    return out;
}

std::string no_sensor_reason(const SensorDiscovery& discovery) {
    std::string out = "no readable energy sensor";
    for (std::size_t i = 0; i < discovery.notes.size(); ++i)
        out += (i == 0 ? ": " : "; ") + discovery.notes[i];
    return out;
}

}  // namespace clprobe
