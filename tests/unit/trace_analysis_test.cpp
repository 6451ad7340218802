// A traced program's wall time split into stages, its patterns counted, its measurements made.
#include <catch2/catch.hpp>

#include <cmath>

#include "trace_test_support.hpp"

using namespace clprobe;
using test::TraceBuilder;

namespace {

double stage(const TraceFacts& f, AppStage s) {
    return f.stage_seconds(s);
}

double total(const TraceFacts& f) {
    double t = 0;
    for (const auto& s : f.stages)
        t += s.seconds;
    return t;
}

const Measurement* measurement(const TraceAnalysis& a, const std::string& metric, const Labels& labels = {}) {
    for (const auto& m : a.measurements)
        if (m.metric == metric && m.labels == labels) return &m;
    return nullptr;
}

}  // namespace

TEST_CASE("trace analysis: stages partition the wall time, device clock offset removed", "[trace]") {
    TraceBuilder b;
    b.build(0, 100, 1)                                                                       // 100 us build
        .command("write", CommandKind::write, 110, 120, 220, 1 << 20, HostMemory::pageable)  // 100 us transfer
        .kernel("k", 230, 300, 700)                                                          // 400 us kernel
        .wait(240, 710)               // the host waits through the kernel
        .kernel("k", 800, 820, 900);  // idle 700..820 while the host works
    const TraceAnalysis a = analyse_trace(b.trace, b.run(1000));
    const TraceFacts& f = a.facts;
    CHECK(total(f) == Approx(1000e-6).margin(1e-9));
    CHECK(stage(f, AppStage::build) == Approx(100e-6));
    CHECK(stage(f, AppStage::transfer) == Approx(100e-6));
    CHECK(stage(f, AppStage::kernel) == Approx(480e-6));
    // The wait (240..710) counts only where the device does nothing: 240..300 and 700..710.
    CHECK(stage(f, AppStage::host_wait) == Approx(70e-6));
    // Inside the window (first enqueue at 110 .. last device end at 900) the idle stretches are
    // 110..120, 220..240 and 710..820; outside it 100..110 and 900..1000.
    CHECK(stage(f, AppStage::device_idle) == Approx(140e-6));
    CHECK(stage(f, AppStage::host_only) == Approx(110e-6));
    CHECK(f.run.wall_seconds == Approx(1000e-6));
    CHECK(f.overlap.kernel_seconds == Approx(480e-6));
    CHECK(f.overlap.overlapped_seconds == 0);
}

TEST_CASE("trace analysis: kernels by name, per-launch samples, bytes estimate", "[trace]") {
    TraceBuilder b;
    for (int i = 0; i < 10; ++i)
        b.kernel("slow", 10 + i * 200.0, 20 + i * 200.0, 120 + i * 200.0, 1000);  // 100 us, 1000 B each
    b.kernel("fast", 2100, 2110, 2120, 1 << 20);
    const TraceAnalysis a = analyse_trace(b.trace, b.run(3000), BandwidthRoofs{std::nullopt, 10.0});
    REQUIRE(a.facts.kernels.size() == 2);
    CHECK(a.facts.kernels[0].name == "slow");  // largest device time first
    CHECK(a.facts.kernels[0].launches == 10);
    CHECK(a.facts.kernels[0].seconds == Approx(1000e-6));
    CHECK(a.facts.kernels[0].median_launch_seconds == Approx(100e-6));
    const Measurement* t = measurement(a, "app.kernel.time", {{"kernel", "slow"}});
    REQUIRE(t);
    CHECK(t->samples.size() == 10);
    CHECK(t->summary.median == Approx(100));  // us
    const Measurement* bw = measurement(a, "app.kernel.bandwidth", {{"kernel", "slow"}});
    REQUIRE(bw);
    CHECK(bw->summary.median == Approx(10000.0 / 1000e-6 * 1e-9));
    const Measurement* roof = measurement(a, "app.kernel.roofline_fraction", {{"kernel", "slow"}});
    REQUIRE(roof);
    CHECK(roof->summary.median == Approx(bw->summary.median / 10.0));
    CHECK(measurement(a, "app.kernel.launches", {{"kernel", "fast"}})->summary.median == 1);
    CHECK(measurement(a, "app.pipeline.stage_time", {{"stage", "kernel"}}));
    CHECK(measurement(a, "app.wall_time")->summary.median == Approx(3000e-6));
}

TEST_CASE("trace analysis: waits after kernels and the device gaps between them", "[trace]") {
    TraceBuilder synced, pipelined;
    for (int i = 0; i < 5; ++i) {
        const double t0 = i * 100.0;
        synced.kernel("k", t0, t0 + 5, t0 + 25).wait(t0 + 2, t0 + 30);  // next kernel starts 80 us after this one ends
        pipelined.kernel("k", i * 2.0, 20 + i * 20.0, 40 + i * 20.0);
    }
    pipelined.wait(12, 120);
    const SyncFacts s = analyse_trace(synced.trace, synced.run(600)).facts.sync;
    CHECK(s.kernels == 5);
    CHECK(s.kernels_followed_by_wait == 5);
    CHECK(s.gaps_measured == 4);
    CHECK(s.gap_seconds == Approx(4 * 80e-6));
    const SyncFacts p = analyse_trace(pipelined.trace, pipelined.run(600)).facts.sync;
    CHECK(p.kernels == 5);
    CHECK(p.kernels_followed_by_wait == 1);  // only the last: one wait at the end
    CHECK(p.gap_seconds == 0);
}

TEST_CASE("trace analysis: transfers by direction and path, with a size histogram", "[trace]") {
    TraceBuilder b;
    for (int i = 0; i < 3; ++i)
        b.command("write", CommandKind::write, i * 10.0, i * 10.0 + 1, i * 10.0 + 2, 64, HostMemory::pageable);
    b.command("read", CommandKind::read, 50, 51, 151, 1 << 20, HostMemory::pinned);
    const TraceFacts f = analyse_trace(b.trace, b.run(200)).facts;
    REQUIRE(f.transfers.size() == 2);
    const auto& up = f.transfers[0];
    CHECK(up.direction == "h2d");
    CHECK(up.path == "pageable");
    CHECK(up.count == 3);
    CHECK(up.bytes == 192);
    REQUIRE(up.bins.size() == 1);
    CHECK(up.bins[0].upper_bytes == 64);
    CHECK(up.bins[0].enqueue_seconds == Approx(3e-6));
    CHECK(f.transfers[1].direction == "d2h");
    CHECK(f.transfers[1].path == "pinned");
    CHECK(f.transfers[1].seconds == Approx(100e-6));
}

TEST_CASE("trace analysis: builds of the same source again are repeats", "[trace]") {
    TraceBuilder b;
    b.build(0, 100, 7).build(200, 300, 7).build(400, 450, 8).build(500, 510, 0, "binary");
    const BuildFacts f = analyse_trace(b.trace, b.run(1000)).facts.builds;
    CHECK(f.builds == 4);
    CHECK(f.from_source == 3);
    CHECK(f.from_binary == 1);
    CHECK(f.repeated == 1);
    CHECK(f.repeated_seconds == Approx(100e-6));
}

TEST_CASE("trace analysis: memory peak and allocations inside the command loop", "[trace]") {
    TraceBuilder b;
    b.allocation(1000, 0, std::nullopt);  // lives the whole run
    b.kernel("k", 10, 11, 12);
    for (int i = 0; i < 5; ++i)
        b.allocation(500, 20 + i * 10.0, 25 + i * 10.0, 2);  // created and released between commands
    b.allocation(3000, 90, 95);                              // with the first: peak 4000
    b.kernel("k", 100, 101, 102);
    const AllocationFacts m = analyse_trace(b.trace, b.run(200)).facts.memory;
    CHECK(m.allocations == 7);
    CHECK(m.released == 6);
    CHECK(m.peak_bytes == 4000);
    CHECK(m.largest_bytes == 3000);
    CHECK(m.in_loop == 6);
    CHECK(m.in_loop_distinct_sizes == 2);
    CHECK(m.in_loop_call_seconds == Approx(5 * 4e-6 + 2e-6));
}

TEST_CASE("trace analysis: the first command on each fresh allocation", "[trace]") {
    TraceBuilder b;
    b.kernel("k", 0, 1, 2);
    for (int i = 0; i < 3; ++i) {
        b.allocation(4096, 10 + i * 100.0, 90 + i * 100.0);
        // A fill of 50 us (the first touch) then one of 10 us, on the same allocation.
        b.command("fill", CommandKind::fill, 20 + i * 100.0, 21 + i * 100.0, 71 + i * 100.0, 4096);
        b.trace.commands.back().mem = b.trace.allocations.back().handle;
        b.command("fill", CommandKind::fill, 75 + i * 100.0, 76 + i * 100.0, 86 + i * 100.0, 4096);
        b.trace.commands.back().mem = b.trace.allocations.back().handle;
    }
    b.kernel("k", 400, 401, 402);
    const AllocationFacts m = analyse_trace(b.trace, b.run(500)).facts.memory;
    CHECK(m.in_loop == 3);
    CHECK(m.in_loop_first_uses == 3);
    CHECK(m.in_loop_first_use_seconds == Approx(150e-6));
    CHECK(m.in_loop_first_use_bytes == 3 * 4096);
}

TEST_CASE("trace analysis: commands never seen complete are counted, not timed", "[trace]") {
    TraceBuilder b;
    b.kernel("k", 0, 1, 2).kernel("k", 3, 4, 5);
    b.trace.commands[1].device.reset();
    b.trace.clean_exit = false;
    const TraceFacts f = analyse_trace(b.trace, b.run(10)).facts;
    CHECK(f.run.commands_without_times == 1);
    CHECK(f.run.opencl_commands == 2);
    CHECK_FALSE(f.run.layer_clean_exit);
}

TEST_CASE("trace facts: JSON round trip", "[trace]") {
    TraceBuilder b;
    b.build(0, 10, 1).kernel("k", 20, 21, 40, 64).wait(22, 41);
    b.command("write", CommandKind::write, 50, 51, 52, 64, HostMemory::pageable);
    const TraceFacts f = analyse_trace(b.trace, b.run(100)).facts;
    const auto back = trace_facts_from_json(to_json(f));
    REQUIRE(back);
    CHECK(to_json(*back) == to_json(f));
    CHECK_FALSE(trace_facts_from_json(nlohmann::json::array()));
    CHECK_FALSE(trace_facts_from_json({{"kernels", "not a list"}}));
}
