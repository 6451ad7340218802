#pragma once
// Handlers for SIGINT, SIGTERM and SIGHUP (a closed terminal or ssh session) for the duration of a scope; the previous
// ones come back at its end. `diagnose` stops its probes at the next stop point on them; `trace` forwards them to the
// traced program.
#include <csignal>

namespace clprobe {

class ScopedInterruptHandlers {
  public:
    explicit ScopedInterruptHandlers(const struct sigaction& action) {
        sigaction(SIGINT, &action, &previous_int_);
        sigaction(SIGTERM, &action, &previous_term_);
        sigaction(SIGHUP, &action, &previous_hup_);
    }
    ~ScopedInterruptHandlers() {
        sigaction(SIGINT, &previous_int_, nullptr);
        sigaction(SIGTERM, &previous_term_, nullptr);
        sigaction(SIGHUP, &previous_hup_, nullptr);
    }
    ScopedInterruptHandlers(const ScopedInterruptHandlers&) = delete;
    ScopedInterruptHandlers& operator=(const ScopedInterruptHandlers&) = delete;

  private:
    struct sigaction previous_int_ {};
    struct sigaction previous_term_ {};
    struct sigaction previous_hup_ {};
};

}  // namespace clprobe
