// The trace rules on synthetic programs: each planted pattern found with its share of the wall
// time, each clean variant silent, each missing ceiling said.
#include <catch2/catch.hpp>

#include "rule_test_support.hpp"
#include "trace_test_support.hpp"

using namespace clprobe;
using test::ceiling;
using test::only_trace_finding;
using test::run_trace_rule;
using test::trace_report;
using test::TraceBuilder;

namespace {

// n kernels of 20 us, each waited for, 80 us of device idle between them.
TraceBuilder synced_kernels(int n) {
    TraceBuilder b;
    for (int i = 0; i < n; ++i)
        b.kernel("k", i * 100.0, i * 100.0 + 5, i * 100.0 + 25).wait(i * 100.0 + 2, i * 100.0 + 30);
    return b;
}

// Not evaluated, with the "needs ..." sentence derived from the rule's declaration, naming what the
// report lacks.
void check_needs(const RunReport& r, const std::string& id, const std::string& names) {
    const std::string reason = test::skipped_rule(r, id).reason;
    CHECK(reason == test::rule_named(trace_rules(), id).needs());
    CHECK_THAT(reason, Catch::Contains(names));
}

std::vector<Measurement> launch_ceiling(double back_to_back_us) {
    return {ceiling("kernel.launch.latency", "us", back_to_back_us, {{"kind", "back_to_back"}}, false)};
}

}  // namespace

TEST_CASE("trace rules: a wait after every kernel, gain net of the pipelined launch gap", "[trace][rules]") {
    const auto b = synced_kernels(60);
    const RunReport r =
        run_trace_rule(trace_report(b.trace, b.run(6000), launch_ceiling(10)), "trace.sync.wait_after_kernel");
    const Finding f = only_trace_finding(r, "trace.sync.wait_after_kernel");
    // 59 gaps of 80 us, less 59 x 10 us pipelined: 4.13 ms of 6 ms.
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == Approx(59 * 70e-6 / 6000e-6));
    CHECK(f.severity == Severity::high);
}

TEST_CASE("trace rules: too few kernels or pipelined launches are not a sync finding", "[trace][rules]") {
    const auto few = synced_kernels(49);  // below the 50 launches that make a habit
    test::check_silent(
        run_trace_rule(trace_report(few.trace, few.run(5000), launch_ceiling(10)), "trace.sync.wait_after_kernel"));
    TraceBuilder pipelined;
    for (int i = 0; i < 100; ++i)
        pipelined.kernel("k", i * 2.0, 300 + i * 20.0, 320 + i * 20.0);
    pipelined.wait(201, 2400);
    test::check_silent(run_trace_rule(trace_report(pipelined.trace, pipelined.run(2500), launch_ceiling(10)),
                                      "trace.sync.wait_after_kernel"));
}

TEST_CASE("trace rules: pageable uploads against a faster measured path", "[trace][rules]") {
    TraceBuilder b;
    // 10 uploads of 1 MiB at 1 GB/s (about 1 ms each) in a 20 ms program.
    for (int i = 0; i < 10; ++i)
        b.command("write", CommandKind::write, i * 1100.0, i * 1100.0 + 2, i * 1100.0 + 1050, 1 << 20,
                  HostMemory::pageable);
    const auto run = b.run(20000);
    const auto pinned_fast = {ceiling("transfer.h2d.pinned.bandwidth", "GB/s", 4.0)};
    const Finding f = only_trace_finding(
        run_trace_rule(trace_report(b.trace, run, pinned_fast), "trace.transfer.pageable"), "trace.transfer.pageable");
    // At 4 GB/s the uploads take a quarter of their time: three quarters of 10.5 ms saved.
    REQUIRE(f.estimated_gain);
    const double achieved = 10.0 * (1 << 20) / 10480e-6 * 1e-9;
    CHECK(*f.estimated_gain == Approx(10480e-6 * (1 - achieved / 4.0) / 20000e-6).epsilon(0.01));
    // A pinned path no faster than what the program got: nothing to gain.
    test::check_silent(
        run_trace_rule(trace_report(b.trace, run, {ceiling("transfer.h2d.pinned.bandwidth", "GB/s", 1.1)}),
                       "trace.transfer.pageable"));
    // No transfer ceilings (--no-ceilings): not evaluated, and said why.
    check_needs(run_trace_rule(trace_report(b.trace, run), "trace.transfer.pageable"), "trace.transfer.pageable",
                "transfer.h2d.pinned.bandwidth or transfer.h2d.zero_copy.time or transfer.d2h.pinned.bandwidth or "
                "transfer.d2h.zero_copy.time");
}

TEST_CASE("trace rules: pageable uploads on a device that shares host memory, by the zero-copy time",
          "[trace][rules]") {
    TraceBuilder b;
    // The same 10 uploads of 1 MiB (10.5 ms of a 20 ms program); a pinned copy no faster.
    for (int i = 0; i < 10; ++i)
        b.command("write", CommandKind::write, i * 1100.0, i * 1100.0 + 2, i * 1100.0 + 1050, 1 << 20,
                  HostMemory::pageable);
    const auto run = b.run(20000);
    // The mapping hands over 128 KiB in 3 us and 4 MiB in 5 us: the 1 MiB uploads take the 4 MiB
    // time (the nearest measured size at or above theirs), 10 x 5 us instead of 10.48 ms.
    const std::vector<Measurement> shared = {
        ceiling("transfer.h2d.pinned.bandwidth", "GB/s", 1.1),
        ceiling("transfer.h2d.zero_copy.time", "us", 3, {{"size", "131072"}}, false),
        ceiling("transfer.h2d.zero_copy.time", "us", 5, {{"size", "4194304"}}, false)};
    const Finding f = only_trace_finding(run_trace_rule(trace_report(b.trace, run, shared), "trace.transfer.pageable"),
                                         "trace.transfer.pageable");
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == Approx((10480e-6 - 10 * 5e-6) / 20000e-6).epsilon(0.01));
    CHECK_THAT(f.title, Catch::Matchers::Contains("without a copy"));
    CHECK_THAT(f.suggestion, Catch::Matchers::Contains("do not copy"));
    // The evidence is the time at that size, never a rate.
    REQUIRE_FALSE(f.evidence.empty());
    CHECK(f.evidence.back().metric == "transfer.h2d.zero_copy.time");
    CHECK(f.evidence.back().labels.at("size") == "4194304");
    // A mapping slower than the copies: nothing to gain.
    const std::vector<Measurement> slow_map = {
        ceiling("transfer.h2d.zero_copy.time", "us", 1500, {{"size", "4194304"}}, false)};
    test::check_silent(run_trace_rule(trace_report(b.trace, run, slow_map), "trace.transfer.pageable"));
}

TEST_CASE("trace rules: many transfers below the half-peak size", "[trace][rules]") {
    TraceBuilder b;
    for (int i = 0; i < 200; ++i)
        b.command("write", CommandKind::write, i * 10.0, i * 10.0 + 1, i * 10.0 + 6, 64, HostMemory::pageable);
    const std::vector<Measurement> ceilings = {
        ceiling("transfer.half_peak_size", "bytes", 4096,
                {{"direction", "h2d"}, {"path", "pageable"}, {"blocking", "true"}}, false),
        ceiling("transfer.h2d.pageable.bandwidth", "GB/s", 10)};
    const Finding f = only_trace_finding(
        run_trace_rule(trace_report(b.trace, b.run(4000), ceilings), "trace.transfer.small"), "trace.transfer.small");
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == Approx((200 * 5e-6 - 200 * 64 / 10e9) / 4000e-6));
    // Large transfers are not small ones.
    TraceBuilder large;
    for (int i = 0; i < 200; ++i)
        large.command("write", CommandKind::write, i * 10.0, i * 10.0 + 1, i * 10.0 + 6, 1 << 20, HostMemory::pageable);
    test::check_silent(run_trace_rule(trace_report(large.trace, large.run(4000), ceilings), "trace.transfer.small"));
    check_needs(run_trace_rule(trace_report(b.trace, b.run(4000)), "trace.transfer.small"), "trace.transfer.small",
                "transfer.half_peak_size (direction=h2d, path=pageable, blocking=true)");
}

TEST_CASE("trace rules: a kernel far below the memory roof is named", "[trace][rules]") {
    TraceBuilder b;
    b.kernel("copy", 0, 1, 11, 100'000).kernel("slow_sum", 12, 20, 820, 4096);
    const auto peak = {ceiling("kernel.peak.bandwidth", "GB/s", 20)};
    const Finding f = only_trace_finding(
        run_trace_rule(trace_report(b.trace, b.run(1000), peak), "trace.kernel.below_roof"), "trace.kernel.below_roof");
    CHECK(f.title.find("slow_sum") != std::string::npos);
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == Approx((800e-6 - 4096 / 20e9) / 1000e-6));
    // The same kernel near the roof: silent.
    TraceBuilder fast;
    fast.kernel("stream", 0, 1, 801, 8'000'000);  // 10 GB/s of 20
    test::check_silent(run_trace_rule(trace_report(fast.trace, fast.run(1000), peak), "trace.kernel.below_roof"));
    // No roof measured (--no-ceilings): not evaluated.
    check_needs(run_trace_rule(trace_report(b.trace, b.run(1000)), "trace.kernel.below_roof"),
                "trace.kernel.below_roof", "kernel.roof.bandwidth or kernel.peak.bandwidth");
}

TEST_CASE("trace rules: a kernel whose buffers fit a cache is held against that cache's roof", "[trace][rules]") {
    // 500 launches over one 16 KiB buffer at 15 GB/s: 75% of a 20 GB/s memory roof, but 3.75% of the
    // 400 GB/s L1 roof the buffer lives in.
    TraceBuilder b;
    const double launch_us = 16384 / 15e9 * 1e6;
    for (int i = 0; i < 500; ++i)
        b.kernel("warm", i * 2.0, i * 2.0 + 0.1, i * 2.0 + 0.1 + launch_us, 16384);
    const auto memory_only = {ceiling("kernel.peak.bandwidth", "GB/s", 20)};
    test::check_silent(run_trace_rule(trace_report(b.trace, b.run(1000), memory_only), "trace.kernel.below_roof"));

    RunReport r = trace_report(b.trace, b.run(1000), memory_only);
    MemoryRoofFacts levels;
    levels.caches = {{"L1", 64 * 1024}, {"L2", 2u << 20}};
    levels.roofs = {{"L1", 16 * 1024, 32 * 1024, 400, 2}, {"L2", 256 * 1024, 1u << 20, 150, 3}};
    ProbeResult probe;
    probe.id = memory_levels_probe_id;
    probe.layer = "kernel";
    probe.attributes["facts"] = to_json(levels);
    r.results.insert(r.results.begin(), probe);
    const Finding f = only_trace_finding(run_trace_rule(r, "trace.kernel.below_roof"), "trace.kernel.below_roof");
    CHECK(f.title.find("L1 roof") != std::string::npos);
    CHECK(f.title.find("3.8%") != std::string::npos);
    REQUIRE(f.evidence.size() >= 3);
    CHECK(f.evidence.back().metric == "kernel.roof.bandwidth{level=L1}");
}

TEST_CASE("trace rules: the same source rebuilt", "[trace][rules]") {
    TraceBuilder b;
    for (int i = 0; i < 5; ++i)
        b.build(i * 200.0, i * 200.0 + 100, 99);
    const Finding f = only_trace_finding(run_trace_rule(trace_report(b.trace, b.run(2000)), "trace.build.repeated"),
                                         "trace.build.repeated");
    CHECK(*f.estimated_gain == Approx(400e-6 / 2000e-6));
    TraceBuilder once;
    once.build(0, 100, 99);
    test::check_silent(run_trace_rule(trace_report(once.trace, once.run(2000)), "trace.build.repeated"));
}

TEST_CASE("trace rules: a cold build from source against the measured binary load", "[trace][rules]") {
    TraceBuilder b;
    b.build(0, 500, 1).kernel("k", 600, 601, 700);
    const std::vector<Measurement> builds = {ceiling("kernel.build.time", "ms", 200, {{"path", "cold"}}, false),
                                             ceiling("kernel.build.time", "ms", 2, {{"path", "binary_cache"}}, false)};
    const Finding f =
        only_trace_finding(run_trace_rule(trace_report(b.trace, b.run(1000), builds), "trace.build.from_source"),
                           "trace.build.from_source");
    CHECK(*f.estimated_gain == Approx(500e-6 * 0.99 / 1000e-6));
    // Under 5% of the program: silent.
    test::check_silent(run_trace_rule(trace_report(b.trace, b.run(20000), builds), "trace.build.from_source"));
    // Only the cold build measured: the binary load is missing.
    check_needs(run_trace_rule(trace_report(b.trace, b.run(1000), {builds[0]}), "trace.build.from_source"),
                "trace.build.from_source", "path=binary_cache");
}

TEST_CASE("trace rules: allocations inside the loop, from 20 on", "[trace][rules]") {
    const auto with_allocations = [](int n) {
        TraceBuilder b;
        b.kernel("k", 0, 1, 2);
        for (int i = 0; i < n; ++i)
            b.allocation(1 << 20, 10 + i * 50.0, 30 + i * 50.0, 10);
        b.kernel("k", 10 + n * 50.0, 11 + n * 50.0, 12 + n * 50.0);
        return b;
    };
    const auto twenty = with_allocations(20), nineteen = with_allocations(19);
    const Finding f =
        only_trace_finding(run_trace_rule(trace_report(twenty.trace, twenty.run(2000)), "trace.memory.alloc_in_loop"),
                           "trace.memory.alloc_in_loop");
    CHECK(*f.estimated_gain == Approx(20 * 20e-6 / 2000e-6));
    test::check_silent(run_trace_rule(trace_report(nineteen.trace, nineteen.run(2000)), "trace.memory.alloc_in_loop"));
}

TEST_CASE("trace rules: a fresh allocation's first touch counts beyond the memory roof", "[trace][rules]") {
    TraceBuilder b;
    b.kernel("k", 0, 1, 2);
    for (int i = 0; i < 20; ++i) {
        b.allocation(1 << 20, 10 + i * 100.0, 90 + i * 100.0, 1);
        b.command("fill", CommandKind::fill, 20 + i * 100.0, 21 + i * 100.0, 81 + i * 100.0, 1 << 20);  // 60 us
        b.trace.commands.back().mem = b.trace.allocations.back().handle;
    }
    b.kernel("k", 2100, 2101, 2102);
    const auto peak = {ceiling("kernel.peak.bandwidth", "GB/s", 100)};  // 1 MiB in 10.5 us at the roof
    const Finding f =
        only_trace_finding(run_trace_rule(trace_report(b.trace, b.run(4000), peak), "trace.memory.alloc_in_loop"),
                           "trace.memory.alloc_in_loop");
    CHECK(*f.estimated_gain == Approx((20 * 2e-6 + 20 * (60e-6 - (1 << 20) / 100e9)) / 4000e-6));
}

TEST_CASE("trace rules: a device-memory peak near capacity", "[trace][rules]") {
    TraceBuilder b;
    b.allocation(1ull << 28, 0, std::nullopt).allocation(700ull << 20, 1, std::nullopt);  // 956 MiB of 1 GiB
    const Finding f = only_trace_finding(
        run_trace_rule(trace_report(b.trace, b.run(100)), "trace.memory.near_capacity"), "trace.memory.near_capacity");
    CHECK(f.severity == Severity::high);
    CHECK_FALSE(f.estimated_gain);
    TraceBuilder small;
    small.allocation(1 << 20, 0, std::nullopt);
    test::check_silent(run_trace_rule(trace_report(small.trace, small.run(100)), "trace.memory.near_capacity"));
}

TEST_CASE("trace rules: copies serialised with kernels where overlap works", "[trace][rules]") {
    TraceBuilder b;
    for (int i = 0; i < 5; ++i) {
        b.command("write", CommandKind::write, i * 200.0, i * 200.0 + 1, i * 200.0 + 100, 1 << 20, HostMemory::pinned);
        b.kernel("k", i * 200.0 + 2, i * 200.0 + 100, i * 200.0 + 200);
    }
    const auto works = {ceiling("transfer.overlap.efficiency", "fraction", 0.8)};
    const Finding f =
        only_trace_finding(run_trace_rule(trace_report(b.trace, b.run(1000), works), "trace.overlap.serialised"),
                           "trace.overlap.serialised");
    CHECK(*f.estimated_gain == Approx(0.8 * 495e-6 / 1000e-6).epsilon(0.02));
    test::check_silent(
        run_trace_rule(trace_report(b.trace, b.run(1000), {ceiling("transfer.overlap.efficiency", "fraction", 0.1)}),
                       "trace.overlap.serialised"));
    check_needs(run_trace_rule(trace_report(b.trace, b.run(1000)), "trace.overlap.serialised"),
                "trace.overlap.serialised", "transfer.overlap.efficiency");
}

TEST_CASE("trace rules: how the program ended and whether the layer saw it", "[trace][rules]") {
    TraceBuilder nothing;
    nothing.trace = ProgramTrace{};  // the layer never wrote its header
    auto run = nothing.run(100);
    run.linked_opencl = false;
    only_trace_finding(run_trace_rule(trace_report(nothing.trace, run), "trace.program.no_opencl"),
                       "trace.program.no_opencl");
    test::check_silent(run_trace_rule(trace_report(nothing.trace, run), "trace.layer.not_loaded"));
    run.linked_opencl = true;  // it mapped libOpenCL, yet no record: the loader ignored the layer
    only_trace_finding(run_trace_rule(trace_report(nothing.trace, run), "trace.layer.not_loaded"),
                       "trace.layer.not_loaded");
    test::check_silent(run_trace_rule(trace_report(nothing.trace, run), "trace.program.no_opencl"));

    TraceBuilder crashed;
    crashed.kernel("k", 0, 1, 2);
    crashed.trace.clean_exit = false;
    auto killed = crashed.run(100);
    killed.exit_code.reset();
    killed.signal = 6;
    const Finding f = only_trace_finding(
        run_trace_rule(trace_report(crashed.trace, killed), "trace.program.incomplete"), "trace.program.incomplete");
    CHECK(f.title.find("signal 6") != std::string::npos);
    TraceBuilder fine;
    fine.kernel("k", 0, 1, 2);
    test::check_silent(run_trace_rule(trace_report(fine.trace, fine.run(100)), "trace.program.incomplete"));
}

TEST_CASE("trace rules: a host-bound program is told so", "[trace][rules]") {
    TraceBuilder b;
    b.kernel("k", 10, 11, 20).kernel("k", 900, 901, 910);  // the device busy 2% of 1 ms
    only_trace_finding(run_trace_rule(trace_report(b.trace, b.run(1000)), "trace.program.host_bound"),
                       "trace.program.host_bound");
    const auto busy = synced_kernels(60);  // 20 of every 100 us on the device
    test::check_silent(run_trace_rule(trace_report(busy.trace, busy.run(6000)), "trace.program.host_bound"));
}

TEST_CASE("trace rules: the device idle while the host works", "[trace][rules]") {
    TraceBuilder b;
    for (int i = 0; i < 5; ++i)
        b.kernel("k", i * 200.0, i * 200.0 + 1, i * 200.0 + 100);  // 100 us busy, 100 us idle, no waits
    const Finding f = only_trace_finding(run_trace_rule(trace_report(b.trace, b.run(1000)), "trace.device.idle_gaps"),
                                         "trace.device.idle_gaps");
    CHECK(*f.estimated_gain == Approx(400e-6 / 1000e-6).epsilon(0.02));
}

TEST_CASE("trace rules: ceilings of another device are not held against the program", "[trace][rules]") {
    TraceBuilder b;
    b.trace.devices[0].name = "Another device";  // the program ran there; the ceilings are of "Synthetic device"
    b.kernel("copy", 0, 1, 11, 100'000).kernel("slow_sum", 12, 20, 820, 4096);
    const RunReport r = run_trace_rule(
        trace_report(b.trace, b.run(1000), {ceiling("kernel.peak.bandwidth", "GB/s", 20)}), "trace.kernel.below_roof");
    CHECK(r.findings.empty());
    REQUIRE(r.rules_not_evaluated.size() == 1);
    CHECK(r.rules_not_evaluated[0].reason.find("Another device") != std::string::npos);
}

TEST_CASE("trace rules: a trace report ranks the program, not the device layers' stand-ins", "[trace][rules]") {
    const auto b = synced_kernels(60);
    RunReport r = trace_report(b.trace, b.run(6000), launch_ceiling(10));
    // A kernel-layer measurement that would make kernel.launch.sync_overhead fire in diagnose.
    r.results[0].measurements.push_back(ceiling("kernel.launch.latency", "us", 300, {{"kind", "round_trip"}}, false));
    analyze(r);
    REQUIRE_FALSE(r.findings.empty());
    for (const auto& f : r.findings)
        CHECK((f.layer == "trace" || f.layer == "system" || f.layer == "topology"));
    CHECK(r.findings[0].id == "trace.sync.wait_after_kernel");
    // Reports without a traced program do not evaluate the trace rules at all.
    RunReport plain;
    analyze(plain, trace_rules());
    CHECK(plain.findings.empty());
    CHECK(plain.rules_not_evaluated.empty());
}

TEST_CASE("trace rules: each declares trace.program's facts first; unreadable facts say so", "[trace][rules]") {
    for (const auto& rule : trace_rules()) {
        INFO("rule " << rule.id);
        CHECK(rule.layer == "trace");
        REQUIRE_FALSE(rule.inputs.empty());
        CHECK(rule.inputs.front().kind == RuleInput::Kind::facts);
        CHECK(rule.inputs.front().names == std::vector<std::string>{trace_probe_id});
    }
    TraceBuilder b;
    b.build(0, 100, 99).build(200, 300, 99);
    RunReport r = trace_report(b.trace, b.run(2000));
    for (auto& result : r.results)
        if (result.id == trace_probe_id) result.attributes["facts"] = "not facts";
    check_needs(run_trace_rule(r, "trace.build.repeated"), "trace.build.repeated", "trace.program's facts");
}
