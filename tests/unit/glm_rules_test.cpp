// GLM rules on synthetic reports: each fires above its threshold, stays silent below it and
// inside the noise, and says what is missing when its inputs are absent.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/report.hpp"
#include "rule_test_support.hpp"
#include "rules/glm_rules.hpp"

using namespace clprobe;
using namespace clprobe::test;

namespace {

Labels variant(const std::string& layout = "row", const std::string& reduction = "local",
               const std::string& passes = "1", const std::string& wg = "64", const std::string& precision = "fp32") {
    return {{"layout", layout}, {"reduction", reduction}, {"passes", passes}, {"vector", "8"},
            {"wg", wg},         {"precision", precision}, {"format", "dense"}};
}

Measurement time_of(Labels labels, std::vector<double> ms) {
    return make_measurement("glm.gradient.time", "ms", std::move(labels), std::move(ms), TimerKind::device_profiling,
                            false);
}
Measurement bandwidth_of(Labels labels, std::vector<double> gbs) {
    return rate("glm.gradient.bandwidth", "GB/s", std::move(labels), std::move(gbs));
}
Measurement stage(const std::string& name, const std::string& v, double s) {
    return seconds("glm.pipeline.stage_time", {{"stage", name}, {"variant", v}}, steady(s),
                   TimerKind::device_profiling);
}
Measurement step(const std::string& v, std::vector<double> s) {
    return seconds("glm.pipeline.step_time", {{"variant", v}}, std::move(s), TimerKind::host_steady_clock);
}

RunReport report_of(std::vector<Measurement> ms, nlohmann::json pipeline_attrs = {}, nlohmann::json blas_attrs = {}) {
    RunReport r = report_with("glm.gradient", "kernel", std::move(ms));
    if (!pipeline_attrs.is_null()) {
        r.results.push_back(probe_result("glm.pipeline", "kernel"));
        r.results.back().attributes = pipeline_attrs;
    }
    if (!blas_attrs.is_null()) {
        r.results.push_back(probe_result("glm.host_blas", "kernel"));
        r.results.back().attributes = blas_attrs;
    }
    return r;
}

// Every glm rule compares measured variants, so each of its findings must put a number on the gain.
const Finding& single(const RunReport& r, const std::string& id) {
    const Finding& f = only_finding(r, id);
    CHECK(f.estimated_gain.has_value());
    return f;
}

// Only that one rule was skipped, with the "needs ..." sentence derived from its declaration, and
// that sentence names what the test left out.
void check_missing(const RunReport& r, const std::string& id, const std::string& names) {
    const std::string reason = skipped_rule(r, id).reason;
    CHECK(reason == rule_named(glm_rules(), id).needs());
    CHECK_THAT(reason, Catch::Contains(names));
}

}  // namespace

TEST_CASE("glm rules: every id is unique and documented in kernel layer", "[rules][glm]") {
    const auto rules = glm_rules();
    CHECK(rules.size() == 11);
    for (const auto& r : rules) {
        CHECK(r.id.rfind("glm.", 0) == 0);
        CHECK(r.layer == "kernel");
    }
}

TEST_CASE("glm.layout.uncoalesced: above, below, noisy, missing", "[rules][glm]") {
    const std::string id = "glm.layout.uncoalesced";
    const auto fired = analyzed(report_of({time_of(variant("row"), steady(1.0)), time_of(variant("col"), steady(3.0)),
                                           stage("compute", "a", 1)}),
                                glm_rules(), id);
    const Finding& f = single(fired, id);
    CHECK_THAT(f.title, Catch::Contains("col-major"));
    CHECK_THAT(f.title, Catch::Contains("(3 ms against 1 ms)"));
    CHECK_THAT(f.suggestion, Catch::StartsWith("Store X row-major"));
    // Both measured figures, and no rule of thumb about how a device type schedules work-items.
    CHECK_THAT(f.suggestion, Catch::Contains("Measured here: row-major 1 ms, col-major 3 ms per gradient"));
    CHECK_THAT(f.suggestion, !Catch::Contains("CPU"));
    REQUIRE(f.target.has_value());
    CHECK(f.target->stage == "compute");
    CHECK(f.target->pipeline == "glm.pipeline");
    CHECK(f.target->stage_gain == Approx(2.0 / 3.0));
    CHECK(*f.estimated_gain == Approx(2.0 / 3.0));  // compute is the whole pipeline here
    check_silent(analyzed(report_of({time_of(variant("row"), steady(1.0)), time_of(variant("col"), steady(1.1))}),
                          glm_rules(), id));
    check_silent(
        analyzed(report_of({time_of(variant("row"), spread(1.0, 0.5)), time_of(variant("col"), spread(1.4, 0.5))}),
                 glm_rules(), id));
    check_missing(analyzed(report_of({time_of(variant("row"), steady(1.0))}), glm_rules(), id), id, "layout=col");
}

TEST_CASE("glm.layout.uncoalesced: column-major faster is advised from the measurement", "[rules][glm]") {
    const std::string id = "glm.layout.uncoalesced";
    const auto fired = analyzed(report_of({time_of(variant("row"), steady(2.6)), time_of(variant("col"), steady(1.3)),
                                           stage("compute", "a", 1)}),
                                glm_rules(), id);
    const Finding& f = single(fired, id);
    CHECK_THAT(f.title, Catch::StartsWith("The row-major layout of X makes the gradient 2.0x slower than col-major"));
    CHECK_THAT(f.suggestion, Catch::StartsWith("Store X column-major"));
    CHECK_THAT(f.suggestion, Catch::Contains("Measured here: col-major 1.3 ms, row-major 2.6 ms per gradient"));
    CHECK_THAT(f.suggestion, !Catch::Contains("GPU"));
    REQUIRE(f.evidence.size() == 2);
    CHECK(f.evidence[0].labels.at("layout") == "col");
    REQUIRE(f.target.has_value());
    CHECK(f.target->stage_gain == Approx(0.5));
}

TEST_CASE("glm.reduction.atomics compares bandwidth of the atomic variant and its local twin", "[rules][glm]") {
    const std::string id = "glm.reduction.atomics";
    const auto fired =
        analyzed(report_of({bandwidth_of(variant(), steady(20)), bandwidth_of(variant("row", "atomic"), steady(2))}),
                 glm_rules(), id);
    CHECK(single(fired, id).target->stage_gain == Approx(0.9));
    check_silent(
        analyzed(report_of({bandwidth_of(variant(), steady(20)), bandwidth_of(variant("row", "atomic"), steady(19))}),
                 glm_rules(), id));
    check_silent(analyzed(
        report_of({bandwidth_of(variant(), spread(20, 0.5)), bandwidth_of(variant("row", "atomic"), spread(12, 0.5))}),
        glm_rules(), id));
    check_missing(analyzed(report_of({bandwidth_of(variant(), steady(20))}), glm_rules(), id), id, "reduction=atomic");
}

TEST_CASE("glm.passes.two_pass and glm.precision.fp64", "[rules][glm]") {
    const auto two =
        analyzed(report_of({time_of(variant(), steady(1.0)), time_of(variant("row", "local", "2"), steady(2.0))}),
                 glm_rules(), "glm.passes.two_pass");
    CHECK(single(two, "glm.passes.two_pass").target->stage_gain == Approx(0.5));
    check_silent(
        analyzed(report_of({time_of(variant(), steady(1.0)), time_of(variant("row", "local", "2"), steady(1.05))}),
                 glm_rules(), "glm.passes.two_pass"));
    check_missing(analyzed(report_of({time_of(variant(), steady(1.0))}), glm_rules(), "glm.passes.two_pass"),
                  "glm.passes.two_pass", "passes=2");

    const auto fp64 = analyzed(
        report_of({time_of(variant(), steady(1.0)), time_of(variant("row", "local", "1", "64", "fp64"), steady(4.0))}),
        glm_rules(), "glm.precision.fp64");
    CHECK(single(fp64, "glm.precision.fp64").target->stage_gain == Approx(0.75));
    check_silent(analyzed(
        report_of({time_of(variant(), steady(1.0)), time_of(variant("row", "local", "1", "64", "fp64"), steady(1.3))}),
        glm_rules(), "glm.precision.fp64"));
    check_silent(analyzed(report_of({time_of(variant(), spread(1.0, 0.5)),
                                     time_of(variant("row", "local", "1", "64", "fp64"), spread(1.8, 0.5))}),
                          glm_rules(), "glm.precision.fp64"));
    check_missing(analyzed(report_of({time_of(variant(), steady(1.0))}), glm_rules(), "glm.precision.fp64"),
                  "glm.precision.fp64", "precision=fp64");
}

namespace {

// A variant with X in reduced storage (precision and storage both name it), and its accuracy.
Labels stored(const std::string& storage) {
    Labels l = variant();
    l["precision"] = storage;
    l["storage"] = storage;
    return l;
}
Measurement storage_error(const std::string& storage, double error) {
    return make_measurement("glm.gradient.storage_error", "relative", stored(storage), {error}, TimerKind::none, false);
}

}  // namespace

TEST_CASE("glm.storage.reduced_precision recommends the faster storage at the accuracy it kept", "[rules][glm]") {
    const std::string id = "glm.storage.reduced_precision";
    // fp16 1.9x, bf16 1.7x, int8 3x but 5% off: int8 is not recommended, fp16 is.
    const RunReport measured = report_of(
        {time_of(variant(), steady(1.9)), time_of(stored("fp16"), steady(1.0)), time_of(stored("bf16"), steady(1.1)),
         time_of(stored("int8"), steady(0.63)), storage_error("fp16", 2e-4), storage_error("bf16", 2e-3),
         storage_error("int8", 0.05),
         make_measurement("glm.fit.error", "abs", {{"family", "logistic"}, {"precision", "fp16"}, {"storage", "fp16"}},
                          {3e-4}, TimerKind::none, false),
         stage("compute", "a", 1)});
    const auto fired = analyzed(measured, glm_rules(), id);
    const Finding& f = single(fired, id);
    CHECK_THAT(f.title,
               Catch::StartsWith("Storing X in fp16 makes the gradient 1.9x faster than fp32 X (1 ms against 1.9 ms; "
                                 "relative gradient error 0.0002)"));
    CHECK_THAT(f.suggestion, Catch::StartsWith("Store X in fp16 and widen it to fp32 as it is loaded (vload_half"));
    CHECK_THAT(f.suggestion, Catch::Contains("(a fit on fp16 X ended 0.0003 from the double fit)"));
    CHECK_THAT(f.suggestion, Catch::Contains("int8 v8 3.02x the fp32 speed, error 0.05 (above the 0.01 allowed)"));
    CHECK_THAT(f.suggestion, Catch::Contains("bf16 v8 1.73x the fp32 speed, error 0.002"));
    REQUIRE(f.evidence.size() == 3);
    CHECK(f.evidence[0].labels.at("storage") == "fp16");
    CHECK(f.evidence[1].labels.at("precision") == "fp32");
    CHECK(f.evidence[2].metric == "glm.gradient.storage_error");
    REQUIRE(f.target.has_value());
    CHECK(f.target->stage_gain == Approx(1.0 - 1.0 / 1.9));

    // The other rules' fp32 lookups never take a storage variant for an fp32 one (no work-group
    // sweep, no fp64 or two-pass twin made of them): every other glm rule finds nothing.
    RunReport every = measured;
    evaluate_rules(every, glm_rules());
    REQUIRE(every.findings.size() == 1);
    CHECK(every.findings[0].id == id);

    // Within 25%, or not clear of the noise: silent.
    check_silent(analyzed(
        report_of({time_of(variant(), steady(1.0)), time_of(stored("bf16"), steady(0.9)), storage_error("bf16", 1e-3)}),
        glm_rules(), id));
    check_silent(analyzed(report_of({time_of(variant(), spread(1.0, 0.6)), time_of(stored("fp16"), spread(0.7, 0.6)),
                                     storage_error("fp16", 1e-4)}),
                          glm_rules(), id));
    // Faster but not accurate enough: silent.
    check_silent(analyzed(
        report_of({time_of(variant(), steady(2.0)), time_of(stored("int8"), steady(0.5)), storage_error("int8", 0.02)}),
        glm_rules(), id));
    // No storage variant, or no accuracy for it: missing.
    check_missing(analyzed(report_of({time_of(variant(), steady(1.0))}), glm_rules(), id), id, "storage=fp16");
    check_missing(
        analyzed(report_of({time_of(variant(), steady(1.0)), time_of(stored("fp16"), steady(0.5))}), glm_rules(), id),
        id, "glm.gradient.storage_error");
}

TEST_CASE("glm.workgroup.size names the best size of the sweep", "[rules][glm]") {
    const std::string id = "glm.workgroup.size";
    const auto fired =
        analyzed(report_of({time_of(variant(), steady(1.0)), time_of(variant("row", "local", "1", "16"), steady(2.0)),
                            time_of(variant("row", "local", "1", "256"), steady(0.8))}),
                 glm_rules(), id);
    const Finding& f = single(fired, id);
    CHECK_THAT(f.suggestion, Catch::Contains("work-groups of 256"));
    CHECK(f.target->stage_gain == Approx(0.6));
    check_silent(analyzed(
        report_of({time_of(variant(), steady(1.0)), time_of(variant("row", "local", "1", "16"), steady(1.05))}),
        glm_rules(), id));
    check_missing(analyzed(report_of({time_of(variant(), steady(1.0))}), glm_rules(), id), id, "differ in wg");
}

TEST_CASE("glm.gradient.below_roofline: fraction of the measured memory roof", "[rules][glm]") {
    const std::string id = "glm.gradient.below_roofline";
    const auto peak = make_measurement("kernel.peak.bandwidth", "GB/s", {}, steady(40), TimerKind::device_profiling);
    const auto with = [&](double best) {
        return report_of(
            {peak,
             make_measurement("glm.gradient.best.bandwidth", "GB/s", {}, steady(best), TimerKind::device_profiling),
             make_measurement("glm.gradient.best.roofline_fraction", "fraction", {}, steady(best / 40),
                              TimerKind::device_profiling)});
    };
    CHECK(single(analyzed(with(10), glm_rules(), id), id).target->stage_gain == Approx(0.75));
    check_silent(analyzed(with(30), glm_rules(), id));
    // A fraction just under the floor whose spread reaches it is inside the noise.
    check_silent(analyzed(report_of({make_measurement("glm.gradient.best.bandwidth", "GB/s", {}, spread(26, 0.2),
                                                      TimerKind::device_profiling),
                                     make_measurement("glm.gradient.best.roofline_fraction", "fraction", {},
                                                      spread(0.65, 0.2), TimerKind::device_profiling)}),
                          glm_rules(), id));
    check_missing(analyzed(report_of({peak}), glm_rules(), id), id, "glm.gradient.best.roofline_fraction");
}

TEST_CASE("glm.minibatch.upload_bound: the step's uploads and the variants that avoid them", "[rules][glm]") {
    const std::string id = "glm.minibatch.upload_bound";
    const auto base = [](double upload) {
        return std::vector<Measurement>{stage("upload", "serial_pageable", upload),
                                        stage("compute", "serial_pageable", 0.002),
                                        step("serial_pageable", steady(upload + 0.002))};
    };
    auto ms = base(0.008);
    ms.push_back(step("resident", steady(0.002)));
    ms.push_back(step("serial_pinned", steady(0.0099)));
    const auto fired = analyzed(report_of(ms), glm_rules(), id);
    const Finding& f = single(fired, id);
    CHECK(*f.estimated_gain == Approx(0.8));  // resident: 2 ms of a 10 ms step
    CHECK_THAT(f.title, Catch::Contains("80%"));
    CHECK_THAT(f.suggestion, Catch::Contains("resident"));
    CHECK_THAT(f.suggestion, Catch::Contains("no measurable gain"));

    auto low = base(0.001);  // uploads a third of the step
    low.push_back(step("resident", steady(0.002)));
    check_silent(analyzed(report_of(low), glm_rules(), id));
    auto noise = base(0.008);
    noise.push_back(step("resident", spread(0.008, 0.5)));
    noise[2] = step("serial_pageable", spread(0.010, 0.5));
    check_silent(analyzed(report_of(noise), glm_rules(), id));
    check_missing(analyzed(report_of({step("resident", steady(1))}), glm_rules(), id), id, "stage=upload");
}

TEST_CASE("glm.offload.host_faster compares per-row times", "[rules][glm]") {
    const std::string id = "glm.offload.host_faster";
    const auto host = [](double ms) {
        return make_measurement("glm.host_blas.gradient.time", "ms", {{"library", "openblas"}}, steady(ms),
                                TimerKind::host_steady_clock, false);
    };
    // Host: 10 ms for 1M rows; device: 20 ms for 0.5M rows (4x slower per row).
    const auto fired =
        analyzed(report_of({host(10), step("serial_pageable", steady(0.020))}, {{"rows", 500000}}, {{"rows", 1000000}}),
                 glm_rules(), id);
    CHECK(*single(fired, id).estimated_gain == Approx(0.75));
    check_silent(
        analyzed(report_of({host(10), step("serial_pageable", steady(0.004))}, {{"rows", 500000}}, {{"rows", 1000000}}),
                 glm_rules(), id));
    // No rows recorded by either probe: their facts are missing.
    check_missing(analyzed(report_of({host(10), step("serial_pageable", steady(0.004))}), glm_rules(), id), id,
                  "glm.pipeline's facts");
}

TEST_CASE("glm.format.sparse_dense names the faster storage format and the crossover", "[rules][glm]") {
    const std::string id = "glm.format.sparse_dense";
    Labels csr = variant();
    csr["format"] = "csr";
    csr["vector"] = "1";
    auto with_density = [](RunReport r) {
        r.results[0].attributes = {{"density", 0.05}, {"sparse_crossover_density", 0.2}};
        return r;
    };
    // CSR 4x faster at 5%: keep CSR, crossover named.
    const auto sparse_wins = analyzed(
        with_density(report_of({time_of(variant(), steady(4.0)), time_of(csr, steady(1.0))})), glm_rules(), id);
    const Finding& f = single(sparse_wins, id);
    CHECK_THAT(f.title, Catch::Contains("density 0.05") && Catch::Contains("dense gradient takes 4.0x"));
    CHECK_THAT(f.suggestion, Catch::Contains("Keep X in CSR") && Catch::Contains("0.2"));
    CHECK(*f.estimated_gain == Approx(0.75));
    // Dense 3x faster: store dense.
    const auto dense_wins = analyzed(
        with_density(report_of({time_of(variant(), steady(1.0)), time_of(csr, steady(3.0))})), glm_rules(), id);
    CHECK_THAT(single(dense_wins, id).suggestion, Catch::Contains("Store X dense"));
    // The fastest dense variant counts, not the first one measured.
    check_silent(analyzed(
        report_of({time_of(variant("col"), steady(5.0)), time_of(variant(), steady(1.0)), time_of(csr, steady(1.1))}),
        glm_rules(), id));
    check_silent(
        analyzed(report_of({time_of(variant(), spread(1.0, 0.5)), time_of(csr, spread(1.6, 0.5))}), glm_rules(), id));
    check_missing(analyzed(report_of({time_of(variant(), steady(1.0))}), glm_rules(), id), id, "format=csr");
}

namespace {

// glm.gradient's memory facts: the rows asked for (and, when it capped them, the rows it ran) and
// the most rows one fp32 copy fits, dense and CSR, on a device that reports its limits.
RunReport memory_report(double requested, double dense_max, std::optional<double> ran = std::nullopt) {
    auto max_rows = [](const char* format, double rows) {
        return make_measurement("glm.memory.max_rows", "rows", {{"format", format}, {"cols", "64"}}, {rows},
                                TimerKind::none, true);
    };
    RunReport r =
        report_with("glm.gradient", "kernel", {max_rows("dense", dense_max), max_rows("csr", 15 * dense_max)});
    r.results[0].attributes["rows_requested"] = requested;
    if (ran) {
        r.results[0].attributes["rows_capped_from"] = requested;
        r.results[0].attributes["rows"] = *ran;
    }
    DeviceInfo d = synthetic_device("gpu");
    d.global_mem_bytes = 4ull << 30;
    d.max_alloc_bytes = 1ull << 30;
    r.device = d;
    return r;
}

std::optional<Severity> memory_severity(const RunReport& r) {
    const RunReport done = analyzed(r, glm_rules(), "glm.memory.shape_does_not_fit");
    CHECK(done.rules_not_evaluated.empty());
    if (done.findings.empty()) return std::nullopt;
    const Finding& f = only_finding(done, "glm.memory.shape_does_not_fit", "kernel");
    CHECK_FALSE(f.estimated_gain);  // a capacity, not a speed-up
    return f.severity;
}

}  // namespace

TEST_CASE("glm.memory.shape_does_not_fit: requested rows beyond one dense copy, graded; capped rows explained",
          "[rules][glm][memory]") {
    CHECK_FALSE(memory_severity(memory_report(999999, 1000000)));
    CHECK(memory_severity(memory_report(1000001, 1000000)) == Severity::low);
    CHECK(memory_severity(memory_report(1999999, 1000000)) == Severity::low);
    CHECK(memory_severity(memory_report(2000000, 1000000)) == Severity::medium);
    CHECK(memory_severity(memory_report(4000000, 1000000)) == Severity::high);
    CHECK(memory_severity(memory_report(1000, 0)) == Severity::high);  // not even one row fits
    // Within one copy, but the probe's side-by-side copies were capped.
    CHECK(memory_severity(memory_report(500000, 1000000, 200000)) == Severity::info);

    const RunReport r = analyzed(memory_report(3000000, 1000000, 150000), glm_rules(), "glm.memory.shape_does_not_fit");
    const Finding& f = only_finding(r, "glm.memory.shape_does_not_fit", "kernel");
    CHECK_THAT(f.title,
               Catch::Contains("3000000 rows x 64") && Catch::Contains("1000000 rows") && Catch::Contains("150000"));
    CHECK_THAT(f.suggestion, Catch::Contains("mini-batches") && Catch::Contains("CSR"));
    CHECK(f.evidence.size() == 5);  // requested rows, dense and CSR capacities, both device limits

    // Missing: no capacity measurement, or no requested rows.
    RunReport no_capacity = memory_report(10, 1000000);
    no_capacity.results[0].measurements.clear();
    check_missing(analyzed(no_capacity, glm_rules(), "glm.memory.shape_does_not_fit"), "glm.memory.shape_does_not_fit",
                  "glm.memory.max_rows (format=dense)");
    RunReport no_request = memory_report(10, 1000000);
    no_request.results[0].attributes.erase("rows_requested");
    check_missing(analyzed(no_request, glm_rules(), "glm.memory.shape_does_not_fit"), "glm.memory.shape_does_not_fit",
                  "glm.gradient's facts");
}
