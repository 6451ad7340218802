#pragma once
// How far to trust a report's numbers: the conditions that make them less reliable (a busy
// machine, stolen time, clocks below their maximum, noisy or few samples, the host clock instead of
// device timestamps, an interrupted run). Pure; every renderer shows these first.
#include <string>
#include <vector>

#include "core/report.hpp"

namespace clprobe {

struct TrustNote {
    bool warning = false;  // false: information that supports the numbers
    std::string text;
};

std::vector<TrustNote> assess_trust(const RunReport& report);

}  // namespace clprobe
