#include "core/stop_points.hpp"

#include <csignal>
#include <string>

#include <fmt/core.h>

namespace clprobe {

namespace {
volatile std::sig_atomic_t g_signal = 0;
thread_local std::chrono::steady_clock::time_point t_deadline = std::chrono::steady_clock::time_point::max();
thread_local double t_budget = 0;

const char* signal_name(int s) {
    return s == SIGINT ? "SIGINT" : s == SIGTERM ? "SIGTERM" : "a signal";
}
}  // namespace

void request_interrupt(int signal_number) noexcept {
    g_signal = signal_number;
}
bool interrupt_requested() noexcept {
    return g_signal != 0;
}
int interrupt_signal() noexcept {
    return g_signal;
}
void clear_interrupt() noexcept {
    g_signal = 0;
}

DeadlineScope::DeadlineScope(double budget_seconds) : previous_(t_deadline), previous_budget_(t_budget) {
    t_budget = budget_seconds;
    t_deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                        std::chrono::duration<double>(budget_seconds));
}

DeadlineScope::~DeadlineScope() {
    t_deadline = previous_;
    t_budget = previous_budget_;
}

void check_stop() {
    if (g_signal) throw RunInterrupted(std::string("interrupted by ") + signal_name(g_signal));
    if (std::chrono::steady_clock::now() > t_deadline)
        throw ProbeTimeout(fmt::format("exceeded its time budget of {:.0f} s (--probe-timeout)", t_budget));
}

}  // namespace clprobe
