#pragma once
// Which warm-ups (core/program_plan, WarmUpGroup) already ran on this machine: a stamp per probe in
// clprobe's cache folder, so only a cold run pays for them. The key names everything that decides
// what the driver compiled at the probe's first launches: clprobe's version, the device and its
// driver, the probe, its shapes (the run mode and the workload options), the text of the programs
// it builds, and where the driver keeps its cache (POCL_CACHE_DIR). A stale stamp costs a slower
// first launch in a probe, never a wrong figure: the warm-up only fills the driver's cache.
#include <filesystem>
#include <string>
#include <vector>

#include "core/device_info.hpp"
#include "core/program_plan.hpp"
#include "runtime/probe.hpp"

namespace clprobe {

// `sources`: the text of each of the probe's programs, options appended (any order, kept).
std::string warm_up_key(const DeviceInfo& device, const RunOptions& options, const std::string& probe_id,
                        const std::vector<std::string>& sources);

// Whether `dir` holds the stamp of exactly this key. Never throws.
bool warmed_up(const std::filesystem::path& dir, const std::string& key);
// Writes the stamp (atomically); false when it could not (the next run warms up again). Never throws.
bool mark_warmed_up(const std::filesystem::path& dir, const std::string& key);

}  // namespace clprobe
