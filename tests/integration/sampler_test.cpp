// The sampler's calibration and repetition logic, with a synthetic clock, and device timing of
// real commands.
#include <catch2/catch.hpp>

#include "cl/command_timing.hpp"
#include "runtime/sampler.hpp"
#include "session_fixture.hpp"

using namespace clprobe;

TEST_CASE("the sampler calibrates iterations to the target time and keeps every sample", "[sampler]") {
    std::vector<std::int64_t> calls;
    // A batch takes exactly 1 ms per iteration.
    auto batch = [&](std::int64_t n) {
        calls.push_back(n);
        return TimedBatch{static_cast<double>(n) * 1e-3, TimerKind::device_profiling};
    };
    SamplerConfig c;
    c.warmup_runs = 2;
    c.samples = 6;
    c.target_seconds = 0.05;
    const SampleSet set = run_samples(batch, c);
    CHECK(calls[0] == 1);
    CHECK(calls[1] == 1);
    CHECK(set.iterations >= 50);
    REQUIRE(set.seconds_per_iteration.size() == 6);
    for (double s : set.seconds_per_iteration)
        CHECK(s == Approx(1e-3));
    CHECK(set.timer == TimerKind::device_profiling);
    // Warm-up runs, calibration runs, then the samples (the last calibration run counts as one).
    CHECK(calls.back() == set.iterations);
}

TEST_CASE("one host-timed sample marks the whole set as host-timed", "[sampler]") {
    int n = 0;
    auto batch = [&](std::int64_t it) {
        ++n;
        return TimedBatch{static_cast<double>(it) * 1e-2,
                          n == 5 ? TimerKind::host_steady_clock : TimerKind::device_profiling};
    };
    SamplerConfig c;
    c.warmup_runs = 0;
    c.samples = 5;
    c.target_seconds = 0.01;
    CHECK(run_samples(batch, c).timer == TimerKind::host_steady_clock);
}

TEST_CASE("a batch that reports no time is an error, not a sample", "[sampler]") {
    auto batch = [](std::int64_t) { return TimedBatch{0.0, TimerKind::device_profiling}; };
    SamplerConfig c;
    c.warmup_runs = 0;
    c.max_iterations = 4;
    CHECK_THROWS_WITH(run_samples(batch, c), Catch::Contains("non-positive"));
}

TEST_CASE("warm-up only: one launch per variant, that launch the one sample", "[sampler]") {
    // A builder's mode (runtime/program_prebuild): whatever the config asks, each variant runs
    // once, at one iteration, and nothing is calibrated or sampled after it.
    std::vector<std::int64_t> calls;
    auto batch = [&](std::int64_t n) {
        calls.push_back(n);
        return TimedBatch{static_cast<double>(n) * 1e-3, TimerKind::device_profiling};
    };
    SamplerConfig c;
    c.warmup_runs = 2;
    c.samples = 6;
    c.best_of = 3;
    c.target_seconds = 0.05;
    set_warm_up_only(true);
    InterleavedSampler sampler(c);
    sampler.add(batch, 1.0);
    sampler.add(batch, 2.0);
    const std::vector<SampleSet> sets = sampler.run();
    set_warm_up_only(false);
    CHECK(calls == std::vector<std::int64_t>{1, 1});
    REQUIRE(sets.size() == 2);
    for (const auto& set : sets) {
        CHECK(set.iterations == 1);
        CHECK(set.best_of == 1);
        CHECK(set.seconds_per_iteration == std::vector<double>{1e-3});
    }
    // Off again: the same config calibrates and samples as before.
    calls.clear();
    run_samples(batch, c);
    CHECK(calls.size() > 2);
}

TEST_CASE("rates and times derive from seconds per iteration", "[sampler]") {
    SampleSet set;
    set.seconds_per_iteration = {0.5, 0.25};
    CHECK(to_rates(set, 2e9, 1e-9) == std::vector<double>{4.0, 8.0});
    CHECK(to_times(set, 1e6) == std::vector<double>{5e5, 2.5e5});
}

TEST_CASE("commands on a profiling queue are timed by the device", "[sampler]") {
    auto& s = test::shared_session();
    cl::Kernel k = s.kernels().kernel("peak/launch.cl", "empty");
    const TimedBatch t = time_commands(s.queue(), s.profiling(), 3, [&] {
        cl::Event e;
        s.queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(1), cl::NullRange, nullptr, &e);
        return e;
    });
    CHECK(t.seconds > 0);
    CHECK(t.timer == (s.profiling() ? TimerKind::device_profiling : TimerKind::host_steady_clock));
}

TEST_CASE("without profiling, commands are timed by the host clock and say so", "[sampler]") {
    auto& s = test::shared_session();
    cl::Kernel k = s.kernels().kernel("peak/launch.cl", "empty");
    int launches = 0;
    const TimedBatch t = time_commands(s.queue(), /*profiling=*/false, 4, [&] {
        ++launches;
        cl::Event e;
        s.queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(1), cl::NullRange, nullptr, &e);
        return e;
    });
    CHECK(launches == 4);
    CHECK(t.seconds > 0);
    CHECK(t.timer == TimerKind::host_steady_clock);
}

TEST_CASE("interleaved sampling calibrates each variant and samples them in rounds", "[sampler]") {
    std::vector<std::pair<int, std::int64_t>> calls;
    auto variant = [&](int id, double seconds_per_iteration) {
        return [&calls, id, seconds_per_iteration](std::int64_t n) {
            calls.emplace_back(id, n);
            return TimedBatch{seconds_per_iteration * static_cast<double>(n), TimerKind::device_profiling};
        };
    };
    SamplerConfig c;
    c.warmup_runs = 1;
    c.samples = 4;
    c.target_seconds = 0.01;
    InterleavedSampler sampler(c);
    CHECK(sampler.add(variant(0, 1e-3)) == 0);
    CHECK(sampler.add(variant(1, 2e-2)) == 1);
    CHECK(sampler.iterations(0) >= 10);
    CHECK(sampler.iterations(1) == 1);
    const auto calibration_calls = calls.size();
    const auto sets = sampler.run();
    REQUIRE(sets.size() == 2);
    CHECK(sets[0].seconds_per_iteration.size() == 4);
    CHECK(sets[1].seconds_per_iteration.size() == 4);
    CHECK(sets[0].seconds_per_iteration.back() == Approx(1e-3));
    CHECK(sets[1].seconds_per_iteration.back() == Approx(2e-2));
    // After calibration the variants alternate: 0, 1, 0, 1, 0, 1.
    REQUIRE(calls.size() == calibration_calls + 6);
    for (std::size_t i = calibration_calls; i < calls.size(); ++i)
        CHECK(calls[i].first == static_cast<int>((i - calibration_calls) % 2));
}

TEST_CASE("best-of sampling keeps the fastest batch and spends it on contenders only", "[sampler]") {
    // Variant 0 alternates 2 ms and 1 ms batches; variant 1 does the same work 4x slower.
    std::vector<int> calls(2, 0);
    auto variant = [&](int id, double slowdown) {
        return [&calls, id, slowdown](std::int64_t n) {
            const double per = (calls[id]++ % 2 == 0 ? 2e-3 : 1e-3) * slowdown;
            return TimedBatch{per * static_cast<double>(n), TimerKind::device_profiling};
        };
    };
    SamplerConfig c;
    c.warmup_runs = 0;
    c.samples = 5;
    c.target_seconds = 1e-3;
    c.best_of = 2;
    InterleavedSampler sampler(c);
    sampler.add(variant(0, 1.0), 1.0);
    sampler.add(variant(1, 4.0), 1.0);
    const auto sets = sampler.run();
    REQUIRE(sets.size() == 2);
    CHECK(sets[0].best_of == 2);
    REQUIRE(sets[0].seconds_per_iteration.size() == 5);
    for (double s : sets[0].seconds_per_iteration)
        CHECK(s == Approx(1e-3));  // the fastest of each pair
    CHECK(sets[1].best_of == 1);
    CHECK(sets[1].seconds_per_iteration.size() == 3);  // below 75% of the best: 3 plain samples
}

TEST_CASE("a contender limit keeps best-of samples for the fastest first batches only", "[sampler]") {
    // Four variants within 75% of the best, fastest first: only the first two stay contenders.
    auto variant = [](double per) {
        return [per](std::int64_t n) { return TimedBatch{per * static_cast<double>(n), TimerKind::device_profiling}; };
    };
    SamplerConfig c;
    c.warmup_runs = 0;
    c.samples = 5;
    c.target_seconds = 1e-3;
    c.best_of = 2;
    c.max_contenders = 2;
    InterleavedSampler sampler(c);
    for (double per : {1.15e-3, 1.0e-3, 1.1e-3, 1.05e-3})
        sampler.add(variant(per), 1.0);
    const auto sets = sampler.run();
    REQUIRE(sets.size() == 4);
    const int expected_best_of[] = {1, 2, 1, 2};
    for (std::size_t i = 0; i < sets.size(); ++i) {
        INFO("variant " << i);
        CHECK(sets[i].best_of == expected_best_of[i]);
        CHECK(sets[i].seconds_per_iteration.size() == (expected_best_of[i] == 2 ? 5u : 3u));
    }
}
