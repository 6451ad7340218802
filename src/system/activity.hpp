#pragma once
// What ran on the host while clprobe measured: the summary the activity monitor produces
// (src/runtime/activity_monitor.hpp) and the system layer reports.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace clprobe {

struct ProcessActivity {
    int pid = 0;
    std::string name;
    double cpu_seconds = 0;  // user + system CPU time used during the window, on the counted CPUs
    bool kernel_thread = false;
};

// CPU times are measured on the CPUs the process may run on (its affinity when monitoring
// started): other processes on CPUs clprobe cannot use do not compete with it.
struct ActivitySummary {
    double window_seconds = 0;      // wall time covered by the samples
    int samples = 0;                // /proc snapshots taken
    int logical_cpus = 0;           // CPUs online
    std::vector<int> counted_cpus;  // the CPUs the times below are measured on
    double capacity_seconds = 0;    // CPU time those CPUs had in the window (about window x their count)
    double total_cpu_seconds = 0;   // their busy time (user+nice+system+irq+softirq)
    double steal_seconds = 0;       // time the hypervisor ran something else on those vCPUs
    double self_cpu_seconds = 0;    // clprobe's own CPU time: all its threads (driver threads included) and children
    double others_cpu_seconds = 0;  // everything else: total_cpu_seconds - self_cpu_seconds, at least 0
    // Largest consumers other than clprobe, descending. A process's time counts when a snapshot
    // finds it on a counted CPU (exact when every online CPU is counted, an estimate otherwise).
    std::vector<ProcessActivity> top_others;
    std::optional<std::uint64_t> swap_in_pages, swap_out_pages;  // /proc/vmstat pswpin/pswpout deltas
};

}  // namespace clprobe
