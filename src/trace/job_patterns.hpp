#pragma once
// Patterns of the job's device work as a whole: how evenly its lanes (one process on one device)
// are loaded, and kernel sequences launched back to back whose launch gaps rival their run time
// (fusion candidates). Pure: tests feed synthetic traces.
#include <cstdint>
#include <vector>

#include "core/trace_facts.hpp"
#include "trace/device_clock.hpp"
#include "trace/program_trace.hpp"

namespace clprobe {

// Fills facts.lanes (every process and device with a queue, used or not) and facts.balance.
// Seconds are since `job_start` (host ns).
void lane_facts(const ProgramTrace& trace, const AlignedTimes& aligned, std::uint64_t job_start, TraceFacts& facts);

// The longest a repeated kernel sequence may be and still be named as one: longer runs without a
// period this short are not a repeated pattern.
inline constexpr std::size_t max_fusion_sequence = 8;

// Runs of kernels launched back to back on one queue (markers and barriers do not break a run;
// any other command does), grouped by process and repeated sequence: the largest removable gaps
// first, at most max_fusion_facts.
std::vector<FusionFacts> fusion_facts(const ProgramTrace& trace, const AlignedTimes& aligned);

}  // namespace clprobe
