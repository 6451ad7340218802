// Between-run noise (compare --baseline-repeat) on synthetic reports: families pool their figures'
// log ratios; a family that moved between A's runs gets a band that covers that movement; a change
// beyond it, a family that stayed put, and the machine's own shift are still called.
#include <catch2/catch.hpp>

#include <cmath>

#include "compare/between_runs.hpp"
#include "compare/comparison.hpp"
#include "json/comparison_json.hpp"
#include "render/comparison_text.hpp"

using namespace clprobe;

namespace {

std::vector<double> tight(double centre) {
    return {centre * 0.99, centre * 0.995, centre, centre * 1.005, centre * 1.01};
}

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

const MetricComparison& metric(const Comparison& c, const std::string& id) {
    for (const auto& m : c.metrics)
        if (m.metric == id) return m;
    FAIL("no metric " << id);
    return c.metrics.front();
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
    CHECK(*n.band_for("glm.gradient.gflops") == Approx(std::expm1(2.5 * l)));
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
    CHECK(glm.between_runs_band == Approx(std::expm1(2.5 * std::log(1.2))).epsilon(0.01));
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

TEST_CASE("between runs: without repeats, called timed figures come with the advice to measure the movement",
          "[compare][between_runs]") {
    const std::string called = render_comparison_text(compare_reports(run(10, 200), run(20, 200)), {});
    CHECK(called.find("Between runs: not measured") != std::string::npos);
    const std::string quiet = render_comparison_text(compare_reports(run(10, 200), run(10, 200)), {});
    CHECK(quiet.find("Between runs") == std::string::npos);
}
