// Machine drift on synthetic reports: the series and their spread, the report field's JSON (strict,
// optional for older reports), the header line and trust note, and compare's band widening by the
// runs' drift (inside it nothing is called; beyond it a change still is; without it, as before).
#include <catch2/catch.hpp>

#include "compare/comparison.hpp"
#include "json/comparison_json.hpp"
#include "json/report_json.hpp"
#include "render/comparison_text.hpp"
#include "render/html_report.hpp"
#include "render/markdown_report.hpp"
#include "render/text_report.hpp"
#include "rules/trust.hpp"

using namespace clprobe;

namespace {

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

TEST_CASE("drift: a 20% change inside 25% drift is within noise", "[drift][compare]") {
    const auto a = report_with_rate(100, drift_of(100, 40, {1.0, 1.25, 1.1}));
    const auto b = report_with_rate(120, drift_of(100, 40, {1.0, 1.25, 1.1}));
    const Comparison c = compare_reports(a, b);
    REQUIRE(c.drift);
    CHECK(c.drift->band == Approx(0.25));
    CHECK(peak(c).band == Approx(0.25));
    CHECK(peak(c).verdict == Verdict::within_noise);
    CHECK_THAT(render_comparison_text(c, {}), Catch::Contains("the runs drifted by up to 25.0% (reference kernels"));
    const auto j = comparison_to_json(c);
    CHECK(j["drift"]["band"].get<double>() == Approx(0.25));
    CHECK(j["drift"]["source"] == "spread_a");
    CHECK_THAT(j["drift"]["text"].get<std::string>(), Catch::Contains("changes inside it are not called"));
}

TEST_CASE("drift: a 60% change with 25% drift is still called", "[drift][compare]") {
    const auto a = report_with_rate(100, drift_of(100, 40, {1.0, 1.25}));
    const auto b = report_with_rate(160, drift_of(100, 40, {1.0, 1.25}));
    CHECK(peak(compare_reports(a, b)).verdict == Verdict::faster);
    const auto slow = report_with_rate(40, drift_of(100, 40, {1.0, 1.25}));
    CHECK(peak(compare_reports(a, slow)).verdict == Verdict::slower);
}

TEST_CASE("drift: without a drift block the comparison is today's", "[drift][compare]") {
    const auto a = report_with_rate(100), b = report_with_rate(120);
    const Comparison c = compare_reports(a, b);
    CHECK_FALSE(c.drift);
    CHECK(peak(c).band == Approx(0.05));
    CHECK(peak(c).verdict == Verdict::faster);
    CHECK_FALSE(comparison_to_json(c).contains("drift"));
    CHECK_THAT(render_comparison_text(c, {}), !Catch::Contains("drifted"));
}

TEST_CASE("drift: two steady runs in different phases widen the band by their reference ratio", "[drift][compare]") {
    // Each run steady within 1%, but B ran in a phase 1.9x faster: a metric 1.8x faster is the
    // machine, not a change.
    const auto a = report_with_rate(100, drift_of(100, 40, {1.0, 1.01}));
    const auto b = report_with_rate(180, drift_of(190, 76, {1.0, 1.01}));
    const Comparison c = compare_reports(a, b);
    REQUIRE(c.drift);
    CHECK(c.drift->source == "reference_shift");
    CHECK(c.drift->band == Approx(0.9));
    CHECK(peak(c).verdict == Verdict::within_noise);
    // The same metric move between runs of one phase is called.
    const auto same_phase = report_with_rate(180, drift_of(100, 40, {1.0, 1.01}));
    CHECK(peak(compare_reports(a, same_phase)).verdict == Verdict::faster);
}

TEST_CASE("drift: across two drivers the reference shift is the drivers' difference and widens nothing",
          "[drift][compare]") {
    // The same 1.9x shift as above, but B ran on another driver: its compiler built the reference,
    // so the shift says nothing about the machine, and the 1.8x move of the metric is called.
    auto a = report_with_rate(100, drift_of(100, 40, {1.0, 1.01}));
    auto b = report_with_rate(180, drift_of(190, 76, {1.0, 1.01}));
    a.device = DeviceInfo{};
    a.device->platform_name = "Portable Computing Language";
    a.device->platform_version = "OpenCL 3.0 PoCL 3.1";
    a.device->driver_version = "3.1";
    b.device = a.device;
    b.device->platform_name = "Intel(R) OpenCL";
    b.device->platform_version = "OpenCL 3.0 WINDOWS";
    b.device->driver_version = "2026.22.10.0";
    const Comparison c = compare_reports(a, b);
    REQUIRE(c.driver);
    CHECK(c.driver->a == "Portable Computing Language OpenCL 3.0 PoCL 3.1 (driver 3.1)");
    CHECK(c.driver->b == "Intel(R) OpenCL OpenCL 3.0 WINDOWS (driver 2026.22.10.0)");
    REQUIRE(c.drift);
    CHECK(c.drift->shift_is_driver);
    CHECK(c.drift->reference_shift == Approx(0.9));
    CHECK(c.drift->band == Approx(0.01));
    CHECK(peak(c).verdict == Verdict::faster);
    // The driver is named first in the text, and in the JSON.
    const std::string text = render_comparison_text(c, RenderOptions{});
    const auto first_lines = text.substr(0, text.find("metrics paired"));
    CHECK_THAT(first_lines,
               Catch::Matchers::Contains("Different OpenCL drivers") && Catch::Matchers::Contains("Intel(R) OpenCL"));
    CHECK(comparison_to_json(c)["driver_change"]["b"] == c.driver->b);
    // One driver: no driver change, and the shift widens the band as before.
    b.device = a.device;
    const Comparison same = compare_reports(a, b);
    CHECK_FALSE(same.driver);
    CHECK_FALSE(same.drift->shift_is_driver);
    CHECK(same.drift->band == Approx(0.9));
}

TEST_CASE("drift: a band above 100% still lets a large drop in time be called", "[drift][compare]") {
    // Both runs drifted 150%; a launch 16x faster is far beyond it. With a band of 1 - 1.5 below
    // 1 no time could ever be called lower; the band is symmetric in ratio: 1 / 2.5.
    auto a = report_with_rate(100, drift_of(100, 40, {1.0, 2.5}));
    auto b = report_with_rate(100, drift_of(100, 40, {1.0, 2.5}));
    a.results[0].measurements.push_back(
        make_measurement("kernel.launch.latency", "us", {}, around(32, 0.1), TimerKind::device_profiling, false));
    b.results[0].measurements.push_back(
        make_measurement("kernel.launch.latency", "us", {}, around(2, 0.1), TimerKind::device_profiling, false));
    const Comparison c = compare_reports(a, b);
    REQUIRE(c.drift);
    CHECK(c.drift->band == Approx(1.5));
    REQUIRE(c.metrics.size() == 2);
    CHECK(c.metrics[1].metric == "kernel.launch.latency");
    CHECK(c.metrics[1].verdict == Verdict::faster);
    // 2x lower is inside a 150% band either way.
    b.results[0].measurements[1] =
        make_measurement("kernel.launch.latency", "us", {}, around(16, 0.1), TimerKind::device_profiling, false);
    CHECK(compare_reports(a, b).metrics[1].verdict == Verdict::within_noise);
}
