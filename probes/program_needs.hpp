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

// The plan's probes worth a warm-up in a builder (core/program_plan, WarmUpGroup), grouped by the
// programs they share, each group with what it builds: the workloads whose first launches compile
// the most (measured on PoCL 3.1: glm.gradient 17 work-group functions, +8 s on a cold cache;
// attention.prefill and attention.decode +4 s each). The ceilings are left to their own first
// launches: their warm-up would allocate and fill their whole sweeps for a second or so of compiling.
// The options a builder runs its warm-ups with: the run's, the GLM rows cut to a few thousand.
// What the driver compiles at a launch depends on the kernel, its build options and the local
// size (PoCL adds two flags: a zero offset, and a grid under the device's limit), not on how many
// rows the launch covers, so the smaller data compiles the same code; it saves the warm-up the
// full shape's host references and uploads (6 of 18 s on the default shape, 2 CPUs).
RunOptions warm_up_options(RunOptions options);

std::vector<WarmUpGroup> warm_up_groups(const std::vector<std::string>& probe_ids, const RunOptions& options,
                                        const DeviceInfo& device);

}  // namespace clprobe
