#pragma once
// The CPUs the calling thread's process may run on (sched_getaffinity): taskset, numactl and
// cpusets all narrow it.
#include <vector>

namespace clprobe {

// Ascending CPU numbers; empty when the kernel will not say.
std::vector<int> process_affinity();

}  // namespace clprobe
