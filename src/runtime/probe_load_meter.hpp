#pragma once
// What else the host ran while one probe measured: two /proc snapshots around the probe, the CPU
// time of processes other than clprobe (and its children: the probe's own child process, the
// driver's compiler) and the time the hypervisor stole, per second of the probe. `compare` uses it
// to tell a metric that changed from one measured while other work took the CPUs it needs.
#include <optional>
#include <vector>

#include "core/report.hpp"
#include "system/host_load.hpp"
#include "system/system_files.hpp"

namespace clprobe {

class ProbeLoadMeter {
  public:
    ProbeLoadMeter();
    // Takes the snapshot the next stop() measures from.
    void start();
    // The load since start(); nullopt without a start() or when /proc gave no CPU times.
    std::optional<HostLoad> stop();

  private:
    SystemFiles files_;
    std::vector<int> counted_;
    double hz_;
    std::optional<ActivitySnapshot> first_;
};

}  // namespace clprobe
