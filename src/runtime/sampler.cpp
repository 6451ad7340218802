#include "runtime/sampler.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace clprobe {

namespace {
double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

void InterleavedSampler::keep(Variant& v, const TimedBatch& t) const {
    if (!(t.seconds > 0) || !std::isfinite(t.seconds))
        throw std::runtime_error("timer returned a non-positive duration");
    // If any sample had to fall back to the host clock, the set is only as good as that clock.
    if (t.timer != TimerKind::device_profiling) v.set.timer = t.timer;
    v.set.seconds_per_iteration.push_back(t.seconds / static_cast<double>(v.set.iterations));
}

std::size_t InterleavedSampler::add(BatchFunction batch) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < config_.warmup_runs; ++i)
        batch(1);

    // Calibrate: grow the iteration count until one batch reaches the target time. Growth is
    // bounded (x100 per step) so one noisy fast batch cannot make the next one run for minutes.
    std::int64_t iterations = 1;
    TimedBatch probe = batch(iterations);
    while (probe.seconds < config_.target_seconds && iterations < config_.max_iterations &&
           seconds_since(start) < config_.budget_seconds / 2) {
        const double wanted = config_.target_seconds / std::max(probe.seconds, 1e-9) * 1.1;
        const double factor = std::clamp(wanted, 2.0, 100.0);
        iterations = std::min<std::int64_t>(
            config_.max_iterations, static_cast<std::int64_t>(std::ceil(static_cast<double>(iterations) * factor)));
        probe = batch(iterations);
    }

    Variant v;
    v.batch = std::move(batch);
    v.set.iterations = iterations;
    v.set.timer = probe.timer;
    v.seconds_per_sample = std::max(probe.seconds, 1e-9);
    // The last calibration batch ran at the final iteration count after warm-up: it is a sample
    // like the others, and slow variants (one long iteration) need not pay for it twice.
    keep(v, probe);
    variants_.push_back(std::move(v));
    return variants_.size() - 1;
}

std::vector<SampleSet> InterleavedSampler::run() {
    double round_seconds = 0;
    for (const auto& v : variants_)
        round_seconds += v.seconds_per_sample;
    const double budget = config_.budget_seconds * static_cast<double>(variants_.size());
    int samples = config_.samples;
    if (round_seconds * (samples - 1) > budget)
        samples = std::max(3, 1 + static_cast<int>(budget / std::max(round_seconds, 1e-9)));
    for (int round = 1; round < samples; ++round)
        for (auto& v : variants_)
            keep(v, v.batch(v.set.iterations));
    std::vector<SampleSet> out;
    out.reserve(variants_.size());
    for (auto& v : variants_)
        out.push_back(std::move(v.set));
    variants_.clear();
    return out;
}

SampleSet run_samples(const BatchFunction& batch, const SamplerConfig& config) {
    InterleavedSampler sampler(config);
    sampler.add(batch);
    return std::move(sampler.run().front());
}

std::vector<double> to_rates(const SampleSet& set, double work_per_iteration, double scale) {
    std::vector<double> out;
    out.reserve(set.seconds_per_iteration.size());
    for (double s : set.seconds_per_iteration)
        out.push_back(work_per_iteration / s * scale);
    return out;
}

std::vector<double> to_times(const SampleSet& set, double scale) {
    std::vector<double> out;
    out.reserve(set.seconds_per_iteration.size());
    for (double s : set.seconds_per_iteration)
        out.push_back(s * scale);
    return out;
}

}  // namespace clprobe
