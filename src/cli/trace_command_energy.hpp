#pragma once
// The energy of a traced program's lifetime for `clprobe trace` (docs/energy.md, "A traced
// program"): the machine's sensors read from just before the program is started to just after it
// is reaped, as app.energy (J) and app.power (W) per sensor on the trace.program result. Where no
// sensor is readable, attributes.energy says so with the reason and nothing else changes.
#include <optional>

#include "common/metered_sensors.hpp"
#include "core/report.hpp"
#include "system/energy_meter.hpp"
#include "trace/trace_analysis.hpp"

namespace clprobe {

class ProgramEnergy {
  public:
    // Finds the sensors and measures their update intervals: before the program starts, so the
    // program's time does not include it.
    ProgramEnergy();
    void start();
    void stop();
    // app.energy and app.power per sensor, and attributes.energy: the sensors, the window, the
    // program's lifetime and each figure's error bound; or {status: unsupported, reason}.
    void record(ProbeResult& program, const ChildRun& run) const;

  private:
    MeteredSensors found_;
    std::optional<EnergyMeter> meter_;
    std::optional<WindowEnergy> window_;
};

}  // namespace clprobe
