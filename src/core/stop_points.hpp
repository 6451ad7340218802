#pragma once
// Cooperative stop points. A run stops early for two reasons: the user interrupted it (SIGINT,
// SIGTERM), or a probe outlived its time budget. Long loops (the sampler, command batches) call
// check_stop(), which throws; the runner turns the exception into the probe's status, and the
// report of what finished is still written.
#include <chrono>
#include <stdexcept>

namespace clprobe {

class RunInterrupted : public std::runtime_error {
    using std::runtime_error::runtime_error;
};
class ProbeTimeout : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Async-signal-safe: only stores the signal number.
void request_interrupt(int signal_number) noexcept;
bool interrupt_requested() noexcept;
int interrupt_signal() noexcept;  // 0 when none
void clear_interrupt() noexcept;  // for tests

// Sets the calling thread's current probe deadline for the scope's lifetime.
class DeadlineScope {
  public:
    explicit DeadlineScope(double budget_seconds);
    ~DeadlineScope();
    DeadlineScope(const DeadlineScope&) = delete;
    DeadlineScope& operator=(const DeadlineScope&) = delete;

  private:
    std::chrono::steady_clock::time_point previous_;
    double previous_budget_;
};

// Throws RunInterrupted after a signal, ProbeTimeout past the deadline.
void check_stop();

}  // namespace clprobe
