// Ceiling consistency on synthetic reports: a compute ceiling below a rate of the same precision
// achieved on the same hardware is listed (and becomes a trust warning); a ceiling above, another
// precision, host rates on a GPU, derived numbers and missing metrics are not.
#include <catch2/catch.hpp>

#include "core/drift_facts.hpp"
#include "core/roofline_facts.hpp"
#include "rule_test_support.hpp"
#include "rules/ceiling_checks.hpp"
#include "rules/trust.hpp"

using namespace clprobe;
using namespace clprobe::test;

namespace {

Measurement peak(const std::string& precision, double median) {
    return rate("kernel.peak." + precision, "GFLOP/s", {}, steady(median));
}

Measurement host_gemm(const std::string& precision, double median) {
    return make_measurement("kernel.host_gemm.gflops", "GFLOP/s", {{"precision", precision}}, steady(median),
                            TimerKind::host_steady_clock);
}

RunReport report_on(const std::string& device_type, std::vector<Measurement> measurements) {
    RunReport r = report_with("kernel.ceilings", "kernel", std::move(measurements));
    r.device = synthetic_device(device_type);
    r.device->profiling = true;
    return r;
}

}  // namespace

TEST_CASE("ceiling checks: a peak below the host's GEMM on a CPU device is a violation", "[ceiling_checks]") {
    const auto r = report_on("cpu", {peak("fp32", 243), host_gemm("fp32", 380)});
    const auto found = compute_ceiling_violations(r);
    REQUIRE(found.size() == 1);
    const CeilingViolation& v = found[0];
    CHECK(v.kind == CeilingKind::compute);
    CHECK(v.ceiling_metric == "kernel.peak.fp32");
    CHECK(v.ceiling_value == Approx(243));
    CHECK(v.unit == "GFLOP/s");
    CHECK(v.achieved_metric == "kernel.host_gemm.gflops");
    CHECK(v.achieved_labels == Labels{{"precision", "fp32"}});
    CHECK(v.achieved_value == Approx(380));
    CHECK(v.achieved_on == AchievedOn::host_cores);
    CHECK(v.other_rates_above == 0);
    CHECK(describe(v) ==
          "kernel.peak.fp32 (243 GFLOP/s) is below kernel.host_gemm.gflops{precision=fp32} (380 GFLOP/s) measured on "
          "the same cores: the ceiling is not at the hardware's limit, so fractions of it read too high.");
    CHECK(ceiling_violations(r).size() == 1);
}

TEST_CASE("ceiling checks: a ceiling above every rate, or tied within the noise, is none", "[ceiling_checks]") {
    CHECK(compute_ceiling_violations(report_on("cpu", {peak("fp32", 400), host_gemm("fp32", 380)})).empty());
    // 0.5% above with identical samples: inside the 1% noise floor.
    CHECK(compute_ceiling_violations(report_on("cpu", {peak("fp32", 400), host_gemm("fp32", 402)})).empty());
    // Noisy samples widen the margin: 8% above with cv 5% each is still a tie.
    auto noisy = report_on("cpu", {rate("kernel.peak.fp32", "GFLOP/s", {}, spread(400, 0.05)),
                                   make_measurement("kernel.host_gemm.gflops", "GFLOP/s", {{"precision", "fp32"}},
                                                    spread(432, 0.05), TimerKind::host_steady_clock)});
    CHECK(compute_ceiling_violations(noisy).empty());
}

TEST_CASE("ceiling checks: rates meet the ceiling of their own precision only", "[ceiling_checks]") {
    const auto attention = rate("attention.prefill.gflops", "GFLOP/s", {{"seq", "512"}}, steady(120));
    const auto glm64 = rate("glm.gradient.gflops", "GFLOP/s", {{"precision", "fp64"}, {"vector", "8"}}, steady(90));
    const auto r = report_on(
        "cpu", {peak("fp32", 100), peak("fp64", 60), host_gemm("fp32", 95), host_gemm("fp64", 80), attention, glm64});
    const auto found = compute_ceiling_violations(r);
    REQUIRE(found.size() == 2);
    // fp32: the unlabeled attention rate counts as fp32; the host sgemm (95) is below the peak.
    CHECK(found[0].ceiling_metric == "kernel.peak.fp32");
    CHECK(found[0].achieved_metric == "attention.prefill.gflops");
    CHECK(found[0].achieved_on == AchievedOn::device);
    CHECK(found[0].other_rates_above == 0);
    CHECK_THAT(describe(found[0]), Catch::Matchers::Contains("measured on the same device"));
    // fp64: the highest of the two rates above it is named, the other counted.
    CHECK(found[1].ceiling_metric == "kernel.peak.fp64");
    CHECK(found[1].achieved_metric == "glm.gradient.gflops");
    CHECK(found[1].achieved_value == Approx(90));
    CHECK(found[1].other_rates_above == 1);
    CHECK_THAT(describe(found[1]), Catch::Matchers::Contains("(1 more measured rate is above it)"));
}

TEST_CASE("ceiling checks: the int32 ceiling meets integer rates only", "[ceiling_checks]") {
    const auto int_peak = rate("kernel.peak.int32", "GIOP/s", {}, steady(150));
    // An integer rate above it (a made-up kernel of counted integer operations), in the ceiling's unit.
    const auto hashing = rate("example.hash.giops", "GIOP/s", {{"precision", "int32"}}, steady(200));
    // Its own variants, and an fp32 rate of a larger number in another unit, are no violation.
    const auto variant = rate("kernel.compute", "GIOP/s", {{"precision", "int32"}, {"vector", "16"}}, steady(180));
    const auto flops = rate("attention.prefill.gflops", "GFLOP/s", {}, steady(900));
    CHECK(compute_ceiling_violations(report_on("gpu", {int_peak, variant, flops})).empty());
    const auto found = compute_ceiling_violations(report_on("gpu", {int_peak, variant, flops, hashing}));
    REQUIRE(found.size() == 1);
    CHECK(found[0].ceiling_metric == "kernel.peak.int32");
    CHECK(found[0].unit == "GIOP/s");
    CHECK(found[0].achieved_metric == "example.hash.giops");
}

TEST_CASE("ceiling checks: host rates do not bound a GPU's ceilings; its own kernels do", "[ceiling_checks]") {
    const auto host_prefill = make_measurement("attention.host_blas.prefill.gflops", "GFLOP/s", {}, steady(500),
                                               TimerKind::host_steady_clock);
    CHECK(compute_ceiling_violations(report_on("gpu", {peak("fp32", 200), host_gemm("fp32", 380), host_prefill}))
              .empty());
    // On a CPU device the same host rates are on the device's cores.
    CHECK(compute_ceiling_violations(report_on("cpu", {peak("fp32", 200), host_prefill})).size() == 1);
    const auto gpu =
        report_on("gpu", {peak("fp32", 200), rate("attention.prefill.gflops", "GFLOP/s", {}, steady(300))});
    REQUIRE(compute_ceiling_violations(gpu).size() == 1);
}

TEST_CASE("ceiling checks: missing metrics, other units and derived numbers give none", "[ceiling_checks]") {
    // No ceiling: nothing to hold the rates against.
    CHECK(compute_ceiling_violations(report_on("cpu", {host_gemm("fp32", 380)})).empty());
    // No achieved rate.
    CHECK(compute_ceiling_violations(report_on("cpu", {peak("fp32", 243), peak("fp64", 120)})).empty());
    // The variants a peak is the best of, another unit, and an untimed (derived) figure.
    const auto variant = rate("kernel.compute", "GFLOP/s", {{"precision", "fp32"}, {"vector", "16"}}, steady(300));
    const auto bandwidth = rate("glm.gradient.bandwidth", "GB/s", {{"precision", "fp32"}}, steady(900));
    const auto derived = make_measurement("attention.prefill.gflops", "GFLOP/s", {}, steady(900), TimerKind::none);
    CHECK(compute_ceiling_violations(report_on("cpu", {peak("fp32", 243), variant, bandwidth, derived})).empty());
    // No device in the report: a host rate cannot be placed on the device's cores.
    RunReport no_device = report_with("kernel.ceilings", "kernel", {peak("fp32", 243), host_gemm("fp32", 380)});
    CHECK(compute_ceiling_violations(no_device).empty());
}

TEST_CASE("trust: a ceiling below a rate on the same hardware is a warning note", "[ceiling_checks][trust]") {
    auto has_note = [](const std::vector<TrustNote>& notes) {
        for (const auto& n : notes)
            if (n.warning && n.text.starts_with("kernel.peak.fp32 (243 GFLOP/s) is below")) return true;
        return false;
    };
    CHECK(has_note(assess_trust(report_on("cpu", {peak("fp32", 243), host_gemm("fp32", 380)}))));
    CHECK_FALSE(has_note(assess_trust(report_on("cpu", {peak("fp32", 243), host_gemm("fp32", 200)}))));
}

// ---------------------------------------------------------------- bandwidth roofs

namespace {

RooflinePoint point(const std::string& label, double gb_per_s, const std::string& level, double roof) {
    RooflinePoint p;
    p.label = label;
    p.intensity = 0.25;
    p.gflops = gb_per_s * p.intensity;
    p.working_set_bytes = 16u << 20;
    p.level = level;
    p.roof_gb_per_s = roof;
    return p;
}

RunReport report_with_points(std::vector<RooflinePoint> points) {
    RunReport r = report_on("cpu", {});
    for (const auto& p : points)
        add_roofline_point(r.results.front(), p);
    return r;
}

}  // namespace

TEST_CASE("ceiling checks: a workload point above its level's roof names that roof", "[ceiling_checks]") {
    // Decode with a 16 MiB cache at 120% of the memory roof it was (wrongly) placed against.
    const auto r = report_with_points({point("decode L=4096", 24, "memory", 20),
                                       point("decode L=512", 22, "memory", 20), point("glm", 50, "L3", 97)});
    const auto found = bandwidth_roof_violations(r);
    REQUIRE(found.size() == 1);
    CHECK(found[0].kind == CeilingKind::bandwidth);
    CHECK(found[0].ceiling_metric == "kernel.peak.bandwidth");
    CHECK(found[0].achieved_value == Approx(24));
    CHECK(found[0].achieved_metric.find("decode L=4096") != std::string::npos);
    CHECK(found[0].other_rates_above == 1);
    CHECK(describe(found[0]).find("that roof is wrong") != std::string::npos);
    // And it reaches the trust notes as a warning.
    bool warned = false;
    for (const auto& n : assess_trust(r))
        warned |= n.warning && n.text.find("kernel.peak.bandwidth (20 GB/s)") != std::string::npos;
    CHECK(warned);
}

TEST_CASE("ceiling checks: points within 5% of their roof, or without one, are no violation", "[ceiling_checks]") {
    RooflinePoint unplaced = point("old report", 500, "", 1);
    unplaced.roof_gb_per_s.reset();
    const auto r =
        report_with_points({point("at the roof", 20.9, "memory", 20), point("cache", 90, "L3", 97), unplaced});
    CHECK(bandwidth_roof_violations(r).empty());
    const auto l3 = bandwidth_roof_violations(report_with_points({point("x", 110, "L3", 97)}));
    REQUIRE(l3.size() == 1);
    CHECK(l3[0].ceiling_metric == "kernel.roof.bandwidth{level=L3}");
}

namespace {

// The roof measured by kernel.bandwidth, a decode point above it, and the drift checks around
// both probes with the given memory rates (before kernel.bandwidth, before the next probe, before
// attention.decode, before the probe after it).
RunReport roof_and_decode_with_drift(std::vector<double> memory_checks) {
    RunReport r = report_on("cpu", {});
    r.results = {probe_result("kernel.bandwidth", "kernel", {rate("kernel.peak.bandwidth", "GB/s", {}, steady(33.9))}),
                 probe_result("attention.decode", "kernel")};
    add_roofline_point(r.results[1], point("decode L=32768", 36.7, "memory", 33.9));
    const char* before[] = {"kernel.bandwidth", "kernel.memory_levels", "attention.decode", "attention.decode.fp16"};
    MachineDrift drift;
    for (std::size_t i = 0; i < memory_checks.size() && i < 4; ++i)
        drift.checks.push_back({static_cast<double>(i), before[i], 220.0, memory_checks[i]});
    r.drift = drift;
    return r;
}

}  // namespace

TEST_CASE("drift_around: the mean of the check before a probe and the next one", "[ceiling_checks][drift]") {
    MachineDrift d;
    d.checks = {{0, "a", 100, 20}, {1, "b", 200, 30}, {2, "c", 300, 40}};
    REQUIRE(drift_around(d, "a"));
    CHECK(drift_around(d, "a")->compute_gflops == Approx(150));
    CHECK(drift_around(d, "a")->memory_gb_per_s == Approx(25));
    CHECK(drift_around(d, "c")->memory_gb_per_s == Approx(40));  // the last probe: its own check only
    CHECK_FALSE(drift_around(d, "system.host"));                 // no check before it
}

TEST_CASE("ceiling checks: drift checks say whether the machine sped up between roof and point",
          "[ceiling_checks][drift]") {
    // The run measured on this VM: memory reference 25.8/30.4 around the roof, 31.6/29.0 around the
    // decode point (+7.8%), and the point 8.3% above the roof: the drift accounts for it.
    const auto sped_up = bandwidth_roof_violations(roof_and_decode_with_drift({25.8, 30.4, 31.6, 29.0}));
    REQUIRE(sped_up.size() == 1);
    CHECK(sped_up[0].ceiling_probe == "kernel.bandwidth");
    CHECK(sped_up[0].achieved_probe == "attention.decode");
    REQUIRE(sped_up[0].machine_speedup);
    CHECK(*sped_up[0].machine_speedup == Approx(30.3 / 28.1));
    CHECK(sped_up[0].explained_by_drift());
    CHECK_THAT(describe(sped_up[0]),
               Catch::Matchers::Contains("ran 8% faster around attention.decode than around kernel.bandwidth") &&
                   Catch::Matchers::Contains("measured in a slower phase"));

    // A steady machine: the roof itself falls short, and the note says the reference did not move.
    const auto steady_machine = bandwidth_roof_violations(roof_and_decode_with_drift({30, 30, 30, 30}));
    REQUIRE(steady_machine.size() == 1);
    CHECK_FALSE(steady_machine[0].explained_by_drift());
    CHECK_THAT(describe(steady_machine[0]), Catch::Matchers::Contains("that roof is wrong") &&
                                                Catch::Matchers::Contains("moved +0% between kernel.bandwidth and "
                                                                          "attention.decode, less than the gap"));

    // A speed-up well short of the gap does not explain it either.
    const auto partly = bandwidth_roof_violations(roof_and_decode_with_drift({30, 30, 31, 31}));
    REQUIRE(partly.size() == 1);
    CHECK_FALSE(partly[0].explained_by_drift());

    // Without checks around both probes the three possibilities stay open.
    const auto unknown = bandwidth_roof_violations(roof_and_decode_with_drift({30, 30}));
    REQUIRE(unknown.size() == 1);
    CHECK_FALSE(unknown[0].machine_speedup);
    CHECK_THAT(describe(unknown[0]), Catch::Matchers::Contains("or the machine got faster between the two probes"));
}
