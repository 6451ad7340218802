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
    CHECK(v[1]["speedup"].get<double>() == Approx(2.0));
    CHECK(v[1]["ranked_eligible"] == true);
    CHECK(v[2]["outputs"] == "changed");
    CHECK(v[2]["ranked_eligible"] == false);
    CHECK(v[2]["errors"]["max_rel"] == "inf");
    CHECK(v[3]["summary_ns"].is_null());
    CHECK(j["replays"][1]["status"] == "skipped");
    CHECK(j["replays"][1]["variants"].empty());
}
