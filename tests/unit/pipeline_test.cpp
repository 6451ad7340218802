// Pipelines from stage measurements, and gains turned into shares of a pipeline's time.
#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <vector>

#include "core/report.hpp"
#include "rules/analysis.hpp"
#include "rules/pipeline.hpp"

using namespace clprobe;

namespace {

Measurement stage(const std::string& pipeline, const std::string& stage, const std::string& variant, double seconds) {
    Labels labels{{"stage", stage}};
    if (!variant.empty()) labels["variant"] = variant;
    return make_measurement(pipeline + ".stage_time", "s", labels, {seconds, seconds, seconds},
                            TimerKind::device_profiling);
}

RunReport report_with(std::vector<Measurement> ms) {
    RunReport r;
    ProbeResult p;
    p.id = "test.pipeline";
    p.layer = "kernel";
    p.status = ProbeStatus::ok;
    p.measurements = std::move(ms);
    r.results.push_back(std::move(p));
    return r;
}

Finding targeted(const std::string& id, const std::string& pipeline, const std::string& stage, double stage_gain) {
    Finding f;
    f.id = id;
    f.layer = "transfer";
    f.severity = Severity::medium;
    f.gain_basis = "measured";
    f.target = GainTarget{pipeline, stage, stage_gain, std::nullopt};
    return f;
}

}  // namespace

TEST_CASE("pipeline: stages group by pipeline and variant, the first variant first", "[pipeline]") {
    const auto r = report_with(
        {stage("glm.pipeline", "upload", "serial", 0.006), stage("glm.pipeline", "compute", "serial", 0.002),
         stage("glm.pipeline", "upload", "overlapped", 0.001), stage("glm.pipeline", "download", "serial", 0.002),
         make_measurement("glm.pipeline.step_time", "s", {}, {1, 1}, TimerKind::none)});
    const auto ps = pipelines_of(r);
    REQUIRE(ps.size() == 2);
    CHECK(ps[0].variant == "variant=serial");
    CHECK(ps[0].total_seconds() == Approx(0.010));
    CHECK(ps[0].stage_seconds("compute") == Approx(0.002));
    CHECK_FALSE(ps[0].stage_seconds("sync"));
    CHECK(ps[1].total_seconds() == Approx(0.001));
}

TEST_CASE("pipeline: a stage's gain becomes its share of the baseline step", "[pipeline]") {
    const auto r = report_with(
        {stage("glm.pipeline", "upload", "serial", 0.006), stage("glm.pipeline", "compute", "serial", 0.004)});
    std::vector<Finding> fs{targeted("a", "glm.pipeline", "upload", 0.5), targeted("b", "", "compute", 0.5)};
    apply_pipeline_shares(r, fs);
    REQUIRE(fs[0].estimated_gain);
    CHECK(*fs[0].estimated_gain == Approx(0.3));  // half of a stage that is 60% of the step
    CHECK(*fs[0].target->pipeline_share == Approx(0.6));
    CHECK(*fs[1].estimated_gain == Approx(0.2));
    CHECK(fs[1].target->pipeline == "glm.pipeline");
    CHECK(fs[0].gain_basis.find("60% of the measured glm.pipeline step") != std::string::npos);
}

TEST_CASE("pipeline: without a named pipeline, workloads are preferred to the transfer stand-in", "[pipeline]") {
    const auto r = report_with(
        {stage("transfer.pipeline", "upload", "", 0.009), stage("transfer.pipeline", "compute", "", 0.001),
         stage("attention.pipeline", "upload", "", 0.001), stage("attention.pipeline", "compute", "", 0.009)});
    std::vector<Finding> fs{targeted("a", "", "upload", 1.0)};
    apply_pipeline_shares(r, fs);
    CHECK(fs[0].target->pipeline == "attention.pipeline");
    CHECK(*fs[0].estimated_gain == Approx(0.1));
}

TEST_CASE("pipeline: no pipeline with the stage leaves the stage's own gain, and says so", "[pipeline]") {
    const auto r = report_with({stage("glm.pipeline", "compute", "", 0.004)});
    std::vector<Finding> fs{targeted("a", "", "upload", 0.4)};
    apply_pipeline_shares(r, fs);
    CHECK(*fs[0].estimated_gain == Approx(0.4));
    CHECK_FALSE(fs[0].target->pipeline_share);
    CHECK(fs[0].gain_basis.find("no pipeline") != std::string::npos);
}

TEST_CASE("pipeline: damaged stage times are ignored and gains stay fractions", "[pipeline]") {
    auto bad = stage("glm.pipeline", "upload", "", 0.004);
    bad.summary.median = std::numeric_limits<double>::quiet_NaN();
    const auto r = report_with({bad, stage("glm.pipeline", "compute", "", 0.004)});
    CHECK(pipelines_of(r).at(0).stages.size() == 1);
    std::vector<Finding> fs{targeted("a", "glm.pipeline", "compute", 7.0)};
    apply_pipeline_shares(r, fs);
    CHECK(*fs[0].estimated_gain == Approx(1.0));
}

TEST_CASE("pipeline: ranking orders findings by their pipeline share, not their local gain", "[pipeline]") {
    const auto r =
        report_with({stage("glm.pipeline", "upload", "", 0.009), stage("glm.pipeline", "compute", "", 0.001)});
    // A 3x faster kernel (67% local) on a 10% stage saves less than a 30% faster upload on 90%.
    std::vector<Finding> fs{targeted("kernel.fast", "", "compute", 0.67), targeted("upload.pinned", "", "upload", 0.3)};
    apply_pipeline_shares(r, fs);
    classify_findings(fs);
    rank_findings(fs);
    CHECK(fs[0].id == "upload.pinned");
    CHECK(fs[0].rank == 1);
    CHECK(fs[1].id == "kernel.fast");
}

namespace {

// The joules per step a sensor read for one variant of a pipeline (probes/common/step_energy).
Measurement step_energy(const std::string& pipeline, const std::string& variant, const std::string& scope,
                        double joules) {
    return make_measurement(pipeline + ".step_energy", "J",
                            {{"variant", variant}, {"sensor", "intel-rapl:0"}, {"scope", scope}},
                            {joules, joules, joules}, TimerKind::host_steady_clock, false);
}

}  // namespace

TEST_CASE("pipeline: a ranked gain states the energy it would also save where the step's energy was measured",
          "[pipeline][energy]") {
    // Upload is 60% of the serial step; halving it saves 30% of the step, so 30% of its 2 J.
    const auto r = report_with({stage("glm.pipeline", "upload", "serial", 0.006),
                                stage("glm.pipeline", "compute", "serial", 0.004),
                                step_energy("glm.pipeline", "serial", "cpu package 0", 2.0)});
    std::vector<Finding> fs{targeted("a", "glm.pipeline", "upload", 0.5)};
    apply_pipeline_shares(r, fs);
    REQUIRE(fs[0].estimated_gain);
    CHECK(*fs[0].estimated_gain == Approx(0.3));
    CHECK_THAT(fs[0].gain_basis,
               Catch::EndsWith("; it would also save about 0.6 J of the 2 J measured per step on cpu package 0 (same "
                               "average power)"));
}

TEST_CASE("pipeline: no energy measured for the step, no energy claimed", "[pipeline][energy]") {
    const auto stages = std::vector<Measurement>{stage("glm.pipeline", "upload", "serial", 0.006),
                                                 stage("glm.pipeline", "compute", "serial", 0.004)};
    SECTION("no sensor read any step") {
        std::vector<Finding> fs{targeted("a", "glm.pipeline", "upload", 0.5)};
        apply_pipeline_shares(report_with(stages), fs);
        CHECK(*fs[0].estimated_gain == Approx(0.3));
        CHECK_THAT(fs[0].gain_basis, !Catch::Contains("J"));
        CHECK_THAT(fs[0].gain_basis, !Catch::Contains("energy"));
    }
    SECTION("a sensor read another variant's step only") {
        auto ms = stages;
        ms.push_back(step_energy("glm.pipeline", "resident", "cpu package 0", 2.0));
        std::vector<Finding> fs{targeted("a", "glm.pipeline", "upload", 0.5)};
        apply_pipeline_shares(report_with(ms), fs);
        CHECK_THAT(fs[0].gain_basis, !Catch::Contains("would also save"));
    }
    SECTION("the finding's gain has no pipeline to be a share of") {
        auto ms = std::vector<Measurement>{step_energy("glm.pipeline", "serial", "cpu package 0", 2.0)};
        std::vector<Finding> fs{targeted("a", "glm.pipeline", "upload", 0.5)};
        apply_pipeline_shares(report_with(ms), fs);
        CHECK_THAT(fs[0].gain_basis, !Catch::Contains("would also save"));
    }
}

TEST_CASE("pipeline: a traced program's finding states the energy of its lifetime's share (app.energy)",
          "[pipeline][energy]") {
    // The program's wall time split into stages; app.energy is the energy over that lifetime.
    auto r = report_with({stage("app.pipeline", "sync", "", 0.25), stage("app.pipeline", "host", "", 0.75),
                          make_measurement("app.energy", "J", {{"sensor", "intel-rapl:0"}, {"scope", "cpu package 0"}},
                                           {40.0}, TimerKind::host_steady_clock, false)});
    std::vector<Finding> fs{targeted("a", "app.pipeline", "sync", 1.0)};
    apply_pipeline_shares(r, fs);
    CHECK(*fs[0].estimated_gain == Approx(0.25));
    CHECK_THAT(fs[0].gain_basis, Catch::Contains("it would also save about 10 J of the 40 J measured over the "
                                                 "program's lifetime on cpu package 0"));
}
