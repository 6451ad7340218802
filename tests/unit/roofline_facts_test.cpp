// Roofline points as the workload probes record them and the renderers and checks read them back.
#include <catch2/catch.hpp>

#include <limits>

#include "core/report.hpp"
#include "core/roofline_facts.hpp"

using namespace clprobe;

TEST_CASE("roofline point: JSON round trip keeps the level, roof and working set", "[roofline]") {
    RooflinePoint p;
    p.label = "decode fp32 single L=32768";
    p.intensity = 0.25;
    p.gflops = 5.0;
    p.working_set_bytes = 134217728;
    p.level = "memory";
    p.roof_gb_per_s = 21.5;
    ProbeResult r;
    add_roofline_point(r, p);
    add_roofline_point(r, p);
    const auto back = roofline_points_of(r);
    REQUIRE(back.size() == 2);
    CHECK(back[0].label == p.label);
    CHECK(back[0].working_set_bytes == p.working_set_bytes);
    CHECK(back[0].level == "memory");
    CHECK(*back[0].roof_gb_per_s == Approx(21.5));
    CHECK(back[0].gb_per_s() == Approx(20.0));  // 5 GFLOP/s at 0.25 FLOP/byte
}

TEST_CASE("roofline point: an older point without level or working set still reads", "[roofline]") {
    const auto p = roofline_point_from_json({{"label", "glm x"}, {"intensity", 0.5}, {"gflops", 4}});
    REQUIRE(p);
    CHECK(p->working_set_bytes == 0);
    CHECK(p->level.empty());
    CHECK_FALSE(p->roof_gb_per_s);
}

TEST_CASE("roofline point: damaged entries are skipped, never thrown on", "[roofline]") {
    ProbeResult r;
    r.attributes["roofline_points"] = nlohmann::json::array(
        {nlohmann::json{{"label", "ok"}, {"intensity", 1.0}, {"gflops", 2.0}},
         nlohmann::json{{"label", "no rate"}, {"intensity", 1.0}},
         nlohmann::json{{"label", "zero intensity"}, {"intensity", 0.0}, {"gflops", 2.0}},
         nlohmann::json{{"label", "text"}, {"intensity", "1"}, {"gflops", 2.0}},
         nlohmann::json{{"label", "negative roof"}, {"intensity", 1.0}, {"gflops", 2.0}, {"roof_gb_per_s", -3}},
         nlohmann::json(42)});
    const auto points = roofline_points_of(r);
    REQUIRE(points.size() == 2);
    CHECK(points[0].label == "ok");
    CHECK(points[1].label == "negative roof");
    CHECK_FALSE(points[1].roof_gb_per_s);  // the bad roof is dropped, the point kept
    r.attributes["roofline_points"] = "not an array";
    CHECK(roofline_points_of(r).empty());
}
