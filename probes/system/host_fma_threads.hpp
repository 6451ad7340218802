#pragma once
// The host's own answer to "how many threads run at once on the CPUs this process may use", for
// the system.limits probe to set beside the CPU device's work-groups at once: the recurrence of
// peak/compute.cl's fma_v16_c8 (8 independent chains of 16 fp32 lanes, a <- a*b + c) on plain,
// unpinned host threads, as a driver's workers run. A runtime that runs one worker lowers only the
// device's figure; a VM whose vCPUs share a core, or a hypervisor that parks one for a while, lowers
// both (on the 2-vCPU CI machine plain threads of this work dipped to 1.0 at once now and then).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace clprobe {

// Runs `chains.size() / host_fma_chains` threads, each `trips` steps of its 8 chains of 16 lanes,
// and returns the seconds from their start signal until the last finished (steady clock; thread
// creation is not timed). Thread t's chain j starts from chains[t * 8 + j] in every lane; afterwards
// `lanes` holds every lane's end value, thread t's chain j's lane l at ((t * 8 + j) * 16 + l).
inline constexpr std::size_t host_fma_chains = 8;
inline constexpr std::size_t host_fma_lanes = 16;
double run_host_fma(const std::vector<float>& chains, std::uint32_t trips, float b, float c, std::vector<float>& lanes);

}  // namespace clprobe
