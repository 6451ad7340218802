#pragma once
// One energy or power reader of the machine and what it covers (its scope). Two kinds, because the
// hardware offers two: a cumulative energy counter (RAPL's energy_uj, hwmon's energy1_input, NVML's
// total energy) read at the two ends of a window, and an instantaneous power reading (hwmon's
// power1_average, NVML's power usage) that has to be sampled through the window and integrated.
// docs/energy.md lists the sources, their scopes and the error each reading carries.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace clprobe {

enum class SensorKind { energy_counter, power_sampler };
std::string_view to_string(SensorKind kind);

// A reading, or why there is none: a sysfs file that vanished (a GPU reset, a driver unloaded),
// an NVML call that failed. A missing reading is a result to report, never an exception.
struct SensorReading {
    std::optional<double> value;  // counters: joules since the sensor was opened; samplers: watts now
    std::string error;
};

class EnergySensor {
  public:
    virtual ~EnergySensor() = default;
    // Where it reads, for the report: "intel-rapl:0", "hwmon2 (amdgpu)", "nvml 0".
    virtual std::string name() const = 0;
    // What it covers: "cpu package 0", "dram package 0", "platform", "gpu card0", "gpu 0".
    virtual std::string scope() const = 0;
    virtual SensorKind kind() const = 0;
    // Counters return joules accumulated since the sensor was opened, wraps of the hardware counter
    // unwound (so a later reading is never smaller); samplers return watts.
    virtual SensorReading read() = 0;
    // The smallest step of a reading (J for counters, W for samplers), for the error statement.
    virtual double resolution() const = 0;
};

using EnergySensors = std::vector<std::unique_ptr<EnergySensor>>;

// What a look for sensors found, and for each source that gave none, why ("powercap: no
// intel-rapl or amd-rapl zone under /sys/class/powercap").
struct SensorDiscovery {
    EnergySensors sensors;
    std::vector<std::string> notes;
};

}  // namespace clprobe
