#include "runtime/probe.hpp"

namespace clprobe {

std::string_view to_string(RunMode mode) {
    switch (mode) {
        case RunMode::quick:
            return "quick";
        case RunMode::full:
            return "full";
        default:
            return "standard";
    }
}

SamplerConfig sampler_for(RunMode mode) {
    SamplerConfig c;
    switch (mode) {
        case RunMode::quick:
            c.samples = 5;
            c.target_seconds = 0.01;
            c.budget_seconds = 2;
            break;
        case RunMode::standard:
            c.samples = 7;
            c.target_seconds = 0.02;
            c.budget_seconds = 6;
            break;
        case RunMode::full:
            c.samples = 15;
            c.target_seconds = 0.05;
            c.budget_seconds = 30;
            break;
    }
    return c;
}

double probe_budget_for(RunMode mode) {
    switch (mode) {
        case RunMode::quick:
            return 60;
        case RunMode::full:
            return 900;
        default:
            return 180;
    }
}

double mode_time_factor(RunMode mode) {
    switch (mode) {
        case RunMode::quick:
            return 0.35;
        case RunMode::standard:
            return 1.0;
        case RunMode::full:
            return 4.0;
    }
    return 1.0;
}

double Probe::expected_seconds(RunMode mode) const {
    // Facts from /proc, sysfs and hwloc take milliseconds; measuring probes take seconds.
    const std::string l = layer();
    const double standard = (l == "system" || l == "topology") ? 0.05 : 3.0;
    return standard * mode_time_factor(mode);
}

SamplerConfig ceiling_sampler_for(RunMode mode) {
    SamplerConfig c = sampler_for(mode);
    // Best of 2 outside --full, and 5 samples by default rather than 7: the fastest of two batches
    // already removes most interference, and the default run must stay quicker than clpeak;
    // --full takes best of 3.
    c.best_of = mode == RunMode::full ? 3 : 2;
    if (mode == RunMode::standard) c.samples = 5;
    return c;
}

}  // namespace clprobe
