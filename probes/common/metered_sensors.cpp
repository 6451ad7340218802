#include "common/metered_sensors.hpp"

#include <algorithm>

#include "system/energy_meter.hpp"
#include "system/energy_sensors.hpp"

namespace clprobe {

double MeteredSensors::longest_interval() const {
    return intervals.empty() ? 0.0 : *std::max_element(intervals.begin(), intervals.end());
}

MeteredSensors find_metered_sensors() {
    SensorDiscovery found = discover_energy_sensors(energy_sources_from_environment());
    MeteredSensors out;
    out.listed = nlohmann::json::array();
    out.not_found = found.notes;
    if (found.sensors.empty()) out.none_reason = no_sensor_reason(found);
    out.sensors = std::move(found.sensors);
    for (auto& sensor : out.sensors) {
        const SamplingInterval interval = sampling_interval(*sensor, sampler_poll_seconds, interval_limit_seconds);
        out.intervals.push_back(interval.seconds);
        out.listed.push_back({{"sensor", sensor->name()},
                              {"scope", sensor->scope()},
                              {"kind", to_string(sensor->kind())},
                              {"interval_seconds", interval.seconds},
                              {"interval_basis", interval.basis}});
    }
    out.align = coarsest_counter(out.sensors, out.intervals);
    return out;
}

double EnergyWindowPlan::seconds_for(double interval_seconds) const {
    return std::clamp(window_for_error(interval_seconds, target_error), min_seconds, max_seconds);
}

}  // namespace clprobe
