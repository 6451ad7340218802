// Attention rules on synthetic reports: each finding appears above its threshold, stays silent
// below it or inside the noise, and says what is missing when its inputs are absent.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/report.hpp"
#include "rule_test_support.hpp"
#include "rules/attention_rules.hpp"

using namespace clprobe;
using namespace clprobe::test;

namespace {

Measurement prefill(const std::string& variant, const std::string& tile, std::vector<double> s) {
    return seconds("attention.prefill.time", {{"variant", variant}, {"tile", tile}, {"seq", "1024"}}, std::move(s),
                   TimerKind::device_profiling);
}
Measurement decode(const std::string& precision, double s) {
    return seconds("attention.decode.time",
                   {{"precision", precision}, {"split", "single"}, {"splits", "1"}, {"kv_len", "4096"}}, steady(s),
                   TimerKind::device_profiling);
}

RunReport report_of(std::vector<Measurement> ms, ProbeStatus fp16_status = ProbeStatus::ok) {
    RunReport r = report_with("attention.synthetic", "kernel", std::move(ms));
    ProbeResult f = probe_result("attention.decode.fp16", "kernel");
    f.status = fp16_status;
    if (fp16_status == ProbeStatus::unsupported) f.reason = "cl_khr_fp16 is not advertised";
    r.results.push_back(std::move(f));
    return r;
}

// Straight from the rule, not through analyze(): these tests read the outcome itself.
RuleOutcome evaluate(const std::string& id, const RunReport& r) {
    return rule_named(attention_rules(), id).evaluate(r);
}

}  // namespace

TEST_CASE("attention.prefill.unfused: fused gain targets the prefill stage", "[rules][attention]") {
    auto bytes = make_measurement("attention.prefill.score_bytes", "bytes", {{"variant", "unfused"}},
                                  {128.0 * 1024 * 1024}, TimerKind::none, false);
    const auto found =
        evaluate("attention.prefill.unfused",
                 report_of({prefill("unfused", "none", steady(0.4)), prefill("fused", "32x64", steady(0.1)),
                            prefill("fused", "16x32", steady(0.2)), bytes}));
    REQUIRE(found.finding);
    const Finding& f = *found.finding;
    CHECK(f.estimated_gain == Approx(0.75));
    REQUIRE(f.target);
    CHECK(f.target->pipeline == "attention.pipeline");
    CHECK(f.target->stage == "prefill");
    CHECK(f.target->stage_gain == Approx(0.75));
    CHECK_THAT(f.title, Catch::Contains("4.0x") && Catch::Contains("128 MiB"));
    CHECK_THAT(f.suggestion, Catch::Contains("32x64"));
    CHECK(f.evidence.size() == 3);

    // Below the ratio, inside the noise, or missing.
    CHECK_FALSE(evaluate("attention.prefill.unfused",
                         report_of({prefill("unfused", "none", steady(0.11)), prefill("fused", "32x64", steady(0.1))}))
                    .finding);
    CHECK_FALSE(evaluate("attention.prefill.unfused", report_of({prefill("unfused", "none", spread(0.15, 0.4)),
                                                                 prefill("fused", "32x64", spread(0.1, 0.4))}))
                    .finding);
    CHECK(evaluate("attention.prefill.unfused", report_of({prefill("fused", "32x64", steady(0.1))})).not_evaluated);
}

TEST_CASE("attention.decode.below_roofline compares the best fp32 decode with the bandwidth peak",
          "[rules][attention]") {
    auto peak = rate("kernel.peak.bandwidth", "GB/s", {}, steady(100));
    auto bw = [](double v, const char* split) {
        return rate("attention.decode.bandwidth", "GB/s", {{"precision", "fp32"}, {"split", split}}, steady(v));
    };
    const auto found =
        evaluate("attention.decode.below_roofline", report_of({peak, bw(20, "single"), bw(30, "split")}));
    REQUIRE(found.finding);
    CHECK(found.finding->estimated_gain == Approx(0.7));
    CHECK(found.finding->target->stage == "decode");
    CHECK_FALSE(evaluate("attention.decode.below_roofline", report_of({peak, bw(70, "single")})).finding);
    CHECK_FALSE(
        evaluate("attention.decode.below_roofline",
                 report_of({rate("kernel.peak.bandwidth", "GB/s", {}, spread(100, 0.4)),
                            rate("attention.decode.bandwidth", "GB/s", {{"precision", "fp32"}}, spread(45, 0.4))}))
            .finding);
    CHECK(evaluate("attention.decode.below_roofline", report_of({bw(20, "single")})).not_evaluated);
}

TEST_CASE("attention.decode.kv_precision reports the faster lower precision with its error", "[rules][attention]") {
    auto err = make_measurement("attention.decode.error", "relative",
                                {{"precision", "int8"}, {"split", "single"}, {"splits", "1"}, {"kv_len", "4096"}},
                                {3e-3}, TimerKind::none, false);
    const auto found =
        evaluate("attention.decode.kv_precision", report_of({decode("fp32", 0.002), decode("int8", 0.001), err}));
    REQUIRE(found.finding);
    CHECK_THAT(found.finding->title, Catch::Contains("int8") && Catch::Contains("2.00x") && Catch::Contains("3.0e-03"));
    CHECK(found.finding->target->stage == "decode");
    CHECK(found.finding->estimated_gain == Approx(0.5));
    CHECK_FALSE(
        evaluate("attention.decode.kv_precision", report_of({decode("fp32", 0.002), decode("int8", 0.0019)})).finding);
    CHECK(evaluate("attention.decode.kv_precision", report_of({decode("fp32", 0.002)})).not_evaluated);
}

TEST_CASE("attention.batching.padding: bucketing or packing beats padding", "[rules][attention]") {
    auto tput = [](const char* s, double v) {
        return rate("attention.batching.throughput", "tokens/s", {{"strategy", s}}, steady(v));
    };
    auto waste = make_measurement("attention.batching.padding_fraction", "fraction", {{"strategy", "padded"}}, {0.8},
                                  TimerKind::none, false);
    const auto found = evaluate("attention.batching.padding",
                                report_of({tput("padded", 1000), tput("bucketed", 2500), tput("packed", 4000), waste}));
    REQUIRE(found.finding);
    CHECK_THAT(found.finding->title, Catch::Contains("80%") && Catch::Contains("packed"));
    CHECK(found.finding->estimated_gain == Approx(0.75));
    CHECK(found.finding->target->stage == "prefill");
    CHECK_FALSE(
        evaluate("attention.batching.padding", report_of({tput("padded", 1000), tput("packed", 1100)})).finding);
    CHECK(evaluate("attention.batching.padding", report_of({tput("padded", 1000)})).not_evaluated);
}

TEST_CASE("attention.fp16.unavailable follows the fp16 probe's status", "[rules][attention]") {
    const auto found = evaluate("attention.fp16.unavailable", report_of({}, ProbeStatus::unsupported));
    REQUIRE(found.finding);
    CHECK_THAT(found.finding->title, Catch::Contains("cl_khr_fp16"));
    CHECK_FALSE(found.finding->estimated_gain);
    CHECK_FALSE(evaluate("attention.fp16.unavailable", report_of({})).finding);
    CHECK(evaluate("attention.fp16.unavailable", RunReport{}).not_evaluated);
}

TEST_CASE("attention.host.offload: the host beating the best device prefill", "[rules][attention]") {
    auto host = seconds("attention.host_blas.prefill.time", {{"seq", "1024"}, {"variant", "host_blas"}}, steady(0.05),
                        TimerKind::device_profiling);
    const auto found =
        evaluate("attention.host.offload",
                 report_of({host, prefill("fused", "32x64", steady(0.1)), prefill("unfused", "none", steady(0.5))}));
    REQUIRE(found.finding);
    CHECK(found.finding->estimated_gain == Approx(0.5));
    CHECK_THAT(found.finding->title, Catch::Contains("2.0x"));
    CHECK_FALSE(evaluate("attention.host.offload", report_of({host, prefill("fused", "32x64", steady(0.04))})).finding);
    CHECK(evaluate("attention.host.offload", report_of({host})).not_evaluated);
}
