// The replay's text table and JSON on a synthetic result: a changed variant is marked and not
// eligible for ranking, a failed one says why, and the JSON keeps every sample.
#include <catch2/catch.hpp>

#include <cmath>

#include "json/replay_json.hpp"
#include "render/replay_text.hpp"
#include "replay_test_support.hpp"

using namespace clprobe;
using namespace clprobe::replay;

namespace {

// Outputs a fast-math build changed: infinite errors, as a NaN against a number gives.
VariantResult ran(VariantKind kind, std::string label, std::vector<double> samples, OutputCheck check) {
    return test::replayed_variant(kind, std::move(label), std::move(samples), check,
                                  OutputErrors{INFINITY, INFINITY, 3, "arg 1 (float): 3 elements differ"});
}

}  // namespace

TEST_CASE("replay render: the what-if table and JSON", "[replay]") {
    ReplayResult r;
    r.folder = "7-0";
    r.kernel = "foo";
    r.pid = 7;
    r.status = ReplayStatus::replayed;
    r.reliability = "no traced time";
    r.variants = {ran(VariantKind::as_captured, "as captured", {200, 210, 190, 200, 200}, OutputCheck::identical),
                  ran(VariantKind::local_size, "64", {100, 100, 100, 100, 100}, OutputCheck::identical),
                  ran(VariantKind::build_options, "-cl-fast-relaxed-math", {50, 50, 50, 50, 50}, OutputCheck::changed)};
    VariantResult failed;
    failed.kind = VariantKind::local_size;
    failed.label = "4096";
    failed.failure = "clEnqueueNDRangeKernel: CL_INVALID_WORK_GROUP_SIZE (-54)";
    r.variants.push_back(failed);
    ReplayResult skipped;
    skipped.folder = "7-1";
    skipped.status = ReplayStatus::skipped;
    skipped.reason = "SVM pointer argument 1";

    const std::string text = replay_text({r, skipped}, {});
    CHECK_THAT(text, Catch::Contains("UNRELIABLE"));
    CHECK_THAT(text, Catch::Contains("2.00x"));
    CHECK_THAT(text, Catch::Contains("CHANGED (arg 1 (float): 3 elements differ), not ranked"));
    CHECK_THAT(text, Catch::Contains("did not run: clEnqueueNDRangeKernel"));
    CHECK_THAT(text, Catch::Contains("skipped: SVM pointer argument 1"));

    const auto j = replay_to_json({r, skipped}, {});
    CHECK(j["schema"] == "clprobe.replay");
    const auto& v = j["replays"][0]["variants"];
    REQUIRE(v.size() == 4);
    CHECK(v[0]["samples_ns"].size() == 5);
    CHECK(v[1]["median_speedup"].get<double>() == Approx(2.0));
    CHECK(v[1]["speedup"].is_null());  // not timed side by side: no interval, no verdict to rank by
    CHECK(v[1]["verdict"]["ranked"] == false);
    CHECK(v[1]["ranked_eligible"] == true);
    CHECK(v[2]["outputs"] == "changed");
    CHECK(v[2]["ranked_eligible"] == false);
    CHECK(v[2]["errors"]["max_rel"] == "inf");
    CHECK(v[3]["summary_ns"].is_null());
    CHECK(j["replays"][1]["status"] == "skipped");
    CHECK(j["replays"][1]["variants"].empty());
}

TEST_CASE("replay render: a saved report's replay section reads back to the same tables", "[replay]") {
    ReplayResult r;
    r.folder = "9-0";
    r.kernel = "bar";
    r.pid = 9;
    r.device = "P / D";
    r.status = ReplayStatus::replayed;
    r.reliable = true;
    r.reliability = "as captured 200 ns within 25% of the traced 190 ns";
    r.traced_ns = 190;
    r.variants = {ran(VariantKind::as_captured, "as captured", {200, 210, 190, 200, 200}, OutputCheck::identical),
                  ran(VariantKind::local_size, "64", {100, 100, 100, 100, 100}, OutputCheck::identical),
                  ran(VariantKind::build_options, "-cl-fast-relaxed-math", {50, 50, 50, 50, 50}, OutputCheck::changed)};
    r.variants[0].local_size = "NULL";
    test::pair_rounds(r);
    r.launch_ordinal = 2;
    r.traced_like = summarize(std::vector<double>{190, 185, 195});
    r.traced_like_basis = "3 traced launches of the captured one's shape";
    r.traced_modes = TimeModes{{190, 185, 195, 30}, {400, 390, 410, 20}, 195};
    ReplayResult invalid;
    invalid.folder = "9-1";
    invalid.status = ReplayStatus::invalid;
    invalid.reason = "capture.json is not valid JSON";

    const auto section = replay_to_json({r, invalid}, {});
    const auto back = replay_results_from_json(section);
    REQUIRE(back.size() == 2);
    CHECK(replay_text(back, {}) == replay_text({r, invalid}, {}));
    CHECK(back[0].traced_ns == std::optional<long long>(190));
    CHECK(back[0].launch_ordinal == 2);
    CHECK(back[0].variants[1].reference_ns == r.variants[1].reference_ns);
    CHECK(back[0].variants[1].first_round == 5);
    REQUIRE(back[0].traced_modes);
    CHECK(back[0].traced_modes->slow.n == 20);
    // The verdicts are the samples' again: ranked with both rounds, and the table says so.
    CHECK(section["replays"][0]["variants"][1]["verdict"]["ranked"] == true);
    CHECK_THAT(replay_text(back, {}), Catch::Contains("2.00x [1.95-2.05] ranked"));
    CHECK_THAT(replay_text(back, {}), Catch::Contains("bimodal in the program: 190 ns (30 launches) and 400 ns (20)"));
    CHECK(std::isinf(back[0].variants[2].errors->max_rel));

    // Another schema, or a replay without its reference, is never shown as a replayed table.
    auto other = section;
    other["schema"] = "something.else";
    CHECK(replay_results_from_json(other).empty());
    auto broken = section;
    broken["replays"][0]["variants"] = nlohmann::json::array();
    CHECK(replay_results_from_json(broken)[0].status == ReplayStatus::failed);

    // In a report: the text report's section names the replay's own time.
    RunReport report;
    ProbeResult result;
    result.id = "trace.replay";
    result.wall_seconds = 2.5;
    result.attributes["replay"] = section;
    report.results.push_back(result);
    const std::string text = replay_section_text(report);
    CHECK_THAT(text, Catch::StartsWith("What-if replays (2 in 2.5 s)"));
    CHECK_THAT(text, Catch::Contains("Replay of `bar` (capture 9-0, pid 9) on P / D"));
    CHECK_THAT(text, Catch::Contains("invalid: capture.json is not valid JSON"));
    CHECK(replay_section_text(RunReport{}).empty());
}
