// The typed contracts between the GLM probes and their rules: the shared pipeline stage names and
// the GLM facts, written with one call and read back with one call, from new and saved reports.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "core/glm_facts.hpp"
#include "core/pipeline_stages.hpp"
#include "core/report.hpp"

using namespace clprobe;

namespace {

RunReport report_with(ProbeResult r) {
    RunReport report;
    report.results.push_back(std::move(r));
    return report;
}

ProbeResult result_of(const char* id) {
    ProbeResult r;
    r.id = id;
    return r;
}

}  // namespace

TEST_CASE("pipeline stages: every name is distinct and reads back to its stage", "[pipeline][stages]") {
    std::set<std::string> names;
    for (Stage s : {Stage::upload, Stage::compute, Stage::download, Stage::host, Stage::sync, Stage::prefill,
                    Stage::decode, Stage::allreduce, Stage::update}) {
        const std::string name = stage_name(s);
        CHECK_FALSE(name.empty());
        CHECK(names.insert(name).second);
        CHECK(stage_from(name) == s);
        CHECK(to_string(s) == name);
    }
    CHECK_FALSE(stage_from("Upload"));
    CHECK_FALSE(stage_from(""));
}

TEST_CASE("pipeline stages: each pipeline keeps the stage labels saved reports hold", "[pipeline][stages]") {
    const auto names = [](const auto& stages) {
        std::string out;
        for (Stage s : stages)
            out += std::string(out.empty() ? "" : ",") + stage_name(s);
        return out;
    };
    CHECK(names(glm_pipeline_stages) == "upload,compute,download,host,sync");
    CHECK(names(attention_pipeline_stages) == "upload,prefill,decode,download");
    CHECK(names(transfer_pipeline_stages) == "upload,compute,download");
    CHECK(names(network_glm_step_stages) == "compute,download,allreduce,update,upload");
    CHECK(std::string(pipeline_ids::glm) == "glm.pipeline");
}

TEST_CASE("glm facts: gradient facts round trip, capped or not", "[glm][facts]") {
    GlmGradientFacts f;
    f.ran = {4096, 64};
    f.rows_requested = 1u << 20;
    f.rows_capped = true;
    f.density = 0.05;
    f.sparse_crossover_density = 0.2;
    ProbeResult r = result_of(glm_probe_ids::gradient);
    write_glm_gradient_facts(r, f);
    // The flat keys saved reports have always had.
    CHECK(r.attributes.at("rows_capped_from") == (1u << 20));
    CHECK(r.attributes.at("rows") == 4096);
    const auto back = glm_gradient_facts_of(report_with(r));
    REQUIRE(back);
    CHECK(back->ran.rows == 4096);
    CHECK(back->ran.cols == 64);
    CHECK(back->rows_requested == (1u << 20));
    CHECK(back->rows_capped);
    CHECK(back->density == Approx(0.05));
    REQUIRE(back->sparse_crossover_density);
    CHECK(*back->sparse_crossover_density == Approx(0.2));

    f.rows_capped = false;
    f.sparse_crossover_density.reset();
    ProbeResult uncapped = result_of(glm_probe_ids::gradient);
    write_glm_gradient_facts(uncapped, f);
    CHECK_FALSE(uncapped.attributes.contains("rows_capped_from"));
    const auto plain = glm_gradient_facts_of(report_with(uncapped));
    REQUIRE(plain);
    CHECK_FALSE(plain->rows_capped);
    CHECK_FALSE(plain->sparse_crossover_density);
}

TEST_CASE("glm facts: absent or damaged facts read as missing, never thrown on", "[glm][facts]") {
    CHECK_FALSE(glm_gradient_facts_of(RunReport{}));
    CHECK_FALSE(glm_run_shape_of(RunReport{}, glm_probe_ids::pipeline));

    ProbeResult damaged = result_of(glm_probe_ids::gradient);
    damaged.attributes = {{"rows", "many"}, {"rows_requested", -3}, {"density", "x"}};
    const auto facts = glm_gradient_facts_of(report_with(damaged));
    REQUIRE(facts);  // the probe ran; what it lacks stays unknown
    CHECK(facts->rows_requested == 0);
    CHECK(facts->ran.rows == 0);
    CHECK(facts->density == 0);
    CHECK_FALSE(glm_run_shape_of(report_with(damaged), glm_probe_ids::gradient));

    ProbeResult host = result_of(glm_probe_ids::host_blas);
    write_glm_run_shape(host, {2048, 32});
    const auto shape = glm_run_shape_of(report_with(host), glm_probe_ids::host_blas);
    REQUIRE(shape);
    CHECK(shape->rows == 2048);
    CHECK(shape->cols == 32);
}
