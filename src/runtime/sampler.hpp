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
    double target_seconds = 0.02;  // per batch: long enough to dwarf timer resolution and jitter
    std::int64_t max_iterations = 1 << 20;
    double budget_seconds = 10;  // per variant; fewer samples (at least 3) when it would overrun
    // Each sample is the fastest of this many batches. For ceilings (what the device can do) this
    // is STREAM's convention: interference only ever slows a run down, so the fastest of a few
    // runs estimates the capability, where one run estimates a typical time.
    int best_of = 1;
    // With best_of > 1: variants whose first batch reached less than this fraction of the best
    // variant's rate cannot set the ceiling; they get 3 plain samples, the contenders the rest.
    double contender_fraction = 0.75;
    // With best_of > 1 and this > 0: at most this many contenders, those with the fastest first
    // batches. A sweep whose shapes tie at the device's limit then pays best-of samples for a few
    // of them rather than all; the others get 3 plain samples. 0: no limit.
    int max_contenders = 0;
};

struct SampleSet {
    std::vector<double> seconds_per_iteration;
    std::int64_t iterations = 1;  // per batch, after calibration
    int best_of = 1;              // batches per sample
    TimerKind timer = TimerKind::host_steady_clock;
};

using BatchFunction = std::function<TimedBatch(std::int64_t iterations)>;

// Several variants measured side by side. Each variant is warmed up and calibrated when added
// (so the caller can verify its output right away, while the buffers still hold it); run() then
// takes the samples round-robin across variants. A burst of interference on a shared machine
// then lowers one sample of many variants instead of every sample of one variant, so medians, and
// the best-of-variants peaks, stay stable from run to run.
class InterleavedSampler {
  public:
    explicit InterleavedSampler(SamplerConfig config) : config_(config) {}

    // Warm-up and calibration of one more variant doing `work_per_iteration` units of work per
    // iteration (bytes, flops: only compared between variants of one sampler); returns its index.
    std::size_t add(BatchFunction batch, double work_per_iteration = 1.0);
    // Iterations per batch chosen for variant `index`.
    std::int64_t iterations(std::size_t index) const { return variants_.at(index).set.iterations; }
    std::vector<SampleSet> run();

  private:
    struct Variant {
        BatchFunction batch;
        SampleSet set;
        TimedBatch calibration;  // the last calibration batch, at the final iteration count
        double rate = 0;         // work per second of that batch
    };
    void sample(Variant& v, int batches) const;
    void limit_contenders(std::vector<bool>& contender) const;

    SamplerConfig config_;
    std::vector<Variant> variants_;
};

// Warm-up only, for the whole process (a kernel builder of runtime/program_prebuild, never a
// measuring process): add() runs each variant's warm-up batch and nothing more, and run() gives
// that batch as its one sample. What a probe then reports is discarded; what the warm-up leaves
// behind is the point: the driver's compiled code for the launch as the probe makes it (PoCL
// compiles a work-group function per local size at a kernel's first launch, and caches it).
void set_warm_up_only(bool on);
bool warm_up_only();

// One variant alone: warm-up, calibration, samples.
SampleSet run_samples(const BatchFunction& batch, const SamplerConfig& config);

// The same samples as rates: work_per_iteration / seconds (e.g. bytes -> GB/s with scale 1e-9).
std::vector<double> to_rates(const SampleSet& set, double work_per_iteration, double scale);
// The same samples in another time unit (scale 1e6 for microseconds).
std::vector<double> to_times(const SampleSet& set, double scale);

}  // namespace clprobe
