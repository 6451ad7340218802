// Capture windows and bounded space (docs/trace.md, "Capture windows and bounded space"): the
// windows a control file describes, a trace cut to its windows, the exact totals of commands the
// layer sampled out (A records) and the layer's sampling period (src/layer/sampling_policy.hpp).
#include <catch2/catch.hpp>

#include <sstream>

#include "core/byte_size.hpp"
#include "core/trace_facts.hpp"
#include "layer/sampling_policy.hpp"
#include "trace/capture_windows.hpp"
#include "trace/trace_analysis.hpp"
#include "trace/trace_reader.hpp"
#include "trace_test_support.hpp"

using namespace clprobe;
using test::TraceBuilder;

TEST_CASE("windows_from_control pairs opens with closes, clipped to the job") {
    const std::string text =
        "open 100\nclose 200\nclose 250\nopen 300\nopen 310\nbogus\nclose x\nclose 400\nopen 900\n";
    const auto w = windows_from_control(text, 150, 1000);
    REQUIRE(w.size() == 3);
    CHECK(w[0].begin_ns == 150);  // opened before the job started: from its start
    CHECK(w[0].end_ns == 200);
    CHECK(w[1].begin_ns == 300);  // a second open while open changes nothing
    CHECK(w[1].end_ns == 400);
    CHECK(w[2].begin_ns == 900);  // still open at the end: closes there
    CHECK(w[2].end_ns == 1000);
    CHECK(windows_from_control("", 0, 100).empty());
    CHECK(windows_from_control("open 500\nclose 600\n", 0, 100).empty());  // after the job: nothing
}

TEST_CASE("cut_to_windows keeps what was enqueued inside a window, numbered again") {
    TraceBuilder b;
    for (int i = 0; i < 10; ++i) {
        b.kernel("k", i * 1000.0, i * 1000.0 + 10, i * 1000.0 + 20);
        b.wait(i * 1000.0 + 2, i * 1000.0 + 21);
    }
    b.build(2500, 2600, 7);
    b.allocation(1024, 7500, std::nullopt);
    const std::vector<CaptureWindow> windows = {{TraceBuilder::at(2000), TraceBuilder::at(4000)},
                                                {TraceBuilder::at(7000), TraceBuilder::at(7001)}};
    const ProgramTrace cut = cut_to_windows(b.trace, windows, false);
    REQUIRE(cut.commands.size() == 3);  // enqueued at 2000 and 3000 (the end excluded), and 7000
    CHECK(cut.commands[0].host_begin == TraceBuilder::at(2000));
    CHECK(cut.commands[2].host_begin == TraceBuilder::at(7000));
    CHECK(cut.commands[0].seq == 1);
    CHECK(cut.commands[2].seq == 3);
    CHECK(cut.waits.size() == 2);  // at 2002 and 3002; 7002 is past the second window
    CHECK(cut.builds.size() == 1);
    CHECK(cut.allocations.empty());
}

TEST_CASE("in_windows analyses from the first window's start to the last one's end") {
    JobRun job;
    job.program.start_ns = 1000;
    job.program.end_ns = 9000;
    job.end_ns = 9500;
    const JobRun cut = in_windows(job, {{2000, 3000}, {5000, 6000}}, true);
    CHECK(cut.program.start_ns == 2000);
    CHECK(job_lifetime(cut).end_ns == 6000);
    CHECK(job_lifetime(in_windows(job, {}, true)).end_ns == 9500);
    CHECK(in_windows(job, {}, true).program.start_ns == 9500);  // no window: nothing analysed
    CHECK(in_windows(job, {{2000, 3000}}, false).program.start_ns == 1000);
}

TEST_CASE("sampled-out commands keep per-kernel and per-transfer totals exact") {
    TraceBuilder b;
    for (int i = 0; i < 4; ++i)
        b.kernel("add_one", i * 100.0, i * 100.0 + 10, i * 100.0 + 30, 4096);  // 4 x 20 us in the timeline
    b.command("write", CommandKind::write, 500, 510, 520, 64, HostMemory::pageable);
    // 96 more launches of add_one (one failed) and 10 writes counted by the layer only.
    TracedAggregate k;
    k.queue = 0;
    k.command = "kernel";
    k.kind = CommandKind::kernel;
    k.kernel = 0;
    k.count = 97;
    k.failed = 1;
    k.timed = 95;  // one never completed
    k.device_ns = 95 * 20'000;
    k.bytes = 96 * 4096;
    b.trace.aggregates.push_back(k);
    TracedAggregate w;
    w.command = "write";
    w.kind = CommandKind::write;
    w.count = w.timed = 10;
    w.device_ns = 10 * 10'000;
    w.bytes = 640;
    w.host_memory = HostMemory::pageable;
    b.trace.aggregates.push_back(w);
    const TraceAnalysis a = analyse_trace(b.trace, b.run(2000));
    REQUIRE(a.facts.kernels.size() == 1);
    CHECK(a.facts.kernels[0].launches == 100);
    CHECK(a.facts.kernels[0].seconds == Approx(99 * 20e-6));
    CHECK(a.facts.kernels[0].bytes == Approx(100 * 4096.0));
    CHECK(a.facts.run.opencl_commands == 4 + 1 + 96 + 10);
    CHECK(a.facts.run.failed_commands == 1);
    CHECK(a.facts.run.commands_without_times == 1);
    const auto t = std::find_if(a.facts.transfers.begin(), a.facts.transfers.end(),
                                [](const TransferFacts& f) { return f.direction == "h2d" && f.path == "pageable"; });
    REQUIRE(t != a.facts.transfers.end());
    CHECK(t->count == 11);
    CHECK(t->bytes == Approx(704));
    CHECK(t->seconds == Approx(11 * 10e-6));

    CaptureFacts c;
    describe_sampling(b.trace, TraceBuilder::at(0), c);
    CHECK(c.timeline_commands == 5);
    CHECK(c.aggregated_commands == 106);
    CHECK(c.timeline_fraction() == Approx(5.0 / 111));
}

TEST_CASE("the reader keeps the last cumulative A record of a key and the sampling state") {
    std::istringstream in(
        "H\t1\t7\t1000\n"
        "Q\t1000\tq1\td1\t0\t1\n"
        "K\tk1\tp1\tadd_one\n"
        "Z\t5000\t2\t0\n"
        "A\t6000\tq1\tkernel\tk1\t10\t10\t0\t100000\t9000\t11000\t640\tnone\n"
        "A\t7000\tq1\tkernel\tk1\t25\t24\t0\t240000\t9000\t12000\t1600\tnone\n"
        "A\t7000\tq1\twrite\t0\t3\t3\t0\t3000\t1000\t1000\t192\tpinned\n"
        "Z\t8000\t8\t0\n"
        "Z\t9000\t4\t3\n"
        "X\t9500\n");
    const ProgramTrace t = read_program_trace(in);
    REQUIRE(t.aggregates.size() == 2);
    CHECK(t.aggregates[0].count == 25);
    CHECK(t.aggregates[0].timed == 24);
    CHECK(t.aggregates[0].device_ns == 240000);
    CHECK(t.kernel_names.at(static_cast<std::size_t>(t.aggregates[0].kernel)) == "add_one");
    CHECK(t.aggregates[1].kind == CommandKind::write);
    CHECK(t.aggregates[1].host_memory == HostMemory::pinned);
    CHECK(t.sampling.limited);
    REQUIRE(t.sampling.since);
    CHECK(*t.sampling.since == 5000);
    CHECK(t.sampling.max_period == 8);
    CHECK(t.sampling.dropped_writes == 3);
    CHECK(t.unreadable_lines == 0);
}

TEST_CASE("capture facts survive a JSON round trip") {
    TraceFacts f;
    CaptureFacts c;
    c.mode = "dormant";
    c.windows = {{1.5, 3.0, 75}, {5.0, 6.0, 50}};
    c.limited = true;
    c.max_bytes = 65536;
    c.records_bytes = 60000;
    c.timeline_commands = 300;
    c.aggregated_commands = 2700;
    c.max_period = 16;
    c.sampled_since_seconds = 0.25;
    f.capture = c;
    const auto back = trace_facts_from_json(to_json(f));
    REQUIRE(back);
    REQUIRE(back->capture);
    CHECK(back->capture->mode == "dormant");
    REQUIRE(back->capture->windows.size() == 2);
    CHECK(back->capture->windows[1].opencl_commands == 50);
    CHECK(back->capture->max_period == 16);
    CHECK(*back->capture->sampled_since_seconds == Approx(0.25));
    CHECK_FALSE(trace_facts_from_json(to_json(TraceFacts{}))->capture);
}

TEST_CASE("the sampling period doubles past the allowance and halves well behind it") {
    using namespace clprobe::layer;
    const std::uint64_t soft = 1 << 20;
    // Half the budget used at tau: the allowance is half there, approaches soft later.
    CHECK(sampling_allowance(soft, 1e9, 1e9) == Approx(soft / 2.0));
    CHECK(sampling_allowance(soft, 99e9, 1e9) == Approx(soft * 0.99));
    CHECK(sampling_allowance(soft, 0, 1e9) == 0);
    CHECK(sampling_allowance(soft, 1e12, 1e9) < soft);
    CHECK(next_sampling_period(1, soft / 2 + 1, soft / 2.0, soft) == 2);
    CHECK(next_sampling_period(4, soft / 2, soft / 2.0, soft) == 4);              // on the allowance: kept
    CHECK(next_sampling_period(4, soft / 2 - soft / 64, soft / 2.0, soft) == 4);  // a little behind: kept
    CHECK(next_sampling_period(4, soft / 2 - soft / 16, soft / 2.0, soft) == 2);  // well behind: halved
    CHECK(next_sampling_period(1, 0, soft / 2.0, soft) == 1);
    CHECK(next_sampling_period(max_sampling_period, soft, 0, soft) == max_sampling_period);
}

TEST_CASE("a simulated hour at 10,000 launches/s stays within the budget") {
    // The layer's policy over a synthetic hour: 220 bytes per kept launch, batches of 64 launches,
    // K moved at most every sampling_adjust_ns as update_sampling does. The bytes kept never pass soft, and launches
    // late in the hour are still sampled.
    using namespace clprobe::layer;
    const std::uint64_t soft = (std::uint64_t{256} << 20) - (std::uint64_t{16} << 20);
    const double rate = 10'000, record = 220, batch = 64;
    std::uint64_t used = 0, kept_last_minute = 0;
    std::uint32_t k = 1;
    double tau = 0, adjusted = 0;
    std::uint64_t counter = 0;
    for (double t = 0; t < 3600; t += batch / rate) {
        if (tau == 0 && used >= soft / 2) tau = t;
        if (tau > 0 && t - adjusted >= sampling_adjust_ns * 1e-9) {
            k = next_sampling_period(k, used, sampling_allowance(soft, t * 1e9, tau * 1e9), soft);
            adjusted = t;
        }
        // Of the launches numbered counter .. counter + 63, those divisible by k keep their records.
        const auto n = static_cast<std::uint64_t>(batch);
        const std::uint64_t kept = (counter + n + k - 1) / k - (counter + k - 1) / k;
        counter += n;
        used += kept * static_cast<std::uint64_t>(record);
        if (t > 3540) kept_last_minute += kept;
    }
    CHECK(used <= soft);
    CHECK(kept_last_minute > 0);
}

TEST_CASE("byte sizes as options give them") {
    CHECK(parse_byte_size("65536") == 65536u);
    CHECK(parse_byte_size("64K") == 65536u);
    CHECK(parse_byte_size("64KiB") == 65536u);
    CHECK(parse_byte_size("256M") == (std::uint64_t{256} << 20));
    CHECK(parse_byte_size("1g") == (std::uint64_t{1} << 30));
    CHECK(parse_byte_size("0") == 0u);
    CHECK_FALSE(parse_byte_size(""));
    CHECK_FALSE(parse_byte_size("M"));
    CHECK_FALSE(parse_byte_size("12X"));
    CHECK_FALSE(parse_byte_size("-1"));
    CHECK_FALSE(parse_byte_size("99999999999999999999T"));
}
