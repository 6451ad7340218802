#include "common/step_energy.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/clock.hpp"
#include "core/stop_points.hpp"
#include "system/energy_meter.hpp"
#include "system/energy_sensors.hpp"

namespace clprobe {

namespace {

// Power samplers are read this often during a window; a sysfs or NVML read costs tens of
// microseconds, so 10 ms keeps the reading thread's load under 1% of a core.
constexpr double sampler_poll_seconds = 0.01;
// How long a counter is watched to measure its update interval (RAPL updates about every 1 ms).
constexpr double interval_limit_seconds = 0.25;
// The error the window is sized for: each end of a window is off by up to one sampling interval.
constexpr double target_error = 0.05;

struct WindowPlan {
    double min_seconds, max_seconds;
    int windows;
};

WindowPlan plan_for(RunMode mode) {
    if (mode == RunMode::quick) return {0.1, 1.0, 3};
    if (mode == RunMode::full) return {0.5, 4.0, 5};
    return {0.2, 2.0, 3};
}

}  // namespace

StepEnergy::StepEnergy(RunMode mode) : mode_(mode) {
    SensorDiscovery found = discover_energy_sensors(energy_sources_from_environment());
    sensors_ = std::move(found.sensors);
    for (auto& sensor : sensors_) {
        const SamplingInterval interval = sampling_interval(*sensor, sampler_poll_seconds, interval_limit_seconds);
        intervals_.push_back(interval.seconds);
        sensors_json_.push_back({{"sensor", sensor->name()},
                                 {"scope", sensor->scope()},
                                 {"kind", to_string(sensor->kind())},
                                 {"interval_seconds", interval.seconds},
                                 {"interval_basis", interval.basis}});
    }
}

StepEnergy::~StepEnergy() = default;

void StepEnergy::measure(ProbeResult& out, const std::string& pipeline, const Labels& labels,
                         const std::function<void()>& step, const std::optional<WorkPerStep>& work) {
    if (sensors_.empty()) return;
    const WindowPlan plan = plan_for(mode_);
    const double interval = *std::max_element(intervals_.begin(), intervals_.end());
    const double target = std::clamp(window_for_error(interval, target_error), plan.min_seconds, plan.max_seconds);
    // One step first: it says how many make a window (and warms what the sampler left cold).
    const auto t0 = std::chrono::steady_clock::now();
    step();
    const double one = std::max(seconds_since(t0), 1e-6);
    const auto steps = static_cast<std::int64_t>(std::max(1.0, std::ceil(target / one)));

    EnergyMeter meter(sensors_, sampler_poll_seconds);
    const auto align = coarsest_counter(sensors_, intervals_);
    if (align) meter.align_to(*align, interval_limit_seconds);
    std::vector<std::vector<double>> joules(sensors_.size()), seconds(sensors_.size());
    std::vector<double> worst_error(sensors_.size(), 0.0);
    std::vector<std::string> lost(sensors_.size());
    for (int w = 0; w < plan.windows; ++w) {
        check_stop();
        meter.start();
        for (std::int64_t k = 0; k < steps; ++k)
            step();
        const WindowEnergy window = meter.stop();
        for (std::size_t i = 0; i < sensors_.size(); ++i) {
            const SensorEnergy& e = window.sensors[i];
            if (!e.joules) {
                if (lost[i].empty()) lost[i] = e.error;
                continue;
            }
            joules[i].push_back(*e.joules);
            seconds[i].push_back(window.seconds);
            worst_error[i] = std::max(worst_error[i], window_error(*sensors_[i], window.aligned && align == i,
                                                                   intervals_[i], window.seconds, *e.joules));
        }
    }
    const double n = static_cast<double>(steps);
    for (std::size_t i = 0; i < sensors_.size(); ++i) {
        if (!lost[i].empty())
            lost_json_.push_back({{"labels", labels}, {"sensor", sensors_[i]->name()}, {"error", lost[i]}});
        if (joules[i].empty()) continue;
        Labels l = labels;
        l["sensor"] = sensors_[i]->name();
        l["scope"] = sensors_[i]->scope();
        std::vector<double> per_step, power, step_time, per_work;
        for (std::size_t k = 0; k < joules[i].size(); ++k) {
            per_step.push_back(joules[i][k] / n);
            power.push_back(joules[i][k] / seconds[i][k]);
            step_time.push_back(seconds[i][k] / n);
            if (work && work->units > 0) per_work.push_back(joules[i][k] / n / work->units * work->per);
        }
        const std::string note = fmt::format(
            "{} steps per window, {} windows of {:.3g} s; sampling interval {:.3g} ms; "
            "error <= {:.2g}%",
            steps, joules[i].size(), seconds[i].front(), intervals_[i] * 1e3, worst_error[i] * 100);
        const auto add = [&](std::string metric, const char* unit, std::vector<double> v) {
            Measurement m =
                make_measurement(std::move(metric), unit, l, std::move(v), TimerKind::host_steady_clock, false);
            m.iterations_per_sample = steps;
            m.note = note;
            out.measurements.push_back(std::move(m));
        };
        add(pipeline + ".step_energy", "J", per_step);
        add(pipeline + ".step_power", "W", power);
        add(pipeline + ".energy_step_time", "s", step_time);
        if (!per_work.empty()) add(work->metric, "J", per_work);
        windows_json_.push_back({{"labels", labels},
                                 {"sensor", sensors_[i]->name()},
                                 {"scope", sensors_[i]->scope()},
                                 {"steps_per_window", steps},
                                 {"windows", joules[i].size()},
                                 {"target_window_seconds", target},
                                 {"interval_seconds", intervals_[i]},
                                 {"relative_error", worst_error[i]}});
    }
}

void StepEnergy::record_attributes(ProbeResult& out) const {
    if (sensors_.empty()) return;
    out.attributes["energy"] = {
        {"sensors", sensors_json_},
        {"windows", windows_json_},
        {"lost", lost_json_},
        {"method",
         fmt::format("each variant's step repeated until a window spans 2 x interval / {:.0f}% (at least {:.2g} s, at "
                     "most {:.2g} s), after its timed samples; energy per step = the window's energy / steps; the "
                     "error bound is 2 sampling intervals over the window",
                     target_error * 100, plan_for(mode_).min_seconds, plan_for(mode_).max_seconds)}};
}

}  // namespace clprobe
