#include "runtime/sampler.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace clprobe {

SampleSet run_samples(const BatchFunction& batch, const SamplerConfig& config) {
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    for (int i = 0; i < config.warmup_runs; ++i)
        batch(1);

    // Calibrate: grow the iteration count until one batch reaches the target time. Growth is
    // bounded (x100 per step) so one noisy fast batch cannot make the next one run for minutes.
    std::int64_t iterations = 1;
    TimedBatch probe = batch(iterations);
    while (probe.seconds < config.target_seconds && iterations < config.max_iterations &&
           elapsed() < config.budget_seconds / 2) {
        const double wanted = config.target_seconds / std::max(probe.seconds, 1e-9) * 1.1;
        const double factor = std::clamp(wanted, 2.0, 100.0);
        iterations = std::min<std::int64_t>(
            config.max_iterations, static_cast<std::int64_t>(std::ceil(static_cast<double>(iterations) * factor)));
        probe = batch(iterations);
    }

    SampleSet set;
    set.iterations = iterations;
    set.timer = probe.timer;
    auto keep = [&](const TimedBatch& t) {
        if (!(t.seconds > 0) || !std::isfinite(t.seconds))
            throw std::runtime_error("timer returned a non-positive duration");
        // If any sample had to fall back to the host clock, the set is only as good as that clock.
        if (t.timer != TimerKind::device_profiling) set.timer = t.timer;
        set.seconds_per_iteration.push_back(t.seconds / static_cast<double>(iterations));
    };
    // The last calibration batch ran at the final iteration count after warm-up: it is a sample
    // like the others, and slow variants (one long iteration) need not pay for it twice.
    keep(probe);
    const double per_sample = std::max(probe.seconds, 1e-9);
    const double remaining = config.budget_seconds - elapsed();
    int samples = config.samples;
    if (remaining < per_sample * (samples - 1)) samples = std::max(3, 1 + static_cast<int>(remaining / per_sample));
    for (int i = 1; i < samples; ++i)
        keep(batch(iterations));
    return set;
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
