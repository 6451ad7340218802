#pragma once
// Samples host activity (/proc) in a background thread for the whole run, so the system layer can
// say what else ran and how much time the hypervisor stole while clprobe measured — over the run,
// not as one snapshot.
#include <chrono>
#include <memory>

#include "system/activity.hpp"

namespace clprobe {

class ActivityMonitor {
  public:
    // Takes the baseline snapshot, then samples every `period` (longer when a snapshot is costly:
    // the monitor keeps its own CPU use to about 2% of one CPU on hosts with many processes).
    explicit ActivityMonitor(std::chrono::milliseconds period = std::chrono::milliseconds(250));
    ~ActivityMonitor();  // stops and joins the sampling thread
    ActivityMonitor(const ActivityMonitor&) = delete;
    ActivityMonitor& operator=(const ActivityMonitor&) = delete;

    // What happened from the start until now (takes one more sample first). Thread-safe.
    ActivitySummary summary();
    // The sampling period asked for.
    std::chrono::milliseconds period() const;

  private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace clprobe
