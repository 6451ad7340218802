// Between-run noise (compare --baseline-repeat) on synthetic reports: families pool their figures'
// log ratios; a family that moved between A's runs gets a band that covers that movement; a change
// beyond it, a family that stayed put, and the machine's own shift are still called.
#include <catch2/catch.hpp>

#include <cmath>

#include "compare/between_runs.hpp"
#include "compare/comparison.hpp"
#include "compare_test_support.hpp"
#include "core/workloads.hpp"
#include "json/comparison_json.hpp"
#include "render/comparison_text.hpp"

using namespace clprobe;
using clprobe::test::metric;
using clprobe::test::tight;

namespace {

// One timed GLM figure and one ceiling, each a tight sample set around its centre.
RunReport run(double glm_ms, double peak_gflops) {
    RunReport r;
    r.created_at = "2026-12-02T00:00:00Z";
    ProbeResult glm;
    glm.id = "glm.gradient";
    glm.layer = "kernel";
    glm.measurements.push_back(make_measurement("glm.gradient.time", "ms", {{"layout", "row"}}, tight(glm_ms),
                                                TimerKind::device_profiling, false));
    r.results.push_back(std::move(glm));
    ProbeResult peak;
    peak.id = "kernel.compute.fp32";
    peak.layer = "kernel";
    peak.measurements.push_back(
        make_measurement("kernel.peak.fp32", "GFLOP/s", {}, tight(peak_gflops), TimerKind::device_profiling));
    r.results.push_back(std::move(peak));
    return r;
}

}  // namespace

TEST_CASE("between runs: a family is the metric's first two dotted parts", "[compare][between_runs]") {
    CHECK(noise_family("glm.gradient.time") == "glm.gradient");
    CHECK(noise_family("kernel.memory_levels.bandwidth") == "kernel.memory_levels");
    CHECK(noise_family("glm.fit") == "glm.fit");
    CHECK(noise_family("single") == "single");
}

TEST_CASE("between runs: families pool ratios as a root mean square of their logs", "[compare][between_runs]") {
    const double l = std::log(1.2);
    const BetweenRunNoise n = noise_from_log_ratios(
        {{"glm.gradient.time", l}, {"glm.gradient.bandwidth", -l}, {"kernel.peak.fp32", 0.0}, {"glm.fit.time", NAN}},
        3);
    CHECK(n.runs == 3);
    REQUIRE(n.families.count("glm.gradient"));
    CHECK(n.families.at("glm.gradient").ratios == 2);
    CHECK(n.families.at("glm.gradient").sigma_log == Approx(l));
    CHECK(n.families.at("kernel.peak").sigma_log == Approx(0));
    CHECK_FALSE(n.families.count("glm.fit"));  // a non-finite ratio is no measurement
    REQUIRE(n.band_for("glm.gradient.gflops"));
    CHECK(*n.band_for("glm.gradient.gflops") == Approx(std::expm1(3.0 * l)));
    CHECK_FALSE(n.band_for("attention.decode.time"));
}

TEST_CASE("between runs: a family that moved between A's runs is not called for that movement",
          "[compare][between_runs]") {
    // A's two runs: the GLM figure moved 20%, the ceiling stayed. B: GLM 30% slower, ceiling as A.
    const RunReport a = run(10, 200), a2 = run(12, 200), b = run(13, 200);
    const Comparison alone = compare_reports(a, b);
    CHECK(metric(alone, "glm.gradient.time").verdict == Verdict::slower);
    CHECK(alone.baseline_runs == 1);

    const BetweenRunNoise noise = measure_between_runs({&a, &a2}, 0.05);
    CHECK(noise.runs == 2);
    CompareOptions o;
    o.between_runs = &noise;
    const Comparison c = compare_reports(a, b, o);
    const MetricComparison& glm = metric(c, "glm.gradient.time");
    CHECK(glm.between_runs_band == Approx(std::expm1(3.0 * std::log(1.2))).epsilon(0.01));
    CHECK(glm.band >= glm.between_runs_band);
    CHECK(glm.verdict == Verdict::within_noise);
    CHECK(c.baseline_runs == 2);
    REQUIRE_FALSE(c.between_runs_bands.empty());
    CHECK(c.between_runs_bands.front().first == "glm.gradient");
    // The ceiling's family did not move between A's runs: its band stays its own.
    CHECK(metric(c, "kernel.peak.fp32").between_runs_band == Approx(0).margin(1e-9));
    CHECK(comparison_to_json(c)["baseline_runs"] == 2);
    CHECK(comparison_to_json(c)["metrics"][0].contains("between_runs_band"));
    CHECK(render_comparison_text(c, {}).find("Between runs: 2 runs of A") != std::string::npos);
}

TEST_CASE("between runs: a change beyond the measured movement, and a family that stayed, are called",
          "[compare][between_runs]") {
    const RunReport a = run(10, 200), a2 = run(11, 200);  // GLM moved 10%: band about 27%
    const BetweenRunNoise noise = measure_between_runs({&a, &a2}, 0.05);
    CompareOptions o;
    o.between_runs = &noise;
    // GLM 2x slower (a planted regression), compute 30% lower (one compute unit of four gone).
    const Comparison c = compare_reports(a, run(20, 140), o);
    CHECK(metric(c, "glm.gradient.time").verdict == Verdict::slower);
    CHECK(metric(c, "kernel.peak.fp32").verdict == Verdict::slower);
    CHECK(c.regressed());
}

TEST_CASE("between runs: without repeats, every comparison says it cannot separate the machine's movement",
          "[compare][between_runs]") {
    // Called or not: a single pass of A says nothing about how far this machine's figures move.
    for (const double b_ms : {20.0, 10.0}) {
        const std::string text = render_comparison_text(compare_reports(run(10, 200), run(b_ms, 200)), {});
        CHECK(text.find("Between runs: not measured") != std::string::npos);
        CHECK(text.find("cannot separate a change from the machine's own movement") != std::string::npos);
    }
}

TEST_CASE("between runs: a figure's own movement is weighed with its family's", "[compare][between_runs]") {
    // Family glm.gradient: a steady headline (ln ratios 0.01) and a noisy variant (ln ratios 1.0),
    // three pairs each, as two repeats of A give.
    std::vector<LogRatio> ratios;
    for (int pair = 0; pair < 3; ++pair) {
        ratios.push_back({"glm.gradient.best.bandwidth", "glm.gradient.best.bandwidth", 0.01});
        ratios.push_back({"glm.gradient.time", figure_key("glm.gradient.time", {{"reduction", "atomic"}}), 1.0});
    }
    const BetweenRunNoise n = noise_from_log_ratios(ratios, 3);
    const double family = n.families.at("glm.gradient").sigma_log;
    CHECK(family == Approx(std::sqrt((3 * 0.01 * 0.01 + 3 * 1.0) / 6)));
    // Own ratios count 3, the family's sigma as 2 more: sqrt((3 own^2 + 2 family^2) / 5).
    const auto steady = n.sigma_for("glm.gradient.best.bandwidth", {});
    const auto noisy = n.sigma_for("glm.gradient.time", {{"reduction", "atomic"}});
    REQUIRE(steady);
    REQUIRE(noisy);
    CHECK(*steady == Approx(std::sqrt((3 * 0.01 * 0.01 + 2 * family * family) / 5)));
    CHECK(*noisy == Approx(std::sqrt((3 * 1.0 + 2 * family * family) / 5)));
    CHECK(*steady < family);
    CHECK(*noisy > family);
    // A figure the repeats did not see (another label) gets the family's sigma.
    CHECK(*n.sigma_for("glm.gradient.time", {{"reduction", "local"}}) == Approx(family));
    CHECK(*n.band_for("glm.gradient.best.bandwidth") == Approx(std::expm1(3.0 * *steady)));
    CHECK(figure_key("glm.gradient.time", {{"b", "2"}, {"a", "1"}}) == "glm.gradient.time{a=1,b=2}");
}

TEST_CASE("between runs: the ratio of medians is held against the measured movement, not the interval",
          "[compare][between_runs]") {
    // Each run's GLM samples spread from 0.7x to 1.45x their median (a shared machine's phases),
    // so a bootstrap interval of B/A is wide; between A's runs the medians moved 30%.
    auto spread = [](double centre) {
        return std::vector<double>{centre * 0.7, centre * 0.85, centre, centre * 1.2, centre * 1.45};
    };
    auto wide_run = [&](double glm_ms) {
        RunReport r = run(glm_ms, 200);
        r.results[0].measurements[0] = make_measurement("glm.gradient.time", "ms", {{"layout", "row"}}, spread(glm_ms),
                                                        TimerKind::device_profiling, false);
        return r;
    };
    const RunReport a = wide_run(10), a2 = wide_run(13);
    const BetweenRunNoise noise = measure_between_runs({&a, &a2}, 0.05);
    CompareOptions o;
    o.between_runs = &noise;
    // 2.3x slower than the baseline's median (11.5 ms, of A's two runs): the medians' ratio is
    // beyond the ~120% band though the interval reaches into it.
    const Comparison c = compare_reports(a, wide_run(26), o);
    const MetricComparison& glm = metric(c, "glm.gradient.time");
    CHECK(glm.band == Approx(glm.between_runs_band));
    CHECK(glm.ratio_low < 1 + glm.band);  // the interval alone would not have called it
    CHECK(glm.verdict == Verdict::slower);
    // The same spread, medians 20% apart: inside the measured movement.
    CHECK(metric(compare_reports(a, wide_run(12), o), "glm.gradient.time").verdict == Verdict::within_noise);
}

namespace {

MetricComparison judged(const std::string& metric, Labels labels, Verdict verdict) {
    MetricComparison m;
    m.metric = metric;
    m.labels = std::move(labels);
    m.verdict = verdict;
    m.ratio = verdict == Verdict::slower ? 0.5 : verdict == Verdict::faster ? 2.0 : 1.0;
    return m;
}

}  // namespace

TEST_CASE("compare: a workload with two variants slower and none faster regressed", "[compare][between_runs]") {
    Comparison c;
    c.baseline_runs = 3;
    // One variant slower, in two units of the same measurement: one variant, not a workload.
    c.metrics.push_back(judged("glm.gradient.time", {{"wg", "64"}}, Verdict::slower));
    c.metrics.push_back(judged("glm.gradient.bandwidth", {{"wg", "64"}}, Verdict::slower));
    c.metrics.push_back(judged("attention.decode.time", {{"kv", "512"}}, Verdict::within_noise));
    CHECK(c.family_regressions().empty());
    CHECK_FALSE(c.regressed());
    // A second variant of the same workload: the workload is slower.
    c.metrics.push_back(judged("glm.gradient.time", {{"wg", "128"}}, Verdict::slower));
    auto found = c.family_regressions();
    REQUIRE(found.size() == 1);
    CHECK(found[0].family == "glm.gradient");
    CHECK(found[0].variants == 2);
    CHECK(found[0].slower.size() == 3);
    CHECK(c.regressed());
    CHECK(comparison_to_json(c)["family_regressions"][0]["family"] == "glm.gradient");
    CHECK_THAT(render_comparison_text(c), Catch::Contains("2 variants of glm.gradient slower"));
    // One of its variants faster: the workload moved both ways, which is noise, not a regression.
    c.metrics.push_back(judged("glm.gradient.time", {{"wg", "256"}}, Verdict::faster));
    CHECK(c.family_regressions().empty());
    CHECK_FALSE(c.regressed());
}

TEST_CASE("compare: a variant's stages, and the family's headline, slower with its step are one variant",
          "[compare][between_runs]") {
    Comparison c;
    c.baseline_runs = 3;
    c.metrics.push_back(judged("glm.pipeline.step_time", {{"variant", "double_buffered"}}, Verdict::slower));
    c.metrics.push_back(
        judged("glm.pipeline.stage_time", {{"stage", "upload"}, {"variant", "double_buffered"}}, Verdict::slower));
    c.metrics.push_back(
        judged("glm.pipeline.stage_time", {{"stage", "kernel"}, {"variant", "double_buffered"}}, Verdict::slower));
    // The family's headline (no labels) slower with it: still one variant.
    c.metrics.push_back(judged("glm.pipeline.best", {}, Verdict::slower));
    CHECK(c.family_regressions().empty());
    // A stage of another variant slower too: two variants, the workload regressed.
    c.metrics.push_back(
        judged("glm.pipeline.stage_time", {{"stage", "kernel"}, {"variant", "serial"}}, Verdict::slower));
    const auto found = c.family_regressions();
    REQUIRE(found.size() == 1);
    CHECK(found[0].variants == 2);
    CHECK(found[0].slower.size() == 5);
}

TEST_CASE("compare: workload regressions need the movement between runs, and leave the machine's figures alone",
          "[compare][between_runs]") {
    Comparison c;
    c.baseline_runs = 3;
    // Four compute ceilings slower together: a slow phase of the machine, judged by machine_comparison.
    for (const char* v : {"1", "4", "8", "16"})
        c.metrics.push_back(judged("kernel.compute", {{"vector", v}}, Verdict::slower));
    // Two kinds of launch latency slower on a busy host: the machine's, not a workload's.
    for (const char* kind : {"round_trip", "enqueue_to_start"})
        c.metrics.push_back(judged("kernel.launch.latency", {{"kind", kind}}, Verdict::slower));
    CHECK(c.family_regressions().empty());
    CHECK(is_workload_id("glm.fit.time"));
    CHECK(is_workload_id("attention.decode"));
    CHECK_FALSE(is_workload_id("kernel.peak.fp32"));
    CHECK_FALSE(is_workload_id("glmx.fit"));
    CHECK_FALSE(is_workload_id("glm"));
    // Two workload variants slower, but A ran once: single figures past their own run's spread
    // are common on a shared machine, so no workload verdict is drawn from them.
    c.metrics.push_back(judged("glm.newton.time", {{"rows", "1"}}, Verdict::slower));
    c.metrics.push_back(judged("glm.newton.time", {{"rows", "2"}}, Verdict::slower));
    CHECK(c.family_regressions().size() == 1);
    c.baseline_runs = 1;
    CHECK(c.family_regressions().empty());
}

TEST_CASE("between runs: B is held against the median of A's runs, not A's alone", "[compare][between_runs]") {
    // A's first run caught the GLM figure fast (10 ms); both repeats and B read 12 ms.
    const RunReport a = run(10, 200), a2 = run(12, 200), a3 = run(12, 200), b = run(12, 200);
    const BetweenRunNoise noise = measure_between_runs({&a, &a2, &a3}, 0.05);
    REQUIRE(noise.baseline_median("glm.gradient.time", {{"layout", "row"}}));
    CHECK(*noise.baseline_median("glm.gradient.time", {{"layout", "row"}}) == Approx(12));
    CHECK_FALSE(noise.baseline_median("glm.gradient.time", {{"layout", "col"}}));
    CompareOptions with;
    with.between_runs = &noise;
    const Comparison pooled = compare_reports(a, b, with);
    const MetricComparison& m = metric(pooled, "glm.gradient.time");
    REQUIRE(m.baseline_median);
    CHECK(*m.baseline_median == Approx(12));
    CHECK(m.ratio == Approx(1.0));      // what the verdict reads: B against the baseline's median
    CHECK(m.raw_ratio == Approx(1.2));  // B against A alone, as measured
    CHECK(m.verdict == Verdict::within_noise);
    CHECK(comparison_to_json(compare_reports(a, b, with))["metrics"][0]["baseline_median"] == Approx(12));
    CHECK_THAT(render_comparison_text(compare_reports(a, b, with), {true, false}),
               Catch::Contains("against the median of A's runs, 12; B / A alone x1.200"));
    // A ceiling likewise, by its runs' best values: A's first run read 200 GFLOP/s, its repeats 250.
    const RunReport c1 = run(12, 200), c2 = run(12, 250), c3 = run(12, 250), cb = run(12, 250);
    const BetweenRunNoise ceiling_noise = measure_between_runs({&c1, &c2, &c3}, 0.05);
    CompareOptions ceilings;
    ceilings.between_runs = &ceiling_noise;
    const Comparison pooled_ceiling = compare_reports(c1, cb, ceilings);
    const MetricComparison& peak = metric(pooled_ceiling, "kernel.peak.fp32");
    CHECK(peak.method == Method::best_of);
    REQUIRE(peak.baseline_median);
    CHECK(*peak.baseline_median == Approx(250 * 1.005));  // the faster half of tight(250)
    CHECK(peak.ratio == Approx(1.0));
    CHECK(peak.verdict == Verdict::within_noise);
    // A figure one run of A lacks has no baseline median: the ratio stays B / A.
    BetweenRunNoise partial = noise;
    partial.medians.begin()->second.pop_back();
    CHECK_FALSE(partial.baseline_median("glm.gradient.time", {{"layout", "row"}}));
}
