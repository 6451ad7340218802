#pragma once
// Energy of a workload step, read around repeats of the step by the probe that times it (in its
// own process when isolated: sensors are sysfs files and a dlopen'ed NVML, which a child reads as
// well as the parent). One call per variant after the timing is done, so the timed samples are
// untouched; a machine without sensors pays one look for them and records nothing.
#include <functional>
#include <optional>
#include <string>

#include "common/metered_sensors.hpp"
#include "core/report.hpp"
#include "runtime/probe.hpp"

namespace clprobe {

// An amount of work a step does besides "one step", and how many of it one figure is per:
// attention's tokens, per 1,000.
struct WorkPerStep {
    std::string metric;  // e.g. "attention.pipeline.energy_per_1k_tokens"
    double units = 0;    // per step
    double per = 1;      // joules per this many units
};

class StepEnergy {
  public:
    explicit StepEnergy(RunMode mode);
    ~StepEnergy();
    StepEnergy(const StepEnergy&) = delete;
    StepEnergy& operator=(const StepEnergy&) = delete;

    bool available() const { return !found_.empty(); }

    // Repeats `step` until a window spans enough sampling intervals for the error target (5%),
    // over several windows, and adds for each sensor that read through them
    // <pipeline>.step_energy (J), <pipeline>.step_power (W) and <pipeline>.energy_step_time (s,
    // the step's time inside the windows), labelled with `labels`, sensor and scope; plus
    // `work`'s metric when given. Nothing when no sensor was found.
    void measure(ProbeResult& out, const std::string& pipeline, const Labels& labels, const std::function<void()>& step,
                 const std::optional<WorkPerStep>& work = std::nullopt);

    // attributes.energy: the sensors (scope, kind, sampling interval and its basis), each window
    // plan and its error bound, sensors lost during a window. Nothing when no sensor was found.
    void record_attributes(ProbeResult& out) const;

  private:
    RunMode mode_;
    MeteredSensors found_;
    nlohmann::json windows_json_ = nlohmann::json::array();
    nlohmann::json lost_json_ = nlohmann::json::array();
};

}  // namespace clprobe
