#pragma once
// The machine's energy sensors, each with its measured sampling interval, found once: what every
// energy reading starts from (system.energy's idle power, a workload step's energy through
// StepEnergy, a traced program's lifetime under `clprobe trace`). One place, so the three state
// their sensors, intervals and errors the same way (docs/energy.md).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "system/energy_sensor.hpp"

namespace clprobe {

// Power samplers are read this often during a window; a sysfs or NVML read costs tens of
// microseconds, so 10 ms keeps the reading thread's load under 1% of a core.
inline constexpr double sampler_poll_seconds = 0.01;
// How long a counter is watched to measure its update interval (RAPL updates about every 1 ms),
// and how long a window's ends wait for the aligned counter's update.
inline constexpr double interval_limit_seconds = 0.25;

struct MeteredSensors {
    EnergySensors sensors;
    std::vector<double> intervals;       // seconds, per sensor: sampling_interval (system/energy_meter)
    std::optional<std::size_t> align;    // the coarsest counter, which windows are aligned to
    nlohmann::json listed;               // per sensor: sensor, scope, kind, interval_seconds, interval_basis
    std::vector<std::string> not_found;  // the sources that gave nothing, and why
    std::string none_reason;             // when `sensors` is empty: "no readable energy sensor: ..."

    bool empty() const { return sensors.empty(); }
    // The longest interval: what a window's length is planned on.
    double longest_interval() const;
};

// Looks where the environment says (CLPROBE_SYSFS_ROOT, CLPROBE_NVML_LIBRARY) and measures each
// counter's update interval (up to interval_limit_seconds each).
MeteredSensors find_metered_sensors();

// How long an energy window is and how many a probe takes: long enough that the sensors' sampling
// interval costs at most `target_error`, within the mode's limits (system.energy's idle windows and
// StepEnergy's step windows differ only in these figures).
struct EnergyWindowPlan {
    double target_error;
    double min_seconds, max_seconds;
    int windows;
    double seconds_for(double interval_seconds) const;
};

}  // namespace clprobe
