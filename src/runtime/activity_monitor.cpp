#include "runtime/activity_monitor.hpp"

// Placeholder until the system layer implements sampling: the monitor exists so the run can own
// one, and reports an empty window.
namespace clprobe {

struct ActivityMonitor::State {};

ActivityMonitor::ActivityMonitor(std::chrono::milliseconds) : state_(std::make_unique<State>()) {}
ActivityMonitor::~ActivityMonitor() = default;
ActivitySummary ActivityMonitor::summary() {
    return {};
}

}  // namespace clprobe
