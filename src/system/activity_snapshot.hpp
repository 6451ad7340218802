#pragma once
// Takes one ActivitySnapshot from /proc: CPU times of the counted CPUs, clprobe's own times, every
// process's CPU time, and the swap counters.
#include <vector>

#include "system/activity_accounting.hpp"
#include "system/system_files.hpp"

namespace clprobe {

// `counted_cpus` (ascending) empty: every online CPU. `seconds` is the steady-clock time to stamp it with.
ActivitySnapshot take_activity_snapshot(const SystemFiles& files, const std::vector<int>& counted_cpus, double seconds);

}  // namespace clprobe
