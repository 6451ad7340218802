// Memory-level roofs: plateau detection on synthetic curves, where a working set lives, which roof
// it is drawn against, the device's cache capacities from topology facts, and the JSON form.
#include <catch2/catch.hpp>

#include <cmath>
#include <initializer_list>
#include <utility>

#include "core/memory_roofs.hpp"
#include "core/report.hpp"
#include "core/topology_facts.hpp"

using namespace clprobe;

namespace {

constexpr std::uint64_t KiB = 1024;
constexpr std::uint64_t MiB = 1024 * KiB;

// This machine's shape: two cores' L1d and L2, one shared L3.
std::vector<CacheCapacity> epyc_caches() {
    return {{"L1", 64 * KiB}, {"L2", 2 * MiB}, {"L3", 32 * MiB}};
}

// Points at 16 KiB, 32 KiB, ... (doubling), with these rates and a small cv.
std::vector<BandwidthPoint> doubling_curve(std::initializer_list<double> rates, double cv = 0.02) {
    std::vector<BandwidthPoint> c;
    std::uint64_t ws = 16 * KiB;
    for (double r : rates) {
        c.push_back({ws, r, cv});
        ws *= 2;
    }
    return c;
}

// 16K 32K 64K | 128K .. 2M | 4M .. 32M | 64M (transition) | 128M 256M
std::vector<BandwidthPoint> three_levels_and_memory() {
    return doubling_curve({300, 305, 290, 150, 152, 149, 151, 148, 60, 61, 59, 60, 35, 15, 15.5});
}

const MemoryRoof* roof_named(const std::vector<MemoryRoof>& roofs, const std::string& level) {
    for (const auto& r : roofs)
        if (r.level == level) return &r;
    return nullptr;
}

}  // namespace

TEST_CASE("memory roofs: three clean cache levels and memory give four named roofs", "[memory_roofs]") {
    const auto roofs = detect_plateaus(three_levels_and_memory(), epyc_caches());
    REQUIRE(roofs.size() == 4);
    CHECK(roofs[0].level == "L1");
    CHECK(roofs[0].first_bytes == 16 * KiB);
    CHECK(roofs[0].last_bytes == 64 * KiB);
    CHECK(roofs[0].points == 3);
    CHECK(roofs[0].gb_per_s == Approx(300));
    CHECK(roofs[1].level == "L2");
    CHECK(roofs[1].first_bytes == 128 * KiB);
    CHECK(roofs[1].last_bytes == 2 * MiB);
    CHECK(roofs[1].gb_per_s == Approx(150));
    CHECK(roofs[2].level == "L3");
    CHECK(roofs[2].first_bytes == 4 * MiB);
    CHECK(roofs[2].last_bytes == 32 * MiB);
    CHECK(roofs[2].gb_per_s == Approx(60));
    // The 64 MiB point is partly cached: it belongs to no plateau, and memory starts at 4 x LLC.
    CHECK(roofs[3].level == "memory");
    CHECK(roofs[3].first_bytes == 128 * MiB);
    CHECK(roofs[3].last_bytes == 256 * MiB);
    CHECK(roofs[3].gb_per_s == Approx(15.25));
    CHECK(roofs[3].points == 2);
}

TEST_CASE("memory roofs: a partly cached point joins neither the last cache nor memory", "[memory_roofs]") {
    auto curve = three_levels_and_memory();
    REQUIRE(curve[12].working_set_bytes == 64 * MiB);
    SECTION("as fast as the L3") {
        curve[12].gb_per_s = 59;
        const auto roofs = detect_plateaus(curve, epyc_caches());
        REQUIRE(roof_named(roofs, "L3"));
        CHECK(roof_named(roofs, "L3")->last_bytes == 32 * MiB);
        CHECK(roof_named(roofs, "L3")->points == 4);
    }
    SECTION("as slow as memory") {
        curve[12].gb_per_s = 15.2;
        const auto roofs = detect_plateaus(curve, epyc_caches());
        REQUIRE(roof_named(roofs, "memory"));
        CHECK(roof_named(roofs, "memory")->first_bytes == 128 * MiB);
        CHECK(roof_named(roofs, "memory")->points == 2);
    }
    SECTION("memory needs two points at 4 x LLC or beyond") {
        curve.pop_back();
        CHECK_FALSE(roof_named(detect_plateaus(curve, epyc_caches()), "memory"));
    }
}

TEST_CASE("memory roofs: the input order of the points does not matter", "[memory_roofs]") {
    auto curve = three_levels_and_memory();
    std::swap(curve.front(), curve.back());
    std::swap(curve[3], curve[9]);
    const auto roofs = detect_plateaus(curve, epyc_caches());
    REQUIRE(roofs.size() == 4);
    CHECK(roofs[1].level == "L2");
    CHECK(roofs[1].first_bytes == 128 * KiB);
}

TEST_CASE("memory roofs: noisy points inside the band stay one plateau", "[memory_roofs]") {
    // L2 points spread by 11% of their median (inside 15%), and L3 points with cv 0.1 whose 16%
    // spread is inside 2 cv.
    auto curve = doubling_curve({300, 290, 295, 140, 157, 145, 150, 152, 60, 66, 56, 62, 35, 15, 15.5});
    for (std::size_t i = 8; i < 12; ++i)
        curve[i].cv = 0.1;
    const auto roofs = detect_plateaus(curve, epyc_caches());
    REQUIRE(roofs.size() == 4);
    CHECK(roofs[1].level == "L2");
    CHECK(roofs[1].points == 5);
    CHECK(roofs[1].gb_per_s == Approx(150));
    CHECK(roofs[2].level == "L3");
    CHECK(roofs[2].points == 4);

    SECTION("the same spread with quiet points breaks the plateau") {
        for (std::size_t i = 8; i < 12; ++i)
            curve[i].cv = 0.01;
        const auto quiet = detect_plateaus(curve, epyc_caches());
        const MemoryRoof* l3 = roof_named(quiet, "L3");
        REQUIRE(l3);
        CHECK(l3->points == 2);
    }
    SECTION("one wild point widens the band by 2 x tolerance at most") {
        curve[5].cv = 5;  // 145 GB/s with cv 500%: the band is capped at 30%
        const auto wild = detect_plateaus(curve, epyc_caches());
        const MemoryRoof* l1 = roof_named(wild, "L1");
        REQUIRE(l1);
        CHECK(l1->last_bytes == 64 * KiB);  // L1 did not swallow L2
    }
}

TEST_CASE("memory roofs: a smoothly declining curve has no plateau", "[memory_roofs]") {
    MemoryRoofFacts f;
    f.caches = epyc_caches();
    // 20% less per doubling: every pair of neighbours is 22% apart, beyond the 15% band.
    double r = 400;
    for (std::uint64_t ws = 16 * KiB; ws <= 256 * MiB; ws *= 2, r *= 0.8)
        f.curve.push_back({ws, r, 0.02});
    f.roofs = detect_plateaus(f.curve, f.caches);
    CHECK(f.roofs.empty());
    const std::string note = missing_roofs_note(f);
    CHECK(note.find("no clear plateau for L1, L2, L3, memory") != std::string::npos);
    // Nothing to draw against: not even a faster level.
    CHECK_FALSE(roof_for(f, 1 * MiB).has_value());
    CHECK(roof_for(f, 1 * MiB, 20.0) == std::nullopt);
    REQUIRE(roof_for(f, 256 * MiB, 20.0).has_value());
    CHECK(roof_for(f, 256 * MiB, 20.0)->gb_per_s == 20.0);
}

TEST_CASE("memory roofs: a single plateau", "[memory_roofs]") {
    SECTION("a flat curve inside the caches is the largest cache it reaches") {
        const auto roofs = detect_plateaus(doubling_curve({100, 101, 99, 100, 102}), epyc_caches());
        REQUIRE(roofs.size() == 1);
        CHECK(roofs[0].level == "L2");  // the last point, 256 KiB, needs L2
        CHECK(roofs[0].points == 5);
    }
    SECTION("one point is not a plateau") {
        CHECK(detect_plateaus(doubling_curve({100}), epyc_caches()).empty());
        CHECK(detect_plateaus({}, epyc_caches()).empty());
    }
    SECTION("min_points is honoured") {
        CHECK(detect_plateaus(doubling_curve({100, 100, 30, 30, 30}), epyc_caches(), 0.15, 3).size() == 1);
    }
}

TEST_CASE("memory roofs: unknown caches name every plateau \"cache\"", "[memory_roofs]") {
    const auto roofs = detect_plateaus(three_levels_and_memory(), {});
    REQUIRE(roofs.size() == 1);
    CHECK(roofs[0].level == "cache");
    CHECK(roofs[0].gb_per_s == Approx(300));  // the faster of the plateaus that share the name
    CHECK(level_of({}, 4 * KiB) == "memory");

    MemoryRoofFacts f;
    f.curve = three_levels_and_memory();
    f.roofs = roofs;
    CHECK(missing_roofs_note(f).empty());
    // No capacity: every working set is drawn against memory when its roof is given...
    CHECK(roof_for(f, 4 * KiB, 15.0)->level == "memory");
    // ...and otherwise against the cache plateau, which is faster than memory.
    CHECK(roof_for(f, 4 * KiB)->level == "cache");
}

TEST_CASE("memory roofs: two plateaus inside one level keep the faster", "[memory_roofs]") {
    // 128 KiB and 256 KiB at 200, 512 KiB to 2 MiB at 120: both need L2.
    const auto roofs = detect_plateaus(doubling_curve({300, 300, 300, 200, 201, 120, 121, 119}), epyc_caches());
    REQUIRE(roofs.size() == 2);
    CHECK(roofs[0].level == "L1");
    CHECK(roofs[1].level == "L2");
    CHECK(roofs[1].gb_per_s == Approx(200.5));
    CHECK(roofs[1].first_bytes == 128 * KiB);
    CHECK(roofs[1].last_bytes == 256 * KiB);
}

TEST_CASE("memory roofs: a point half-way between two levels joins neither", "[memory_roofs]") {
    // 64 KiB at 165 is within 15% of the first L2 point (150), but not of the whole L2 plateau:
    // taken point by point it would start a short, faster "L2" plateau of its own.
    const auto roofs = detect_plateaus(doubling_curve({300, 300, 165, 150, 140, 140, 140, 140}), epyc_caches(), 0.15);
    const MemoryRoof* l2 = roof_named(roofs, "L2");
    REQUIRE(l2);
    CHECK(l2->first_bytes == 128 * KiB);
    CHECK(l2->gb_per_s == Approx(140));
}

TEST_CASE("memory roofs: level_of at the boundaries", "[memory_roofs]") {
    const auto c = epyc_caches();
    CHECK(level_of(c, 1) == "L1");
    CHECK(level_of(c, 64 * KiB) == "L1");  // exactly the capacity
    CHECK(level_of(c, 64 * KiB + 1) == "L2");
    CHECK(level_of(c, 2 * MiB) == "L2");
    CHECK(level_of(c, 32 * MiB) == "L3");
    // Beyond the LLC the data does not fit in it, however much of it stays cached.
    CHECK(level_of(c, 32 * MiB + 1) == "memory");
    CHECK(level_of(c, 128 * MiB - 1) == "memory");
    CHECK(level_of(c, 128 * MiB) == "memory");  // 4 x LLC
    CHECK(level_of(c, 1024 * MiB) == "memory");
    // Capacities in any order.
    CHECK(level_of({{"L3", 32 * MiB}, {"L1", 64 * KiB}, {"L2", 2 * MiB}}, 100 * KiB) == "L2");
}

TEST_CASE("memory roofs: roof_for falls back to a faster level and to the given memory roof", "[memory_roofs]") {
    MemoryRoofFacts f;
    f.caches = epyc_caches();
    f.roofs = {{"L1", 16 * KiB, 64 * KiB, 300, 3}, {"L3", 4 * MiB, 32 * MiB, 60, 4}};

    CHECK(roof_for(f, 32 * KiB)->level == "L1");
    // L2 was not measured: the nearest faster level with a roof bounds it.
    REQUIRE(roof_for(f, 1 * MiB).has_value());
    CHECK(roof_for(f, 1 * MiB)->level == "L1");
    CHECK(roof_for(f, 1 * MiB)->gb_per_s == 300);
    // Beyond the LLC, never the LLC's roof: without a sweep there, the given memory roof...
    CHECK(roof_for(f, 64 * MiB, 15.0)->level == "memory");
    CHECK(roof_for(f, 64 * MiB, 15.0)->gb_per_s == 15.0);
    CHECK(roof_for(f, 256 * MiB, 15.0)->gb_per_s == 15.0);
    CHECK(roof_for(f, 256 * MiB, 15.0)->level == "memory");
    CHECK(roof_for(f, 256 * MiB, 15.0)->basis == RoofBasis::memory);
    // ...and with nothing measured beyond the cache, no roof at all.
    CHECK_FALSE(roof_for(f, 256 * MiB).has_value());
    CHECK_FALSE(roof_for(f, 64 * MiB).has_value());
    // A measured memory roof is used when none is given.
    f.roofs.push_back({"memory", 128 * MiB, 256 * MiB, 14, 2});
    CHECK(roof_for(f, 256 * MiB)->gb_per_s == 14);
    CHECK(roof_for(f, 256 * MiB, 15.0)->gb_per_s == 15.0);
    // Nothing faster than L1 to fall back on.
    f.roofs = {{"L3", 4 * MiB, 32 * MiB, 60, 4}};
    CHECK_FALSE(roof_for(f, 32 * KiB).has_value());
}

TEST_CASE("memory roofs: a working set between the last cache and memory is held against the sweep at its size",
          "[memory_roofs]") {
    MemoryRoofFacts f;
    f.caches = epyc_caches();  // L3: 32 MiB
    f.curve = {{8 * MiB, 170, 0.02}, {16 * MiB, 168, 0.02}, {32 * MiB, 120, 0.02},
               {64 * MiB, 40, 0.02}, {128 * MiB, 30, 0.02}, {256 * MiB, 29, 0.02}};
    f.roofs = {{"L3", 8 * MiB, 16 * MiB, 169, 2}, {"memory", 128 * MiB, 256 * MiB, 29.5, 2}};
    // The default GLM shape of a standard run before: 64 MiB on a 32 MiB L3. It read 30 GB/s in the
    // sweep; the L3 roof (169) would call a workload at 30 "17% of the roof".
    const auto at_64 = roof_for(f, 64 * MiB, 31.0);
    REQUIRE(at_64);
    CHECK(at_64->level == "memory");
    CHECK(at_64->basis == RoofBasis::sweep);
    CHECK(at_64->gb_per_s == Approx(40));  // the sweep's own point
    CHECK_THAT(at_64->metric, Catch::Contains("kernel.memory_levels.bandwidth at 64 MiB"));
    // Between two points: linear in log(working set). 48 MiB is log2(1.5) = 0.585 of the way.
    const auto at_48 = roof_for(f, 48 * MiB, 31.0);
    REQUIRE(at_48);
    CHECK(at_48->gb_per_s == Approx(120 - std::log2(1.5) * 80));
    CHECK(at_48->gb_per_s < 169);
    // Just above the LLC: close to its last cached point, still not the L3 roof.
    const auto above = roof_for(f, 32 * MiB + 1, 31.0);
    REQUIRE(above);
    CHECK(above->level == "memory");
    CHECK(above->gb_per_s == Approx(120).epsilon(0.001));
    // Inside the LLC the L3 roof, from four times it the memory roof.
    CHECK(roof_for(f, 32 * MiB, 31.0)->level == "L3");
    CHECK(roof_for(f, 128 * MiB, 31.0)->gb_per_s == 31.0);
    CHECK(roof_for(f, 128 * MiB, 31.0)->basis == RoofBasis::memory);
    // Without kernel.peak.bandwidth, the memory plateau; beyond the curve, the sweep's largest point.
    CHECK(roof_for(f, 128 * MiB)->gb_per_s == Approx(29.5));
    f.roofs.pop_back();
    CHECK(roof_for(f, 1024 * MiB)->gb_per_s == Approx(29));
    CHECK_THAT(roof_for(f, 1024 * MiB)->metric, Catch::Contains("the sweep's largest working set"));
}

TEST_CASE("memory roofs: sweep_at interpolates inside the curve only", "[memory_roofs]") {
    const std::vector<BandwidthPoint> curve = {{1 * MiB, 100, 0}, {4 * MiB, 40, 0}};
    CHECK(*sweep_at(curve, 1 * MiB) == Approx(100));
    CHECK(*sweep_at(curve, 2 * MiB) == Approx(70));  // half-way in log(working set)
    CHECK(*sweep_at(curve, 4 * MiB) == Approx(40));
    CHECK_FALSE(sweep_at(curve, 512 * KiB));
    CHECK_FALSE(sweep_at(curve, 8 * MiB));
    CHECK_FALSE(sweep_at({}, 1 * MiB));
}

TEST_CASE("memory roofs: the device's caches from the topology layer's facts", "[memory_roofs]") {
    TopologyFacts t;
    t.pus = 2;
    t.cores = 2;
    t.caches = {{1, "data", 32 * KiB, 2},
                {1, "instruction", 32 * KiB, 2},
                {2, "unified", 1 * MiB, 2},
                {3, "unified", 32 * MiB, 1}};
    const auto c = device_cache_capacities(t, 2);
    REQUIRE(c.size() == 3);
    CHECK(c[0].level == "L1");
    CHECK(c[0].bytes == 64 * KiB);  // instruction caches left out
    CHECK(c[1].bytes == 2 * MiB);
    CHECK(c[2].bytes == 32 * MiB);

    // A 2-core device on a 64-PU machine with 8 L3s spans one L3 and two of each per-core cache.
    t.pus = 64;
    t.caches = {{1, "data", 32 * KiB, 64}, {2, "unified", 1 * MiB, 64}, {3, "unified", 32 * MiB, 8}};
    const auto part = device_cache_capacities(t, 2);
    REQUIRE(part.size() == 3);
    CHECK(part[0].bytes == 64 * KiB);
    CHECK(part[1].bytes == 2 * MiB);
    CHECK(part[2].bytes == 32 * MiB);
    CHECK(device_cache_capacities(t, 64)[2].bytes == 256 * MiB);
    CHECK(device_cache_capacities(TopologyFacts{}, 2).empty());
}

TEST_CASE("memory roofs: JSON round trip", "[memory_roofs]") {
    MemoryRoofFacts f;
    f.caches = epyc_caches();
    f.curve = three_levels_and_memory();
    f.roofs = detect_plateaus(f.curve, f.caches);
    f.note = "capacities from the device";
    const auto back = memory_roof_facts_from_json(nlohmann::json::parse(to_json(f).dump()));
    REQUIRE(back.has_value());
    CHECK(back->note == f.note);
    REQUIRE(back->caches.size() == 3);
    CHECK(back->caches[2].level == "L3");
    CHECK(back->caches[2].bytes == 32 * MiB);
    REQUIRE(back->curve.size() == f.curve.size());
    CHECK(back->curve[5].working_set_bytes == f.curve[5].working_set_bytes);
    CHECK(back->curve[5].gb_per_s == f.curve[5].gb_per_s);
    CHECK(back->curve[5].cv == f.curve[5].cv);
    REQUIRE(back->roofs.size() == 4);
    CHECK(back->roofs[3].level == "memory");
    CHECK(back->roofs[3].first_bytes == 128 * MiB);
    CHECK(back->roofs[3].points == 2);
    CHECK(back->roofs[1].gb_per_s == f.roofs[1].gb_per_s);
    CHECK(to_json(*back) == to_json(f));
}

TEST_CASE("memory roofs: malformed JSON reads as nothing", "[memory_roofs]") {
    MemoryRoofFacts f;
    f.caches = epyc_caches();
    f.curve = three_levels_and_memory();
    f.roofs = detect_plateaus(f.curve, f.caches);
    const nlohmann::json good = to_json(f);
    REQUIRE(memory_roof_facts_from_json(good).has_value());

    auto broken = [&](auto edit) {
        nlohmann::json j = good;
        edit(j);
        return memory_roof_facts_from_json(j);
    };
    CHECK_FALSE(memory_roof_facts_from_json(nlohmann::json::array()));
    CHECK_FALSE(memory_roof_facts_from_json("facts"));
    CHECK_FALSE(broken([](auto& j) { j.erase("curve"); }));
    CHECK_FALSE(broken([](auto& j) { j["roofs"] = nlohmann::json::object(); }));
    CHECK_FALSE(broken([](auto& j) { j["caches"][0]["bytes"] = -1; }));
    CHECK_FALSE(broken([](auto& j) { j["caches"][0]["level"] = 1; }));
    CHECK_FALSE(broken([](auto& j) { j["curve"][2]["gb_per_s"] = "fast"; }));
    CHECK_FALSE(broken([](auto& j) { j["curve"][2]["gb_per_s"] = nullptr; }));
    CHECK_FALSE(broken([](auto& j) { j["curve"][2]["cv"] = -0.5; }));
    CHECK_FALSE(broken([](auto& j) { j["roofs"][0].erase("points"); }));
    CHECK_FALSE(broken([](auto& j) { j["note"] = 3; }));
    // The note is optional.
    CHECK(broken([](auto& j) { j.erase("note"); }).has_value());
}

TEST_CASE("memory roofs: the facts of the kernel.memory_levels result", "[memory_roofs]") {
    MemoryRoofFacts f;
    f.caches = epyc_caches();
    f.note = "n";
    std::vector<ProbeResult> results(2);
    results[0].id = "kernel.bandwidth";
    results[1].id = memory_levels_probe_id;
    CHECK_FALSE(memory_roof_facts_of(results));  // no facts attribute
    results[1].attributes["facts"] = to_json(f);
    REQUIRE(memory_roof_facts_of(results).has_value());
    CHECK(memory_roof_facts_of(results)->note == "n");
    results[1].status = ProbeStatus::error;
    CHECK_FALSE(memory_roof_facts_of(results));
    results[1].status = ProbeStatus::ok;
    results[1].attributes["facts"] = "garbage";
    CHECK_FALSE(memory_roof_facts_of(results));
}

TEST_CASE("memory roofs: the memory-level shape in steps is the fewest steps holding four times the last cache",
          "[memory_roofs]") {
    constexpr std::uint64_t mib = 1ull << 20;
    // 32 MiB of L3, 256-byte rows in steps of 65,536: 4 x 32 MiB / 256 = 524,288 rows, eight steps.
    CHECK(memory_level_items(32 * mib, 256, 1u << 16) == (1u << 19));
    // One byte more cache needs one more row, so one more step.
    CHECK(memory_level_items(32 * mib + 1, 256, 1u << 16) == (1u << 19) + (1u << 16));
    // 260 MiB in steps of 4,096 tokens of 2 KiB: 532,480 tokens hold exactly 4 x 260 MiB.
    CHECK(memory_level_items(260 * mib, 2048, 4096) == 532480);
    // The working set reached is at least four times the cache and less than one step more.
    const std::uint64_t items = memory_level_items(3 * mib, 1000, 4096);
    CHECK(items % 4096 == 0);
    CHECK(items * 1000 >= memory_level_factor * 3 * mib);
    CHECK((items - 4096) * 1000 < memory_level_factor * 3 * mib);
    // Nothing to size from.
    CHECK(memory_level_items(0, 256, 4096) == 0);
    CHECK(memory_level_items(32 * mib, 0, 4096) == 0);
    CHECK(memory_level_items(32 * mib, 256, 0) == 0);
}
