// When a replayed what-if is ranked (rules/replay_verdict): side by side, confirmed, and never from
// a kernel's two modes.
#include <catch2/catch.hpp>

#include "replay_test_support.hpp"
#include "rules/replay_findings.hpp"
#include "rules/replay_verdict.hpp"

using namespace clprobe;
using namespace clprobe::replay;

namespace {

ReplayResult with_variant(std::vector<double> ref_pool, std::vector<double> samples, std::vector<double> reference,
                          std::size_t first_round) {
    ReplayResult r;
    r.kernel = "k";
    r.status = ReplayStatus::replayed;
    r.reliable = true;
    r.variants.push_back(test::replayed_variant(VariantKind::as_captured, "as captured", std::move(ref_pool)));
    auto v = test::replayed_variant(VariantKind::placement, "read-only (CL_MEM_READ_ONLY)", samples);
    v.reference_ns = std::move(reference);
    v.first_round = first_round;
    r.variants.push_back(std::move(v));
    return r;
}

}  // namespace

TEST_CASE("replay verdict: a 2x under a hog that comes and goes is ranked, confirmed", "[replay]") {
    // Pairs 3-5 and 9-10 ran with a CPU hog: both launches of a pair twice as slow.
    const std::vector<double> var{5, 5.1, 10, 10.2, 10, 5, 5, 5.1, 10.1, 10};
    const std::vector<double> ref{10, 10.1, 20, 20.3, 19.9, 10, 10.1, 10, 20, 20.2};
    const auto r = with_variant(ref, var, ref, 5);
    // The hog makes the launch as captured bimodal (10 and 20): the 2x holds against its fast mode too.
    REQUIRE(replay_modes(r));
    const auto verdict = judge_variant(r, r.variants[1]);
    CHECK(verdict.ranked);
    REQUIRE(verdict.stated());
    CHECK(verdict.stated()->estimate == Approx(2.0).epsilon(0.02));
    CHECK(verdict.stated()->low >= 1.9);
    CHECK(worth_confirming(r.variants[1]));
    CHECK_THAT(verdict.why, Catch::Contains("confirmed in a second"));
    REQUIRE(verdict.speedups.fast_mode);
    CHECK(verdict.speedups.fast_mode->low >= 1.9);
}

TEST_CASE("replay verdict: OpenMM's read-only 2x, the reference's slow mode, never ranked", "[replay]") {
    // computeNonbonded flips between 5.3 and 10.4 ms; the variant ran at 5.3 each time. Timed apart,
    // its median against the reference's was 2x; side by side, half its pairs say 1x.
    const std::vector<double> ref{10.4, 5.3, 10.3, 5.4, 5.3, 10.5, 5.2, 10.4, 10.4, 5.3, 5.2, 10.6, 5.3, 10.4};
    const std::vector<double> var{5.3, 5.3, 5.4, 5.3, 5.2, 5.3, 5.3, 5.4, 5.3, 5.3, 5.2, 5.3, 5.3, 5.3};
    const auto r = with_variant(ref, var, ref, 7);
    REQUIRE(replay_modes(r));
    const auto verdict = judge_variant(r, r.variants[1]);
    CHECK_FALSE(verdict.ranked);
    CHECK_FALSE(worth_confirming(r.variants[1]));
    CHECK_THAT(verdict.why, Catch::StartsWith("within noise"));
}

TEST_CASE("replay verdict: a first round that gained but a confirmation that did not", "[replay]") {
    const std::vector<double> ref(10, 10.0);
    const std::vector<double> var{5, 5, 5, 5, 5, 9.9, 10.1, 9.8, 10, 10.2};
    const auto r = with_variant(ref, var, ref, 5);
    CHECK(worth_confirming(r.variants[1]));
    const auto verdict = judge_variant(r, r.variants[1]);
    CHECK_FALSE(verdict.ranked);
    CHECK_THAT(verdict.why, Catch::StartsWith("not confirmed"));
    // No confirmation round at all: not ranked either.
    auto once = with_variant(ref, {5, 5, 5, 5, 5}, {10, 10, 10, 10, 10}, 5);
    CHECK_THAT(judge_variant(once, once.variants[1]).why, Catch::Contains("no confirmation round"));
}

TEST_CASE("replay verdict: bimodal as captured, ranked only against the fast mode", "[replay]") {
    // The reference flips 5 / 10; the variant is 2x faster in both: ranked, against 5.
    std::vector<double> ref, var, paired;
    for (int i = 0; i < 12; ++i) {
        const double level = i % 3 == 0 ? 10.0 : 5.0;
        ref.push_back(level);
        paired.push_back(level);
        var.push_back(level / 2);
    }
    auto r = with_variant(ref, var, paired, 6);
    REQUIRE(replay_modes(r));
    auto verdict = judge_variant(r, r.variants[1]);
    CHECK(verdict.ranked);
    REQUIRE(verdict.speedups.fast_mode);
    CHECK(verdict.speedups.fast_mode->estimate == Approx(2.0));
    // Faster only than the slow mode: each pair at 5 ms gains nothing.
    for (std::size_t i = 0; i < var.size(); ++i)
        r.variants[1].samples_ns[i] = paired[i] == 10.0 ? 4.0 : 5.0;
    r.variants[1].summary = summarize(r.variants[1].samples_ns);
    verdict = judge_variant(r, r.variants[1]);
    CHECK_FALSE(verdict.ranked);
}

TEST_CASE("replay verdict: bimodal in the program, a replay at its slow mode ranks nothing", "[replay]") {
    const std::vector<double> ref(10, 10.0);
    const std::vector<double> var(10, 5.0);
    auto r = with_variant(ref, var, ref, 5);
    CHECK(judge_variant(r, r.variants[1]).ranked);
    r.traced_modes = TimeModes{{5.3, 5.2, 5.5, 40}, {10.4, 10.2, 10.6, 30}, 5.5};
    const auto verdict = judge_variant(r, r.variants[1]);
    CHECK_FALSE(verdict.ranked);
    CHECK_THAT(verdict.why, Catch::Contains("bimodal in the program"));
    // The replay ran at the program's fast mode: the 2x stands.
    r.variants[0] = test::replayed_variant(VariantKind::as_captured, "as captured", std::vector<double>(10, 5.4));
    r.variants[1].reference_ns = std::vector<double>(10, 5.4);
    r.variants[1].samples_ns = std::vector<double>(10, 2.7);
    r.variants[1].summary = summarize(r.variants[1].samples_ns);
    CHECK(judge_variant(r, r.variants[1]).ranked);
}

TEST_CASE("replay findings: a what-if not confirmed is a note saying why", "[replay]") {
    ReplayContext ctx;
    ctx.kernels["k"] = KernelTotals{4e8, 100};
    ctx.wall_ns = 1e9;
    const std::vector<double> ref(10, 10.0);
    const auto r = with_variant(ref, {5, 5, 5, 5, 5, 9.9, 10.1, 9.8, 10, 10.2}, ref, 5);
    const auto findings = replay_findings({r}, ctx);
    REQUIRE(findings.size() == 1);
    CHECK(findings[0].kind == FindingKind::note);
    CHECK_THAT(findings[0].not_ranked, Catch::StartsWith("not confirmed"));
    CHECK(findings[0].id == placement_finding);
}
