#pragma once
// diagnose's use of runtime/program_prebuild: before the first probe, the programs the planned
// probes build (probes/program_needs) are built by one process per hardware thread. Before the
// host probes rather than during them: the system layer times host memory bandwidth, which two
// compilers on a 2-core machine would halve.
#include <functional>
#include <string>
#include <vector>

#include "cl/device_session.hpp"
#include "runtime/probe.hpp"

namespace clprobe {

struct PrebuildRequest {
    std::string device_selector;  // "P:D"
    std::string kernel_dir;
    bool show_progress = false;
};

// The plan hook, wrapped: `inner` first, then the builds ahead, with the warm-ups of the planned
// workloads not yet stamped in clprobe's cache (probes/program_needs, runtime/warm_up_stamp). With
// CLPROBE_PREBUILD=0 in the environment (to time a run without them) it is `inner` alone; with
// CLPROBE_WARM_UP=0 the builds ahead run without warm-ups.
std::function<void(const std::vector<const Probe*>&)> with_prebuild(
    std::function<void(const std::vector<const Probe*>&)> inner, const DeviceSession& session,
    const RunOptions& options, PrebuildRequest request);

}  // namespace clprobe
