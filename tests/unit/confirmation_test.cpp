// Repeats of B (compare --candidate-repeat) on synthetic reports: a difference of B's first run is
// called only when every repeat shows it too; what a repeat withdrew is kept, with its ratios, and
// the gate follows the confirmed verdicts only.
#include <catch2/catch.hpp>

#include "compare/comparison.hpp"
#include "compare/confirmation.hpp"
#include "compare_test_support.hpp"
#include "json/comparison_json.hpp"
#include "render/comparison_text.hpp"

using namespace clprobe;
using clprobe::test::metric;
using clprobe::test::tight;

namespace {

MachineDrift reference_at(double gflops) {
    MachineDrift d;
    for (int k = 0; k < 4; ++k)
        d.checks.push_back({0.5 + k, "kernel.compute.fp32", gflops * (1 + 0.002 * k), 20});
    return d;
}

// A timed GLM time, a fact, a headline ceiling and the drift reference, each around its value.
RunReport run(double glm_ms, double peak_gflops, double reference_gflops, int units = 2) {
    RunReport r;
    r.created_at = "2026-12-03T00:00:00Z";
    ProbeResult glm;
    glm.id = "glm.gradient";
    glm.layer = "kernel";
    glm.measurements.push_back(make_measurement("glm.gradient.time", "ms", {{"layout", "row"}}, tight(glm_ms),
                                                TimerKind::device_profiling, false));
    glm.measurements.push_back(
        make_measurement("glm.gradient.units", "count", {}, {static_cast<double>(units)}, TimerKind::none, false));
    r.results.push_back(std::move(glm));
    ProbeResult peak;
    peak.id = "kernel.compute.fp32";
    peak.layer = "kernel";
    peak.measurements.push_back(
        make_measurement("kernel.peak.fp32", "GFLOP/s", {}, tight(peak_gflops), TimerKind::device_profiling));
    r.results.push_back(std::move(peak));
    r.drift = reference_at(reference_gflops);
    return r;
}

Comparison confirmed(const RunReport& a, const RunReport& b, const std::vector<RunReport>& repeats) {
    Comparison c = compare_reports(a, b);
    std::vector<Comparison> others;
    for (const auto& r : repeats)
        others.push_back(compare_reports(a, r));
    confirm_with_repeats(c, others);
    return c;
}

}  // namespace

TEST_CASE("confirmation: a slower figure that one repeat of B does not show is not called", "[compare][confirmation]") {
    const RunReport a = run(10, 200, 200);
    // B's first run caught a slow state: GLM 1.5x, the ceiling halved. Its repeat is like A.
    const RunReport b = run(15, 100, 200), b2 = run(10, 200, 200);
    const Comparison alone = compare_reports(a, b);
    REQUIRE(metric(alone, "glm.gradient.time").verdict == Verdict::slower);
    REQUIRE(alone.regressed());

    const Comparison c = confirmed(a, b, {b2});
    CHECK(c.candidate_runs == 2);
    const MetricComparison& glm = metric(c, "glm.gradient.time");
    CHECK(glm.verdict == Verdict::within_noise);
    REQUIRE(glm.unconfirmed);
    CHECK(*glm.unconfirmed == Verdict::slower);
    CHECK(glm.ratio == Approx(1.5).epsilon(0.01));  // the first run's reading stays
    REQUIRE(glm.repeat_ratios.size() == 1);
    CHECK(glm.repeat_ratios[0] == Approx(1.0).epsilon(0.01));
    CHECK(metric(c, "kernel.peak.fp32").verdict == Verdict::within_noise);
    CHECK_FALSE(c.regressed());
    CHECK(unconfirmed_metrics(c).size() == 2);
}

TEST_CASE("confirmation: a change every run of B shows is called and fails the gate", "[compare][confirmation]") {
    const RunReport a = run(10, 200, 200);
    const RunReport b = run(15, 100, 200), b2 = run(16, 110, 200), b3 = run(14.5, 95, 200);
    const Comparison c = confirmed(a, b, {b2, b3});
    CHECK(c.candidate_runs == 3);
    const MetricComparison& glm = metric(c, "glm.gradient.time");
    CHECK(glm.verdict == Verdict::slower);
    CHECK_FALSE(glm.unconfirmed);
    CHECK(glm.repeat_ratios.size() == 2);
    CHECK(metric(c, "kernel.peak.fp32").verdict == Verdict::slower);
    CHECK(c.regressed());
    CHECK(unconfirmed_metrics(c).empty());
}

TEST_CASE("confirmation: one repeat of several that disagrees, or does not measure the figure, withdraws it",
          "[compare][confirmation]") {
    const RunReport a = run(10, 200, 200);
    const RunReport b = run(15, 200, 200), agrees = run(15, 200, 200), disagrees = run(7, 200, 200);
    // Faster in the last repeat: not the same verdict, so not confirmed.
    CHECK(metric(confirmed(a, b, {agrees, disagrees}), "glm.gradient.time").verdict == Verdict::within_noise);
    // A repeat without the GLM probe cannot confirm it.
    RunReport without = agrees;
    without.results.erase(without.results.begin());
    const Comparison c = confirmed(a, b, {without});
    const MetricComparison& glm = metric(c, "glm.gradient.time");
    CHECK(glm.verdict == Verdict::within_noise);
    CHECK(glm.repeat_ratios.empty());
    CHECK(*glm.unconfirmed == Verdict::slower);
}

TEST_CASE("confirmation: a repeat whose reference spread widely confirms a shift beyond the first run's band",
          "[compare][confirmation]") {
    const RunReport a = run(10, 200, 200);
    // The repeat's reference checks spread 2x within the run, so its own shift band is 50% and its
    // 0.75x reads within noise there; it still moved beyond the 5% band B's first run cleared.
    RunReport spread = run(10, 200, 200);
    spread.drift->checks.clear();
    for (double g : {200.0, 100.0, 50.0, 40.0})
        spread.drift->checks.push_back({1, "kernel.compute.fp32", g, 20});
    const Comparison alone = compare_reports(a, spread);
    REQUIRE(alone.machine);
    REQUIRE(alone.machine->shifts[0].verdict == Verdict::within_noise);
    REQUIRE(alone.machine->shifts[0].ratio == Approx(0.75).epsilon(0.01));
    const Comparison c = confirmed(a, run(10, 200, 100), {spread});
    CHECK(c.machine->shifts[0].verdict == Verdict::slower);
    CHECK_FALSE(c.machine->shifts[0].unconfirmed);
    // A repeat that moved the same way but less than that band does not confirm.
    RunReport small = spread;
    small.drift->checks[1].compute_gflops = 196;  // faster half 200 and 196: x0.98
    const Comparison not_enough = confirmed(a, run(10, 200, 100), {small});
    CHECK(not_enough.machine->shifts[0].verdict == Verdict::within_noise);
    // A metric's repeat must give the verdict itself: samples spread 3x (within noise on their own)
    // do not confirm, though their median reads 1.4x.
    RunReport wide = run(10, 200, 200);
    wide.results[0].measurements[0] = make_measurement("glm.gradient.time", "ms", {{"layout", "row"}},
                                                       {7, 10, 14, 18, 21}, TimerKind::device_profiling, false);
    REQUIRE(metric(compare_reports(a, wide), "glm.gradient.time").verdict == Verdict::within_noise);
    const Comparison by_wide = confirmed(a, run(15, 200, 200), {wide});
    const MetricComparison& glm = metric(by_wide, "glm.gradient.time");
    CHECK(glm.verdict == Verdict::within_noise);
    CHECK(glm.repeat_ratios.size() == 1);
}

TEST_CASE("confirmation: facts stay as they are and figures within noise are not touched", "[compare][confirmation]") {
    const RunReport a = run(10, 200, 200, 2);
    const RunReport b = run(10, 200, 200, 1), b2 = run(20, 200, 200, 1);
    const Comparison c = confirmed(a, b, {b2});
    CHECK(metric(c, "glm.gradient.units").verdict == Verdict::changed);
    const MetricComparison& glm = metric(c, "glm.gradient.time");
    CHECK(glm.verdict == Verdict::within_noise);  // slower only in the repeat: B's first run decides
    CHECK_FALSE(glm.unconfirmed);
    CHECK(glm.repeat_ratios.empty());
}

TEST_CASE("confirmation: the machine's shift is called only when every run of B shows it", "[compare][confirmation]") {
    const RunReport a = run(10, 200, 200);
    const RunReport slow = run(10, 200, 100), slow_again = run(10, 200, 104), quick = run(10, 200, 200);
    const Comparison kept = confirmed(a, slow, {slow_again});
    REQUIRE(kept.machine);
    REQUIRE_FALSE(kept.machine->shifts.empty());
    CHECK(kept.machine->shifts[0].verdict == Verdict::slower);
    CHECK(kept.machine->shifts[0].repeat_ratios.size() == 1);
    CHECK(kept.regressed());

    const Comparison withdrawn = confirmed(a, slow, {quick});
    REQUIRE(withdrawn.machine);
    const ReferenceShift& shift = withdrawn.machine->shifts[0];
    CHECK(shift.verdict == Verdict::within_noise);
    REQUIRE(shift.unconfirmed);
    CHECK(*shift.unconfirmed == Verdict::slower);
    CHECK_FALSE(withdrawn.regressed());
    CHECK(describe(shift) == "computes as fast as in A: 2.0x slower in B's first run only (its repeats: x1.00)");
}

TEST_CASE("confirmation: the JSON and the text say how many runs of B and what was withdrawn",
          "[compare][confirmation]") {
    const RunReport a = run(10, 200, 200);
    const Comparison c = confirmed(a, run(15, 200, 200), {run(10, 200, 200)});
    const auto j = comparison_to_json(c);
    CHECK(j.at("candidate_runs") == 2);
    bool seen = false;
    for (const auto& m : j.at("metrics"))
        if (m.at("metric") == "glm.gradient.time") {
            seen = true;
            CHECK(m.at("unconfirmed") == "slower");
            CHECK(m.at("verdict") == "within_noise");
            CHECK(m.at("repeat_ratios").size() == 1);
        }
    CHECK(seen);
    const std::string text = render_comparison_text(c, {});
    CHECK(text.find("Repeats of B: 2 runs of B") != std::string::npos);
    CHECK(text.find("1 figure(s) (glm.gradient.time x1.500)") != std::string::npos);
    // Without repeats nothing is said about them.
    const Comparison single = compare_reports(a, run(15, 200, 200));
    CHECK(comparison_to_json(single).at("candidate_runs") == 1);
    CHECK(render_comparison_text(single, {}).find("Repeats of B") == std::string::npos);
}
