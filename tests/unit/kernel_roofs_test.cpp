// Counted kernels against the roofs that bind them (core/kernel_roofs), the rules that follow the
// binding roof (reports/rules/kernel_roof_rules), a replay's measurement against the heuristic
// it tests (replay::judge_heuristics), and the instruction classes the Oclgrind plugin counts by
// (src/work/work_classes). The kernels are the real programs' shapes: a GEMM whose FLOPs bind it,
// a copy whose bytes do, an MD5-like mix whose integer operations do.
#include <catch2/catch.hpp>

#include "core/kernel_roofs.hpp"
#include "core/report.hpp"
#include "replay/replay_result.hpp"
#include "replay_test_support.hpp"
#include "rule_test_support.hpp"
#include "rules/kernel_roof_rules.hpp"
#include "rules/ranking.hpp"
#include "rules/replay_findings.hpp"
#include "rules/trace_rule_support.hpp"
#include "trace/capture_time.hpp"
#include "trace_test_support.hpp"
#include "work/work_classes.hpp"

using namespace clprobe;

namespace {

// 200 GFLOP/s fp32, 100 GIOP/s int32, 20 GB/s memory; no cache levels (the quick ceilings).
ComputeRoofs roofs() {
    return {std::nullopt, 200e9, std::nullopt, 100e9};
}
BandwidthRoofs memory() {
    return {std::nullopt, 20.0};
}

// CLBlast's 512^3 SGEMM as counted: 268 MFLOP, 34.6 MB loaded and stored, a 3 MiB footprint,
// 19.4 ms a launch (13.9 GFLOP/s).
KernelWorkFacts gemm() {
    KernelWorkFacts w = test::counted_work("XgemmDirectTN", 19.4e-3, 34.6e6, 268.4e6, 8.7e6);
    w.footprint_bytes = 3 << 20;
    return w;
}

std::vector<Measurement> ceilings() {
    return {test::ceiling("kernel.peak.bandwidth", "GB/s", 20), test::ceiling("kernel.peak.fp32", "GFLOP/s", 200),
            test::ceiling("kernel.peak.int32", "GIOP/s", 100)};
}

// One kernel launched `launches` times for `launch_us` each, with `arg_bytes` of buffers bound,
// over a wall time of launches x 100 us.
RunReport program(const std::string& name, int launches, double launch_us, std::uint64_t arg_bytes,
                  bool auto_local = false) {
    test::TraceBuilder b;
    for (int i = 0; i < launches; ++i) {
        b.kernel(name, i * 100.0, i * 100.0 + 1, i * 100.0 + 1 + launch_us, arg_bytes);
        if (auto_local) b.trace.commands.back().local = "0";
    }
    return test::trace_report(b.trace, b.run(launches * 100.0), ceilings());
}

// The one finding of a trace rule, classified as the analysis does (ranked, or a note and why).
Finding classified(const RunReport& r, const std::string& id) {
    std::vector<Finding> one{test::only_trace_finding(test::run_trace_rule(r, id), id)};
    classify_findings(one);
    return one[0];
}

}  // namespace

TEST_CASE("kernel roofs: the longest time at its roof binds", "[trace][roofs]") {
    const auto g = place_kernel(gemm(), roofs(), memory(), 3 << 20);
    REQUIRE(g);
    CHECK(g->bound().kind == RoofKind::fp32);
    CHECK(g->binding_fraction() == Approx(268.4e6 / 19.4e-3 / 200e9));
    // Its 3 MiB footprint at 20 GB/s takes far less than its FLOPs at 200 GFLOP/s.
    const auto mem =
        std::find_if(g->parts.begin(), g->parts.end(), [](const RoofPart& p) { return p.kind == RoofKind::memory; });
    REQUIRE(mem != g->parts.end());
    CHECK(mem->seconds_at_roof < g->bound().seconds_at_roof);
    CHECK(mem->amount == Approx(3 << 20));
    // Without cache levels the loads and stores at the fastest level's rate are not placed, and say so.
    CHECK(std::any_of(g->unroofed.begin(), g->unroofed.end(),
                      [](const std::string& u) { return u.find("no cache roof") != std::string::npos; }));

    // A copy: no operations, its bytes bind it.
    KernelWorkFacts copy = test::counted_work("copy", 20e-3, 256e6);
    copy.global_store_bytes = 128e6;
    copy.global_load_bytes = 128e6;
    const auto c = place_kernel(copy, roofs(), memory(), 256e6);
    REQUIRE(c);
    CHECK(c->bound().kind == RoofKind::memory);
    CHECK(c->binding_fraction() == Approx(256e6 / 20e-3 / 20e9));

    // MD5-like: integer operations on data bind it.
    const auto m = place_kernel(test::counted_work("m00000_s04", 10e-3, 1e5, 0, 5e8), roofs(), memory(), 1e5);
    REQUIRE(m);
    CHECK(m->bound().kind == RoofKind::int32);
    CHECK(m->binding_fraction() == Approx(0.5));

    // A copy faster than the memory roof as measured (256 MB in 10 ms: 25.6 GB/s against 20): the
    // roof fell short of the device; it is raised to the launch's rate, and says so.
    const auto fast = place_kernel(test::counted_work("copy", 10e-3, 256e6), roofs(), memory(), 256e6);
    REQUIRE(fast);
    CHECK(fast->bound().kind == RoofKind::memory);
    CHECK(fast->binding_fraction() == 1);
    CHECK(fast->bound().raised());
    CHECK(fast->bound().measured_roof == Approx(20e9));
    CHECK(fast->bound().roof == Approx(25.6e9));
    CHECK_THAT(fast->bound().basis, Catch::Contains("roof raised to this launch's own rate"));
    CHECK_FALSE(c->bound().raised());
    // 25x the roof is no roof's shortfall: the counted launch did other work than the timed ones
    // (a first launch that builds what later ones skip). Not placed.
    CHECK_FALSE(place_kernel(test::counted_work("copy", 0.5e-3, 256e6), roofs(), memory(), 256e6));
    KernelWorkFacts both = test::counted_work("build_then_skip", 1e-3, 1e6, 0, 0);
    both.flops_fp32 = 5e9;  // 5e12/s against a 200 GFLOP/s peak: 25x
    const auto partial = place_kernel(both, roofs(), memory(), 1e6);
    REQUIRE(partial);
    CHECK(std::none_of(partial->parts.begin(), partial->parts.end(),
                       [](const RoofPart& p) { return p.kind == RoofKind::fp32; }));
    CHECK(std::any_of(partial->unroofed.begin(), partial->unroofed.end(), [](const std::string& u) {
        return u.find("did other work than the traced launches") != std::string::npos;
    }));
}

TEST_CASE("kernel roofs: counted work meets each peak's fastest sample, the other rules its median", "[trace][roofs]") {
    // A peak measured while the machine was busy: its samples spread from 10 to 20.
    ProbeResult p;
    p.id = "kernel.ceilings";
    p.status = ProbeStatus::ok;
    p.measurements = {
        make_measurement("kernel.peak.bandwidth", "GB/s", {}, {10, 14, 20}, TimerKind::device_profiling),
        make_measurement("kernel.peak.fp32", "GFLOP/s", {}, {100, 150, 200}, TimerKind::device_profiling)};
    const std::vector<ProbeResult> results{p};
    CHECK(*bandwidth_roofs_of(results).memory_gb_per_s == Approx(14));
    CHECK(*bandwidth_roofs_of(results, RoofSample::fastest).memory_gb_per_s == Approx(20));
    CHECK(*compute_roofs_of(results).fp32 == Approx(200e9));
    // A copy that moved 18 GB/s is at 0.9 of the fastest sample, not 1.29 of the median.
    KernelWorkFacts copy = test::counted_work("copy", 10e-3, 180e6);
    const auto c =
        place_kernel(copy, compute_roofs_of(results), bandwidth_roofs_of(results, RoofSample::fastest), 180e6);
    REQUIRE(c);
    CHECK(c->binding_fraction() == Approx(0.9));
    // The roof rules use the same roofs.
    RunReport r;
    r.results = results;
    CHECK(*trace_rule::kernel_limits_of(r).roofs.memory_gb_per_s == Approx(20));
}

TEST_CASE("kernel roofs: the footprint is never more than the buffers bound or the bytes moved", "[trace][roofs]") {
    KernelWorkFacts w = test::counted_work("k", 1e-3, 1e6);
    w.footprint_bytes = 64e6;  // a sampled footprint scaled past what the launch can touch
    const auto p = place_kernel(w, roofs(), memory(), 4e6);
    REQUIRE(p);
    CHECK(p->bound().amount == Approx(1e6));  // min(footprint, arguments, bytes moved)
    // Work with no roof measured is named, not placed.
    KernelWorkFacts d = test::counted_work("dp", 1e-3, 0);
    d.flops_fp64 = 1e9;
    const auto q = place_kernel(d, roofs(), memory(), 0);
    CHECK_FALSE(q);  // nothing of it has a roof
    KernelWorkFacts uncounted = test::counted_work("x", 1e-3, 1e6);
    uncounted.counted = false;
    CHECK_FALSE(place_kernel(uncounted, roofs(), memory(), 1e6));
}

TEST_CASE("kernel roof rules: a counted compute-bound kernel gets the compute finding, never the memory one",
          "[trace][rules][roofs]") {
    // 9 launches of 90 us over a 1 ms program; its arguments hold 4 KiB: by their size it would run at
    // 0.2% of the memory roof, the estimate that ranked CLBlast's GEMM as memory-bound.
    RunReport r = program("XgemmDirectTN", 9, 90, 4096);
    KernelWorkFacts w = test::counted_work("XgemmDirectTN", 90e-6, 4096, 1.8e6);  // 20 GFLOP/s: 10% of fp32
    test::add_counted_work(r, w);
    test::check_silent(test::run_trace_rule(r, "trace.kernel.below_roof"));
    const Finding f = classified(r, "trace.kernel.below_compute_roof");
    CHECK(f.kind == FindingKind::ranked);
    CHECK_THAT(f.title, Catch::Contains("10.0% of the fp32 peak"));
    CHECK_THAT(f.suggestion, Catch::Contains("CLBlast's tuner"));
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == Approx(9 * 90e-6 * 0.9 / 900e-6).epsilon(0.05));
}

TEST_CASE("kernel roof rules: a counted memory-bound kernel is judged by its counted bytes", "[trace][rules][roofs]") {
    RunReport r = program("gather", 9, 90, 64 << 20);
    // It moves 18 KB a launch (0.2 GB/s, 1% of 20 GB/s) though its arguments hold 64 MiB.
    test::add_counted_work(r, test::counted_work("gather", 90e-6, 18e3));
    test::check_silent(test::run_trace_rule(r, "trace.kernel.below_compute_roof"));
    const Finding f = classified(r, "trace.kernel.below_roof");
    CHECK(f.kind == FindingKind::ranked);
    CHECK_THAT(f.title, Catch::Contains("1.0% of the memory roof"));
}

TEST_CASE("kernel roof rules: an uncounted kernel's estimate is shown, never ranked", "[trace][rules][roofs]") {
    RunReport r = program("unknown", 9, 90, 4096);
    KernelWorkFacts w;
    w.kernel = "unknown";
    w.reason = "not captured: it was launched once (the layer captures a kernel's 2nd launch)";
    test::add_counted_work(r, w);
    const Finding f = classified(r, "trace.kernel.below_roof");
    CHECK(f.kind == FindingKind::note);
    CHECK_THAT(f.not_ranked, Catch::Contains("launched once"));
    CHECK_THAT(f.title, Catch::Contains("an estimate"));
    CHECK_THAT(f.gain_basis, Catch::StartsWith("not ranked: an estimate"));
}

TEST_CASE("kernel roof rules: library advice names the library's own lever", "[trace][rules][roofs]") {
    CHECK(trace_rule::library_tuning_advice("XgemmDirectTN"));
    CHECK(trace_rule::library_tuning_advice("Xaxpy"));
    CHECK(trace_rule::library_tuning_advice("TransposeMatrixFast"));
    CHECK(trace_rule::library_tuning_advice("fft_fwd"));
    CHECK_FALSE(trace_rule::library_tuning_advice("computeNonbonded"));
    CHECK_FALSE(trace_rule::library_tuning_advice("XY"));
}

namespace {

replay::VariantResult variant(replay::VariantKind kind, const std::string& label, double median_ns, double spread) {
    replay::VariantResult v;
    v.kind = kind;
    v.label = label;
    v.local_size = label;
    v.check = replay::OutputCheck::identical;
    v.samples_ns = {median_ns * (1 - spread), median_ns, median_ns * (1 + spread)};
    v.summary = summarize(v.samples_ns);
    return v;
}

replay::ReplayResult replayed(const std::string& kernel, std::vector<std::pair<std::string, double>> local_sizes) {
    replay::ReplayResult r;
    r.kernel = kernel;
    r.status = replay::ReplayStatus::replayed;
    r.variants.push_back(variant(replay::VariantKind::as_captured, "as captured", 1000, 0.01));
    r.variants[0].local_size = "NULL";
    for (const auto& [label, ns] : local_sizes)
        r.variants.push_back(variant(replay::VariantKind::local_size, label, ns, 0.01));
    test::pair_rounds(r);
    return r;
}

Finding no_local_size_finding() {
    RunReport r = program("colorin", 9, 90, 4096, true);
    test::add_counted_work(r, test::counted_work("colorin", 90e-6, 18e3));
    return classified(r, "trace.kernel.no_local_size");
}

}  // namespace

TEST_CASE("replay beats heuristic: local sizes measured at no gain drop trace.kernel.no_local_size from the ranking",
          "[trace][replay][rules]") {
    std::vector<Finding> findings{no_local_size_finding()};
    REQUIRE(findings[0].kind == FindingKind::ranked);
    // darktable's colorin_unbound: every local size from 8x1 to 32x32 at 1.01-1.02x.
    replay::judge_heuristics(findings, {replayed("colorin", {{"8x1", 990}, {"16x16", 985}, {"32x32", 980}})});
    classify_findings(findings);
    CHECK(findings[0].kind == FindingKind::note);
    CHECK_THAT(findings[0].title, Catch::EndsWith("(measured: no gain)"));
    CHECK_THAT(findings[0].not_ranked, Catch::Contains("8x1, 16x16, 32x32"));
    CHECK_FALSE(findings[0].estimated_gain);
}

TEST_CASE("replay beats heuristic: a measured speed-up confirms the finding with its factor",
          "[trace][replay][rules]") {
    std::vector<Finding> findings{no_local_size_finding()};
    replay::judge_heuristics(findings, {replayed("colorin", {{"64", 400}, {"128", 500}})});
    classify_findings(findings);
    CHECK(findings[0].kind == FindingKind::ranked);
    REQUIRE(findings[0].factor);
    CHECK(*findings[0].factor == Approx(2.5));
    // A replay of another kernel, or one that did not run, changes nothing.
    std::vector<Finding> other{no_local_size_finding()};
    replay::judge_heuristics(other, {replayed("elsewhere", {{"8x1", 990}})});
    CHECK(other[0].not_ranked.empty());
    CHECK_FALSE(other[0].factor);
}

TEST_CASE("replay beats heuristic: a measurement that cannot tell leaves the heuristic standing",
          "[trace][replay][rules]") {
    // Local size 64 ran at 1.02-1.43x of the launch as captured: maybe a gain, maybe none.
    auto r = replayed("colorin", {});
    r.variants.push_back(variant(replay::VariantKind::local_size, "64", 800, 0));
    r.variants[1].samples_ns = {980, 700, 990, 720, 985, 710, 700, 990};
    r.variants[1].reference_ns = {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000};
    r.variants[1].first_round = 4;
    r.variants[1].summary = summarize(r.variants[1].samples_ns);
    std::vector<Finding> findings{no_local_size_finding()};
    replay::judge_heuristics(findings, {r});
    classify_findings(findings);
    CHECK(findings[0].kind == FindingKind::ranked);
    CHECK(findings[0].not_ranked.empty());
    CHECK_FALSE(findings[0].factor);
    CHECK_THAT(findings[0].title, Catch::EndsWith("(measured: inconclusive)"));
}

TEST_CASE("work classes: builtins and intrinsics by what they compute", "[work]") {
    using work::classify_call;
    using work::OpClass;
    CHECK(work::builtin_name("_Z3madfff") == "mad");
    CHECK(work::builtin_name("_Z13get_global_idj") == "get_global_id");
    CHECK(work::builtin_name("llvm.fmuladd.f32") == "llvm.fmuladd.f32");
    CHECK(classify_call("llvm.fmuladd.v4f32", true, false) == OpClass::fma);
    CHECK(classify_call("_Z3fmaddd", true, false) == OpClass::fma);
    CHECK(classify_call("_Z3dotDv4_fS_", true, false) == OpClass::dot);
    CHECK(classify_call("_Z4sqrtf", true, false) == OpClass::special);
    CHECK(classify_call("_Z10native_expf", true, false) == OpClass::special);
    CHECK(classify_call("llvm.sqrt.f32", true, false) == OpClass::special);
    CHECK(classify_call("_Z4fabsf", true, false) == OpClass::flop);
    CHECK(classify_call("_Z6rotatejj", false, true) == OpClass::int_op);
    CHECK(classify_call("llvm.fshl.i32", false, true) == OpClass::int_op);
    CHECK(classify_call("_Z5mad24iii", false, true) == OpClass::int_mad);
    CHECK(classify_call("_Z13get_global_idj", false, true) == OpClass::none);
    CHECK(classify_call("_Z6vload4mPU3AS1Kf", true, false) == OpClass::none);
    CHECK(classify_call("_Z7barrierj", false, false) == OpClass::barrier);
    CHECK(classify_call("_Z10atomic_addPU3AS1Vii", false, true) == OpClass::none);
}

TEST_CASE("capture time: the layer's own capture work is cut out of the program's time", "[trace][capture]") {
    // Captures at 100-200 and 300-350 us; the device ran the program's kernel at 150-170 us, inside
    // the first (the capture's first wait let it finish): that part stays.
    const auto us = [](double t) { return static_cast<std::uint64_t>(t * 1000); };
    const TimeCut cut({{us(100), us(200)}, {us(300), us(350)}}, 0, us(1000), {{us(150), us(170)}});
    CHECK(cut.total_ns() == us(30 + 50 + 50));
    CHECK(cut.map(us(50)) == us(50));
    CHECK(cut.map(us(120)) == us(100));           // inside the first cut: its start
    CHECK(cut.map(us(160)) == us(100) + us(10));  // the kept device time, moved back by the cut before it
    CHECK(cut.map(us(250)) == us(250 - 80));
    CHECK(cut.map(us(1000)) == us(1000 - 130));

    // A program with a 10 ms capture after its first kernel: the same idle share and wall time as
    // without it.
    test::TraceBuilder plain, captured;
    plain.kernel("k", 0, 1, 1001).kernel("k", 2000, 2001, 3001);
    captured.kernel("k", 0, 1, 1001).kernel("k", 12000, 12001, 13001);
    captured.trace.captures.emplace_back(test::TraceBuilder::at(1100), test::TraceBuilder::at(11100));
    const TraceAnalysis a = analyse_trace(plain.trace, plain.run(4000));
    const TraceAnalysis b = analyse_trace(captured.trace, captured.run(14000));
    CHECK(b.facts.run.capture_seconds == Approx(0.01));
    CHECK(b.facts.run.wall_seconds == Approx(a.facts.run.wall_seconds));
    CHECK(b.facts.stage_seconds(AppStage::device_idle) == Approx(a.facts.stage_seconds(AppStage::device_idle)));
    CHECK(b.facts.stage_seconds(AppStage::kernel) == Approx(a.facts.stage_seconds(AppStage::kernel)));
}

TEST_CASE("replay beats heuristic: when the local size is cleared, the roof finding that waited on it is ranked",
          "[trace][replay][rules]") {
    // pyopencl's fma_f32: launched without a local size, bound by fp32 at 10% of the peak.
    RunReport r = program("fma_f32", 9, 90, 4096, true);
    test::add_counted_work(r, test::counted_work("fma_f32", 90e-6, 4096, 1.8e6));
    std::vector<Finding> findings{classified(r, "trace.kernel.no_local_size"),
                                  classified(r, "trace.kernel.below_compute_roof")};
    REQUIRE(findings[0].kind == FindingKind::ranked);
    REQUIRE(findings[1].kind == FindingKind::note);  // one kernel, one ranked finding: the local size first
    CHECK(findings[1].not_ranked == trace_rule::pending_local_size);
    replay::judge_heuristics(findings, {replayed("fma_f32", {{"64", 995}, {"1024", 990}})});
    classify_findings(findings);
    CHECK(findings[0].kind == FindingKind::note);
    CHECK(findings[1].kind == FindingKind::ranked);
    REQUIRE(findings[1].estimated_gain);
    CHECK(*findings[1].estimated_gain == Approx(0.9 * 9 * 90e-6 / 900e-6).epsilon(0.05));
    CHECK_THAT(findings[1].gain_basis, Catch::StartsWith("at most"));
    CHECK_THAT(findings[1].title, Catch::EndsWith("(its local size measured: no gain)"));
}
