#include "common/step_energy.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/clock.hpp"
#include "core/stop_points.hpp"
#include "system/energy_meter.hpp"

namespace clprobe {

namespace {

// Step windows: each end is off by up to one sampling interval; 5% keeps a mode's steps short.
EnergyWindowPlan plan_for(RunMode mode) {
    if (mode == RunMode::quick) return {0.05, 0.1, 1.0, 3};
    if (mode == RunMode::full) return {0.05, 0.5, 4.0, 5};
    return {0.05, 0.2, 2.0, 3};
}

}  // namespace

StepEnergy::StepEnergy(RunMode mode) : mode_(mode), found_(find_metered_sensors()) {}

StepEnergy::~StepEnergy() = default;

void StepEnergy::measure(ProbeResult& out, const std::string& pipeline, const Labels& labels,
                         const std::function<void()>& step, const std::optional<WorkPerStep>& work) {
    if (found_.empty()) return;
    EnergySensors& sensors = found_.sensors;
    const std::vector<double>& intervals = found_.intervals;
    const EnergyWindowPlan plan = plan_for(mode_);
    const double interval = found_.longest_interval();
    const double target = plan.seconds_for(interval);
    // One step first: it says how many make a window (and warms what the sampler left cold).
    const auto t0 = std::chrono::steady_clock::now();
    step();
    const double one = std::max(seconds_since(t0), 1e-6);
    const auto steps = static_cast<std::int64_t>(std::max(1.0, std::ceil(target / one)));

    EnergyMeter meter(sensors, sampler_poll_seconds);
    const auto align = found_.align;
    if (align) meter.align_to(*align, interval_limit_seconds);
    std::vector<std::vector<double>> joules(sensors.size()), seconds(sensors.size());
    std::vector<double> worst_error(sensors.size(), 0.0);
    std::vector<std::string> lost(sensors.size());
    for (int w = 0; w < plan.windows; ++w) {
        check_stop();
        meter.start();
        for (std::int64_t k = 0; k < steps; ++k)
            step();
        const WindowEnergy window = meter.stop();
        for (std::size_t i = 0; i < sensors.size(); ++i) {
            const SensorEnergy& e = window.sensors[i];
            if (!e.joules) {
                if (lost[i].empty()) lost[i] = e.error;
                continue;
            }
            joules[i].push_back(*e.joules);
            seconds[i].push_back(window.seconds);
            worst_error[i] =
                std::max(worst_error[i], window_error(*sensors[i], window.aligned && align == i, intervals[i],
                                                      window.seconds, *e.joules, window.edge_seconds));
        }
    }
    const double n = static_cast<double>(steps);
    for (std::size_t i = 0; i < sensors.size(); ++i) {
        if (!lost[i].empty())
            lost_json_.push_back({{"labels", labels}, {"sensor", sensors[i]->name()}, {"error", lost[i]}});
        if (joules[i].empty()) continue;
        Labels l = labels;
        l["sensor"] = sensors[i]->name();
        l["scope"] = sensors[i]->scope();
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
            steps, joules[i].size(), seconds[i].front(), intervals[i] * 1e3, worst_error[i] * 100);
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
                                 {"sensor", sensors[i]->name()},
                                 {"scope", sensors[i]->scope()},
                                 {"steps_per_window", steps},
                                 {"windows", joules[i].size()},
                                 {"target_window_seconds", target},
                                 {"interval_seconds", intervals[i]},
                                 {"relative_error", worst_error[i]}});
    }
}

void StepEnergy::record_attributes(ProbeResult& out) const {
    if (found_.empty()) return;
    out.attributes["energy"] = {
        {"sensors", found_.listed},
        {"windows", windows_json_},
        {"lost", lost_json_},
        {"method",
         fmt::format("each variant's step repeated until a window spans 2 x interval / {:.0f}% (at least {:.2g} s, at "
                     "most {:.2g} s), after its timed samples; energy per step = the window's energy / steps; the "
                     "error bound is 2 sampling intervals over the window",
                     plan_for(mode_).target_error * 100, plan_for(mode_).min_seconds, plan_for(mode_).max_seconds)}};
}

}  // namespace clprobe
