#pragma once
// The "time left" of diagnose's progress lines. Each probe states how long it expects to take in
// the chosen mode; once probes have run, the expectations are scaled by how the finished ones
// compared with theirs, because a machine that is slow (or busy) is slow for the whole run.
#include <cstddef>
#include <string>
#include <vector>

namespace clprobe {

class RunEta {
  public:
    explicit RunEta(std::vector<double> expected_seconds);

    // Probe `index` took `actual_seconds`.
    void finished(std::size_t index, double actual_seconds);
    // Seconds left when probe `next` is about to start (it and every probe after it).
    double seconds_left(std::size_t next) const;
    // How the finished probes ran against their expectations (1 before any finished).
    double pace() const;

  private:
    std::vector<double> expected_;
    double done_expected_ = 0;
    double done_actual_ = 0;
};

// "<1 s", "12 s", "2 min 5 s": rounded as a person reads an estimate.
std::string duration_text(double seconds);

}  // namespace clprobe
