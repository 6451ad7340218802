#pragma once
// Which kernel programs each device probe builds, with the options it passes, for building them
// ahead (core/program_plan, runtime/program_prebuild). The options come from the same helpers the
// probes call where one exists; a pair listed here that a probe no longer builds costs one wasted
// build ahead, and a pair missing here costs the probe its own build as before: neither changes a
// result.
#include <string>
#include <vector>

#include "core/device_info.hpp"
#include "core/program_plan.hpp"
#include "runtime/probe.hpp"

namespace clprobe {

// The programs the probes named build on this device, each once, in plan order. Probes that
// build nothing (host probes) and unknown ids add nothing.
std::vector<ProgramNeed> programs_needed(const std::vector<std::string>& probe_ids, const RunOptions& options,
                                         const DeviceInfo& device);

}  // namespace clprobe
