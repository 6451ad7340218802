// Kernel rules, analysis and ranking on synthetic measurements. Samples are chosen so the
// spread is known exactly: steady() has cv 0, spread(m, cv) has median m and coefficient of
// variation cv.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/report.hpp"
#include "core/text.hpp"
#include "rule_test_support.hpp"
#include "rules/analysis.hpp"
#include "rules/kernel_rules.hpp"
#include "rules/rule.hpp"

using namespace clprobe;
using namespace clprobe::test;

namespace {

Measurement bandwidth(const std::string& pattern, const std::string& vector, std::vector<double> samples) {
    return rate("kernel.bandwidth", "GB/s", {{"access", "read"}, {"pattern", pattern}, {"vector", vector}},
                std::move(samples));
}

Measurement compute(const std::string& precision, const std::string& vector, std::vector<double> samples) {
    return rate("kernel.compute", "GFLOP/s", {{"precision", precision}, {"vector", vector}}, std::move(samples));
}

Measurement peak(const std::string& precision, std::vector<double> samples) {
    return rate("kernel.peak." + precision, "GFLOP/s", {}, std::move(samples));
}

Measurement launch(const std::string& kind, std::vector<double> samples) {
    return make_measurement("kernel.launch.latency", "us", {{"kind", kind}}, std::move(samples),
                            TimerKind::host_steady_clock, false);
}

Measurement build(const std::string& path, std::vector<double> samples) {
    return make_measurement("kernel.build.time", "ms", {{"path", path}}, std::move(samples),
                            TimerKind::host_steady_clock, false);
}

// A report on a profiling-capable device (so the host-timer rule stays quiet) whose only probe
// result holds `measurements`.
RunReport report_of(std::vector<Measurement> measurements, bool profiling = true) {
    RunReport r = report_with("kernel.ceilings", "kernel", std::move(measurements));
    r.device = synthetic_device("gpu");
    r.device->profiling = profiling;
    return r;
}

// A rule whose inputs are missing gives the "needs ..." sentence derived from its declaration,
// and that sentence names what the test removed.
void check_not_evaluated(const RunReport& r, const std::string& rule_id, const std::string& names) {
    const std::string reason = skipped_rule(r, rule_id).reason;
    CHECK(reason == rule_named(kernel_rules(), rule_id).needs());
    CHECK_THAT(reason, Catch::Contains(names));
}

Approx within_1e9(double v) {
    return Approx(v).epsilon(0).margin(1e-9);
}

// Confidence of a gap between two measurements with cv 0: the noise floor is 1%.
double floor_confidence(double ratio) {
    return 1.0 - 2 * 0.01 / (ratio - 1.0);
}

void check_evidence(const Evidence& e, const Measurement& m) {
    CHECK(e.metric == m.metric);
    CHECK(e.labels == m.labels);
    CHECK(e.value == Approx(m.summary.median));
    CHECK(e.unit == m.unit);
    CHECK_FALSE(e.expectation.empty());
}

const std::set<std::string> kernel_rule_ids = {"kernel.timer.host_fallback",    "kernel.bandwidth.access_pattern",
                                               "kernel.bandwidth.vector_width", "kernel.compute.vector_width",
                                               "kernel.fp64.throughput",        "kernel.launch.sync_overhead",
                                               "kernel.build.cache_binaries"};

}  // namespace

// ---------------------------------------------------------------- comparison_confidence

TEST_CASE("comparison_confidence: zero when the gap is inside the noise", "[rules][confidence]") {
    CHECK(comparison_confidence(compute("fp32", "1", steady(100)), compute("fp32", "1", steady(100))) == 0);
    // cv 0.05 each: noise 0.1, a 10% gap is within 2 * noise.
    CHECK(comparison_confidence(compute("fp32", "1", spread(110, 0.05)), compute("fp32", "1", spread(100, 0.05))) == 0);
    // cv 0.5 each: even a 2x gap is noise.
    CHECK(comparison_confidence(compute("fp32", "1", spread(200, 0.5)), compute("fp32", "1", spread(100, 0.5))) == 0);
}

TEST_CASE("comparison_confidence: a 1% noise floor applies to identical samples", "[rules][confidence]") {
    const auto base = compute("fp32", "1", steady(100));
    CHECK(comparison_confidence(compute("fp32", "1", steady(101)), base) == 0);
    CHECK(comparison_confidence(compute("fp32", "1", steady(104)), base) == Approx(0.5));
    CHECK(comparison_confidence(compute("fp32", "1", steady(200)), base) == Approx(0.98));
}

TEST_CASE("comparison_confidence: increases with the gap", "[rules][confidence]") {
    const auto worse = compute("fp32", "1", spread(100, 0.05));
    double previous = 0;
    for (double better : {130.0, 150.0, 200.0, 400.0, 1000.0, 10000.0}) {
        INFO("better median " << better);
        const double c = comparison_confidence(compute("fp32", "8", spread(better, 0.05)), worse);
        CHECK(c > previous);
        CHECK(c < 1.0);
        previous = c;
    }
    // noise 0.1, gap 1.0: 1 - 0.2 / 1.0
    CHECK(comparison_confidence(compute("fp32", "8", spread(200, 0.05)), worse) == Approx(0.8));
}

TEST_CASE("comparison_confidence: decreases with the noise and ignores argument order", "[rules][confidence]") {
    auto conf = [](double cv) {
        return comparison_confidence(compute("fp32", "8", spread(200, cv)), compute("fp32", "1", spread(100, cv)));
    };
    CHECK(conf(0.05) == Approx(0.8));
    CHECK(conf(0.1) == Approx(0.6));
    CHECK(conf(0.25) == Approx(0).margin(1e-9));  // noise 0.5: the gap is exactly 2 x noise

    const auto a = compute("fp32", "8", spread(300, 0.02));
    const auto b = compute("fp32", "1", spread(100, 0.07));
    CHECK(comparison_confidence(a, b) == comparison_confidence(b, a));
}

TEST_CASE("comparison_confidence: zero medians", "[rules][confidence]") {
    const auto zero = compute("fp32", "1", steady(0));
    CHECK(comparison_confidence(compute("fp32", "8", steady(5)), zero) == 1.0);
    CHECK(comparison_confidence(zero, zero) == 0.0);
}

// ---------------------------------------------------------------- kernel.bandwidth.access_pattern

TEST_CASE("rule access_pattern: chunked 1.26x faster than interleaved is a finding", "[rules][kernel]") {
    const auto chunked_best = bandwidth("chunked", "4", steady(126));
    const auto interleaved_best = bandwidth("interleaved", "4", steady(100));
    const auto r = analyzed(report_of({bandwidth("chunked", "1", steady(90)), chunked_best,
                                       bandwidth("interleaved", "1", steady(60)), interleaved_best}),
                            kernel_rules(), "kernel.bandwidth.access_pattern");
    const Finding& f = ranked_finding(r, "kernel.bandwidth.access_pattern", "kernel");
    const double ratio = 126.0 / 100.0;
    CHECK(f.severity == Severity::medium);
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == within_1e9(1 - 1 / ratio));
    CHECK(f.confidence == Approx(floor_confidence(ratio)));
    CHECK_THAT(f.title, Catch::Matchers::Contains("chunked"));
    CHECK_THAT(f.title, Catch::Matchers::Contains("126 GB/s against 100 GB/s"));
    CHECK_THAT(f.suggestion, Catch::Matchers::Contains("contiguous chunk"));
    // The measured figures of both patterns, and no rule of thumb about device types.
    CHECK_THAT(f.suggestion, Catch::Matchers::Contains(
                                 "chunked 126 GB/s (read, float4) against interleaved 100 GB/s (read, float4)"));
    CHECK_THAT(f.suggestion, !Catch::Matchers::Contains("CPU"));
    CHECK_THAT(f.suggestion, !Catch::Matchers::Contains("GPU"));
    REQUIRE(f.evidence.size() == 2);
    check_evidence(f.evidence[0], chunked_best);  // the best of each pattern is compared
    check_evidence(f.evidence[1], interleaved_best);
}

TEST_CASE("rule access_pattern: interleaved winning advises consecutive addresses, whatever the device type",
          "[rules][kernel]") {
    // As measured with Intel's CPU runtime (work-items are SIMD lanes): scalar interleaved reads
    // beat chunked ones on a CPU device. The advice follows the measurement, not the device type.
    const auto interleaved = bandwidth("interleaved", "4", steady(130));
    const auto chunked = bandwidth("chunked", "4", steady(100));
    RunReport report = report_of({chunked, interleaved});
    report.device->type = "cpu";
    const auto r = analyzed(report, kernel_rules(), "kernel.bandwidth.access_pattern");
    const Finding& f = ranked_finding(r, "kernel.bandwidth.access_pattern", "kernel");
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == within_1e9(1 - 100.0 / 130.0));
    CHECK_THAT(f.title, Catch::Matchers::StartsWith("The interleaved access pattern moves 1.3x"));
    CHECK_THAT(f.suggestion, Catch::Matchers::StartsWith("Make consecutive work-items touch consecutive addresses"));
    CHECK_THAT(f.suggestion, Catch::Matchers::Contains("interleaved 130 GB/s (read, float4) against chunked 100 GB/s"));
    CHECK_THAT(f.suggestion, !Catch::Matchers::Contains("CPU"));
    REQUIRE(f.evidence.size() == 2);
    check_evidence(f.evidence[0], interleaved);
    check_evidence(f.evidence[1], chunked);
}

TEST_CASE("rule access_pattern: a 1.24x gap is below the threshold", "[rules][kernel]") {
    check_silent(
        analyzed(report_of({bandwidth("chunked", "4", steady(124)), bandwidth("interleaved", "4", steady(100))}),
                 kernel_rules(), "kernel.bandwidth.access_pattern"));
}

TEST_CASE("rule access_pattern: a 2x gap inside the noise is not claimed", "[rules][kernel]") {
    const auto chunked = bandwidth("chunked", "4", spread(200, 0.5));
    const auto interleaved = bandwidth("interleaved", "4", spread(100, 0.5));
    REQUIRE(comparison_confidence(chunked, interleaved) < min_confidence);
    check_silent(analyzed(report_of({chunked, interleaved}), kernel_rules(), "kernel.bandwidth.access_pattern"));
}

TEST_CASE("rule access_pattern: one pattern missing is not evaluated", "[rules][kernel]") {
    check_not_evaluated(analyzed(report_of({bandwidth("chunked", "4", steady(126))}), kernel_rules(),
                                 "kernel.bandwidth.access_pattern"),
                        "kernel.bandwidth.access_pattern", "pattern=interleaved");
}

// ---------------------------------------------------------------- kernel.bandwidth.vector_width

TEST_CASE("rule bandwidth vector_width: 1.26x over scalar in the same pattern is a finding", "[rules][kernel]") {
    const auto best = bandwidth("chunked", "8", steady(126));
    const auto scalar = bandwidth("chunked", "1", steady(100));
    const auto r = analyzed(
        report_of({bandwidth("interleaved", "1", steady(45)), scalar, bandwidth("interleaved", "8", steady(50)), best}),
        kernel_rules(), "kernel.bandwidth.vector_width");
    const Finding& f = ranked_finding(r, "kernel.bandwidth.vector_width", "kernel");
    const double ratio = 126.0 / 100.0;
    CHECK(f.severity == Severity::medium);
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == within_1e9(1 - 1 / ratio));
    CHECK(f.confidence == Approx(floor_confidence(ratio)));
    CHECK_THAT(f.title, Catch::Matchers::Contains("8-wide"));
    CHECK_THAT(f.suggestion, Catch::Matchers::Contains("float8"));
    REQUIRE(f.evidence.size() == 2);
    check_evidence(f.evidence[0], best);
    check_evidence(f.evidence[1], scalar);  // same pattern as the best, not the interleaved scalar
}

TEST_CASE("rule bandwidth vector_width: a 1.24x gap is below the threshold", "[rules][kernel]") {
    check_silent(analyzed(report_of({bandwidth("chunked", "8", steady(124)), bandwidth("chunked", "1", steady(100))}),
                          kernel_rules(), "kernel.bandwidth.vector_width"));
}

TEST_CASE("rule bandwidth vector_width: a 2x gap inside the noise is not claimed", "[rules][kernel]") {
    const auto best = bandwidth("chunked", "8", spread(200, 0.5));
    const auto scalar = bandwidth("chunked", "1", spread(100, 0.5));
    REQUIRE(comparison_confidence(best, scalar) < min_confidence);
    check_silent(analyzed(report_of({best, scalar}), kernel_rules(), "kernel.bandwidth.vector_width"));
}

TEST_CASE("rule bandwidth vector_width: scalar loads 2x the best vector width is the reverse finding",
          "[rules][kernel]") {
    // Interleaved scalar reads at 26 GB/s against 8 GB/s, as Intel's CPU runtime measured: the
    // advice is to keep scalar loads, compared with the best explicit width of the same pattern.
    const auto scalar = bandwidth("interleaved", "1", steady(26));
    const auto best_vector = bandwidth("interleaved", "4", steady(13));
    const auto r = analyzed(report_of({scalar, bandwidth("interleaved", "16", steady(8)), best_vector,
                                       bandwidth("chunked", "16", steady(20)), bandwidth("chunked", "1", steady(8))}),
                            kernel_rules(), "kernel.bandwidth.vector_width");
    const Finding& f = ranked_finding(r, "kernel.bandwidth.vector_width", "kernel");
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == within_1e9(1 - 13.0 / 26.0));
    CHECK_THAT(f.title, Catch::Matchers::StartsWith("Scalar loads move 2.0x the data of float4 vectors"));
    CHECK_THAT(f.suggestion, Catch::Matchers::Contains("keep loads and stores scalar"));
    CHECK_THAT(f.suggestion, Catch::Matchers::Contains("float 26 GB/s, float4 13 GB/s"));
    REQUIRE(f.evidence.size() == 2);
    check_evidence(f.evidence[0], scalar);
    check_evidence(f.evidence[1], best_vector);
    // Scalar best by less than 1.25x over the best vector width: silent.
    check_silent(analyzed(report_of({bandwidth("chunked", "1", steady(124)), bandwidth("chunked", "8", steady(100))}),
                          kernel_rules(), "kernel.bandwidth.vector_width"));
}

TEST_CASE("rule bandwidth vector_width: a two-stream best compares within the one-stream variants", "[rules][kernel]") {
    Measurement pair =
        rate("kernel.bandwidth", "GB/s",
             {{"access", "read"}, {"pattern", "chunked"}, {"streams", "2"}, {"vector", "16"}}, steady(300));
    const auto best = bandwidth("chunked", "16", steady(200));
    const auto scalar = bandwidth("chunked", "1", steady(100));
    const auto r = analyzed(report_of({scalar, best, pair}), kernel_rules(), "kernel.bandwidth.vector_width");
    const Finding& f = ranked_finding(r, "kernel.bandwidth.vector_width", "kernel");
    REQUIRE(f.evidence.size() == 2);
    check_evidence(f.evidence[0], best);
    check_evidence(f.evidence[1], scalar);
}

TEST_CASE("rule bandwidth vector_width: no bandwidth measurement is not evaluated", "[rules][kernel]") {
    check_not_evaluated(
        analyzed(report_of({compute("fp32", "1", steady(100))}), kernel_rules(), "kernel.bandwidth.vector_width"),
        "kernel.bandwidth.vector_width", "kernel.bandwidth");
}

// ---------------------------------------------------------------- kernel.compute.vector_width

TEST_CASE("rule compute vector_width: fp32 float8 1.51x over scalar is a finding", "[rules][kernel]") {
    const auto scalar = compute("fp32", "1", steady(100));
    const auto best = compute("fp32", "8", steady(151));
    // fp64 numbers, however high, are not part of the fp32 comparison.
    const auto r =
        analyzed(report_of({scalar, compute("fp32", "4", steady(140)), best, compute("fp64", "16", steady(1000))}),
                 kernel_rules(), "kernel.compute.vector_width");
    const Finding& f = ranked_finding(r, "kernel.compute.vector_width", "kernel");
    const double ratio = 151.0 / 100.0;
    CHECK(f.severity == Severity::high);
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == within_1e9(1 - 1 / ratio));
    CHECK(f.confidence == Approx(floor_confidence(ratio)));
    CHECK_THAT(f.title, Catch::Matchers::Contains("float8"));
    REQUIRE(f.evidence.size() == 2);
    check_evidence(f.evidence[0], best);
    check_evidence(f.evidence[1], scalar);
}

TEST_CASE("rule compute vector_width: a 1.49x gap is below the threshold", "[rules][kernel]") {
    check_silent(analyzed(report_of({compute("fp32", "1", steady(100)), compute("fp32", "8", steady(149))}),
                          kernel_rules(), "kernel.compute.vector_width"));
}

TEST_CASE("rule compute vector_width: a 1.51x gap inside the noise is not claimed", "[rules][kernel]") {
    const auto scalar = compute("fp32", "1", spread(100, 0.15));
    const auto best = compute("fp32", "8", spread(151, 0.15));
    REQUIRE(comparison_confidence(best, scalar) < min_confidence);
    check_silent(analyzed(report_of({scalar, best}), kernel_rules(), "kernel.compute.vector_width"));
}

TEST_CASE("rule compute vector_width: scalar fp32 2x the best vector shape is the reverse finding", "[rules][kernel]") {
    // A driver that vectorises across work-items: scalar code is the fastest, explicit vectors lose.
    const auto scalar = compute("fp32", "1", steady(200));
    const auto best_vector = compute("fp32", "8", steady(100));
    const auto r = analyzed(report_of({scalar, compute("fp32", "16", steady(80)), best_vector}), kernel_rules(),
                            "kernel.compute.vector_width");
    const Finding& f = ranked_finding(r, "kernel.compute.vector_width", "kernel");
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == within_1e9(1 - 100.0 / 200.0));
    CHECK_THAT(f.title, Catch::Matchers::StartsWith("Explicit float8 arithmetic reaches 50% of the fp32 peak"));
    CHECK_THAT(f.suggestion, Catch::Matchers::Contains("scalar float arithmetic"));
    CHECK_THAT(f.suggestion, Catch::Matchers::Contains("scalar floats reached 200 GFLOP/s and float8 100 GFLOP/s"));
    REQUIRE(f.evidence.size() == 2);
    check_evidence(f.evidence[0], scalar);
    check_evidence(f.evidence[1], best_vector);
    // Below 1.5x, or scalar shapes only: silent.
    check_silent(analyzed(report_of({compute("fp32", "1", steady(149)), compute("fp32", "8", steady(100))}),
                          kernel_rules(), "kernel.compute.vector_width"));
    check_silent(
        analyzed(report_of({compute("fp32", "1", steady(149))}), kernel_rules(), "kernel.compute.vector_width"));
}

TEST_CASE("rule compute vector_width: no scalar fp32 measurement is not evaluated", "[rules][kernel]") {
    check_not_evaluated(analyzed(report_of({compute("fp32", "8", steady(151)), compute("fp64", "1", steady(50))}),
                                 kernel_rules(), "kernel.compute.vector_width"),
                        "kernel.compute.vector_width", "vector=1");
}

TEST_CASE("rule compute vector_width: the best scalar chain count is compared, not the first", "[rules][kernel]") {
    auto shape = [](const std::string& vector, const std::string& chains, double median) {
        return rate("kernel.compute", "GFLOP/s", {{"precision", "fp32"}, {"vector", vector}, {"chains", chains}},
                    steady(median));
    };
    // 8 scalar chains alone would make a 1.51x gap; 16 scalar chains leave 1.08x: no finding.
    check_silent(analyzed(report_of({shape("1", "8", 100), shape("1", "16", 140), shape("8", "8", 151)}),
                          kernel_rules(), "kernel.compute.vector_width"));
    // A gap over the best scalar shape is the finding, with that shape as its evidence.
    const auto best_scalar = shape("1", "16", 110);
    const auto best = shape("16", "16", 170);
    const auto r = analyzed(report_of({shape("1", "8", 60), best_scalar, shape("16", "4", 120), best}), kernel_rules(),
                            "kernel.compute.vector_width");
    const Finding& f = ranked_finding(r, "kernel.compute.vector_width", "kernel");
    REQUIRE(f.evidence.size() == 2);
    check_evidence(f.evidence[0], best);
    check_evidence(f.evidence[1], best_scalar);
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == within_1e9(1 - 110.0 / 170.0));
    CHECK_THAT(f.title, Catch::Matchers::Contains("float16"));
    CHECK_THAT(f.suggestion, Catch::Matchers::Contains("float16 reached 170 GFLOP/s and scalar float 110 GFLOP/s"));
    CHECK_THAT(f.suggestion, !Catch::Matchers::Contains("CPU"));
}

// ---------------------------------------------------------------- kernel.fp64.throughput

TEST_CASE("rule fp64 throughput: fp64 at 0.24 of fp32 is a finding", "[rules][kernel]") {
    const auto fp32 = peak("fp32", steady(1000));
    const auto fp64 = peak("fp64", steady(240));
    const auto r = analyzed(report_of({fp32, fp64}), kernel_rules(), "kernel.fp64.throughput");
    const Finding& f = ranked_finding(r, "kernel.fp64.throughput", "kernel");
    CHECK(f.severity == Severity::medium);
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == within_1e9(1 - 0.24));  // the time saved moving to fp32
    CHECK(f.confidence == Approx(floor_confidence(1000.0 / 240.0)));
    REQUIRE(f.evidence.size() == 2);
    check_evidence(f.evidence[0], fp32);
    check_evidence(f.evidence[1], fp64);
}

TEST_CASE("rule fp64 throughput: fp64 at 0.26 of fp32 is fine", "[rules][kernel]") {
    check_silent(analyzed(report_of({peak("fp32", steady(1000)), peak("fp64", steady(260))}), kernel_rules(),
                          "kernel.fp64.throughput"));
}

TEST_CASE("rule fp64 throughput: a gap inside the noise is not claimed", "[rules][kernel]") {
    const auto fp32 = peak("fp32", spread(1000, 0.8));
    const auto fp64 = peak("fp64", spread(240, 0.8));
    REQUIRE(comparison_confidence(fp32, fp64) < min_confidence);
    check_silent(analyzed(report_of({fp32, fp64}), kernel_rules(), "kernel.fp64.throughput"));
}

TEST_CASE("rule fp64 throughput: no fp64 peak is not evaluated", "[rules][kernel]") {
    check_not_evaluated(analyzed(report_of({peak("fp32", steady(1000))}), kernel_rules(), "kernel.fp64.throughput"),
                        "kernel.fp64.throughput", "kernel.peak.fp64");
}

// ---------------------------------------------------------------- kernel.launch.sync_overhead

TEST_CASE("rule launch sync: a round trip 3.03x a pipelined launch is a finding", "[rules][kernel]") {
    const auto round_trip = launch("round_trip", steady(30.3));
    const auto back_to_back = launch("back_to_back", steady(10));
    const auto r = analyzed(report_of({back_to_back, round_trip}), kernel_rules(), "kernel.launch.sync_overhead");
    const Finding& f = ranked_finding(r, "kernel.launch.sync_overhead", "kernel");
    const double ratio = 30.3 / 10.0;
    CHECK(f.severity == Severity::low);
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == within_1e9(1 - 1 / ratio));
    CHECK(f.confidence == Approx(floor_confidence(ratio)));
    REQUIRE(f.evidence.size() == 2);
    check_evidence(f.evidence[0], round_trip);
    check_evidence(f.evidence[1], back_to_back);
}

TEST_CASE("rule launch sync: 2.97x is below the threshold", "[rules][kernel]") {
    check_silent(analyzed(report_of({launch("round_trip", steady(29.7)), launch("back_to_back", steady(10))}),
                          kernel_rules(), "kernel.launch.sync_overhead"));
}

TEST_CASE("rule launch sync: a gap inside the noise is not claimed", "[rules][kernel]") {
    const auto round_trip = launch("round_trip", spread(30.3, 0.6));
    const auto back_to_back = launch("back_to_back", spread(10, 0.6));
    REQUIRE(comparison_confidence(back_to_back, round_trip) < min_confidence);
    check_silent(analyzed(report_of({round_trip, back_to_back}), kernel_rules(), "kernel.launch.sync_overhead"));
}

TEST_CASE("rule launch sync: no back-to-back latency is not evaluated", "[rules][kernel]") {
    check_not_evaluated(
        analyzed(report_of({launch("round_trip", steady(30))}), kernel_rules(), "kernel.launch.sync_overhead"),
        "kernel.launch.sync_overhead", "kind=back_to_back");
}

// ---------------------------------------------------------------- kernel.build.cache_binaries

TEST_CASE("rule build cache: a 510 ms build 5.1x a binary load is a finding", "[rules][kernel]") {
    const auto cold = build("cold", steady(510));
    const auto binary = build("binary_cache", steady(100));
    const auto r = analyzed(report_of({cold, binary}), kernel_rules(), "kernel.build.cache_binaries");
    const Finding& f = ranked_finding(r, "kernel.build.cache_binaries", "kernel");
    CHECK(f.severity == Severity::low);
    CHECK_FALSE(f.estimated_gain.has_value());  // start-up time only, no steady-state gain
    CHECK(f.confidence == Approx(floor_confidence(5.1)));
    CHECK_THAT(f.title, Catch::Matchers::Contains("510 ms") && Catch::Matchers::Contains("100 ms"));
    REQUIRE(f.evidence.size() == 2);
    check_evidence(f.evidence[0], cold);
    check_evidence(f.evidence[1], binary);
}

TEST_CASE("rule build cache: a driver that caches its builds gets the advice for an empty cache", "[rules][kernel]") {
    const auto cold = build("cold", steady(1700));
    const auto binary = build("binary_cache", steady(80));
    const auto driver = build("driver_cache", steady(90));
    const auto r = analyzed(report_of({cold, driver, binary}), kernel_rules(), "kernel.build.cache_binaries");
    const Finding& f = ranked_finding(r, "kernel.build.cache_binaries", "kernel");
    CHECK_THAT(f.suggestion, Catch::Matchers::Contains("caches builds itself") && Catch::Matchers::Contains("90 ms") &&
                                 Catch::Matchers::Contains("starts empty"));
    REQUIRE(f.evidence.size() == 3);
    check_evidence(f.evidence[2], driver);
    // A driver whose second source build is as slow as the first (no cache of its own): the
    // binary-cache advice as such.
    const auto r_plain = analyzed(report_of({cold, build("driver_cache", steady(1650)), binary}), kernel_rules(),
                                  "kernel.build.cache_binaries");
    const Finding& plain = ranked_finding(r_plain, "kernel.build.cache_binaries", "kernel");
    CHECK_THAT(plain.suggestion, Catch::Matchers::StartsWith("Save program binaries"));
    CHECK(plain.evidence.size() == 2);
}

TEST_CASE("rule build cache: a 4.8x cache speed-up is below the threshold", "[rules][kernel]") {
    check_silent(analyzed(report_of({build("cold", steady(600)), build("binary_cache", steady(125))}), kernel_rules(),
                          "kernel.build.cache_binaries"));
}

TEST_CASE("rule build cache: a 490 ms build is fast enough whatever the speed-up", "[rules][kernel]") {
    check_silent(analyzed(report_of({build("cold", steady(490)), build("binary_cache", steady(10))}), kernel_rules(),
                          "kernel.build.cache_binaries"));
}

TEST_CASE("rule build cache: a gap inside the noise is not claimed", "[rules][kernel]") {
    const auto cold = build("cold", spread(510, 1.0));
    const auto binary = build("binary_cache", spread(100, 1.0));
    REQUIRE(comparison_confidence(binary, cold) < min_confidence);
    check_silent(analyzed(report_of({cold, binary}), kernel_rules(), "kernel.build.cache_binaries"));
}

TEST_CASE("rule build cache: no binary-cache time is not evaluated", "[rules][kernel]") {
    check_not_evaluated(
        analyzed(report_of({build("cold", steady(510))}), kernel_rules(), "kernel.build.cache_binaries"),
        "kernel.build.cache_binaries", "path=binary_cache");
}

// ---------------------------------------------------------------- kernel.timer.host_fallback

TEST_CASE("rule host timer: a device without profiling is a finding", "[rules][kernel]") {
    const auto r = analyzed(report_of({}, /*profiling=*/false), kernel_rules(), "kernel.timer.host_fallback");
    const Finding& f = ranked_finding(r, "kernel.timer.host_fallback", "kernel");
    CHECK(f.severity == Severity::medium);
    CHECK_FALSE(f.estimated_gain.has_value());
    CHECK(f.confidence == 1.0);
}

TEST_CASE("rule host timer: a profiling device is fine", "[rules][kernel]") {
    check_silent(analyzed(report_of({}, /*profiling=*/true), kernel_rules(), "kernel.timer.host_fallback"));
}

TEST_CASE("rule host timer: no device is not evaluated", "[rules][kernel]") {
    RunReport r = report_of({});
    r.device.reset();
    check_not_evaluated(analyzed(r, kernel_rules(), "kernel.timer.host_fallback"), "kernel.timer.host_fallback",
                        "the device context");
}

// ---------------------------------------------------------------- analysis and ranking

TEST_CASE("kernel_rules and all_rules: every documented id, once, in kernel_rules order", "[rules]") {
    std::vector<std::string> kernel_ids, all_ids;
    for (const auto& rule : kernel_rules()) {
        kernel_ids.push_back(rule.id);
        CHECK(rule.layer == "kernel");
        CHECK(static_cast<bool>(rule.check));
    }
    for (const auto& rule : all_rules())
        all_ids.push_back(rule.id);
    CHECK(std::set<std::string>(kernel_ids.begin(), kernel_ids.end()) == kernel_rule_ids);
    CHECK(kernel_ids.size() == kernel_rule_ids.size());
    // all_rules holds every layer's rules; the kernel ones appear once each, in kernel_rules order.
    const auto first = std::search(all_ids.begin(), all_ids.end(), kernel_ids.begin(), kernel_ids.end());
    CHECK(first != all_ids.end());
    CHECK(std::set<std::string>(all_ids.begin(), all_ids.end()).size() == all_ids.size());
}

TEST_CASE("analyze: an empty report lists every rule as not evaluated and clears old verdicts", "[rules][analysis]") {
    RunReport r;
    r.findings.push_back(Finding{});
    r.rules_not_evaluated.push_back({"stale.rule", "from an earlier analysis"});
    analyze(r);
    CHECK(r.findings.empty());
    std::vector<std::string> skipped;
    for (const auto& s : r.rules_not_evaluated) {
        skipped.push_back(s.rule);
        CHECK_FALSE(s.reason.empty());
    }
    // The trace rules apply to trace reports only: elsewhere they are silent, not "not evaluated"
    // (a diagnose report would otherwise list a dozen rules that can never apply to it). The run
    // rules read result statuses and declare no inputs: with no lost probe they are silent too.
    std::vector<std::string> expected;
    for (const auto& rule : all_rules())
        if (rule.layer != "trace" && rule.layer != "run") expected.push_back(rule.id);
    CHECK(skipped == expected);
}

TEST_CASE("analyze: a crashed probe is a finding, and the rules that needed it say so", "[rules][analysis]") {
    RunReport r;
    r.device = DeviceInfo{};
    for (const auto& [id, status] : {std::pair{"kernel.launch", ProbeStatus::crashed},
                                     {"glm.gradient", ProbeStatus::crashed},
                                     {"attention.prefill", ProbeStatus::timed_out}}) {
        ProbeResult p;
        p.id = id;
        p.layer = "kernel";
        p.status = status;
        p.reason = "crashed: its process was killed by SIGSEGV";
        p.attributes["isolation"] = {{"signal", "SIGSEGV"}, {"last_command", "glm.row/local"}};
        r.results.push_back(p);
    }
    analyze(r);
    std::vector<std::string> ids;
    for (const auto& f : r.findings)
        ids.push_back(f.id);
    CHECK(std::count(ids.begin(), ids.end(), "run.probe_crashed") == 2);
    CHECK(std::count(ids.begin(), ids.end(), "run.probe_timed_out") == 1);
    const auto crashed = std::find_if(r.findings.begin(), r.findings.end(), [](const Finding& f) {
        return f.id == "run.probe_crashed" && f.title.find("glm.gradient") != std::string::npos;
    });
    REQUIRE(crashed != r.findings.end());
    CHECK(crashed->kind == FindingKind::note);
    CHECK(crashed->suggestion.find("--skip glm.gradient") != std::string::npos);
    CHECK(crashed->evidence.at(0).labels.at("signal") == "SIGSEGV");
    for (const auto& s : r.rules_not_evaluated) {
        INFO(s.rule << ": " << s.reason);
        if (s.rule.starts_with("glm.gradient.") || s.rule == "glm.layout.uncoalesced")
            CHECK(s.reason.find("glm.gradient crashed before it could measure it") != std::string::npos);
        if (s.rule == "kernel.launch.sync_overhead") CHECK(s.reason.find("kernel.launch crashed") != std::string::npos);
        if (s.rule.starts_with("system.")) CHECK(s.reason.find("crashed") == std::string::npos);
    }
}

TEST_CASE("analyze: kernel traits without a workload step are notes, by severity then factor", "[rules][analysis]") {
    RunReport r = report_of(
        {
            bandwidth("chunked", "8", steady(200)),      // access pattern 2x, vector width 1.6x
            bandwidth("chunked", "1", steady(125)),      //
            bandwidth("interleaved", "8", steady(100)),  //
            compute("fp32", "1", steady(100)),           // compute vector width 4x
            compute("fp32", "8", steady(400)),           //
            peak("fp32", steady(400)),                   // fp64 at 1/10
            peak("fp64", steady(40)),                    //
            launch("round_trip", steady(50)),            // sync overhead 5x
            launch("back_to_back", steady(10)),          //
            build("cold", steady(1000)),                 // build cache 10x, no gain
            build("binary_cache", steady(100)),
        },
        /*profiling=*/false);  // host fallback, no gain
    // Only the kernel rules: the other layers' rules have no inputs in this report.
    analyze(r, kernel_rules());
    CHECK(r.rules_not_evaluated.empty());
    std::vector<std::string> ids;
    for (const auto& f : r.findings) {
        ids.push_back(f.id);
        // No workload step was measured: every one is a device note, unranked, without a gain.
        CHECK(f.kind == FindingKind::note);
        CHECK(f.rank == 0);
        CHECK_FALSE(f.estimated_gain);
    }
    // High: compute 4x. Medium: fp64 10x (1 / (1 - 0.9)), access 2x, bandwidth vector 1.6x, the
    // host timer (no factor). Low: build cache 10x, sync 5x.
    CHECK(ids == std::vector<std::string>{"kernel.compute.vector_width", "kernel.fp64.throughput",
                                          "kernel.bandwidth.access_pattern", "kernel.bandwidth.vector_width",
                                          "kernel.timer.host_fallback", "kernel.build.cache_binaries",
                                          "kernel.launch.sync_overhead"});
    const auto factor_of = [&](const std::string& id) {
        for (const auto& f : r.findings)
            if (f.id == id) return f.factor.value_or(0);
        return -1.0;
    };
    CHECK(factor_of("kernel.fp64.throughput") == Approx(10.0));
    CHECK(factor_of("kernel.launch.sync_overhead") == Approx(5.0));
    CHECK(factor_of("kernel.timer.host_fallback") == 0);
}

TEST_CASE("rank_findings: an empty list stays empty", "[rules][analysis]") {
    std::vector<Finding> none;
    rank_findings(none);
    CHECK(none.empty());
}

TEST_CASE("sentence_list: items as a sentence lists them, for needs() and --help", "[rules]") {
    CHECK(text::sentence_list({}, " and ").empty());
    CHECK(text::sentence_list({"a"}, " and ") == "a");
    CHECK(text::sentence_list({"a", "b"}, " or ") == "a or b");
    CHECK(text::sentence_list({"a", "b", "c"}, " and ") == "a, b and c");
    const Rule rule{{"x.y", "kernel", {RuleInput::metric("m.a"), RuleInput::device(), RuleInput::facts("p")}, {}},
                    nullptr};
    CHECK(rule.needs() == "needs m.a, the device context and p's facts");
}
