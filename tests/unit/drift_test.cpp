// Machine drift on synthetic reports: the series and their spread, the report field's JSON (strict,
// optional for older reports), the header line and trust note, and compare's band widening by the
// runs' drift (inside it nothing is called; beyond it a change still is; without it, as before).
#include <catch2/catch.hpp>

#include "compare/comparison.hpp"
#include "compare_test_support.hpp"
#include "json/comparison_json.hpp"
#include "json/report_json.hpp"
#include "render/comparison_text.hpp"
#include "render/html_report.hpp"
#include "render/markdown_report.hpp"
#include "render/text_report.hpp"
#include "rules/trust.hpp"

using namespace clprobe;
using clprobe::test::metric;

namespace {

// The drift model's normalisation is opt-in (compare --normalise); these cases exercise it.
Comparison compare_normalised(const RunReport& a, const RunReport& b) {
    CompareOptions o;
    o.normalise = true;
    return compare_reports(a, b, o);
}

// Checks whose compute rate is `compute` times each factor in turn (memory likewise).
MachineDrift drift_of(double compute, double memory, std::vector<double> factors) {
    MachineDrift d;
    double t = 0;
    for (double f : factors)
        d.checks.push_back({t += 1.5, "kernel.probe", compute * f, memory * f});
    return d;
}

std::vector<double> around(double centre, double spread, int n = 7) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i)
        v.push_back(centre * (1 + spread * (static_cast<double>(i) / (n - 1) - 0.5)));
    return v;
}

RunReport report_with_rate(double centre, std::optional<MachineDrift> drift = std::nullopt) {
    RunReport r;
    r.created_at = "2026-12-01T00:00:00Z";
    r.options = {{"mode", "quick"}};
    ProbeResult p;
    p.id = "kernel.compute.fp32";
    p.layer = "kernel";
    p.measurements.push_back(
        make_measurement("kernel.peak.fp32", "GFLOP/s", {}, around(centre, 0.02), TimerKind::device_profiling));
    r.results.push_back(std::move(p));
    r.drift = std::move(drift);
    return r;
}

const MetricComparison& peak(const Comparison& c) {
    REQUIRE(!c.metrics.empty());
    return c.metrics.front();
}

}  // namespace

TEST_CASE("drift: series median and spread = max / min - 1; no spread from one check", "[drift]") {
    const MachineDrift d = drift_of(100, 40, {1.0, 1.25, 1.1});
    const DriftSeries c = compute_series(d), m = memory_series(d);
    CHECK(c.n == 3);
    CHECK(c.median == Approx(110));
    CHECK(c.spread == Approx(0.25));
    CHECK(m.median == Approx(44));
    REQUIRE(largest_spread(d));
    CHECK(*largest_spread(d) == Approx(0.25));
    CHECK_FALSE(largest_spread(drift_of(100, 40, {1.0})));
    CHECK_FALSE(largest_spread(MachineDrift{}));
}

TEST_CASE("drift: the reference shift between two runs is the larger series' move", "[drift]") {
    MachineDrift a = drift_of(100, 40, {1.0, 1.0}), b = drift_of(100, 40, {1.0, 1.0});
    for (auto& check : b.checks)
        check.memory_gb_per_s *= 0.6;  // memory 40% lower, compute the same
    REQUIRE(reference_shift(a, b));
    CHECK(*reference_shift(a, b) == Approx(0.4));
    CHECK_FALSE(reference_shift(a, MachineDrift{}));
}

TEST_CASE("drift: the report field round-trips, is optional, and is read strictly", "[drift][json]") {
    RunReport r = report_with_rate(100, drift_of(100, 40, {1.0, 2.0}));
    r.drift->cost_seconds = 0.25;
    const auto j = report_to_json(r);
    CHECK(j["drift"]["compute"]["spread"].get<double>() == Approx(1.0));
    CHECK(j["drift"]["memory"]["n"].get<int>() == 2);
    const RunReport back = report_from_json(j);
    REQUIRE(back.drift);
    REQUIRE(back.drift->checks.size() == 2);
    CHECK(back.drift->checks[1].compute_gflops == Approx(200));
    CHECK(back.drift->checks[1].before_probe == "kernel.probe");
    CHECK(back.drift->cost_seconds == Approx(0.25));

    auto old = j;
    old.erase("drift");
    CHECK_FALSE(report_from_json(old).drift);
    CHECK_FALSE(report_to_json(report_with_rate(100)).contains("drift"));

    auto bad = j;
    bad["drift"]["checks"][1]["memory_gb_per_s"] = -1;
    CHECK_THROWS_WITH(report_from_json(bad), Catch::Contains("drift.checks[1].memory_gb_per_s"));
    bad = j;
    bad["drift"].erase("note");
    CHECK_THROWS_WITH(report_from_json(bad), Catch::Contains("drift.note: missing"));
}

TEST_CASE("drift: every renderer shows one header line; a wide spread is a stored trust warning", "[drift][trust]") {
    RunReport r = report_with_rate(100, drift_of(100, 40, {1.0, 1.3, 1.0}));
    r.trust_notes = assess_trust(r);
    CHECK_THAT(render_text(r, {}), Catch::Contains("machine drift during the run: compute varied 30.0%"));
    CHECK_THAT(render_markdown(r, {}), Catch::Contains("**Machine drift during the run**: compute varied 30.0%"));
    CHECK_THAT(render_html(r, {}), Catch::Contains("Machine drift during the run: compute varied 30.0%"));
    bool warned = false;
    for (const auto& n : r.trust_notes)
        if (n.id == "trust.machine_drift") warned = n.warning && n.text.find("30%") != std::string::npos;
    CHECK(warned);

    RunReport steady = report_with_rate(100, drift_of(100, 40, {1.0, 1.05}));
    bool quiet = false;
    for (const auto& n : assess_trust(steady)) {
        CHECK(n.id != "trust.machine_drift");
        quiet = quiet || (n.id == "trust.machine_steady" && !n.warning);
    }
    CHECK(quiet);

    RunReport off = report_with_rate(100, MachineDrift{{}, "the device cannot timestamp commands", 0});
    CHECK_THAT(render_text(off, {}), Catch::Contains("not measured: the device cannot timestamp commands"));
}

namespace {

// A report of two probes, each with its drift check: a ceiling probe (kernel.compute.fp32) and a
// workload probe (glm.gradient, memory-bound, timed in ms).
struct Phase {
    double compute = 230, memory = 40;  // the reference before the probe
};
RunReport two_probes(std::vector<double> ceiling, std::vector<double> workload_ms, Phase at_ceiling, Phase at_workload,
                     std::vector<Phase> more = {}) {
    RunReport r;
    r.created_at = "2026-12-01T00:00:00Z";
    r.options = {{"mode", "quick"}};
    ProbeResult p;
    p.id = "kernel.compute.fp32";
    p.layer = "kernel";
    p.measurements.push_back(
        make_measurement("kernel.peak.fp32", "GFLOP/s", {}, std::move(ceiling), TimerKind::device_profiling));
    r.results.push_back(p);
    ProbeResult w;
    w.id = "glm.gradient";
    w.layer = "kernel";
    w.measurements.push_back(
        make_measurement("glm.gradient.time", "ms", {}, std::move(workload_ms), TimerKind::device_profiling, false));
    r.results.push_back(w);
    r.drift = MachineDrift{};
    r.drift->checks.push_back({0.5, "kernel.compute.fp32", at_ceiling.compute, at_ceiling.memory});
    r.drift->checks.push_back({2.0, "glm.gradient", at_workload.compute, at_workload.memory});
    // The checks after the workload probe: by default one in the workload's state, so the
    // reference around it is established (before and after agree).
    if (more.empty()) more.push_back(at_workload);
    double t = 3;
    for (const auto& ph : more)
        r.drift->checks.push_back({t += 1, "attention.decode", ph.compute, ph.memory});
    return r;
}

}  // namespace

TEST_CASE("drift: the reference's spread within a run widens no band", "[drift][compare]") {
    // Both runs' references varied 25%; a ceiling 20% higher with tight samples is called.
    const auto a = report_with_rate(100, drift_of(100, 40, {1.0, 1.25, 1.1}));
    const auto b = report_with_rate(120, drift_of(100, 40, {1.0, 1.25, 1.1}));
    const Comparison c = compare_normalised(a, b);
    REQUIRE(c.machine);
    CHECK(*c.machine->spread_a == Approx(0.25));
    CHECK(peak(c).method == Method::best_of);
    CHECK(peak(c).band < 0.1);
    CHECK(peak(c).verdict == Verdict::faster);
    CHECK(c.machine->regressions().empty());
    CHECK_THAT(render_comparison_text(c, {}),
               Catch::Contains("Within the runs the reference varied 25% (A) and 25% (B)") &&
                   Catch::Contains("no band widened by it"));
    const auto j = comparison_to_json(c);
    CHECK(j["machine"]["spread_a"].get<double>() == Approx(0.25));
    CHECK(j["machine"]["regressed"] == false);
    CHECK(j["metrics"][0]["method"] == "best_of");
}

TEST_CASE("drift: without a drift block the comparison has no machine line", "[drift][compare]") {
    const auto a = report_with_rate(100), b = report_with_rate(120);
    const Comparison c = compare_normalised(a, b);
    CHECK_FALSE(c.machine);
    CHECK(peak(c).band == Approx(0.05));
    CHECK(peak(c).verdict == Verdict::faster);
    CHECK_FALSE(comparison_to_json(c).contains("machine"));
    CHECK_THAT(render_comparison_text(c, {}), !Catch::Contains("Machine:"));
}

TEST_CASE("drift: a machine shift is a difference of machines, reported first and gated on; it widens nothing",
          "[drift][compare]") {
    // B lost half its compute: the reference's fastest checks halve, so do the ceiling and the
    // workload's speed. The ceiling is called slower, the machine too (a regression); the workload
    // scaled by the reference around it is within noise, its raw ratio (2x the time) beside it.
    const auto a = two_probes(around(233, 0.01), around(10, 0.02), {233, 40}, {230, 40});
    const auto b = two_probes(around(117, 0.01), around(20, 0.02), {117, 20}, {115, 20});
    const Comparison c = compare_normalised(a, b);
    REQUIRE(c.machine);
    REQUIRE(c.machine->shifts.size() == 2);
    const ReferenceShift& compute = c.machine->shifts[0];
    CHECK(compute.series == "compute");
    CHECK(compute.fast_a == Approx(231.5));  // the median of the faster half of the checks
    CHECK(compute.fast_b == Approx(116));
    CHECK(compute.verdict == Verdict::slower);
    REQUIRE(c.machine->regressions().size() == 2);
    CHECK(c.regressed());
    const auto& ceiling = metric(c, "kernel.peak.fp32");
    CHECK(ceiling.verdict == Verdict::slower);
    CHECK(ceiling.band < 0.1);  // the machine's shift did not widen it
    const auto& work = metric(c, "glm.gradient.time");
    CHECK(work.method == Method::normalised);
    CHECK(work.reference_series == "compute");
    CHECK(work.raw_ratio == Approx(2.0));
    CHECK(work.ratio == Approx(1.0));
    CHECK(work.verdict == Verdict::within_noise);
    // Reported first: before the metrics.
    const std::string text = render_comparison_text(c, {});
    const auto machine_at = text.find(
        "this device computes 2.0x slower than in A (reference FMA kernel, fastest samples, the median of the faster "
        "half: 231.5 -> 116");
    REQUIRE(machine_at != std::string::npos);
    CHECK(machine_at < text.find("metrics paired"));
    RenderOptions verbose;
    verbose.verbose = true;
    CHECK_THAT(render_comparison_text(c, verbose), Catch::Contains("scaled by the compute reference; raw x2.000"));
    const auto j = comparison_to_json(c);
    CHECK(j["regressed"] == true);
    CHECK(j["machine"]["shifts"][0]["verdict"] == "slower");
    CHECK(j["metrics"][1]["raw_ratio"].get<double>() == Approx(2.0));
    // The other way round the machine is faster: no regression.
    CHECK(compare_normalised(b, a).machine->regressions().empty());
    CHECK_FALSE(compare_normalised(b, a).regressed());
}

TEST_CASE("drift: a phase flip inside one run is handled by measurement, not by a band", "[drift][compare]") {
    // Same machine (the fast checks agree). In A the workload ran in a slow phase (reference
    // halved before it, its time doubled) and the ceiling probe caught three fast samples of seven.
    const auto a =
        two_probes({232, 118, 231, 117, 116, 230, 119}, around(20, 0.02), {232, 40}, {116, 20}, {{117, 20}, {230, 40}});
    const auto b = two_probes(around(233, 0.01), around(10, 0.02), {233, 40}, {231, 40});
    const Comparison c = compare_normalised(a, b);
    REQUIRE(c.machine);
    CHECK(c.machine->regressions().empty());
    CHECK(c.machine->shifts[0].verdict == Verdict::within_noise);
    CHECK(*c.machine->spread_a == Approx(1.0));
    const auto& work = metric(c, "glm.gradient.time");
    CHECK(work.raw_ratio == Approx(0.5));
    CHECK(work.verdict == Verdict::within_noise);
    CHECK(work.band < 0.1);
    // The ceiling's medians differ 2x; its faster halves agree.
    const auto& ceiling = metric(c, "kernel.peak.fp32");
    CHECK(ceiling.raw_ratio == Approx(233.0 / 119).epsilon(0.02));
    CHECK(ceiling.ratio == Approx(1.0).epsilon(0.02));
    CHECK(ceiling.verdict == Verdict::within_noise);
    CHECK_FALSE(c.regressed());
}

TEST_CASE("drift: a slower machine with a phase flip, and a slower workload, are each called", "[drift][compare]") {
    // B: half the compute, a slow phase (a quarter) before the workload, and the workload 50%
    // slower than the machine explains.
    const auto a = two_probes(around(233, 0.01), around(10, 0.02), {233, 40}, {231, 40}, {{230, 40}});
    const auto b =
        two_probes(around(117, 0.01), around(10 * 4 * 1.5, 0.02), {117, 20}, {58, 10}, {{58, 10}, {116, 20}});
    const Comparison c = compare_normalised(a, b);
    REQUIRE(c.machine);
    CHECK(c.machine->shifts[0].verdict == Verdict::slower);
    CHECK(metric(c, "kernel.peak.fp32").verdict == Verdict::slower);
    const auto& work = metric(c, "glm.gradient.time");
    CHECK(work.ratio == Approx(1.5).epsilon(0.01));
    CHECK(work.verdict == Verdict::slower);
    // The same workload at the machine's own speed is not called.
    const auto fair = two_probes(around(117, 0.01), around(40, 0.02), {117, 20}, {58, 10}, {{58, 10}, {116, 20}});
    CHECK(metric(compare_normalised(a, fair), "glm.gradient.time").verdict == Verdict::within_noise);
}

TEST_CASE("drift: a probe whose checks disagree is compared as measured, not scaled", "[drift][compare]") {
    // A transient caught the check before B's workload alone (37 between checks of 110): scaling by
    // it would call the workload 3x slower. The check after it disagrees, so the medians compare.
    const auto a = two_probes(around(112, 0.01), around(10, 0.02), {112, 40}, {110, 40});
    const auto b = two_probes(around(112, 0.01), around(10, 0.02), {112, 40}, {37, 40}, {{110, 40}});
    const Comparison c = compare_normalised(a, b);  // kept: `work` refers into it
    const auto& work = metric(c, "glm.gradient.time");
    CHECK(work.method == Method::median);
    CHECK(work.verdict == Verdict::within_noise);
    // The last probe of a run has no check after it: compared as measured too.
    auto last = b;
    last.drift->checks.resize(2);
    last.drift->checks[1].compute_gflops = 110;
    CHECK(metric(compare_normalised(a, last), "glm.gradient.time").method == Method::median);
    // Checks that agree within 20% scale by their mean.
    const auto steady = two_probes(around(112, 0.01), around(10, 0.02), {112, 40}, {100, 40}, {{110, 40}});
    const Comparison steady_c = compare_normalised(a, steady);
    const auto& scaled = metric(steady_c, "glm.gradient.time");
    CHECK(scaled.method == Method::normalised);
    CHECK(*scaled.reference_b == Approx(105));
}

TEST_CASE("drift: a change of one workload on the same machine is called, the rest are not", "[drift][compare]") {
    const auto a = two_probes(around(233, 0.01), around(10, 0.02), {233, 40}, {231, 40});
    const auto b = two_probes(around(232, 0.01), around(15, 0.02), {232, 40}, {230, 40});
    const Comparison c = compare_normalised(a, b);
    CHECK(metric(c, "glm.gradient.time").verdict == Verdict::slower);
    CHECK(metric(c, "kernel.peak.fp32").verdict == Verdict::within_noise);
    CHECK(c.machine->regressions().empty());
    // glm.gradient.time has no labels, so it is a headline: the gate fails on it.
    CHECK(c.regressed());
}

TEST_CASE("drift: a 60% change with 25% drift is still called", "[drift][compare]") {
    const auto a = report_with_rate(100, drift_of(100, 40, {1.0, 1.25}));
    const auto b = report_with_rate(160, drift_of(100, 40, {1.0, 1.25}));
    CHECK(peak(compare_normalised(a, b)).verdict == Verdict::faster);
    const auto slow = report_with_rate(40, drift_of(100, 40, {1.0, 1.25}));
    CHECK(peak(compare_normalised(a, slow)).verdict == Verdict::slower);
}

TEST_CASE("drift: across two drivers the reference shift is the drivers' difference, never called",
          "[drift][compare]") {
    // B's reference 1.9x faster, but B ran on another driver: its compiler built the reference,
    // so the shift says nothing about the machine, and nothing is normalised by it.
    auto a = two_probes(around(100, 0.01), around(10, 0.02), {100, 40}, {101, 40});
    auto b = two_probes(around(180, 0.01), around(5, 0.02), {190, 76}, {191, 76});
    a.device = DeviceInfo{};
    a.device->platform_name = "Portable Computing Language";
    a.device->platform_version = "OpenCL 3.0 PoCL 3.1";
    a.device->driver_version = "3.1";
    b.device = a.device;
    b.device->platform_name = "Intel(R) OpenCL";
    b.device->platform_version = "OpenCL 3.0 WINDOWS";
    b.device->driver_version = "2026.22.10.0";
    const Comparison c = compare_normalised(a, b);
    REQUIRE(c.driver);
    CHECK(c.driver->a == "Portable Computing Language OpenCL 3.0 PoCL 3.1 (driver 3.1)");
    CHECK(c.driver->b == "Intel(R) OpenCL OpenCL 3.0 WINDOWS (driver 2026.22.10.0)");
    REQUIRE(c.machine);
    CHECK(c.machine->shift_is_driver);
    CHECK(c.machine->shifts[0].ratio == Approx(1.9).epsilon(0.01));
    CHECK(c.machine->shifts[0].verdict == Verdict::within_noise);
    CHECK(metric(c, "kernel.peak.fp32").verdict == Verdict::faster);
    const auto& work = metric(c, "glm.gradient.time");
    CHECK(work.method == Method::median);
    CHECK(work.verdict == Verdict::faster);
    // The driver is named first in the text, and in the JSON.
    const std::string text = render_comparison_text(c, RenderOptions{});
    const auto first_lines = text.substr(0, text.find("metrics paired"));
    CHECK_THAT(first_lines, Catch::Matchers::Contains("Different OpenCL drivers") &&
                                Catch::Matchers::Contains("Intel(R) OpenCL") &&
                                Catch::Matchers::Contains("which is the drivers' difference"));
    CHECK(comparison_to_json(c)["driver_change"]["b"] == c.driver->b);
    // A slower reference on another driver is no machine regression either.
    CHECK(compare_normalised(b, a).machine->regressions().empty());
    // One driver: the same shift is the machine's, and the workload is normalised.
    b.device = a.device;
    const Comparison same = compare_normalised(a, b);
    CHECK_FALSE(same.driver);
    CHECK_FALSE(same.machine->shift_is_driver);
    CHECK(same.machine->shifts[0].verdict == Verdict::faster);
    CHECK(metric(same, "glm.gradient.time").method == Method::normalised);
}

TEST_CASE("drift: a band symmetric in ratio lets a large drop in time be called", "[drift][compare]") {
    auto a = report_with_rate(100, drift_of(100, 40, {1.0, 2.5}));
    auto b = report_with_rate(100, drift_of(100, 40, {1.0, 2.5}));
    a.results[0].measurements.push_back(
        make_measurement("kernel.launch.latency", "us", {}, around(32, 0.1), TimerKind::device_profiling, false));
    b.results[0].measurements.push_back(
        make_measurement("kernel.launch.latency", "us", {}, around(2, 0.1), TimerKind::device_profiling, false));
    const Comparison c = compare_normalised(a, b);
    REQUIRE(c.metrics.size() == 2);
    CHECK(c.metrics[1].metric == "kernel.launch.latency");
    CHECK(c.metrics[1].verdict == Verdict::faster);
    CHECK(c.metrics[1].ratio_high < 1 / (1 + c.metrics[1].band));
    // 4% lower with samples spread 10% each: inside max(5%, cv A + cv B).
    b.results[0].measurements[1] =
        make_measurement("kernel.launch.latency", "us", {}, around(31, 0.1), TimerKind::device_profiling, false);
    CHECK(compare_normalised(a, b).metrics[1].verdict == Verdict::within_noise);
}
