#pragma once
// clprobe's exit codes (README "Exit codes" documents them; scripts rely on them).
namespace clprobe::exit_code {
inline constexpr int ok = 0;          // the command did its job (probe statuses are in the report)
inline constexpr int failure = 1;     // an unexpected internal error
inline constexpr int usage = 2;       // bad input: option, selector, no OpenCL platform/device, unreadable file
inline constexpr int output = 3;      // the report could not be written
inline constexpr int regression = 4;  // compare --fail-on-regression: the machine, a headline or a workload got worse
inline constexpr int outlier = 5;     // fleet --fail-on-outlier: a node is worse than the fleet beyond its noise band
inline constexpr int probe_crashed = 6;  // diagnose: report written, but a probe crashed or timed out in its process
}  // namespace clprobe::exit_code
