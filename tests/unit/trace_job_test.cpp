// A traced job of several processes (src/trace/job_trace) and the bound every trace rule's gain
// keeps: what the fix removes, never more (reports/rules/trace_rule_support: removable_stages).
#include <catch2/catch.hpp>

#include <csignal>

#include <set>
#include <sstream>

#include "rule_test_support.hpp"
#include "rules/analysis.hpp"
#include "rules/trace_rule_support.hpp"
#include "trace/job_trace.hpp"
#include "trace/trace_reader.hpp"
#include "trace_test_support.hpp"

using namespace clprobe;
using test::ceiling;
using test::trace_report;
using test::TraceBuilder;

namespace {

constexpr double mib = 1 << 20;

// The churn program: each of 60 iterations creates a 128 MiB buffer, fills it (90 ms: the
// fresh pages are touched), runs a 20 us kernel, reads 16 KiB back with a blocking read and
// releases the buffer. The device is busy nearly all the time; the host waits after each kernel.
TraceBuilder churn() {
    TraceBuilder b;
    for (int i = 0; i < 60; ++i) {
        const double t = i * 100'000.0;  // 100 ms per iteration
        b.allocation(128 << 20, t, t + 99'000, 50);
        b.command("fill", CommandKind::fill, t + 100, t + 110, t + 90'110, 128 << 20);
        b.trace.commands.back().mem = b.trace.allocations.back().handle;
        b.kernel("tiny", t + 90'120, t + 90'130, t + 90'150);
        b.command("read", CommandKind::read, t + 90'125, t + 90'155, t + 90'160, 16 << 10, HostMemory::pageable);
        b.trace.commands.back().blocking = true;
        b.trace.waits.push_back({TraceBuilder::at(t + 90'126), TraceBuilder::at(t + 90'161), 1, "blocking_read", 0});
    }
    return b;
}

std::vector<Measurement> all_ceilings() {
    return {ceiling("kernel.peak.bandwidth", "GB/s", 10),
            ceiling("kernel.launch.latency", "us", 10, {{"kind", "back_to_back"}}, false),
            ceiling("transfer.h2d.pinned.bandwidth", "GB/s", 20),
            ceiling("transfer.d2h.pinned.bandwidth", "GB/s", 20),
            ceiling("transfer.h2d.pageable.bandwidth", "GB/s", 5),
            ceiling("transfer.half_peak_size", "bytes", 1 << 20,
                    {{"direction", "h2d"}, {"path", "pageable"}, {"blocking", "true"}}, false),
            ceiling("transfer.overlap.efficiency", "fraction", 0.9),
            ceiling("kernel.build.time", "s", 0.5, {{"path", "cold"}}, false),
            ceiling("kernel.build.time", "s", 0.01, {{"path", "binary_cache"}}, false)};
}

// Synthetic programs that between them make every ranked trace rule fire.
std::vector<std::pair<std::string, RunReport>> planted_programs() {
    std::vector<std::pair<std::string, RunReport>> out;
    const auto c = churn();
    out.emplace_back("churn", trace_report(c.trace, c.run(6'000'000), all_ceilings()));
    TraceBuilder synced;
    for (int i = 0; i < 60; ++i)
        synced.kernel("k", i * 100.0, i * 100.0 + 5, i * 100.0 + 25).wait(i * 100.0 + 2, i * 100.0 + 30);
    out.emplace_back("synced", trace_report(synced.trace, synced.run(6000), all_ceilings()));
    TraceBuilder uploads;
    for (int i = 0; i < 40; ++i) {
        uploads.command("write", CommandKind::write, i * 1000.0, i * 1000.0 + 1, i * 1000.0 + 900, 32 << 20,
                        HostMemory::pageable);
        uploads.kernel("k", i * 1000.0 + 2, i * 1000.0 + 900, i * 1000.0 + 950);
    }
    out.emplace_back("uploads", trace_report(uploads.trace, uploads.run(40'000), all_ceilings()));
    TraceBuilder tiny;
    for (int i = 0; i < 2000; ++i)
        tiny.command("write", CommandKind::write, i * 10.0, i * 10.0 + 1, i * 10.0 + 9, 64, HostMemory::pageable);
    out.emplace_back("tiny", trace_report(tiny.trace, tiny.run(20'000), all_ceilings()));
    TraceBuilder builds;
    for (int i = 0; i < 5; ++i)
        builds.build(i * 100'000.0, i * 100'000.0 + 60'000, 7)
            .kernel("k", i * 100'000.0 + 60'001, i * 100'000.0 + 60'002, i * 100'000.0 + 61'000);
    out.emplace_back("builds", trace_report(builds.trace, builds.run(500'000), all_ceilings()));
    TraceBuilder idle;
    for (int i = 0; i < 20; ++i)
        idle.kernel("k", i * 1000.0, i * 1000.0 + 1, i * 1000.0 + 400, 1 << 10);
    out.emplace_back("idle", trace_report(idle.trace, idle.run(20'000), all_ceilings(), 10.0));
    // Two devices, the second given a quarter of the first's work (trace.job.device_imbalance).
    TraceBuilder lanes;
    lanes.trace.devices.push_back({"d2", "cpu", "Synthetic", "Synthetic device"});
    lanes.trace.queues.push_back({"q2", 1, TraceBuilder::origin, true});
    for (int i = 0; i < 100; ++i) {
        lanes.kernel("a", i * 100.0, i * 100.0 + 1, i * 100.0 + 81);
        lanes.kernel("b", i * 100.0, i * 100.0 + 1, i * 100.0 + 21);
        lanes.trace.commands.back().queue = 1;
    }
    out.emplace_back("lanes", trace_report(lanes.trace, lanes.run(10'000), all_ceilings()));
    // Three short kernels back to back after each upload, gaps as long as the kernels
    // (trace.kernel.fusion_candidate).
    TraceBuilder fused;
    for (int i = 0; i < 50; ++i) {
        const double t = i * 70.0;
        fused.command("write", CommandKind::write, t, t + 1, t + 5, 64, HostMemory::pageable);
        fused.kernel("a", t + 2, t + 10, t + 20).kernel("b", t + 2, t + 30, t + 40).kernel("c", t + 2, t + 50, t + 60);
    }
    out.emplace_back("fused", trace_report(fused.trace, fused.run(3500), all_ceilings()));
    // A kernel left to the driver's work-group choice, far below the roof (trace.kernel.no_local_size).
    TraceBuilder no_local;
    for (int i = 0; i < 10; ++i) {
        no_local.kernel("slow", i * 100.0, i * 100.0 + 1, i * 100.0 + 91, 4096);
        no_local.trace.commands.back().local = "0";
    }
    RunReport counted = trace_report(no_local.trace, no_local.run(1000), all_ceilings());
    test::add_counted_work(counted, test::counted_work("slow", 90e-6, 4096));  // its bytes bind it: far below the roof
    out.emplace_back("no_local", std::move(counted));
    return out;
}

ProgramTrace process(int pid, int ppid, const std::string& origin, int kernels, double offset_us) {
    TraceBuilder b;
    b.trace.pid = pid;
    b.trace.origin = ProcessOrigin{ppid, origin, TraceBuilder::at(offset_us), "app " + std::to_string(pid)};
    b.trace.layer_start = TraceBuilder::at(offset_us);
    for (int i = 0; i < kernels; ++i)
        b.kernel("k", offset_us + i * 10.0, offset_us + i * 10.0 + 2, offset_us + i * 10.0 + 8);
    b.trace.layer_end = TraceBuilder::at(offset_us + kernels * 10.0 + 5);
    b.trace.last_record = *b.trace.layer_end;
    return b.trace;
}

JobRun job_of(double wall_us) {
    JobRun job;
    job.program = TraceBuilder().run(wall_us);
    job.end_ns = job.program.end_ns;
    return job;
}

}  // namespace

TEST_CASE("trace rules: no gain exceeds the stages its fix removes, on every planted program", "[trace][rules]") {
    int checked = 0;
    std::set<std::string> fired;
    for (auto& [name, report] : planted_programs()) {
        analyze(report);
        const auto facts = trace_facts_of(report);
        REQUIRE(facts);
        for (const auto& f : report.findings) {
            if (f.layer != "trace" || !f.estimated_gain) continue;
            INFO(name << ": " << f.id << " gain " << *f.estimated_gain);
            CHECK_FALSE(trace_rule::removable_stages(f.id).empty());
            CHECK(*f.estimated_gain * facts->run.wall_seconds <=
                  trace_rule::removable_seconds(*facts, f.id) * (1 + 1e-9) + 1e-12);
            ++checked;
            fired.insert(f.id);
        }
    }
    CHECK(checked >= 9);  // the planted programs make at least that many ranked findings
    for (const char* id : {"trace.job.device_imbalance", "trace.kernel.fusion_candidate", "trace.kernel.no_local_size"})
        CHECK(fired.count(id) == 1);
}

TEST_CASE("trace rules: the churn program ranks its allocations first, the sync gain is the idle it causes",
          "[trace][rules]") {
    const auto c = churn();
    RunReport r = trace_report(c.trace, c.run(6'000'000), all_ceilings());
    analyze(r);
    std::vector<const Finding*> ranked;
    for (const auto& f : r.findings)
        if (f.kind == FindingKind::ranked) ranked.push_back(&f);
    REQUIRE_FALSE(ranked.empty());
    CHECK(ranked.front()->id == "trace.memory.alloc_in_loop");
    const auto facts = trace_facts_of(r);
    REQUIRE(facts);
    // From each kernel's end to the read that follows it: 5 us, 59 times (the last has no next kernel).
    CHECK(facts->sync.gap_seconds == Approx(59 * 5e-6));
    for (const auto& f : r.findings)
        if (f.id == "trace.sync.wait_after_kernel") CHECK(f.estimated_gain.value_or(0) < 0.01);
}

TEST_CASE("trace job: processes merged with handles apart and kernels by name", "[trace][job]") {
    const std::vector<ProgramTrace> p = {process(100, 99, "exec", 30, 0), process(101, 100, "fork", 20, 500)};
    const ProgramTrace job = merge_processes(p);
    CHECK(job.commands.size() == 50);
    REQUIRE(job.kernel_names.size() == 1);  // one name, both processes' launches
    CHECK(job.queues.size() == 2);
    CHECK(job.queues[0].handle != job.queues[1].handle);
    CHECK(job.devices.size() == 2);
    for (std::size_t i = 1; i < job.commands.size(); ++i) {
        CHECK(job.commands[i].seq == i + 1);
        CHECK(job.commands[i - 1].host_begin <= job.commands[i].host_begin);
    }
    // Threads of different processes never share a lane.
    CHECK(job.commands.front().thread != job.commands.back().thread);
    const TraceAnalysis a = analyse_job(p, job, job_of(1000));
    REQUIRE(a.facts.kernels.size() == 1);
    CHECK(a.facts.kernels[0].launches == 50);
    CHECK(a.facts.run.opencl_commands == 50);
    REQUIRE(a.facts.processes.size() == 2);
    CHECK(a.facts.processes[0].opencl_commands == 30);
    CHECK(a.facts.processes[1].opencl_commands == 20);
    CHECK(a.facts.processes[1].ppid == 100);
    CHECK(a.facts.processes[1].origin == "fork");
    CHECK(a.facts.processes[0].device_seconds == Approx(30 * 6e-6));
}

TEST_CASE("trace job: one source built in two processes is not a repeated build", "[trace][job]") {
    ProgramTrace a = process(100, 99, "exec", 2, 0), b = process(101, 99, "exec", 2, 0);
    a.builds.push_back({TraceBuilder::at(1), TraceBuilder::at(50), "build", "source", 7, 0, 1});
    b.builds.push_back({TraceBuilder::at(2), TraceBuilder::at(51), "build", "source", 7, 0, 1});
    const std::vector<ProgramTrace> both = {a, b};
    CHECK(analyse_job(both, merge_processes(both), job_of(100)).facts.builds.repeated == 0);
    a.builds.push_back({TraceBuilder::at(60), TraceBuilder::at(70), "build", "source", 7, 0, 1});
    const std::vector<ProgramTrace> again = {a, b};
    CHECK(analyse_job(again, merge_processes(again), job_of(100)).facts.builds.repeated == 1);
}

TEST_CASE("trace job: how each process ended, and which are incomplete", "[trace][job]") {
    ProgramTrace reaped = process(100, 99, "exec", 5, 0);
    ProgramTrace handler = process(101, 100, "exec", 5, 100);  // X seen, status unknown
    ProgramTrace worker = process(102, 100, "fork", 5, 200);   // _exit: no X, no signal
    worker.clean_exit = false;
    worker.layer_end.reset();
    ProgramTrace crashed = process(103, 100, "exec", 5, 300);
    crashed.clean_exit = false;
    crashed.layer_end.reset();
    crashed.fatal_signal = 11;
    crashed.fatal_signal_at = TraceBuilder::at(360);
    ProgramTrace daemon = process(104, 1, "exec", 5, 400);
    daemon.clean_exit = false;
    daemon.layer_end.reset();
    JobRun job = job_of(1000);
    job.reaped.push_back({100, TraceBuilder::at(900), 0, std::nullopt});

    const auto ends = [&](const std::vector<ProgramTrace>& p, const JobRun& j) {
        return analyse_job(p, merge_processes(p), j).facts;
    };
    const TraceFacts fine = ends({reaped, handler, worker}, job);
    REQUIRE(fine.processes.size() == 3);
    CHECK(fine.processes[0].end == ProcessEnd::exited);
    CHECK(fine.processes[0].exit_code == 0);
    CHECK(fine.processes[0].wall_seconds == Approx(900e-6));
    CHECK(fine.processes[1].end == ProcessEnd::exit_handler);
    CHECK(fine.processes[2].end == ProcessEnd::no_exit_handler);
    CHECK(fine.run.layer_clean_exit);  // a forked worker's _exit is not a cut

    const TraceFacts bad = ends({reaped, crashed}, job);
    CHECK(bad.processes[1].end == ProcessEnd::killed);
    CHECK(bad.processes[1].signal == 11);
    CHECK_FALSE(bad.run.layer_clean_exit);

    JobRun waited = job;
    waited.still_running = {104};
    const TraceFacts running = ends({reaped, daemon}, waited);
    CHECK(running.processes[1].end == ProcessEnd::still_running);
    CHECK(running.processes[1].records_end_seconds == Approx(455e-6));  // its last record
    CHECK_FALSE(running.run.layer_clean_exit);

    // The incomplete rule: silent for the clean job, naming the crashed and the still-running pid.
    const auto incomplete = [&](const std::vector<ProgramTrace>& p, const JobRun& j) {
        RunReport r = trace_report(p.front(), j.program);
        r.results.back() = program_probe_result(analyse_job(p, merge_processes(p), j));
        return test::analyzed(r, trace_rules(), "trace.program.incomplete");
    };
    test::check_silent(incomplete({reaped, handler, worker}, job));
    const RunReport crash_report = incomplete({reaped, crashed}, job);
    REQUIRE(crash_report.findings.size() == 1);
    CHECK_THAT(crash_report.findings[0].suggestion, Catch::Contains("pid 103") && Catch::Contains("signal 11"));
    const RunReport running_report = incomplete({reaped, daemon}, waited);
    REQUIRE(running_report.findings.size() == 1);
    CHECK_THAT(running_report.findings[0].suggestion, Catch::Contains("pid 104") && Catch::Contains("still running"));
}

TEST_CASE("trace job: a worker its parent ended after its work is complete; a crash or lost work is not",
          "[trace][job]") {
    // A Python pool's close: the parent exits 0 after SIGTERM to a worker whose every command completed.
    ProgramTrace parent = process(100, 99, "exec", 5, 0);
    ProgramTrace worker = process(101, 100, "fork", 5, 100);
    worker.clean_exit = false;
    worker.layer_end.reset();
    worker.fatal_signal = SIGTERM;
    worker.fatal_signal_at = TraceBuilder::at(160);
    JobRun job = job_of(1000);
    job.reaped.push_back({100, TraceBuilder::at(900), 0, std::nullopt});
    const auto analysed = [&](const ProgramTrace& w, const JobRun& j) {
        const std::vector<ProgramTrace> p = {parent, w};
        RunReport r = trace_report(parent, j.program);
        const TraceAnalysis a = analyse_job(p, merge_processes(p), j);
        const bool clean = a.facts.run.layer_clean_exit;
        r.results.back() = program_probe_result(a);
        return std::pair{clean, test::analyzed(r, trace_rules(), "trace.program.incomplete")};
    };
    const auto [terminated_clean, terminated] = analysed(worker, job);
    CHECK(terminated_clean);
    test::check_silent(terminated);

    // Work lost: a command of the worker never completed.
    ProgramTrace busy = worker;
    busy.commands.back().device.reset();
    const auto [busy_clean, busy_report] = analysed(busy, job);
    CHECK_FALSE(busy_clean);
    REQUIRE(busy_report.findings.size() == 1);
    CHECK_THAT(busy_report.findings[0].suggestion, Catch::Contains("pid 101") && Catch::Contains("signal 15"));

    // A crash is cut short whoever raised it, and so is a worker whose parent was itself killed.
    ProgramTrace crashed = worker;
    crashed.fatal_signal = SIGSEGV;
    CHECK_FALSE(analysed(crashed, job).first);
    JobRun parent_killed = job_of(1000);
    parent_killed.reaped.push_back({100, TraceBuilder::at(900), std::nullopt, SIGKILL});
    CHECK_FALSE(analysed(worker, parent_killed).first);

    // A pool's parent that made no OpenCL call has no records: the program's own end stands for it.
    const auto alone = [&](const JobRun& j) {
        const std::vector<ProgramTrace> p = {worker};
        return analyse_job(p, merge_processes(p), j).facts.run.layer_clean_exit;
    };
    CHECK(alone(job));
    JobRun program_killed = job;
    program_killed.program.exit_code.reset();
    program_killed.program.signal = SIGKILL;
    CHECK_FALSE(alone(program_killed));
}

TEST_CASE("trace job: facts of the processes survive JSON", "[trace][job]") {
    const std::vector<ProgramTrace> p = {process(100, 99, "exec", 3, 0), process(101, 100, "fork", 2, 100)};
    const TraceAnalysis a = analyse_job(p, merge_processes(p), job_of(500));
    const auto back = trace_facts_from_json(to_json(a.facts));
    REQUIRE(back);
    REQUIRE(back->processes.size() == 2);
    CHECK(back->processes[1].pid == 101);
    CHECK(back->processes[1].origin == "fork");
    CHECK(back->processes[1].end == a.facts.processes[1].end);
    CHECK(back->processes[1].stages.size() == a.facts.processes[1].stages.size());
}

TEST_CASE("trace reader: the process's origin and a fatal signal", "[trace][job]") {
    std::istringstream in("H\t1\t77\t1000\nO\t76\tfork\t900\tpython3 worker.py --n 2\nS\t5000\t11\nX\t6000\n");
    const ProgramTrace t = read_program_trace(in);
    REQUIRE(t.origin);
    CHECK(t.origin->ppid == 76);
    CHECK(t.origin->origin == "fork");
    CHECK(t.origin->start == 900);
    CHECK(t.origin->command_line == "python3 worker.py --n 2");
    CHECK(t.fatal_signal == 11);
    CHECK(t.fatal_signal_at == 5000);
    CHECK(t.last_record == 6000);
    CHECK(t.unreadable_lines == 0);
}

TEST_CASE("trace job: a process's launcher rank from its V records", "[trace][job]") {
    std::istringstream in(
        "H\t1\t77\t1000\nO\t76\texec\t900\t./app\nV\tOMPI_COMM_WORLD_RANK\t1\nV\tOMPI_COMM_WORLD_SIZE\t2\n"
        "X\t6000\n");
    const ProgramTrace t = read_program_trace(in);
    CHECK(t.environment.at("OMPI_COMM_WORLD_RANK") == "1");
    CHECK(t.unreadable_lines == 0);
    JobRun job;
    job.program.start_ns = 900;
    job.end_ns = 7000;
    const auto facts = process_facts({t}, job);
    REQUIRE(facts.size() == 1);
    CHECK(facts[0].rank == "1");
    // Without V records (a process outside a launcher, or an older layer): no rank.
    std::istringstream plain("H\t1\t78\t1000\nO\t76\texec\t900\t./app\nX\t6000\n");
    CHECK(process_facts({read_program_trace(plain)}, job)[0].rank.empty());
}
