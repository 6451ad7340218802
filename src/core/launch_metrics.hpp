#pragma once
// Metric ids of the kernel.launch probe that other folders read, spelled once so the compiler
// checks every use (probes/kernel/launch_latency_probe writes them; reports/rules reads them).

namespace clprobe {

// An empty kernel's own device time (END - START), in us: no launch on the device runs shorter.
inline constexpr const char* empty_launch_metric = "kernel.empty_launch.time";

}  // namespace clprobe
