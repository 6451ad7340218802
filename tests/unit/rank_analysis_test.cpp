// The ranks of a traced job side by side (reports/fleet/rank_analysis): which rank is slow, on
// which basis, and which of its kernels, transfers and host waits account for the difference.
#include <catch2/catch.hpp>

#include "fleet/rank_analysis.hpp"
#include "json/rank_json.hpp"
#include "render/rank_text.hpp"

using namespace clprobe;

namespace {

void set_stage(RankSummary& r, AppStage stage, double seconds) {
    for (std::size_t i = 0; i < std::size(all_app_stages); ++i)
        if (all_app_stages[i] == stage) r.stages[i] = seconds;
}

// A rank that launches `launches` kernels of 1 ms ("step") with a host wait after each, plus one
// 10 ms upload; its wall time is its stages' sum.
RankSummary rank(const std::string& name, int launches, double host_only = 0.5) {
    RankSummary r;
    r.rank = name;
    r.rank_from_launcher = true;
    r.source = "r-" + name + ".json";
    r.host = "node1";
    r.size = 3;
    const double kernel = launches * 1e-3, waits = launches * 0.2e-3, transfer = 0.01;
    set_stage(r, AppStage::kernel, kernel);
    set_stage(r, AppStage::host_wait, waits);
    set_stage(r, AppStage::transfer, transfer);
    set_stage(r, AppStage::host_only, host_only);
    r.wall_seconds = kernel + waits + transfer + host_only;
    r.opencl_commands = static_cast<std::uint64_t>(launches) + 1;
    r.host_waits = static_cast<std::uint64_t>(launches);
    r.items.push_back({"kernel", "step", static_cast<std::uint64_t>(launches), kernel, 0});
    r.items.push_back({"transfer", "h2d pageable", 1, transfer, 1 << 20});
    return r;
}

}  // namespace

TEST_CASE("ranks: the rank with more launches is slow, and its kernel and host waits say why", "[fleet][ranks]") {
    const RankAnalysis a = analyze_ranks({rank("0", 1000), rank("2", 1000), rank("1", 3000)}, {});
    REQUIRE(a.ranks.size() == 3);
    CHECK(a.ranks[0].rank == "0");
    CHECK(a.ranks[1].rank == "1");
    CHECK(a.ranks[2].rank == "2");
    REQUIRE(a.slowest);
    CHECK(a.slowest->rank == "1");
    CHECK(a.slowest->basis == "wall_time");
    CHECK(a.slowest->slow);
    CHECK(a.slowest->reference == Approx(1.0 + 0.2 + 0.01 + 0.5));
    CHECK(a.slowest->excess() == Approx(2.4));
    REQUIRE(a.slowest->causes.size() == 2);
    CHECK(a.slowest->causes[0].kind == "kernel");
    CHECK(a.slowest->causes[0].name == "step");
    CHECK(a.slowest->causes[0].excess_seconds() == Approx(2.0));
    CHECK(a.slowest->causes[0].count == 3000);
    CHECK(a.slowest->causes[0].reference_count == 1000);
    CHECK(a.slowest->causes[1].kind == "host_wait");
    CHECK(a.slowest->causes[1].excess_seconds() == Approx(0.4));
    CHECK(a.slowest->stages.front().name == "kernel");
    REQUIRE(a.findings.size() == 1);
    CHECK(a.findings[0].id == "fleet.rank.slow");
    CHECK(a.findings[0].rank == "1");
    REQUIRE(a.findings[0].evidence.size() >= 2);
    CHECK(a.findings[0].evidence[1].find("kernel 'step'") != std::string::npos);
    CHECK(a.findings[0].evidence[1].find("3000 launches against 1000") != std::string::npos);
    CHECK(a.size == 3);
    CHECK(a.missing_ranks.empty());
    CHECK(a.median.wall_seconds == Approx(1.71));
}

TEST_CASE("ranks: within the threshold no rank is called slow", "[fleet][ranks]") {
    // 5% apart: under the 10% floor.
    const RankAnalysis a = analyze_ranks({rank("0", 1000), rank("1", 1000, 0.585)}, {});
    REQUIRE(a.slowest);
    CHECK(a.slowest->rank == "1");
    CHECK_FALSE(a.slowest->slow);
    CHECK(a.findings.empty());
    // Just past it: called.
    const RankAnalysis b = analyze_ranks({rank("0", 1000), rank("1", 1000, 0.69)}, {});
    CHECK(b.slowest->slow);
    REQUIRE(b.findings.size() == 1);
}

TEST_CASE("ranks: the others' own spread widens the threshold", "[fleet][ranks]") {
    // Others at 1.0, 1.5, 2.0, 2.5 s of host time: MAD 0.5 s x 1.4826 x 3.5 = 2.6 s; the fifth
    // rank 2 s above their median is within it although 2 s is far past 10%.
    std::vector<RankSummary> ranks;
    const double host[] = {1.0, 1.5, 2.0, 2.5};
    for (int i = 0; i < 4; ++i)
        ranks.push_back(rank(std::to_string(i), 100, host[i]));
    ranks.push_back(rank("4", 100, 3.75));
    const RankAnalysis a = analyze_ranks(ranks, {});
    REQUIRE(a.slowest);
    CHECK(a.slowest->rank == "4");
    CHECK(a.slowest->threshold == Approx(3.5 * 1.4826 * 0.5));
    CHECK_FALSE(a.slowest->slow);
}

TEST_CASE("ranks: a job that synchronises its ranks is judged by OpenCL work", "[fleet][ranks]") {
    // Every rank ends at the barrier together (same wall); rank 0 waits there outside OpenCL.
    RankSummary fast = rank("0", 1000, 2.5), slow = rank("1", 3000, 0.1);
    fast.wall_seconds = slow.wall_seconds;
    const RankAnalysis a = analyze_ranks({fast, slow}, {});
    REQUIRE(a.slowest);
    CHECK(a.slowest->basis == "opencl_time");
    CHECK(a.slowest->rank == "1");
    CHECK(a.slowest->slow);
    REQUIRE(a.findings.size() == 1);
    CHECK(a.findings[0].title.find("OpenCL work") != std::string::npos);
}

TEST_CASE("ranks: order, missing ranks and a kernel only one rank runs", "[fleet][ranks]") {
    RankSummary r10 = rank("10", 100), r2 = rank("2", 100), r1 = rank("1", 100);
    for (auto* r : {&r10, &r2, &r1})
        r->size = 12;
    r2.items.push_back({"kernel", "extra", 50, 0.5, 0});
    set_stage(r2, AppStage::kernel, r2.stage(AppStage::kernel) + 0.5);
    r2.wall_seconds += 0.5;
    const RankAnalysis a = analyze_ranks({r10, r2, r1}, {});
    CHECK(a.ranks[0].rank == "1");
    CHECK(a.ranks[1].rank == "2");
    CHECK(a.ranks[2].rank == "10");
    CHECK(a.missing_ranks.size() == 9);
    CHECK(a.missing_ranks.front() == "0");
    REQUIRE(a.slowest);
    CHECK(a.slowest->rank == "2");
    REQUIRE_FALSE(a.slowest->causes.empty());
    CHECK(a.slowest->causes[0].name == "extra");
    CHECK(a.slowest->causes[0].reference_count == 0);
}

TEST_CASE("ranks: JSON, text and HTML name the slow rank", "[fleet][ranks]") {
    const RankAnalysis a = analyze_ranks({rank("0", 1000), rank("1", 3000)}, {{"x.json", "cannot read report"}});
    const auto j = ranks_to_json(a);
    CHECK(j["schema"] == "clprobe.fleet.ranks");
    CHECK(j["slowest"]["rank"] == "1");
    CHECK(j["findings"][0]["id"] == "fleet.rank.slow");
    CHECK(j["ranks"].size() == 2);
    CHECK(j["unpaired"].size() == 1);
    for (const auto& format : rank_formats().rows()) {
        INFO(format.name);
        const std::string out = format.render(a, {});
        CHECK(out.find("fleet.rank.slow") != std::string::npos);
        CHECK(out.find("step") != std::string::npos);
    }
}
