// system.energy: the machine's energy sensors and its idle power before the workloads load it.
// Each sensor states its scope (a CPU package, DRAM, the platform, a GPU) and how it is read (an
// energy counter or a power reading sampled); the workload probes read the same sensors around
// their steps (probes/common/step_energy). Without a readable sensor (most VMs: no powercap, no
// hwmon, no NVML) the probe is unsupported with each source's reason, and nothing else changes.
#include <fmt/core.h>

#include <algorithm>
#include <thread>

#include "common/metered_sensors.hpp"
#include "probe_factories.hpp"
#include "system/energy_meter.hpp"

namespace clprobe {

namespace {

// Idle windows: 2% (idle power is the floor a step's energy sits on, so it is held well inside
// run-to-run spread), short enough to keep the system layer quick.
EnergyWindowPlan idle_plan(RunMode mode) {
    if (mode == RunMode::quick) return {0.02, 0.1, 0.5, 3};
    if (mode == RunMode::full) return {0.02, 0.5, 2.0, 5};
    return {0.02, 0.2, 1.0, 3};
}

class EnergyProbe final : public Probe {
  public:
    std::string id() const override { return "system.energy"; }
    std::string layer() const override { return "system"; }
    std::string title() const override { return "Energy sensors and idle power"; }
    bool needs_device() const override { return false; }
    double expected_seconds(RunMode mode) const override {
        const EnergyWindowPlan p = idle_plan(mode);
        return p.min_seconds * p.windows;
    }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        MeteredSensors found = find_metered_sensors();
        if (found.empty()) throw ProbeUnsupported(found.none_reason);
        EnergySensors& sensors = found.sensors;
        const std::vector<double>& intervals = found.intervals;
        nlohmann::json& listed = found.listed;
        const EnergyWindowPlan plan = idle_plan(ctx.options.mode);
        const double window = plan.seconds_for(found.longest_interval());
        EnergyMeter meter(sensors, sampler_poll_seconds);
        const auto align = found.align;
        if (align) meter.align_to(*align, interval_limit_seconds);
        std::vector<std::vector<double>> watts(sensors.size());
        std::vector<double> worst(sensors.size(), 0.0);
        nlohmann::json lost = nlohmann::json::array();
        for (int w = 0; w < plan.windows; ++w) {
            meter.start();
            std::this_thread::sleep_for(std::chrono::duration<double>(window));
            const WindowEnergy e = meter.stop();
            for (std::size_t i = 0; i < sensors.size(); ++i) {
                if (!e.sensors[i].joules) {
                    lost.push_back({{"sensor", sensors[i]->name()}, {"error", e.sensors[i].error}});
                    continue;
                }
                watts[i].push_back(*e.sensors[i].joules / e.seconds);
                worst[i] = std::max(worst[i], window_error(*sensors[i], e.aligned && align == i, intervals[i],
                                                           e.seconds, *e.sensors[i].joules, e.edge_seconds));
            }
        }
        for (std::size_t i = 0; i < sensors.size(); ++i) {
            listed[i]["idle_relative_error"] = worst[i];
            if (watts[i].empty()) continue;
            Measurement m = make_measurement("system.energy.idle_power", "W",
                                             {{"sensor", sensors[i]->name()}, {"scope", sensors[i]->scope()}}, watts[i],
                                             TimerKind::host_steady_clock, false);
            m.note =
                fmt::format("{} windows of {:.3g} s with clprobe idle; sampling interval {:.3g} ms; error <= {:.2g}%",
                            watts[i].size(), window, intervals[i] * 1e3, worst[i] * 100);
            out.measurements.push_back(std::move(m));
        }
        out.attributes["sensors"] = listed;
        out.attributes["lost"] = lost;
        // Sources that gave nothing, with why: a GPU machine whose NVML did not load says so here.
        out.attributes["not_found"] = found.not_found;
        if (out.measurements.empty())
            throw ProbeUnsupported(fmt::format("every energy sensor failed during the idle windows ({})",
                                               lost.empty() ? "no reading" : lost[0]["error"].get<std::string>()));
    }
};

}  // namespace

std::unique_ptr<Probe> make_energy_probe() {
    return std::make_unique<EnergyProbe>();
}

}  // namespace clprobe
