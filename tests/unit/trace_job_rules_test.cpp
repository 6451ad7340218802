// The rules over the shape of a traced job (reports/rules/trace_job_rules): lanes loaded unevenly,
// fusion candidates, kernels without a local size far below their roof; and how a finding of a
// job of several processes names the process it concerns. Each above and below its trigger.
#include <catch2/catch.hpp>

#include "rule_test_support.hpp"
#include "rules/trace_rule_support.hpp"
#include "trace/job_trace.hpp"
#include "trace_test_support.hpp"

using namespace clprobe;
using test::ceiling;
using test::only_trace_finding;
using test::run_trace_rule;
using test::trace_report;
using test::TraceBuilder;

namespace {

const Evidence* evidence_named(const Finding& f, const std::string& metric, const std::string& pid = "") {
    for (const auto& e : f.evidence)
        if (e.metric == metric && (pid.empty() || (e.labels.count("pid") && e.labels.at("pid") == pid))) return &e;
    return nullptr;
}

// One process with two devices: every 100 us a kernel of `busy0_us` on device 1 and one of
// `busy1_us` on device 2, 100 steps (10 ms).
TraceBuilder two_devices(double busy0_us, double busy1_us) {
    TraceBuilder b;
    b.trace.devices.push_back({"d2", "cpu", "Synthetic", "Synthetic device"});
    b.trace.queues.push_back({"q2", 1, TraceBuilder::origin, true});
    for (int i = 0; i < 100; ++i) {
        const double t = i * 100.0;
        b.kernel("a", t, t + 1, t + 1 + busy0_us);
        if (busy1_us <= 0) continue;
        b.kernel("b", t + 0.5, t + 1, t + 1 + busy1_us);
        b.trace.commands.back().queue = 1;
    }
    return b;
}

// One process of a job: `kernels` kernels of `kernel_us` every 100 us from `offset_us`.
ProgramTrace process_of(int pid, double offset_us, int kernels, double kernel_us, bool wait_each = false) {
    TraceBuilder b;
    b.trace.pid = pid;
    b.trace.origin = ProcessOrigin{1, "exec", TraceBuilder::at(offset_us), "app " + std::to_string(pid)};
    b.trace.layer_start = TraceBuilder::at(offset_us);
    for (int i = 0; i < kernels; ++i) {
        const double t = offset_us + i * 100.0;
        b.kernel("k", t, t + 2, t + 2 + kernel_us);
        if (wait_each) b.wait(t + 1, t + 2 + kernel_us + 1);
    }
    b.trace.layer_end = TraceBuilder::at(offset_us + kernels * 100.0 + 5);
    b.trace.last_record = *b.trace.layer_end;
    return b.trace;
}

// The job of these processes as `clprobe trace` reports it.
RunReport job_report(const std::vector<ProgramTrace>& processes, double wall_us,
                     std::vector<Measurement> ceilings = {}) {
    JobRun job;
    job.program = TraceBuilder().run(wall_us);
    job.end_ns = job.program.end_ns;
    RunReport r = trace_report(processes.front(), job.program, std::move(ceilings));
    r.results.back() = program_probe_result(analyse_job(processes, merge_processes(processes), job));
    return r;
}

// `n` iterations of: a write, then kernels a, b, c launched back to back (enqueued ahead), each
// `kernel_us` long with `gap_us` of device idle between them.
TraceBuilder sequence(int n, double kernel_us, double gap_us) {
    TraceBuilder b;
    const double period = 20 + 3 * kernel_us + 2 * gap_us;
    for (int i = 0; i < n; ++i) {
        const double t = i * period;
        b.command("write", CommandKind::write, t, t + 1, t + 5, 64, HostMemory::pageable);
        double start = t + 10;
        for (const char* name : {"a", "b", "c"}) {
            b.kernel(name, t + 2, start, start + kernel_us);
            start += kernel_us + gap_us;
        }
    }
    return b;
}

// 500 us of a 1 ms program at 4096 bytes: far below a 20 GB/s roof; `auto_local`: launched with
// a NULL local size.
TraceBuilder slow_kernel(bool auto_local) {
    TraceBuilder b;
    b.kernel("copy", 0, 1, 11, 100'000).kernel("slow_sum", 12, 20, 520, 4096);
    if (auto_local) b.trace.commands.back().local = "0";
    b.trace.commands.front().local = "64,1,1";
    return b;
}

}  // namespace

TEST_CASE("trace analysis: one lane per process and device, and the busiest against the least", "[trace][job]") {
    const auto b = two_devices(80, 20);
    const TraceFacts f = analyse_trace(b.trace, b.run(10'000)).facts;
    REQUIRE(f.lanes.size() == 2);
    CHECK(f.lanes[0].pid == 42);
    CHECK(f.lanes[0].commands == 100);
    CHECK(f.lanes[0].busy_seconds == Approx(100 * 80e-6));
    CHECK(f.lanes[1].busy_seconds == Approx(100 * 20e-6));
    CHECK(f.balance.busiest == 0);
    CHECK(f.balance.least == 1);
    CHECK(f.balance.busiest_busy_seconds == Approx(100 * 80e-6));
    CHECK(f.balance.least_busy_seconds == Approx(100 * 20e-6));

    // A queue on a second device that never ran a command: a lane idle all along.
    const auto unused = two_devices(80, 0);
    const TraceFacts g = analyse_trace(unused.trace, unused.run(10'000)).facts;
    REQUIRE(g.lanes.size() == 2);
    CHECK(g.lanes[1].commands == 0);
    CHECK(g.balance.least == 1);
    CHECK(g.balance.least_busy_seconds == 0);

    // Two processes on one device, one after the other: lanes of their own, never compared.
    const std::vector<ProgramTrace> serial = {process_of(100, 0, 20, 90), process_of(101, 3000, 20, 10)};
    const TraceFacts s = analyse_job(serial, merge_processes(serial),
                                     [] {
                                         JobRun j;
                                         j.program = TraceBuilder().run(6000);
                                         j.end_ns = j.program.end_ns;
                                         return j;
                                     }())
                             .facts;
    REQUIRE(s.lanes.size() == 2);
    CHECK(s.lanes[0].pid == 100);
    CHECK(s.lanes[1].pid == 101);
    CHECK(s.lanes[1].begin_seconds == Approx(3000e-6));
    CHECK(s.balance.busiest < 0);
}

TEST_CASE("trace rules: lanes loaded unevenly, above and below the trigger", "[trace][rules][job]") {
    const auto b = two_devices(80, 20);
    const Finding f =
        only_trace_finding(run_trace_rule(trace_report(b.trace, b.run(10'000)), "trace.job.device_imbalance"),
                           "trace.job.device_imbalance");
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == Approx((8e-3 - 2e-3) / 2 / 10e-3));  // half the difference evens them
    CHECK(f.factor.value_or(0) == Approx(4));
    CHECK(evidence_named(f, "app.lane.busy_fraction") != nullptr);
    // 1.33x: within the trigger's 1.5x.
    const auto close = two_devices(80, 60);
    test::check_silent(run_trace_rule(trace_report(close.trace, close.run(10'000)), "trace.job.device_imbalance"));
    // 4x, but the difference is 3% of the wall time, under 5%.
    const auto small = two_devices(4, 1);
    test::check_silent(run_trace_rule(trace_report(small.trace, small.run(10'000)), "trace.job.device_imbalance"));
    // A device set up and never used is the extreme case.
    const auto unused = two_devices(80, 0);
    const Finding u =
        only_trace_finding(run_trace_rule(trace_report(unused.trace, unused.run(10'000)), "trace.job.device_imbalance"),
                           "trace.job.device_imbalance");
    CHECK_FALSE(u.factor);  // infinitely uneven: no factor to state
}

TEST_CASE("trace rules: two processes at once, one loading its device far less, are named", "[trace][rules][job]") {
    const std::vector<ProgramTrace> both = {process_of(100, 0, 50, 90), process_of(101, 10, 50, 10)};
    const Finding f = only_trace_finding(run_trace_rule(job_report(both, 5100), "trace.job.device_imbalance"),
                                         "trace.job.device_imbalance");
    CHECK_THAT(f.title, Catch::Contains("pid 100 (app 100)") && Catch::Contains("pid 101 (app 101)"));
    REQUIRE(evidence_named(f, "app.lane.busy_time", "100"));
    CHECK(evidence_named(f, "app.lane.busy_time", "100")->value == Approx(50 * 90e-6).epsilon(0.05));
    // The same two processes one after the other: nothing to balance.
    const std::vector<ProgramTrace> serial = {process_of(100, 0, 50, 90), process_of(101, 6000, 50, 10)};
    test::check_silent(run_trace_rule(job_report(serial, 11'100), "trace.job.device_imbalance"));
}

TEST_CASE("trace analysis: kernels launched back to back, grouped by their repeated sequence", "[trace]") {
    const auto b = sequence(30, 10, 8);
    const TraceFacts f = analyse_trace(b.trace, b.run(30 * 74.0)).facts;
    REQUIRE_FALSE(f.fusion.empty());
    const FusionFacts& s = f.fusion.front();
    CHECK(s.sequence == std::vector<std::string>{"a", "b", "c"});
    CHECK(s.occurrences == 30);
    CHECK(s.kernels == 90);
    CHECK(s.removable_gaps == 60);
    CHECK(s.removable_gap_seconds == Approx(60 * 8e-6));
    CHECK(s.median_kernel_seconds == Approx(10e-6));
    CHECK(s.median_gap_seconds == Approx(8e-6));
    CHECK(s.pid == 42);

    // One kernel again and again: one sequence of one name, every gap removable.
    TraceBuilder same;
    for (int i = 0; i < 30; ++i)
        same.kernel("k", i * 20.0, i * 20.0 + 5, i * 20.0 + 15);
    const TraceFacts g = analyse_trace(same.trace, same.run(700)).facts;
    REQUIRE(g.fusion.size() == 1);
    CHECK(g.fusion[0].sequence == std::vector<std::string>{"k"});
    CHECK(g.fusion[0].removable_gaps == 29);
    CHECK(g.fusion[0].removable_gap_seconds == Approx(29 * 10e-6));

    // A host wait between launches breaks the run: that gap is the sync rule's.
    TraceBuilder waited;
    for (int i = 0; i < 30; ++i)
        waited.kernel("k", i * 20.0, i * 20.0 + 5, i * 20.0 + 15).wait(i * 20.0 + 2, i * 20.0 + 16);
    CHECK(analyse_trace(waited.trace, waited.run(700)).facts.fusion.empty());
}

TEST_CASE("trace rules: fusion candidates, above and below the trigger", "[trace][rules]") {
    const auto b = sequence(50, 10, 10);  // 70 us a step, 20 of them gaps inside the sequence
    const Finding f =
        only_trace_finding(run_trace_rule(trace_report(b.trace, b.run(50 * 80.0)), "trace.kernel.fusion_candidate"),
                           "trace.kernel.fusion_candidate");
    CHECK_THAT(f.title, Catch::Contains("a -> b -> c") && Catch::Contains("50 times"));
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == Approx(100 * 10e-6 / 4000e-6));
    REQUIRE(evidence_named(f, "app.kernel.launch_gap"));
    CHECK(evidence_named(f, "app.kernel.launch_gap")->value == Approx(10e-6));
    // Gaps a fifth of the kernels' time: launches already pipelined well enough.
    const auto tight = sequence(50, 10, 2);
    test::check_silent(
        run_trace_rule(trace_report(tight.trace, tight.run(50 * 60.0)), "trace.kernel.fusion_candidate"));
    // Kernels of 2 ms are not short: the gaps are not launch overhead.
    const auto long_kernels = sequence(50, 2000, 2000);
    test::check_silent(run_trace_rule(trace_report(long_kernels.trace, long_kernels.run(50 * 10'020.0)),
                                      "trace.kernel.fusion_candidate"));
    // Ten repetitions (20 removable gaps is the least): 9 are too few.
    const auto few = sequence(9, 10, 10);
    test::check_silent(run_trace_rule(trace_report(few.trace, few.run(9 * 80.0)), "trace.kernel.fusion_candidate"));
}

TEST_CASE("trace rules: a kernel without a local size far below its roof", "[trace][rules]") {
    const auto peak = {ceiling("kernel.peak.bandwidth", "GB/s", 20)};
    const auto b = slow_kernel(true);
    const RunReport r = trace_report(b.trace, b.run(1000), peak);
    const Finding f = only_trace_finding(run_trace_rule(r, "trace.kernel.no_local_size"), "trace.kernel.no_local_size");
    CHECK_THAT(f.title, Catch::Contains("slow_sum") && Catch::Contains("1 of 1 launches"));
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == Approx((500e-6 - 4096 / 20e9) / 1000e-6));
    // Its own rule, not below_roof's too: one finding for one kernel.
    test::check_silent(run_trace_rule(r, "trace.kernel.below_roof"));
    // The same kernel with a local size: below_roof's, not this rule's.
    const auto sized = slow_kernel(false);
    const RunReport s = trace_report(sized.trace, sized.run(1000), peak);
    test::check_silent(run_trace_rule(s, "trace.kernel.no_local_size"));
    CHECK(run_trace_rule(s, "trace.kernel.below_roof").findings.size() == 1);
    // Near the roof without a local size: silent.
    TraceBuilder fast;
    fast.kernel("stream", 0, 1, 801, 8'000'000);
    fast.trace.commands.back().local = "0";
    test::check_silent(run_trace_rule(trace_report(fast.trace, fast.run(1000), peak), "trace.kernel.no_local_size"));
    // No roof measured: not evaluated, and the report says what it needs.
    const RunReport none = run_trace_rule(trace_report(b.trace, b.run(1000)), "trace.kernel.no_local_size");
    CHECK(none.findings.empty());
    CHECK_THAT(test::skipped_rule(none, "trace.kernel.no_local_size").reason,
               Catch::Contains("kernel.roof.bandwidth or kernel.peak.bandwidth"));
}

TEST_CASE("trace rules: a tiny kernel launched many times is held against the launch floor too", "[trace][rules]") {
    // 100 launches of 10 us over 4 KiB each, with a local size: at 20 GB/s the bytes take 0.2 us a
    // launch, but no launch here runs shorter than an empty kernel's device time.
    TraceBuilder b;
    for (int i = 0; i < 100; ++i)
        b.kernel("tiny", i * 20.0, i * 20.0 + 1, i * 20.0 + 11, 4096);
    for (auto& c : b.trace.commands)
        c.local = "64,1,1";
    const auto with_floor = [](double floor_us) {
        return std::vector<Measurement>{ceiling("kernel.peak.bandwidth", "GB/s", 20),
                                        ceiling("kernel.empty_launch.time", "us", floor_us, {}, false)};
    };
    // No floor measured: the roof alone bounds it, nearly all of the kernel's 1 ms.
    const Finding roof_only = only_trace_finding(
        run_trace_rule(trace_report(b.trace, b.run(2000), {ceiling("kernel.peak.bandwidth", "GB/s", 20)}),
                       "trace.kernel.below_roof"),
        "trace.kernel.below_roof");
    REQUIRE(roof_only.estimated_gain);
    CHECK(*roof_only.estimated_gain == Approx((1000e-6 - 100 * 4096 / 20e9) / 2000e-6));
    CHECK(evidence_named(roof_only, "kernel.empty_launch.time") == nullptr);
    // A floor of 8 us a launch: 2 us of each launch is all the roof could take.
    const Finding floored =
        only_trace_finding(run_trace_rule(trace_report(b.trace, b.run(2000), with_floor(8)), "trace.kernel.below_roof"),
                           "trace.kernel.below_roof");
    REQUIRE(floored.estimated_gain);
    CHECK(*floored.estimated_gain == Approx(100 * 2e-6 / 2000e-6));
    const Evidence* floor = evidence_named(floored, "kernel.empty_launch.time");
    REQUIRE(floor);
    CHECK(floor->value == Approx(8));
    CHECK_THAT(floor->expectation, Catch::Contains("bounds this saving"));
    // At the floor already: nothing to gain, whatever the roof says.
    test::check_silent(run_trace_rule(trace_report(b.trace, b.run(2000), with_floor(10)), "trace.kernel.below_roof"));
    // The same floor bounds the rule for launches without a local size.
    for (auto& c : b.trace.commands)
        c.local = "0";
    test::check_silent(
        run_trace_rule(trace_report(b.trace, b.run(2000), with_floor(10)), "trace.kernel.no_local_size"));
}

TEST_CASE("trace rules: a job's finding names the one process its pattern is in", "[trace][rules][job]") {
    // pid 100 waits after each of its 60 kernels; pid 101 launches 10 without waiting.
    const std::vector<ProgramTrace> both = {process_of(100, 0, 60, 20, true), process_of(101, 5, 10, 20)};
    const RunReport r = run_trace_rule(job_report(both, 6100), "trace.sync.wait_after_kernel");
    const Finding f = only_trace_finding(r, "trace.sync.wait_after_kernel");
    CHECK_THAT(f.title, Catch::Contains("in pid 100 (app 100)"));
    const Evidence* share = evidence_named(f, "app.process.pattern_share", "100");
    REQUIRE(share);
    CHECK(share->value == Approx(1));
    CHECK(evidence_named(f, "app.process.pattern_share", "101") == nullptr);
    const auto facts = trace_facts_of(r);
    REQUIRE(facts);
    REQUIRE(facts->processes.size() == 2);
    CHECK(facts->processes[0].pattern_seconds.at("trace.sync.wait_after_kernel") > 0);
    CHECK(facts->processes[1].pattern_seconds.at("trace.sync.wait_after_kernel") == 0);
    // A kernel both launch: below_roof gives each one's share, naming neither in the title.
    std::vector<ProgramTrace> shared = {process_of(100, 0, 30, 60), process_of(101, 5, 30, 60)};
    for (auto& p : shared)
        for (auto& c : p.commands)
            c.bytes = 4096;
    const Finding k =
        only_trace_finding(run_trace_rule(job_report(shared, 3100, {ceiling("kernel.peak.bandwidth", "GB/s", 20)}),
                                          "trace.kernel.below_roof"),
                           "trace.kernel.below_roof");
    CHECK(k.title.find("in pid") == std::string::npos);
    CHECK(evidence_named(k, "app.process.pattern_share", "100"));
    CHECK(evidence_named(k, "app.process.pattern_share", "101"));
}

TEST_CASE("trace facts: lanes, balance, fusion and per-process patterns survive JSON", "[trace][job]") {
    const std::vector<ProgramTrace> both = {process_of(100, 0, 50, 90, true), process_of(101, 10, 50, 10)};
    JobRun job;
    job.program = TraceBuilder().run(5100);
    job.end_ns = job.program.end_ns;
    TraceFacts f = analyse_job(both, merge_processes(both), job).facts;
    f.kernels.front().auto_local_launches = 7;
    const auto back = trace_facts_from_json(to_json(f));
    REQUIRE(back);
    REQUIRE(back->lanes.size() == 2);
    CHECK(back->lanes[1].pid == 101);
    CHECK(back->lanes[1].busy_seconds == Approx(f.lanes[1].busy_seconds));
    CHECK(back->balance.busiest == f.balance.busiest);
    CHECK(back->balance.shared_seconds == Approx(f.balance.shared_seconds));
    REQUIRE(back->fusion.size() == f.fusion.size());
    REQUIRE_FALSE(back->fusion.empty());
    CHECK(back->fusion[0].sequence == f.fusion[0].sequence);
    CHECK(back->fusion[0].pid == 101);
    CHECK(back->kernels.front().auto_local_launches == 7);
    CHECK(back->kernels.front().pids == std::vector<int>{100, 101});
    CHECK(back->processes[0].pattern_seconds == f.processes[0].pattern_seconds);
    // A report from before these facts still reads.
    auto old = to_json(f);
    old.erase("lanes");
    old.erase("balance");
    old.erase("fusion");
    const auto older = trace_facts_from_json(old);
    REQUIRE(older);
    CHECK(older->lanes.empty());
    CHECK(older->balance.busiest == -1);
}
