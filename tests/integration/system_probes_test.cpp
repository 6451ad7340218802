// The system layer's probes on this machine, in quick mode: each ends Ok with finite, non-negative
// samples; the host bandwidth is positive and its triad is verified; the activity monitor counts
// clprobe's own threads and children as clprobe, and stops cleanly while another thread reads it.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <thread>

#include "probe_factories.hpp"
#include "runtime/activity_monitor.hpp"
#include "runtime/runner.hpp"
#include "session_fixture.hpp"
#include "system/affinity.hpp"
#include "system/triad_team.hpp"

using namespace clprobe;

namespace {

void check_facts(const ProbeResult& r) {
    INFO(r.id << ": " << r.reason);
    REQUIRE(r.status == ProbeStatus::ok);
    test::check_samples(r, test::ZeroSamples::allowed);
}

// Spins the calling thread for `seconds` of wall time.
// Burns `seconds` of this thread's own CPU time (not wall time: on a loaded machine a wall-clock
// spin gets a fraction of a CPU, and the CPU-time checks below would depend on the load).
void spin(double seconds) {
    const auto cpu_now = [] {
        timespec t{};
        ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
    };
    const double stop = cpu_now() + seconds;
    volatile unsigned long x = 0;
    while (cpu_now() < stop)
        x = x + 1;
}

}  // namespace

TEST_CASE("system.host and system.limits record the machine and what the process may use", "[probes][system]") {
    auto host = make_host_probe();
    const ProbeResult h = test::run_quick(*host, test::shared_session());
    check_facts(h);
    REQUIRE(find_measurement(h, "system.cpus.online") != nullptr);
    CHECK(find_measurement(h, "system.cpus.online")->summary.median >= 1);
    REQUIRE(find_measurement(h, "system.timer.granularity") != nullptr);
    CHECK(find_measurement(h, "system.timer.granularity")->summary.median > 0);
    for (const char* key : {"os", "kernel", "cpu", "frequency", "memory", "timer", "hypervisor", "container"})
        CHECK(h.attributes.contains(key));

    auto limits = make_limits_probe();
    const ProbeResult l = test::run_quick(*limits, test::shared_session());
    check_facts(l);
    const auto* allowed = find_measurement(l, "system.cpus.allowed");
    REQUIRE(allowed != nullptr);
    CHECK(allowed->summary.median == static_cast<double>(process_affinity().size()));
    CHECK(l.attributes.contains("opencl_cpu_device"));
}

TEST_CASE("system.memory_bandwidth measures a verified triad", "[probes][system]") {
    auto probe = make_memory_bandwidth_probe();
    const ProbeResult r = test::run_quick(*probe, test::shared_session());
    check_facts(r);
    const auto* bw = find_measurement(r, "host.memory.bandwidth");
    REQUIRE(bw != nullptr);
    CHECK(bw->timer == TimerKind::host_steady_clock);
    for (double s : bw->samples)
        CHECK(s > 0);
    CHECK(r.attributes.at("array_bytes").get<std::uint64_t>() >= (64u << 20));
    CHECK(r.attributes.at("threads").get<std::size_t>() == process_affinity().size());
}

TEST_CASE("the triad's verification catches a triad that never ran", "[probes][system][verification]") {
    TriadTeam team(process_affinity(), 1 << 16);
    team.initialise();
    CHECK(team.count_wrong() == team.elements());  // a still holds the sentinel
    team.run(1);
    CHECK(team.count_wrong() == 0);
    const double seconds = team.run(3);
    CHECK(seconds > 0);
}

TEST_CASE("system.activity reports a window of at least a second, with or without a run-wide monitor",
          "[probes][system]") {
    auto probe = make_activity_probe();
    const ProbeResult alone = test::run_quick(*probe, test::shared_session());  // no monitor: a local one
    check_facts(alone);
    CHECK(alone.attributes.at("window_seconds").get<double>() >= 1.0);
    CHECK_THAT(alone.attributes.at("monitor").get<std::string>(), Catch::Contains("started by this probe"));
    for (const char* metric : {"system.activity.others_cpu", "system.activity.steal", "system.activity.self_cpu"}) {
        INFO(metric);
        REQUIRE(find_measurement(alone, metric) != nullptr);
        CHECK(find_measurement(alone, metric)->summary.median <= 100.0 + 1e-9);
    }

    ActivityMonitor monitor(std::chrono::milliseconds(50));
    RunOptions options;
    options.mode = RunMode::quick;
    std::vector<ProbeResult> earlier;
    ProbeContext ctx{&test::shared_session(), options, earlier, &monitor};
    const ProbeResult shared = run_probe(*probe, ctx);
    check_facts(shared);
    CHECK_THAT(shared.attributes.at("monitor").get<std::string>(), Catch::Contains("since the run started"));
}

TEST_CASE("ActivityMonitor: clprobe's threads and children are its own time", "[system][activity]") {
    ActivityMonitor monitor(std::chrono::milliseconds(50));
    std::thread worker([] { spin(0.4); });
    const pid_t child = ::fork();
    if (child == 0) {
        spin(0.4);
        ::_exit(0);
    }
    REQUIRE(child > 0);
    worker.join();
    int status = 0;
    ::waitpid(child, &status, 0);
    const ActivitySummary s = monitor.summary();
    CHECK(s.samples >= 2);
    CHECK(s.window_seconds >= 0.35);
    // The thread and the child each ran about 0.4 s (less if the CPUs were shared).
    CHECK(s.self_cpu_seconds >= 0.2);
    for (const auto& p : s.top_others)
        CHECK(p.pid != child);
    CHECK(s.others_cpu_seconds >= 0);
    CHECK(s.capacity_seconds > 0);
}

TEST_CASE("ActivityMonitor: summaries from several threads while it samples, then a clean stop", "[system][activity]") {
    auto monitor = std::make_unique<ActivityMonitor>(std::chrono::milliseconds(10));
    std::vector<std::thread> readers;
    std::vector<int> samples(3, 0);
    for (std::size_t i = 0; i < samples.size(); ++i)
        readers.emplace_back([&, i] {
            for (int k = 0; k < 10; ++k)
                samples[i] = std::max(samples[i], monitor->summary().samples);
        });
    for (auto& t : readers)
        t.join();
    for (int n : samples)
        CHECK(n >= 10);
    const auto t0 = std::chrono::steady_clock::now();
    monitor.reset();  // joins the sampling thread
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
}
