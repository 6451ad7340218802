// compare_reports on synthetic reports: real differences are found, noise is not called a
// difference, facts and environment changes are named, and the regression gate sees headlines.
#include <catch2/catch.hpp>

#include "compare/comparison.hpp"
#include "json/comparison_json.hpp"
#include "render/comparison_text.hpp"

using namespace clprobe;

namespace {

std::vector<double> around(double centre, double spread, int n = 7) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i)
        v.push_back(centre * (1 + spread * (static_cast<double>(i) / (n - 1) - 0.5)));
    return v;
}

RunReport report_with(std::vector<Measurement> ms, int compute_units = 2) {
    RunReport r;
    r.created_at = "2026-11-30T00:00:00Z";
    r.device = DeviceInfo{};
    r.device->name = "dev";
    r.device->compute_units = static_cast<std::uint32_t>(compute_units);
    r.options = {{"mode", "standard"}};
    ProbeResult p;
    p.id = "kernel.compute.fp32";
    p.layer = "kernel";
    p.measurements = std::move(ms);
    r.results.push_back(std::move(p));
    return r;
}

Measurement timed(const std::string& metric, Labels labels, std::vector<double> samples, bool higher = true) {
    return make_measurement(metric, "GFLOP/s", std::move(labels), std::move(samples), TimerKind::device_profiling,
                            higher);
}

const MetricComparison& find(const Comparison& c, const std::string& metric) {
    for (const auto& m : c.metrics)
        if (m.metric == metric) return m;
    FAIL("metric " << metric << " not in the comparison");
    throw;
}

}  // namespace

TEST_CASE("compare: a halved rate is slower, a doubled rate faster, with the interval beyond the band", "[compare]") {
    const auto a =
        report_with({timed("kernel.peak.fp32", {}, around(160, 0.04)), timed("x.rate", {}, around(10, 0.04))});
    const auto b =
        report_with({timed("kernel.peak.fp32", {}, around(80, 0.04)), timed("x.rate", {}, around(20, 0.04))});
    const auto c = compare_reports(a, b);
    const auto& peak = find(c, "kernel.peak.fp32");
    CHECK(peak.verdict == Verdict::slower);
    CHECK(peak.ratio == Approx(0.5));
    CHECK(peak.ratio_high < 1 / (1 + peak.band));
    CHECK(find(c, "x.rate").verdict == Verdict::faster);
    REQUIRE(c.headline_regressions().size() == 1);
    CHECK(c.headline_regressions()[0]->metric == "kernel.peak.fp32");
}

TEST_CASE("compare: for times lower is better", "[compare]") {
    const auto a = report_with({timed("x.latency", {}, around(10, 0.02), false)});
    const auto b = report_with({timed("x.latency", {}, around(20, 0.02), false)});
    CHECK(find(compare_reports(a, b), "x.latency").verdict == Verdict::slower);
    CHECK(find(compare_reports(b, a), "x.latency").verdict == Verdict::faster);
}

TEST_CASE("compare: two samples of the same distribution are within noise", "[compare]") {
    const auto a = report_with({timed("x.rate", {}, {100, 103, 97, 101, 99, 102, 98})});
    const auto b = report_with({timed("x.rate", {}, {101, 98, 102, 97, 100, 103, 99})});
    const auto c = compare_reports(a, b);
    CHECK(find(c, "x.rate").verdict == Verdict::within_noise);
    CHECK(c.headline_regressions().empty());
}

TEST_CASE("compare: a change smaller than the threshold, or than the runs' spread, is noise", "[compare]") {
    // 4% apart with tight samples: significant, but under the 5% threshold.
    const auto a = report_with({timed("x.rate", {}, around(100, 0.002))});
    const auto b = report_with({timed("x.rate", {}, around(96, 0.002))});
    CHECK(find(compare_reports(a, b), "x.rate").verdict == Verdict::within_noise);
    CompareOptions strict;
    strict.threshold = 0.01;
    CHECK(find(compare_reports(a, b, strict), "x.rate").verdict == Verdict::slower);
    // 15% apart, but each run spreads by ~20%: the band widens to the spread.
    const auto noisy_a = report_with({timed("x.rate", {}, around(100, 0.6))});
    const auto noisy_b = report_with({timed("x.rate", {}, around(85, 0.6))});
    const auto noisy = compare_reports(noisy_a, noisy_b);
    const auto& m = find(noisy, "x.rate");
    CHECK(m.band > 0.2);
    CHECK(m.verdict == Verdict::within_noise);
}

TEST_CASE("compare: facts are compared for equality and unpaired metrics are listed", "[compare]") {
    auto fact = [](double v) { return make_measurement("topology.numa_nodes", "count", {}, {v}, TimerKind::none); };
    const auto a = report_with({fact(1), timed("only.a", {}, around(1, 0.01))});
    const auto b = report_with({fact(2), timed("only.b", {}, around(1, 0.01))});
    const auto c = compare_reports(a, b);
    CHECK(find(c, "topology.numa_nodes").verdict == Verdict::changed);
    CHECK(find(c, "only.a").verdict == Verdict::only_in_a);
    CHECK(find(c, "only.b").verdict == Verdict::only_in_b);
    CHECK(find(compare_reports(a, a), "topology.numa_nodes").verdict == Verdict::same);
}

TEST_CASE("compare: volatile labels do not split a pair, other labels do", "[compare]") {
    const auto a = report_with({timed("x.rate", {{"vector", "4"}, {"driver_version", "1.0"}}, around(10, 0.01))});
    const auto b = report_with({timed("x.rate", {{"vector", "4"}, {"driver_version", "2.0"}}, around(10, 0.01)),
                                timed("x.rate", {{"vector", "8"}}, around(10, 0.01))});
    const auto c = compare_reports(a, b);
    CHECK(c.count(Verdict::within_noise) == 1);
    CHECK(c.count(Verdict::only_in_b) == 1);
}

TEST_CASE("compare: the environment diff names the compute-unit change and ties it to slower compute", "[compare]") {
    const auto a = report_with({timed("kernel.peak.fp32", {}, around(160, 0.02))}, 2);
    const auto b = report_with({timed("kernel.peak.fp32", {}, around(80, 0.02))}, 1);
    const auto c = compare_reports(a, b);
    bool named = false;
    for (const auto& e : c.environment)
        named = named || (e.field == "device.compute_units" && e.a == "2" && e.b == "1");
    CHECK(named);
    REQUIRE_FALSE(c.explanations.empty());
    CHECK_THAT(c.explanations.front(),
               Catch::Contains("compute-bound") && Catch::Contains("device.compute_units 2 -> 1"));
    // Without a moved metric, a changed setting explains nothing.
    const auto same_speed = compare_reports(a, report_with({timed("kernel.peak.fp32", {}, around(160, 0.02))}, 1));
    CHECK(same_speed.explanations.empty());
}

TEST_CASE("compare: a workload that ran another shape is named, with how many of its figures moved", "[compare]") {
    // PoCL advertises device memory from the host's free memory: a GLM cut to fit ran 3.26 million
    // rows in one run and 5.77 million in the next, 1.8x the time at the same GB/s.
    const auto with_glm = [](std::uint64_t rows, double ms) {
        RunReport r = report_with({timed("kernel.peak.fp32", {}, around(160, 0.02))});
        ProbeResult p;
        p.id = "glm.gradient";
        p.layer = "kernel";
        p.attributes = {{"rows", rows}, {"cols", 64}, {"sampling", "7 samples"}};
        p.measurements.push_back(make_measurement("glm.gradient.time", "ms", {{"variant", "v8"}}, around(ms, 0.02),
                                                  TimerKind::device_profiling, false));
        p.measurements.push_back(timed("glm.gradient.bandwidth", {{"variant", "v8"}}, around(11.5, 0.02)));
        r.results.push_back(std::move(p));
        return r;
    };
    const auto a = with_glm(3264686, 72), b = with_glm(5771394, 131);
    const auto c = compare_reports(a, b);
    bool named = false;
    for (const auto& e : c.environment)
        named = named || (e.field == "glm.gradient.rows" && e.a == "3264686" && e.b == "5771394");
    CHECK(named);
    CHECK(find(c, "glm.gradient.time").verdict == Verdict::slower);
    CHECK(find(c, "glm.gradient.bandwidth").verdict == Verdict::within_noise);
    REQUIRE(c.explanations.size() == 1);
    CHECK_THAT(c.explanations.front(),
               Catch::Contains("glm.gradient ran another shape in B (rows 3264686 -> 5771394)") &&
                   Catch::Contains("1 of its figures moved (1 slower, 0 faster)"));
    // A layer probe's attribute of the same name is not a workload shape; the same shape explains nothing.
    CHECK(compare_reports(a, with_glm(3264686, 72)).explanations.empty());
    auto layer_a = report_with({timed("kernel.peak.fp32", {}, around(160, 0.02))}), layer_b = layer_a;
    layer_a.results.front().attributes = {{"rows", 2}};
    layer_b.results.front().attributes = {{"rows", 1}};
    CHECK(compare_reports(layer_a, layer_b).environment.empty());
}

TEST_CASE("compare: findings present in one report only", "[compare]") {
    auto a = report_with({});
    auto b = report_with({});
    Finding f;
    f.id = "kernel.compute.vector_width";
    f.title = "t";
    b.findings.push_back(f);
    const auto c = compare_reports(a, b);
    CHECK(c.findings_only_in_a.empty());
    REQUIRE(c.findings_only_in_b.size() == 1);
    CHECK(c.findings_only_in_b[0].id == "kernel.compute.vector_width");
}

TEST_CASE("compare: trust notes present in one report only, matched by id", "[compare][trust]") {
    auto a = report_with({});
    auto b = report_with({});
    a.trust_notes = {{"trust.machine_quiet", false, "Other processes used 1.0% of the CPUs during the run."},
                     {"trust.warm_up", false, "First launches are excluded."}};
    b.trust_notes = {{"trust.machine_busy", true, "The machine was busy: other processes used 35% of the CPUs."},
                     {"trust.warm_up", false, "First launches are excluded."}};
    const auto c = compare_reports(a, b);
    REQUIRE(c.trust_notes_only_in_a.size() == 1);
    CHECK(c.trust_notes_only_in_a[0].id == "trust.machine_quiet");
    REQUIRE(c.trust_notes_only_in_b.size() == 1);
    CHECK(c.trust_notes_only_in_b[0].id == "trust.machine_busy");
    CHECK(c.trust_notes_only_in_b[0].warning);
    const std::string text = render_comparison_text(c);
    CHECK_THAT(text, Catch::Contains("Trust notes in one report only") &&
                         Catch::Contains("B only: ! The machine was busy") && Catch::Contains("(trust.machine_busy)"));
    const auto j = comparison_to_json(c);
    REQUIRE(j.at("trust_notes_only_in_b").size() == 1);
    CHECK(j.at("trust_notes_only_in_b")[0].at("id") == "trust.machine_busy");
    CHECK(j.at("trust_notes_only_in_a")[0].at("warning") == false);
    // The same notes on both sides: nothing to list.
    CHECK(compare_reports(a, a).trust_notes_only_in_a.empty());
    CHECK(render_comparison_text(compare_reports(a, a)).find("Trust notes") == std::string::npos);
}

TEST_CASE("compare: a figure whose probe ran beside other work is not judged, and says which run", "[compare]") {
    auto a = report_with({timed("kernel.peak.fp32", {}, around(160, 0.04)), timed("x.rate", {}, around(10, 0.04))});
    auto b = report_with({timed("kernel.peak.fp32", {}, around(80, 0.04)), timed("x.rate", {}, around(20, 0.04))});
    a.device->type = b.device->type = "cpu";
    a.results[0].host_load = HostLoad{2.0, 2, 0.05, 0.0};  // quiet: 2.5% of the CPUs
    SECTION("B's probe shared the CPUs with 1.4 CPUs of other work: no verdict, no regression") {
        b.results[0].host_load = HostLoad{2.0, 2, 1.2, 0.2};
        const auto c = compare_reports(a, b);
        const auto& peak = find(c, "kernel.peak.fp32");
        CHECK(peak.verdict == Verdict::disturbed);
        CHECK(peak.ratio == Approx(0.5));  // still measured and shown
        CHECK(peak.disturbance.find("B: kernel.compute.fp32") == 0);
        CHECK(peak.disturbance.find("1.4 of 2 CPUs") != std::string::npos);
        CHECK(peak.disturbance.find("stolen") != std::string::npos);
        CHECK(c.headline_regressions().empty());
        CHECK_FALSE(c.regressed());
        // B's load can only have made B worse: x.rate, twice as fast in B, is judged.
        CHECK(find(c, "x.rate").verdict == Verdict::faster);
        const std::string text = render_comparison_text(c, {});
        CHECK(text.find("1 metrics not judged") != std::string::npos);
        CHECK(comparison_to_json(c)["metrics"][0]["verdict"] == "disturbed");
    }
    SECTION("a change beyond what the load can explain is judged") {
        // 0.3 of 2 CPUs taken: B's probe had 1.7, so at most 1.18x worse for the load; it is 2x.
        b.results[0].host_load = HostLoad{2.0, 2, 0.3, 0.0};
        const auto c = compare_reports(a, b);
        CHECK(find(c, "kernel.peak.fp32").verdict == Verdict::slower);
        CHECK(c.regressed());
    }
    SECTION("below a tenth of the CPUs the verdict stands") {
        b.results[0].host_load = HostLoad{2.0, 2, 0.19, 0.0};
        const auto c = compare_reports(a, b);
        CHECK(find(c, "kernel.peak.fp32").verdict == Verdict::slower);
        CHECK(find(c, "kernel.peak.fp32").disturbance.empty());
        CHECK(c.regressed());
    }
    SECTION("a GPU's device-timed figures are not reached by the host's load; host-timed ones are") {
        a.device->type = b.device->type = "gpu";
        a.results[0].host_load = HostLoad{2.0, 2, 1.5, 0.0};  // A's load explains B up to 4x better
        b.results[0].measurements[1].timer = TimerKind::host_steady_clock;
        a.results[0].measurements[1].timer = TimerKind::host_steady_clock;
        const auto c = compare_reports(a, b);
        CHECK(find(c, "kernel.peak.fp32").verdict == Verdict::slower);
        CHECK(find(c, "x.rate").verdict == Verdict::disturbed);
    }
    SECTION("a report without host_load compares as measured") {
        a.results[0].host_load.reset();
        const auto c = compare_reports(a, b);
        CHECK(find(c, "kernel.peak.fp32").verdict == Verdict::slower);
    }
}
