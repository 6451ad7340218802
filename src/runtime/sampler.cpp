#include "runtime/sampler.hpp"

#include "core/clock.hpp"
#include "core/stop_points.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace clprobe {

namespace {
std::atomic<bool> warm_up_only_flag{false};

void check(const TimedBatch& t) {
    if (!(t.seconds > 0) || !std::isfinite(t.seconds))
        throw std::runtime_error("timer returned a non-positive duration");
}
}  // namespace

void InterleavedSampler::sample(Variant& v, int batches) const {
    TimedBatch fastest{0, TimerKind::device_profiling};
    for (int i = 0; i < batches; ++i) {
        check_stop();
        const TimedBatch t = v.batch(v.set.iterations);
        check(t);
        if (i == 0 || t.seconds < fastest.seconds) fastest.seconds = t.seconds;
        // If any batch had to fall back to the host clock, the set is only as good as that clock.
        if (t.timer != TimerKind::device_profiling) v.set.timer = t.timer;
    }
    v.set.seconds_per_iteration.push_back(fastest.seconds / static_cast<double>(v.set.iterations));
}

std::size_t InterleavedSampler::add(BatchFunction batch, double work_per_iteration) {
    const auto start = std::chrono::steady_clock::now();
    if (warm_up_only()) {
        // One launch at the probe's shape compiles what its samples would run; no calibration.
        const TimedBatch first = batch(1);
        check(first);
        Variant v;
        v.batch = std::move(batch);
        v.set.timer = first.timer;
        v.calibration = first;
        v.rate = work_per_iteration / first.seconds;
        variants_.push_back(std::move(v));
        return variants_.size() - 1;
    }
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
        check_stop();
        probe = batch(iterations);
    }
    check(probe);

    Variant v;
    v.batch = std::move(batch);
    v.set.iterations = iterations;
    v.set.timer = probe.timer;
    v.calibration = probe;
    v.rate = work_per_iteration * static_cast<double>(iterations) / probe.seconds;
    variants_.push_back(std::move(v));
    return variants_.size() - 1;
}

void InterleavedSampler::limit_contenders(std::vector<bool>& contender) const {
    if (config_.best_of <= 1 || config_.max_contenders <= 0) return;
    std::vector<std::size_t> ranked;
    for (std::size_t i = 0; i < variants_.size(); ++i)
        if (contender[i]) ranked.push_back(i);
    const auto keep = static_cast<std::size_t>(config_.max_contenders);
    if (ranked.size() <= keep) return;
    std::stable_sort(ranked.begin(), ranked.end(),
                     [&](std::size_t a, std::size_t b) { return variants_[a].rate > variants_[b].rate; });
    for (std::size_t k = keep; k < ranked.size(); ++k)
        contender[ranked[k]] = false;
}

std::vector<SampleSet> InterleavedSampler::run() {
    constexpr int plain_samples = 3;
    double best_rate = 0;
    for (const auto& v : variants_)
        best_rate = std::max(best_rate, v.rate);
    std::vector<bool> contender(variants_.size(), true);
    if (config_.best_of > 1)
        for (std::size_t i = 0; i < variants_.size(); ++i)
            contender[i] = variants_[i].rate >= config_.contender_fraction * best_rate;
    limit_contenders(contender);

    // One round's cost, from the calibration batches; fewer rounds (never below 3) when the
    // rounds would overrun the budget.
    double round_seconds = 0;
    for (std::size_t i = 0; i < variants_.size(); ++i)
        round_seconds += variants_[i].calibration.seconds * (contender[i] ? config_.best_of : 1);
    const double budget = config_.budget_seconds * static_cast<double>(variants_.size());
    int samples = config_.samples;
    if (round_seconds * samples > budget)
        samples = std::max(plain_samples, static_cast<int>(budget / std::max(round_seconds, 1e-9)));

    // Warm-up only: the one batch each variant ran is its one sample (not a measurement).
    for (std::size_t i = 0; i < variants_.size() && warm_up_only(); ++i) {
        contender[i] = false;
        samples = 1;
    }
    // A plain variant's calibration batch is its first sample (it ran at the final count after
    // warm-up); a contender's samples are all best-of batches, so they are all alike.
    for (std::size_t i = 0; i < variants_.size(); ++i) {
        auto& v = variants_[i];
        v.set.best_of = contender[i] ? config_.best_of : 1;
        if (!contender[i] || config_.best_of == 1)
            v.set.seconds_per_iteration.push_back(v.calibration.seconds / static_cast<double>(v.set.iterations));
    }
    for (int round = 0; round < samples; ++round)
        for (std::size_t i = 0; i < variants_.size(); ++i) {
            auto& v = variants_[i];
            const int wanted = contender[i] ? samples : std::min(samples, plain_samples);
            if (static_cast<int>(v.set.seconds_per_iteration.size()) < wanted) sample(v, v.set.best_of);
        }
    std::vector<SampleSet> out;
    out.reserve(variants_.size());
    for (auto& v : variants_)
        out.push_back(std::move(v.set));
    variants_.clear();
    return out;
}

void set_warm_up_only(bool on) {
    warm_up_only_flag = on;
}

bool warm_up_only() {
    return warm_up_only_flag;
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
