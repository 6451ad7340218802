#pragma once
// Warm-up, calibration and repetition, independent of what is timed: the caller supplies a
// function that runs `iterations` repetitions and reports how long they took and on which clock.
#include <cstdint>
#include <functional>
#include <vector>

#include "cl/command_timing.hpp"
#include "core/report.hpp"

namespace clprobe {

struct SamplerConfig {
    int warmup_runs = 1;  // excluded: first launches pay for JIT, page faults, clocks
    int samples = 5;
    double target_seconds = 0.02;  // per sample: long enough to dwarf timer resolution and jitter
    std::int64_t max_iterations = 1 << 20;
    double budget_seconds = 10;  // whole call; fewer samples (at least 3) when it would overrun
};

struct SampleSet {
    std::vector<double> seconds_per_iteration;
    std::int64_t iterations = 1;  // per sample, after calibration
    TimerKind timer = TimerKind::host_steady_clock;
};

using BatchFunction = std::function<TimedBatch(std::int64_t iterations)>;

SampleSet run_samples(const BatchFunction& batch, const SamplerConfig& config);

// The same samples as rates: work_per_iteration / seconds (e.g. bytes -> GB/s with scale 1e-9).
std::vector<double> to_rates(const SampleSet& set, double work_per_iteration, double scale);
// The same samples in another time unit (scale 1e6 for microseconds).
std::vector<double> to_times(const SampleSet& set, double scale);

}  // namespace clprobe
