// GLM rules on synthetic reports: each fires above its threshold, stays silent below it and
// inside the noise, and says what is missing when its inputs are absent.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/report.hpp"
#include "rules/analysis.hpp"
#include "rules/glm_rules.hpp"

using namespace clprobe;

namespace {

std::vector<double> steady(double v) {
    return {v, v, v, v, v};
}
std::vector<double> noisy(double v) {
    return {v * 0.5, v, v * 1.5};
}

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
    return make_measurement("glm.gradient.bandwidth", "GB/s", std::move(labels), std::move(gbs),
                            TimerKind::device_profiling);
}
Measurement stage(const std::string& name, const std::string& v, double s) {
    return make_measurement("glm.pipeline.stage_time", "s", {{"stage", name}, {"variant", v}}, steady(s),
                            TimerKind::device_profiling, false);
}
Measurement step(const std::string& v, std::vector<double> s) {
    return make_measurement("glm.pipeline.step_time", "s", {{"variant", v}}, std::move(s), TimerKind::host_steady_clock,
                            false);
}

RunReport report_of(std::vector<Measurement> ms, nlohmann::json pipeline_attrs = {}, nlohmann::json blas_attrs = {}) {
    RunReport r;
    ProbeResult p;
    p.id = "glm.gradient";
    p.layer = "kernel";
    p.measurements = std::move(ms);
    r.results.push_back(std::move(p));
    if (!pipeline_attrs.is_null()) {
        ProbeResult q;
        q.id = "glm.pipeline";
        q.layer = "kernel";
        q.attributes = pipeline_attrs;
        r.results.push_back(std::move(q));
    }
    if (!blas_attrs.is_null()) {
        ProbeResult q;
        q.id = "glm.host_blas";
        q.layer = "kernel";
        q.attributes = blas_attrs;
        r.results.push_back(std::move(q));
    }
    return r;
}

RunReport analyzed(RunReport r, const std::string& id) {
    for (auto& rule : glm_rules())
        if (rule.id == id) {
            analyze(r, {rule});
            return r;
        }
    FAIL("no glm rule " << id);
    return r;
}

const Finding& single(const RunReport& r, const std::string& id) {
    REQUIRE(r.findings.size() == 1);
    const Finding& f = r.findings[0];
    CHECK(f.id == id);
    CHECK_FALSE(f.title.empty());
    CHECK_FALSE(f.suggestion.empty());
    CHECK_FALSE(f.gain_basis.empty());
    CHECK(f.estimated_gain.has_value());
    return f;
}

void check_silent(const RunReport& r) {
    CHECK(r.findings.empty());
    CHECK(r.rules_not_evaluated.empty());
}

void check_missing(const RunReport& r) {
    CHECK(r.findings.empty());
    CHECK(r.rules_not_evaluated.size() == 1);
}

}  // namespace

TEST_CASE("glm rules: every id is unique and documented in kernel layer", "[rules][glm]") {
    const auto rules = glm_rules();
    CHECK(rules.size() == 9);
    for (const auto& r : rules) {
        CHECK(r.id.rfind("glm.", 0) == 0);
        CHECK(r.layer == "kernel");
    }
}

TEST_CASE("glm.layout.uncoalesced: above, below, noisy, missing", "[rules][glm]") {
    const std::string id = "glm.layout.uncoalesced";
    const auto fired = analyzed(report_of({time_of(variant("row"), steady(1.0)), time_of(variant("col"), steady(3.0)),
                                           stage("compute", "a", 1)}),
                                id);
    const Finding& f = single(fired, id);
    CHECK_THAT(f.title, Catch::Contains("col-major"));
    CHECK_THAT(f.suggestion, Catch::Contains("row-major"));
    REQUIRE(f.target.has_value());
    CHECK(f.target->stage == "compute");
    CHECK(f.target->pipeline == "glm.pipeline");
    CHECK(f.target->stage_gain == Approx(2.0 / 3.0));
    CHECK(*f.estimated_gain == Approx(2.0 / 3.0));  // compute is the whole pipeline here
    check_silent(analyzed(report_of({time_of(variant("row"), steady(1.0)), time_of(variant("col"), steady(1.1))}), id));
    check_silent(analyzed(report_of({time_of(variant("row"), noisy(1.0)), time_of(variant("col"), noisy(1.4))}), id));
    check_missing(analyzed(report_of({time_of(variant("row"), steady(1.0))}), id));
}

TEST_CASE("glm.reduction.atomics compares bandwidth of the atomic variant and its local twin", "[rules][glm]") {
    const std::string id = "glm.reduction.atomics";
    const auto fired = analyzed(
        report_of({bandwidth_of(variant(), steady(20)), bandwidth_of(variant("row", "atomic"), steady(2))}), id);
    CHECK(single(fired, id).target->stage_gain == Approx(0.9));
    check_silent(analyzed(
        report_of({bandwidth_of(variant(), steady(20)), bandwidth_of(variant("row", "atomic"), steady(19))}), id));
    check_silent(analyzed(
        report_of({bandwidth_of(variant(), noisy(20)), bandwidth_of(variant("row", "atomic"), noisy(12))}), id));
    check_missing(analyzed(report_of({bandwidth_of(variant(), steady(20))}), id));
}

TEST_CASE("glm.passes.two_pass and glm.precision.fp64", "[rules][glm]") {
    const auto two =
        analyzed(report_of({time_of(variant(), steady(1.0)), time_of(variant("row", "local", "2"), steady(2.0))}),
                 "glm.passes.two_pass");
    CHECK(single(two, "glm.passes.two_pass").target->stage_gain == Approx(0.5));
    check_silent(
        analyzed(report_of({time_of(variant(), steady(1.0)), time_of(variant("row", "local", "2"), steady(1.05))}),
                 "glm.passes.two_pass"));
    check_missing(analyzed(report_of({time_of(variant(), steady(1.0))}), "glm.passes.two_pass"));

    const auto fp64 = analyzed(
        report_of({time_of(variant(), steady(1.0)), time_of(variant("row", "local", "1", "64", "fp64"), steady(4.0))}),
        "glm.precision.fp64");
    CHECK(single(fp64, "glm.precision.fp64").target->stage_gain == Approx(0.75));
    check_silent(analyzed(
        report_of({time_of(variant(), steady(1.0)), time_of(variant("row", "local", "1", "64", "fp64"), steady(1.3))}),
        "glm.precision.fp64"));
    check_silent(analyzed(
        report_of({time_of(variant(), noisy(1.0)), time_of(variant("row", "local", "1", "64", "fp64"), noisy(1.8))}),
        "glm.precision.fp64"));
    check_missing(analyzed(report_of({time_of(variant(), steady(1.0))}), "glm.precision.fp64"));
}

TEST_CASE("glm.workgroup.size names the best size of the sweep", "[rules][glm]") {
    const std::string id = "glm.workgroup.size";
    const auto fired =
        analyzed(report_of({time_of(variant(), steady(1.0)), time_of(variant("row", "local", "1", "16"), steady(2.0)),
                            time_of(variant("row", "local", "1", "256"), steady(0.8))}),
                 id);
    const Finding& f = single(fired, id);
    CHECK_THAT(f.suggestion, Catch::Contains("work-groups of 256"));
    CHECK(f.target->stage_gain == Approx(0.6));
    check_silent(analyzed(
        report_of({time_of(variant(), steady(1.0)), time_of(variant("row", "local", "1", "16"), steady(1.05))}), id));
    check_missing(analyzed(report_of({time_of(variant(), steady(1.0))}), id));
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
    CHECK(single(analyzed(with(10), id), id).target->stage_gain == Approx(0.75));
    check_silent(analyzed(with(30), id));
    check_missing(analyzed(report_of({peak}), id));
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
    const auto fired = analyzed(report_of(ms), id);
    const Finding& f = single(fired, id);
    CHECK(*f.estimated_gain == Approx(0.8));  // resident: 2 ms of a 10 ms step
    CHECK_THAT(f.title, Catch::Contains("80%"));
    CHECK_THAT(f.suggestion, Catch::Contains("resident"));
    CHECK_THAT(f.suggestion, Catch::Contains("no measurable gain"));

    auto low = base(0.001);  // uploads a third of the step
    low.push_back(step("resident", steady(0.002)));
    check_silent(analyzed(report_of(low), id));
    auto noise = base(0.008);
    noise.push_back(step("resident", noisy(0.008)));
    noise[2] = step("serial_pageable", noisy(0.010));
    check_silent(analyzed(report_of(noise), id));
    check_missing(analyzed(report_of({step("resident", steady(1))}), id));
}

TEST_CASE("glm.offload.host_faster compares per-row times", "[rules][glm]") {
    const std::string id = "glm.offload.host_faster";
    const auto host = [](double ms) {
        return make_measurement("glm.host_blas.gradient.time", "ms", {{"library", "openblas"}}, steady(ms),
                                TimerKind::host_steady_clock, false);
    };
    // Host: 10 ms for 1M rows; device: 20 ms for 0.5M rows (4x slower per row).
    const auto fired = analyzed(
        report_of({host(10), step("serial_pageable", steady(0.020))}, {{"rows", 500000}}, {{"rows", 1000000}}), id);
    CHECK(*single(fired, id).estimated_gain == Approx(0.75));
    check_silent(analyzed(
        report_of({host(10), step("serial_pageable", steady(0.004))}, {{"rows", 500000}}, {{"rows", 1000000}}), id));
    check_missing(analyzed(report_of({host(10), step("serial_pageable", steady(0.004))}), id));
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
    const auto sparse_wins =
        analyzed(with_density(report_of({time_of(variant(), steady(4.0)), time_of(csr, steady(1.0))})), id);
    const Finding& f = single(sparse_wins, id);
    CHECK_THAT(f.title, Catch::Contains("density 0.05") && Catch::Contains("dense gradient takes 4.0x"));
    CHECK_THAT(f.suggestion, Catch::Contains("Keep X in CSR") && Catch::Contains("0.2"));
    CHECK(*f.estimated_gain == Approx(0.75));
    // Dense 3x faster: store dense.
    const auto dense_wins =
        analyzed(with_density(report_of({time_of(variant(), steady(1.0)), time_of(csr, steady(3.0))})), id);
    CHECK_THAT(single(dense_wins, id).suggestion, Catch::Contains("Store X dense"));
    // The fastest dense variant counts, not the first one measured.
    check_silent(analyzed(
        report_of({time_of(variant("col"), steady(5.0)), time_of(variant(), steady(1.0)), time_of(csr, steady(1.1))}),
        id));
    check_silent(analyzed(report_of({time_of(variant(), noisy(1.0)), time_of(csr, noisy(1.6))}), id));
    check_missing(analyzed(report_of({time_of(variant(), steady(1.0))}), id));
}
