#include "runtime/activity_monitor.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "system/activity_accounting.hpp"
#include "system/activity_snapshot.hpp"
#include "system/affinity.hpp"
#include "system/system_files.hpp"

namespace clprobe {

namespace {

double ticks_per_second() {
    const long hz = ::sysconf(_SC_CLK_TCK);
    return hz > 0 ? static_cast<double>(hz) : 100.0;
}

// A snapshot reads one file per process; on a host with thousands of them that is not free, so
// the wait between snapshots is at least this many times the last snapshot's cost.
constexpr double cost_ratio = 50;

}  // namespace

struct ActivityMonitor::State {
    explicit State(std::chrono::milliseconds p)
        : period(p), counted(process_affinity()), accounting(static_cast<int>(::getpid()), ticks_per_second()) {}

    // Snapshots are taken and added under one lock, so the sampling thread and summary() never add
    // them out of order.
    void sample() {
        const std::lock_guard<std::mutex> lock(sampling);
        const auto t0 = std::chrono::steady_clock::now();
        const double at = std::chrono::duration<double>(t0 - start).count();
        accounting.add(take_activity_snapshot(files, counted, at));
        last_cost_ns =
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    }

    void loop() {
        std::unique_lock<std::mutex> lock(control);
        while (!stop) {
            const auto cost = std::chrono::nanoseconds(
                static_cast<std::int64_t>(static_cast<double>(last_cost_ns.load()) * cost_ratio));
            const auto wait = std::max<std::chrono::nanoseconds>(period, cost);
            if (wake.wait_for(lock, wait, [this] { return stop; })) break;
            lock.unlock();
            sample();
            lock.lock();
        }
    }

    const std::chrono::milliseconds period;
    const std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    const SystemFiles files;
    const std::vector<int> counted;
    std::mutex sampling;  // guards accounting
    ActivityAccounting accounting;
    std::atomic<std::int64_t> last_cost_ns{0};  // how long the last snapshot took
    std::mutex control;                         // guards stop
    std::condition_variable wake;
    bool stop = false;
    std::thread thread;
};

ActivityMonitor::ActivityMonitor(std::chrono::milliseconds period) : state_(std::make_unique<State>(period)) {
    state_->sample();
    state_->thread = std::thread([s = state_.get()] { s->loop(); });
}

ActivityMonitor::~ActivityMonitor() {
    {
        const std::lock_guard<std::mutex> lock(state_->control);
        state_->stop = true;
    }
    state_->wake.notify_all();
    if (state_->thread.joinable()) state_->thread.join();
}

ActivitySummary ActivityMonitor::summary() {
    state_->sample();
    const std::lock_guard<std::mutex> lock(state_->sampling);
    return state_->accounting.summary();
}

std::chrono::milliseconds ActivityMonitor::period() const {
    return state_->period;
}

}  // namespace clprobe
