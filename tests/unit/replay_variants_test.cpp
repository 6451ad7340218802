// The replay's choice of experiments (local sizes, build options, placements), its output checks,
// and the rules that turn measured variants into ranked findings.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "replay/launch_variants.hpp"
#include "replay/output_compare.hpp"
#include "replay_test_support.hpp"
#include "rules/ranking.hpp"
#include "rules/replay_findings.hpp"

using namespace clprobe;
using namespace clprobe::replay;

namespace {

std::vector<std::string> labels(const std::vector<LocalSizeVariant>& v) {
    std::vector<std::string> out;
    for (const auto& x : v)
        out.push_back(x.label);
    return out;
}

std::vector<unsigned char> floats(std::vector<float> v) {
    std::vector<unsigned char> out(v.size() * 4);
    std::memcpy(out.data(), v.data(), out.size());
    return out;
}

ReplayResult replayed(std::vector<VariantResult> variants) {
    ReplayResult r;
    r.kernel = "foo";
    r.status = ReplayStatus::replayed;
    r.traced_ns = 1000;
    r.variants = std::move(variants);
    return r;
}

}  // namespace

TEST_CASE("replay variants: 1-D local sizes are NULL and the multiple's powers of two that divide", "[replay]") {
    GroupLimits limits{256, 16, {1024, 1024, 1024}};
    CHECK(labels(local_size_variants(1, {1024, 1, 1}, Range{1, 1, 1}, limits)) ==
          std::vector<std::string>{"NULL (driver's choice)", "16", "32", "64", "128", "256"});
    // The captured one is the reference, not a variant; 96 does not divide 64 x 2^k beyond 32.
    CHECK(labels(local_size_variants(1, {96, 1, 1}, Range{32, 1, 1}, limits)) ==
          std::vector<std::string>{"NULL (driver's choice)", "16"});
    // A captured NULL leaves NULL out; the device's item limit caps x.
    GroupLimits narrow{256, 16, {64, 64, 64}};
    CHECK(labels(local_size_variants(1, {1024, 1, 1}, std::nullopt, narrow)) ==
          std::vector<std::string>{"16", "32", "64"});
    // A multiple of 1 with an odd global size: only 1 divides.
    CHECK(labels(local_size_variants(1, {7, 1, 1}, std::nullopt, GroupLimits{8, 1, {8, 8, 8}})) ==
          std::vector<std::string>{"1"});
}

TEST_CASE("replay variants: 2-D shapes along x and balanced", "[replay]") {
    GroupLimits limits{64, 4, {64, 64, 64}};
    CHECK(labels(local_size_variants(2, {64, 64, 1}, std::nullopt, limits)) ==
          std::vector<std::string>{"4x1", "8x1", "4x2", "16x1", "4x4", "32x1", "8x4", "64x1", "8x8"});
    // y of global size 1: only shapes of height 1.
    CHECK(labels(local_size_variants(2, {64, 1, 1}, Range{4, 1, 1}, limits)) ==
          std::vector<std::string>{"NULL (driver's choice)", "8x1", "16x1", "32x1", "64x1"});
    // 3-D: the balanced shapes deal factors of two to y and z too.
    const auto three = labels(local_size_variants(3, {16, 16, 16}, std::nullopt, GroupLimits{64, 4, {64, 64, 64}}));
    CHECK(std::find(three.begin(), three.end(), "4x4x4") != three.end());
    CHECK(std::find(three.begin(), three.end(), "32x1x1") == three.end());  // 32 does not divide 16
}

TEST_CASE("replay variants: build options leave out those already given", "[replay]") {
    CHECK(build_option_variants("").size() == 5);
    const auto v = build_option_variants("-cl-std=CL1.2 -cl-mad-enable");
    CHECK(v == std::vector<std::string>{"-cl-no-signed-zeros", "-cl-finite-math-only", "-cl-unsafe-math-optimizations",
                                        "-cl-fast-relaxed-math"});
}

TEST_CASE("replay variants: placements change flags only where legal", "[replay]") {
    std::vector<CapturedArg> args(3);
    args[0].kind = ArgKind::buffer;
    args[0].flags = mem_read_write | mem_copy_host_ptr;  // read only by the kernel
    args[1].kind = ArgKind::scalar;
    args[2].kind = ArgKind::buffer;
    args[2].flags = mem_write_only | mem_alloc_host_ptr;
    const auto v = placement_variants(args, {true, false, false});
    REQUIRE(v.size() == 2);
    CHECK(v[0].flags == std::vector<std::uint64_t>{mem_read_only, 0, mem_write_only | mem_alloc_host_ptr});
    CHECK(v[1].flags ==
          std::vector<std::uint64_t>{mem_read_write | mem_alloc_host_ptr, 0, mem_write_only | mem_alloc_host_ptr});
    // Nothing read-only to make, everything host-visible already: no placement variant.
    args[0].flags = mem_alloc_host_ptr;
    CHECK(placement_variants(args, {false, false, false}).empty());
    CHECK(replay_flags(mem_use_host_ptr | mem_read_only | (1u << 9)) == (mem_alloc_host_ptr | mem_read_only));
}

TEST_CASE("replay outputs: bitwise, within tolerance, changed", "[replay]") {
    const auto a = floats({1.0f, 2.0f, 3.0f});
    CHECK(compare_buffer(a, a, ElementType::float32).check == OutputCheck::identical);
    const auto near = floats({1.0f, std::nextafter(2.0f, 3.0f), 3.0f});
    const auto c = compare_buffer(near, a, ElementType::float32);
    CHECK(c.check == OutputCheck::within_tolerance);
    CHECK(c.errors.differing == 1);
    CHECK(c.errors.max_rel > 0);
    CHECK(c.errors.max_rel < 1e-6);
    // The same bytes as raw bytes: any difference is a change.
    CHECK(compare_buffer(near, a, ElementType::bytes).check == OutputCheck::changed);
    CHECK(compare_buffer(floats({1.0f, 2.1f, 3.0f}), a, ElementType::float32).check == OutputCheck::changed);
    CHECK(compare_buffer(floats({1.0f, NAN, 3.0f}), a, ElementType::float32).check == OutputCheck::changed);
    CHECK(compare_buffer(floats({0.0f}), floats({NAN}), ElementType::float32).check == OutputCheck::changed);
    CHECK(compare_buffer(floats({1.0f}), a, ElementType::float32).check == OutputCheck::changed);  // length
    CHECK(element_type_of("float*") == ElementType::float32);
    CHECK(element_type_of("float4*") == ElementType::float32);
    CHECK(element_type_of("const __global double2 *") == ElementType::float64);
    CHECK(element_type_of("half*") == ElementType::half);
    CHECK(element_type_of("int*") == ElementType::bytes);
    CHECK(element_type_of("floaty*") == ElementType::bytes);
    // Images by their channel type: CL_FLOAT, CL_HALF_FLOAT within tolerance; CL_UNORM_INT8 bitwise.
    CHECK(image_element_type(0x10DE) == ElementType::float32);
    CHECK(image_element_type(0x10DD) == ElementType::half);
    CHECK(image_element_type(0x10D2) == ElementType::bytes);
}

TEST_CASE("replay reliability: the as-captured median against the traced launches like it", "[replay]") {
    auto r =
        replayed({test::replayed_variant(VariantKind::as_captured, "as captured", {1200, 1200, 1210, 1190, 1200})});
    r.traced_like = summarize(std::vector<double>{1000});
    judge_reliability(r);
    CHECK(r.reliable);  // +20% of 1000 ns, inside 25%
    r.variants[0] = test::replayed_variant(VariantKind::as_captured, "as captured", {1300, 1300, 1310, 1290, 1300});
    judge_reliability(r);
    CHECK_FALSE(r.reliable);  // +30%
    // One outlier sample (spread 7,600%) does not widen the band.
    r.variants[0] = test::replayed_variant(VariantKind::as_captured, "as captured", {1300, 1300, 1310, 1290, 100000});
    judge_reliability(r);
    CHECK_FALSE(r.reliable);
    r.traced_like_spread = 0.4;
    judge_reliability(r);
    CHECK(r.reliable);  // the like launches spread 40%
    r.traced_like.reset();
    judge_reliability(r);
    CHECK_FALSE(r.reliable);
    CHECK_THAT(r.reliability, Catch::Contains("no traced time"));
}

TEST_CASE("replay reliability: like for like, the traced launches of the captured launch's shape", "[replay]") {
    // The kernel ran at two shapes: 100 launches of 1024 items (~9 ms, the captured 2nd launch's
    // shape) and 100 of 64 items (~1 ms). Judged against all 200, a faithful replay looked 80% off.
    ReplayContext ctx;
    KernelTotals k;
    k.shapes = {{"1024,1,1", 8192}, {"64,1,1", 512}};
    k.times_ns = {std::vector<double>(100, 9e6), std::vector<double>(100, 1e6)};
    for (int i = 0; i < 5; ++i)
        k.times_ns[0][static_cast<std::size_t>(i)] = 9.5e6;
    ctx.kernels["foo"] = k;
    std::vector<int> order;
    for (int i = 0; i < 100; ++i) {
        order.push_back(1);
        order.push_back(0);
    }
    ctx.launch_shapes[{7, "foo"}] = order;
    auto r = replayed({test::replayed_variant(VariantKind::as_captured, "as captured", {9.1e6, 9.2e6, 9.0e6})});
    r.pid = 7;
    r.launch_ordinal = 2;
    find_like_launches(r, ctx);
    REQUIRE(r.traced_like);
    CHECK(r.traced_like->n == 100);
    CHECK(r.traced_like->median == 9e6);
    CHECK_THAT(r.traced_like_basis, Catch::Contains("global size 1024,1,1"));
    CHECK_FALSE(r.traced_modes);  // five slower launches of a hundred are not a mode
    judge_reliability(r);
    CHECK(r.reliable);
    // A launch the timeline does not hold (another pid): every timed launch, said so.
    r.pid = 8;
    find_like_launches(r, ctx);
    CHECK(r.traced_like->n == 200);
    CHECK_THAT(r.traced_like_basis, Catch::Contains("not in the timeline"));
    CHECK(r.traced_modes);  // 1 ms and 9 ms: two modes
    // Their median (5 ms) and spread (160%) would call any replay reliable; against the nearer
    // mode (9 ms), this one is, and one at 4 ms is not.
    judge_reliability(r);
    CHECK(r.reliable);
    CHECK_THAT(r.reliability, Catch::Contains("of the slow mode"));
    r.variants[0] = test::replayed_variant(VariantKind::as_captured, "as captured", {4e6, 4e6, 4e6});
    judge_reliability(r);
    CHECK_FALSE(r.reliable);
}

TEST_CASE("replay findings: gain arithmetic and what is never ranked", "[replay]") {
    ReplayContext ctx;
    ctx.kernels["foo"] = KernelTotals{4e8, 100};  // 0.4 s of device time
    ctx.wall_ns = 1e9;                            // in 1 s of wall time
    auto r = replayed(
        {test::replayed_variant(VariantKind::as_captured, "as captured", {1000, 1000, 1010, 990, 1000}),
         test::replayed_variant(VariantKind::local_size, "64", {500, 500, 505, 495, 500}),
         test::replayed_variant(VariantKind::local_size, "128", {250, 250, 255, 245, 250}, OutputCheck::changed),
         test::replayed_variant(VariantKind::build_options, "-cl-fast-relaxed-math", {800, 800, 805, 795, 800},
                                OutputCheck::within_tolerance),
         test::replayed_variant(VariantKind::placement, "host", {1500, 1500, 1500, 1500, 1500})});
    r.reliable = true;
    test::pair_rounds(r);

    REQUIRE(wall_share(ctx.kernels["foo"], 0.5, ctx.wall_ns));
    CHECK(*wall_share(ctx.kernels["foo"], 0.5, ctx.wall_ns) == Approx(0.2));
    CHECK_FALSE(wall_share(ctx.kernels["foo"], 0.5, std::nullopt));

    auto findings = replay_findings({r}, ctx);
    REQUIRE(findings.size() == 2);  // the slower placement gives none
    CHECK(findings[0].id == local_size_finding);
    // 64, not the faster 128 whose outputs changed: 0.4 s x (1 - 0.5) of 1 s.
    CHECK(*findings[0].estimated_gain == Approx(0.2));
    CHECK_THAT(findings[0].title, Catch::Contains("local size 64 instead of 1"));
    CHECK_THAT(findings[0].title, Catch::Contains("outputs identical"));
    CHECK_FALSE(findings[0].uncertain);
    CHECK(findings[1].id == build_options_finding);
    CHECK(*findings[1].estimated_gain == Approx(0.08));
    CHECK_THAT(findings[1].title, Catch::Contains("within tolerance"));
    // Both save from the same 0.4 s: only the larger is ranked, the other is a note beside it.
    CHECK(findings[0].measured_share);
    CHECK(findings[0].kind == FindingKind::ranked);
    CHECK_FALSE(findings[1].measured_share);
    CHECK(findings[1].kind == FindingKind::note);
    CHECK_THAT(findings[1].gain_basis, Catch::Contains("not ranked beside trace.replay.local_size"));

    // Building took longer than the kernel's whole device time: a note, no gain.
    r.build_ms = 500;  // 0.5 s > 0.4 s
    const auto with_note = replay_findings({r}, ctx);
    REQUIRE(with_note.size() == 3);
    CHECK(with_note[0].id == binary_cache_finding);
    CHECK(with_note[0].kind == FindingKind::note);
    CHECK_FALSE(with_note[0].estimated_gain);
    r.build_ms = 100;
    CHECK(replay_findings({r}, ctx).size() == 2);

    // An unreliable replay ranks nothing; nor does one without totals or a wall time.
    r.reliable = false;
    CHECK(replay_findings({r}, ctx).empty());
    r.reliable = true;
    CHECK(replay_findings({r}, ReplayContext{}).empty());
    ReplayContext no_wall = ctx;
    no_wall.wall_ns.reset();
    CHECK(replay_findings({r}, no_wall).empty());
    // Not reproducible: nothing.
    r.status = ReplayStatus::not_reproducible;
    CHECK(replay_findings({r}, ctx).empty());
    // Pairs that do not all gain: shown with why, never ranked.
    r.status = ReplayStatus::replayed;
    r.variants = {test::replayed_variant(VariantKind::as_captured, "as captured", {1000, 1000, 1010, 700, 1000}),
                  test::replayed_variant(VariantKind::local_size, "64", {900, 900, 905, 895, 1005})};
    test::pair_rounds(r);
    findings = replay_findings({r}, ctx);
    REQUIRE(findings.size() == 1);
    CHECK(findings[0].kind == FindingKind::note);
    CHECK_THAT(findings[0].not_ranked, Catch::StartsWith("within noise"));
    CHECK_FALSE(rankable(test::replayed_variant(VariantKind::local_size, "x", {1}, OutputCheck::changed)));
}

TEST_CASE("replay findings: two kernels' measured what-ifs rank by the wall time they save", "[replay]") {
    // foo has more traced device time (0.4 s) but its best what-if saves 10% of it (0.04 of the
    // 1 s wall); bar's saves 75% of its 0.3 s (0.225). The run's order: bar's first, whatever
    // order the replays came in.
    ReplayContext ctx;
    ctx.kernels["foo"] = KernelTotals{4e8, 100};
    ctx.kernels["bar"] = KernelTotals{3e8, 100};
    ctx.wall_ns = 1e9;
    auto foo =
        replayed({test::replayed_variant(VariantKind::as_captured, "as captured", {1000, 1000, 1010, 990, 1000}),
                  test::replayed_variant(VariantKind::local_size, "64", {900, 900, 905, 895, 900}),
                  test::replayed_variant(VariantKind::build_options, "-cl-mad-enable", {950, 950, 955, 945, 950})});
    foo.reliable = true;
    auto bar = foo;
    bar.kernel = "bar";
    bar.variants[1] = test::replayed_variant(VariantKind::local_size, "128", {250, 250, 255, 245, 250});
    bar.variants[2] = test::replayed_variant(VariantKind::build_options, "-cl-mad-enable", {500, 500, 505, 495, 500});
    test::pair_rounds(foo);
    test::pair_rounds(bar);

    for (const auto& results : {std::vector<ReplayResult>{foo, bar}, std::vector<ReplayResult>{bar, foo}}) {
        // As run_replay orders them.
        auto findings = replay_findings(results, ctx);
        classify_findings(findings);
        rank_findings(findings);
        std::vector<const Finding*> ranked;
        for (const auto& f : findings)
            if (f.kind == FindingKind::ranked) ranked.push_back(&f);
        REQUIRE(ranked.size() == 2);  // each kernel's largest; its build-option what-if is a note
        CHECK(ranked[0]->rank == 1);
        CHECK_THAT(ranked[0]->title, Catch::StartsWith("`bar`: local size 128"));
        CHECK(*ranked[0]->estimated_gain == Approx(0.225));
        CHECK(ranked[1]->rank == 2);
        CHECK_THAT(ranked[1]->title, Catch::StartsWith("`foo`: local size 64"));
        CHECK(*ranked[1]->estimated_gain == Approx(0.04));
        CHECK(ranked[0]->id == local_size_finding);
        CHECK(ranked[1]->id == local_size_finding);
        // bar's build option is a note beside its local size; foo's 1.05x is no finding at all.
        CHECK(findings.size() == 3);
        CHECK(findings[2].rank == 0);
    }
}
