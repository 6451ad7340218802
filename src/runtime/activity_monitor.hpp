#pragma once
// Samples host activity (/proc) in a background thread for the whole run, so the system layer can
// say what else ran and how much time the hypervisor stole while clprobe measured — over the run,
// not as one snapshot.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace clprobe {

struct ProcessActivity {
    int pid = 0;
    std::string name;
    double cpu_seconds = 0;  // user + system CPU time used during the window
};

struct ActivitySummary {
    double window_seconds = 0;      // wall time covered by the samples
    int samples = 0;                // /proc snapshots taken
    double total_cpu_seconds = 0;   // all CPUs' busy time during the window (user+nice+system+irq+softirq)
    double steal_seconds = 0;       // time the hypervisor ran something else on our vCPUs
    double self_cpu_seconds = 0;    // clprobe's own CPU time (all its threads, driver threads included)
    double others_cpu_seconds = 0;  // everything else: total_cpu_seconds - self_cpu_seconds
    int logical_cpus = 0;
    std::vector<ProcessActivity> top_others;  // largest consumers other than clprobe, descending
};

class ActivityMonitor {
  public:
    // Starts sampling at once, every `period`.
    explicit ActivityMonitor(std::chrono::milliseconds period = std::chrono::milliseconds(250));
    ~ActivityMonitor();
    ActivityMonitor(const ActivityMonitor&) = delete;
    ActivityMonitor& operator=(const ActivityMonitor&) = delete;

    // What happened from the start until now (takes one more sample first).
    ActivitySummary summary();

  private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace clprobe
