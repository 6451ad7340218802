#include "cli/trace_command_energy.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "core/cost_model.hpp"

namespace clprobe {

namespace {

// How often each counter is read inside the window to keep its wraps unwound: far below any real
// wrap period (RAPL's package range lasts minutes at full power), and a sysfs read a second
// costs the program nothing measurable.
constexpr double counter_keepalive_seconds = 1.0;

}  // namespace

ProgramEnergy::ProgramEnergy() : found_(find_metered_sensors()) {
    if (found_.empty()) return;
    meter_.emplace(found_.sensors, sampler_poll_seconds);
    if (found_.align) meter_->align_to(*found_.align, interval_limit_seconds);
    meter_->read_counters_every(counter_keepalive_seconds);
}

void ProgramEnergy::start() {
    if (meter_) meter_->start();
}

void ProgramEnergy::stop() {
    if (meter_) window_ = meter_->stop();
}

void ProgramEnergy::record(ProbeResult& out, const ChildRun& run) const {
    if (found_.empty()) {
        out.attributes["energy"] = {{"status", "unsupported"}, {"reason", found_.none_reason}};
        return;
    }
    if (!window_) return;
    const double lifetime = run.end_ns > run.start_ns ? static_cast<double>(run.end_ns - run.start_ns) / 1e9 : 0.0;
    const double window = window_->seconds;
    // The window holds the lifetime (started before the fork, stopped after the reaping, plus the
    // wait for the aligned counter's next update): that extra time's energy is in the figure, so
    // it joins the error bound instead of being subtracted at a guessed power.
    const double outside = std::max(0.0, window - lifetime);
    nlohmann::json figures = nlohmann::json::array(), lost = nlohmann::json::array();
    for (std::size_t i = 0; i < found_.sensors.size(); ++i) {
        const EnergySensor& sensor = *found_.sensors[i];
        const SensorEnergy& e = window_->sensors[i];
        if (!e.joules || !(lifetime > 0)) {
            lost.push_back({{"sensor", sensor.name()}, {"error", e.joules ? "the program ran for no time" : e.error}});
            continue;
        }
        const double sensor_error = window_error(sensor, window_->aligned && found_.align == i, found_.intervals[i],
                                                 window, *e.joules, window_->edge_seconds);
        // Against the lifetime's energy E_l = E_w x lifetime / window (the power taken as even):
        // |reported - E_l| <= E_w x sensor_error + the outside time's share, over E_l.
        const double error = (window * sensor_error + outside) / lifetime;
        const Labels labels{{"sensor", sensor.name()}, {"scope", sensor.scope()}};
        const std::string note = fmt::format(
            "over the program's lifetime ({:.4g} s) in a window of {:.4g} s; sampling interval {:.3g} ms; error <= "
            "{:.2g}%",
            lifetime, window, found_.intervals[i] * 1e3, error * 100);
        Measurement energy =
            make_measurement(app_energy_metric, "J", labels, {*e.joules}, TimerKind::host_steady_clock, false);
        energy.note = note;
        Measurement power =
            make_measurement(app_power_metric, "W", labels, {*e.joules / window}, TimerKind::host_steady_clock, false);
        power.note = note;
        out.measurements.push_back(std::move(energy));
        out.measurements.push_back(std::move(power));
        figures.push_back({{"sensor", sensor.name()}, {"scope", sensor.scope()}, {"relative_error", error}});
    }
    out.attributes["energy"] = {{"status", "ok"},
                                {"sensors", found_.listed},
                                {"window_seconds", window},
                                {"lifetime_seconds", lifetime},
                                {"aligned", window_->aligned},
                                {"figures", figures},
                                {"lost", lost},
                                {"not_found", found_.not_found},
                                {"method",
                                 "the sensors read from just before the program is started to just after it is "
                                 "reaped (each window end waits for the coarsest counter's update); the whole "
                                 "scope's energy, other processes included; the error bound adds the window's time "
                                 "outside the program's lifetime to the sensors' sampling error"}};
}

}  // namespace clprobe
