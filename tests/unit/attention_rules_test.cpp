// Attention rules on synthetic reports: each finding appears above its threshold, stays silent
// below it or inside the noise, and says what is missing when its inputs are absent.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/report.hpp"
#include "rule_test_support.hpp"
#include "rules/attention_rules.hpp"

using namespace clprobe;
using namespace clprobe::test;

namespace {

// A rule whose inputs are missing gives the "needs ..." sentence derived from its declaration,
// and that sentence names what the test removed.
void check_needs(const RunReport& r, const std::string& rule_id, const std::string& names) {
    const std::string reason = skipped_rule(r, rule_id).reason;
    CHECK(reason == rule_named(attention_rules(), rule_id).needs());
    CHECK_THAT(reason, Catch::Contains(names));
}

}  // namespace

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

// The rule's own "needs ..." sentence, derived from its declaration.
void check_needs(const RuleOutcome& outcome, const std::string& id) {
    CHECK_FALSE(outcome.finding);
    CHECK(outcome.not_evaluated == rule_named(attention_rules(), id).needs());
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
    check_needs(evaluate("attention.prefill.unfused", report_of({prefill("fused", "32x64", steady(0.1))})),
                "attention.prefill.unfused");
}

TEST_CASE("attention.decode.below_roofline holds the longest cache against its level's roof", "[rules][attention]") {
    auto fraction = [](double v, const char* split, const char* kv_len, double cv = 0) {
        return rate("attention.decode.peak_fraction", "fraction",
                    {{"precision", "fp32"}, {"split", split}, {"kv_len", kv_len}}, cv > 0 ? spread(v, cv) : steady(v));
    };
    // The short, cache-resident length reads 90% of its (L3) roof; the memory-bound one 30%: the
    // longest length decides, and its best layout.
    const auto found = evaluate("attention.decode.below_roofline",
                                report_of({fraction(0.9, "single", "4096"), fraction(0.2, "single", "32768"),
                                           fraction(0.3, "split", "32768")}));
    REQUIRE(found.finding);
    CHECK(*found.finding->estimated_gain == Approx(0.7));
    CHECK(found.finding->target->stage == "decode");
    CHECK_THAT(found.finding->title, Catch::Contains("L = 32768"));
    // At or above half the roof, inside the noise, or missing.
    CHECK_FALSE(evaluate("attention.decode.below_roofline", report_of({fraction(0.7, "single", "4096")})).finding);
    CHECK_FALSE(
        evaluate("attention.decode.below_roofline", report_of({fraction(0.45, "single", "4096", 0.4)})).finding);
    check_needs(evaluate("attention.decode.below_roofline",
                         report_of({rate("attention.decode.bandwidth", "GB/s", {{"precision", "fp32"}}, steady(20))})),
                "attention.decode.below_roofline");
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
    check_needs(evaluate("attention.decode.kv_precision", report_of({decode("fp32", 0.002)})),
                "attention.decode.kv_precision");
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
    check_needs(evaluate("attention.batching.padding", report_of({tput("padded", 1000)})),
                "attention.batching.padding");
}

TEST_CASE("attention.fp16.unavailable follows the fp16 probe's status", "[rules][attention]") {
    const auto found = evaluate("attention.fp16.unavailable", report_of({}, ProbeStatus::unsupported));
    REQUIRE(found.finding);
    CHECK_THAT(found.finding->title, Catch::Contains("cl_khr_fp16"));
    CHECK_FALSE(found.finding->estimated_gain);
    CHECK_FALSE(evaluate("attention.fp16.unavailable", report_of({})).finding);
    check_needs(evaluate("attention.fp16.unavailable", RunReport{}), "attention.fp16.unavailable");
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
    check_needs(evaluate("attention.host.offload", report_of({host})), "attention.host.offload");
}

namespace {

constexpr double mib = 1024.0 * 1024;

// A report of attention.prefill's memory measurements at batch 1 x seq 4096, 8 heads, head_dim 64,
// on a device with 1000 MiB of global memory and 250 MiB per allocation.
struct MemoryReport {
    RunReport r;

    MemoryReport() {
        r.results.push_back(probe_result("attention.prefill", "kernel"));
        DeviceInfo d = synthetic_device("gpu");
        d.global_mem_bytes = static_cast<std::uint64_t>(1000 * mib);
        d.max_alloc_bytes = static_cast<std::uint64_t>(250 * mib);
        r.device = d;
    }
    MemoryReport& variant(const char* name, double total_mib, double largest_mib) {
        const Labels labels{{"variant", name}, {"batch", "1"}, {"heads", "8"}, {"seq", "4096"}, {"head_dim", "64"}};
        for (auto [metric, v] : {std::pair{"attention.memory.device_bytes", total_mib},
                                 std::pair{"attention.memory.largest_buffer", largest_mib}})
            r.results[0].measurements.push_back(
                make_measurement(metric, "bytes", labels, {v * mib}, TimerKind::none, false));
        return *this;
    }
    MemoryReport& capacity(const char* path, double tokens) {
        r.results[0].measurements.push_back(make_measurement("attention.memory.max_batch_seq", "tokens",
                                                             {{"path", path}, {"batch", "1"}}, {tokens},
                                                             TimerKind::none, true));
        return *this;
    }
    MemoryReport& attribute(const char* key) {
        r.results[0].attributes[key] = "does not fit the device";
        return *this;
    }
};

const std::string unfused_id = "attention.memory.unfused_does_not_fit";
const std::string shape_id = "attention.memory.shape_does_not_fit";

std::optional<Severity> severity_of(const std::string& id, const RunReport& r) {
    const auto found = evaluate(id, r);
    CHECK_FALSE(found.not_evaluated);
    if (!found.finding) return std::nullopt;
    CHECK_FALSE(found.finding->estimated_gain);  // a capacity, not a speed-up
    CHECK(found.finding->confidence == 1.0);
    return found.finding->severity;
}

}  // namespace

TEST_CASE("attention.memory.unfused_does_not_fit: from half the binding limit, graded beyond it",
          "[rules][attention][memory]") {
    // Half of global memory is the threshold; the sum binds here.
    CHECK_FALSE(severity_of(unfused_id, MemoryReport().variant("unfused", 490, 100).r));
    CHECK(severity_of(unfused_id, MemoryReport().variant("unfused", 510, 100).r) == Severity::low);
    CHECK(severity_of(unfused_id, MemoryReport().variant("unfused", 1010, 100).r) == Severity::medium);
    CHECK(severity_of(unfused_id, MemoryReport().variant("unfused", 2010, 100).r) == Severity::high);
    // The score matrix alone over the allocation limit, the sum well inside global memory.
    CHECK_FALSE(severity_of(unfused_id, MemoryReport().variant("unfused", 400, 120).r));
    CHECK(severity_of(unfused_id, MemoryReport().variant("unfused", 400, 130).r) == Severity::low);
    // The probe skipped the path (its own sizing leaves memory free): reported however small the share.
    CHECK(severity_of(unfused_id, MemoryReport().variant("unfused", 200, 100).attribute("unfused_skipped").r) ==
          Severity::info);

    const RunReport r =
        analyzed(MemoryReport().variant("unfused", 600, 260).capacity("unfused", 3000).capacity("fused", 200000).r,
                 attention_rules(), unfused_id);
    const Finding& f = ranked_finding(r, unfused_id, "kernel");
    CHECK(f.severity == Severity::medium);
    CHECK_THAT(f.title, Catch::Contains("does not fit") && Catch::Contains("largest allocation (250 MiB)") &&
                            Catch::Contains("batch 1 x seq 4096") && Catch::Contains("seq 3000 at batch 1"));
    CHECK_THAT(f.suggestion, Catch::Contains("fused") && Catch::Contains("batch x seq 200000"));
    CHECK(f.evidence.size() == 5);  // bytes, largest buffer, both device limits, the unfused capacity

    // Missing: no memory measurements, or no device limits.
    check_needs(analyzed(MemoryReport().variant("fused", 10, 1).r, attention_rules(), unfused_id), unfused_id,
                "variant=unfused");
    MemoryReport no_device;
    no_device.variant("unfused", 2000, 100).r.device.reset();
    check_needs(analyzed(no_device.r, attention_rules(), unfused_id), unfused_id, "the device context");
}

TEST_CASE("attention.memory.shape_does_not_fit: the fused prefill beyond the device, or skipped by the probe",
          "[rules][attention][memory]") {
    CHECK_FALSE(severity_of(shape_id, MemoryReport().variant("fused", 990, 240).r));
    CHECK(severity_of(shape_id, MemoryReport().variant("fused", 1010, 240).r) == Severity::low);
    CHECK(severity_of(shape_id, MemoryReport().variant("fused", 800, 260).r) == Severity::low);  // one tensor too big
    CHECK(severity_of(shape_id, MemoryReport().variant("fused", 1990, 240).r) == Severity::low);
    CHECK(severity_of(shape_id, MemoryReport().variant("fused", 2010, 240).r) == Severity::medium);
    CHECK(severity_of(shape_id, MemoryReport().variant("fused", 4010, 240).r) == Severity::high);
    CHECK(severity_of(shape_id, MemoryReport().variant("fused", 900, 225).attribute("shape_skipped").r) ==
          Severity::info);

    const RunReport r =
        analyzed(MemoryReport().variant("fused", 3000, 760).capacity("fused", 1300).capacity("unfused", 900).r,
                 attention_rules(), shape_id);
    const Finding& f = ranked_finding(r, shape_id, "kernel");
    CHECK(f.severity == Severity::medium);
    CHECK_THAT(f.title, Catch::Contains("3.0x") && Catch::Contains("largest allocation"));
    CHECK_THAT(f.suggestion, Catch::Contains("batch x seq 1300") && Catch::Contains("batch x seq 900"));
    check_needs(analyzed(MemoryReport().variant("unfused", 3000, 750).r, attention_rules(), shape_id), shape_id,
                "variant=fused");
}
