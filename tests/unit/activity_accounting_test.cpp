// The activity bookkeeping on synthetic snapshots: CPU shares, clprobe's own time and its
// children, processes that start, exit or reuse a pid inside the window, and restricted CPUs.
#include <catch2/catch.hpp>

#include "system/activity_accounting.hpp"
#include "system/host_load.hpp"

using namespace clprobe;

namespace {

constexpr int self_pid = 1000;
constexpr double hz = 100;

CpuTimes cpu(std::uint64_t busy_user, std::uint64_t idle, std::uint64_t steal = 0) {
    CpuTimes t;
    t.user = busy_user;
    t.idle = idle;
    t.steal = steal;
    return t;
}

ProcessSample process(int pid, const std::string& comm, std::uint64_t ticks, std::uint64_t start = 10, int ppid = 1,
                      int processor = 0, bool kernel = false) {
    return {pid, ppid, start, comm, ticks, processor, kernel};
}

// A snapshot at `seconds` (uptime 1000 + seconds) of two CPUs.
ActivitySnapshot snapshot(double seconds, CpuTimes cpu0, CpuTimes cpu1, std::uint64_t self_ticks,
                          std::vector<ProcessSample> processes) {
    ActivitySnapshot s;
    s.seconds = seconds;
    s.uptime_seconds = 1000 + seconds;
    s.online_cpus = 2;
    s.cpus = {{0, cpu0}, {1, cpu1}};
    s.self_ticks = self_ticks;
    s.processes = std::move(processes);
    s.swap_in_pages = 0;
    s.swap_out_pages = 0;
    return s;
}

}  // namespace

TEST_CASE("activity: others = busy - self; a busy neighbour is named", "[system][activity]") {
    ActivityAccounting a(self_pid, hz);
    a.add(snapshot(0, cpu(0, 0), cpu(0, 0), 0, {process(self_pid, "clprobe", 0), process(42, "stress-ng-cpu", 500)}));
    // 2 s on 2 CPUs = 400 ticks: clprobe 150, stress-ng 200, idle 50.
    a.add(snapshot(2, cpu(150, 50), cpu(200, 0), 150,
                   {process(self_pid, "clprobe", 150), process(42, "stress-ng-cpu", 700)}));
    const ActivitySummary s = a.summary();
    CHECK(s.samples == 2);
    CHECK(s.window_seconds == Approx(2));
    CHECK(s.counted_cpus == std::vector<int>{0, 1});
    CHECK(s.capacity_seconds == Approx(4));
    CHECK(s.total_cpu_seconds == Approx(3.5));
    CHECK(s.self_cpu_seconds == Approx(1.5));
    CHECK(s.others_cpu_seconds == Approx(2.0));
    REQUIRE(s.top_others.size() == 1);
    CHECK(s.top_others[0].pid == 42);
    CHECK(s.top_others[0].name == "stress-ng-cpu");
    CHECK(s.top_others[0].cpu_seconds == Approx(2.0));
    CHECK(s.swap_in_pages == 0u);
}

TEST_CASE("activity: steal is measured on the counted CPUs", "[system][activity]") {
    ActivityAccounting a(self_pid, hz);
    a.add(snapshot(0, cpu(0, 0, 0), cpu(0, 0, 0), 0, {}));
    a.add(snapshot(1, cpu(40, 50, 10), cpu(40, 60, 0), 80, {}));
    const ActivitySummary s = a.summary();
    CHECK(s.steal_seconds == Approx(0.1));
    CHECK(s.capacity_seconds == Approx(2.0));
    CHECK(s.others_cpu_seconds == Approx(0));
}

TEST_CASE("activity: a process started inside the window counts from zero", "[system][activity]") {
    ActivityAccounting a(self_pid, hz);
    a.add(snapshot(0, cpu(0, 0), cpu(0, 0), 0, {}));
    // Started 0.5 s into the window (start ticks 100500 = uptime 1000.5 s), seen first at 1 s with 40 ticks.
    a.add(snapshot(1, cpu(40, 60), cpu(0, 100), 0, {process(77, "make", 40, 100050)}));
    const ActivitySummary s = a.summary();
    REQUIRE(s.top_others.size() == 1);
    CHECK(s.top_others[0].cpu_seconds == Approx(0.4));
}

TEST_CASE("activity: an old process first seen late counts only what was seen", "[system][activity]") {
    ActivityAccounting a(self_pid, hz);
    a.add(snapshot(0, cpu(0, 0), cpu(0, 0), 0, {}));
    a.add(snapshot(1, cpu(0, 100), cpu(0, 100), 0, {process(5, "daemon", 9000, 10)}));
    a.add(snapshot(2, cpu(30, 170), cpu(0, 200), 0, {process(5, "daemon", 9030, 10)}));
    const ActivitySummary s = a.summary();
    REQUIRE(s.top_others.size() == 1);
    CHECK(s.top_others[0].cpu_seconds == Approx(0.3));
}

TEST_CASE("activity: an exited process keeps what it used; pid reuse is a new process", "[system][activity]") {
    ActivityAccounting a(self_pid, hz);
    a.add(snapshot(0, cpu(0, 0), cpu(0, 0), 0, {process(9, "first", 100, 10)}));
    a.add(snapshot(1, cpu(50, 50), cpu(0, 100), 0, {process(9, "first", 150, 10)}));
    // pid 9 exited; a new process got pid 9 (later start time) inside the window.
    a.add(snapshot(2, cpu(50, 150), cpu(20, 180), 0, {process(9, "second", 20, 100150)}));
    const ActivitySummary s = a.summary();
    REQUIRE(s.top_others.size() == 2);
    CHECK(s.top_others[0].name == "first");
    CHECK(s.top_others[0].cpu_seconds == Approx(0.5));
    CHECK(s.top_others[1].name == "second");
    CHECK(s.top_others[1].cpu_seconds == Approx(0.2));
}

TEST_CASE("activity: clprobe's children count as clprobe, not as others", "[system][activity]") {
    ActivityAccounting a(self_pid, hz);
    a.add(snapshot(0, cpu(0, 0), cpu(0, 0), 0, {process(self_pid, "clprobe", 0)}));
    // A compiler the driver started (child), and its own child (grandchild).
    a.add(snapshot(1, cpu(100, 0), cpu(60, 40), 100,
                   {process(self_pid, "clprobe", 100), process(2001, "ld", 30, 100020, self_pid),
                    process(2002, "ld.lld", 30, 100030, 2001)}));
    const ActivitySummary s = a.summary();
    CHECK(s.self_cpu_seconds == Approx(1.6));
    CHECK(s.others_cpu_seconds == Approx(0));
    CHECK(s.top_others.empty());
}

TEST_CASE("activity: with restricted CPUs, only time on them counts", "[system][activity]") {
    ActivityAccounting a(self_pid, hz);
    auto one_cpu = [](double seconds, CpuTimes c0, std::uint64_t self, std::vector<ProcessSample> ps) {
        ActivitySnapshot s;
        s.seconds = seconds;
        s.uptime_seconds = 1000 + seconds;
        s.online_cpus = 2;
        s.cpus = {{0, c0}};  // the process may use CPU 0 only
        s.self_ticks = self;
        s.processes = std::move(ps);
        return s;
    };
    a.add(one_cpu(0, cpu(0, 0), 0, {process(3, "elsewhere", 0, 10, 1, 1), process(4, "here", 0, 10, 1, 0)}));
    a.add(one_cpu(1, cpu(90, 10), 60, {process(3, "elsewhere", 100, 10, 1, 1), process(4, "here", 30, 10, 1, 0)}));
    const ActivitySummary s = a.summary();
    CHECK(s.counted_cpus == std::vector<int>{0});
    CHECK(s.capacity_seconds == Approx(1.0));
    CHECK(s.others_cpu_seconds == Approx(0.3));
    REQUIRE(s.top_others.size() == 1);  // the process on CPU 1 does not compete
    CHECK(s.top_others[0].name == "here");
}

TEST_CASE("activity: kernel threads are flagged; the top list is bounded and ordered", "[system][activity]") {
    ActivityAccounting a(self_pid, hz);
    std::vector<ProcessSample> before, after;
    for (int pid = 10; pid < 20; ++pid) {
        before.push_back(process(pid, "p" + std::to_string(pid), 0));
        after.push_back(process(pid, "p" + std::to_string(pid), static_cast<std::uint64_t>(pid)));
    }
    before.push_back(process(2, "kworker/0:1", 0, 1, 0, 0, true));
    after.push_back(process(2, "kworker/0:1", 50, 1, 0, 0, true));
    a.add(snapshot(0, cpu(0, 0), cpu(0, 0), 0, before));
    a.add(snapshot(1, cpu(100, 0), cpu(95, 5), 0, after));
    const ActivitySummary s = a.summary(3);
    REQUIRE(s.top_others.size() == 3);
    CHECK(s.top_others[0].name == "kworker/0:1");
    CHECK(s.top_others[0].kernel_thread);
    CHECK(s.top_others[1].pid == 19);
    CHECK(s.top_others[2].pid == 18);
}

TEST_CASE("activity: counters that go backwards count as nothing; one snapshot is an empty window",
          "[system][activity]") {
    ActivityAccounting a(self_pid, hz);
    CHECK(a.summary().samples == 0);
    a.add(snapshot(0, cpu(100, 100), cpu(100, 100), 50, {}));
    const ActivitySummary one = a.summary();
    CHECK(one.samples == 1);
    CHECK(one.window_seconds == 0);
    CHECK(one.capacity_seconds == 0);
    a.add(snapshot(1, cpu(50, 100), cpu(150, 150), 40, {}));  // cpu0 reset (hotplug), self lower (bad read)
    const ActivitySummary s = a.summary();
    CHECK(s.total_cpu_seconds == Approx(0.5));
    CHECK(s.self_cpu_seconds == 0);
    CHECK(s.others_cpu_seconds == Approx(0.5));
}

TEST_CASE("activity: swap counters, when the kernel has them", "[system][activity]") {
    ActivityAccounting a(self_pid, hz);
    auto s0 = snapshot(0, cpu(0, 0), cpu(0, 0), 0, {});
    auto s1 = snapshot(1, cpu(0, 100), cpu(0, 100), 0, {});
    s0.swap_in_pages = 10;
    s0.swap_out_pages = 20;
    s1.swap_in_pages = 110;
    s1.swap_out_pages = 70;
    a.add(s0);
    a.add(s1);
    CHECK(a.summary().swap_in_pages == 100u);
    CHECK(a.summary().swap_out_pages == 50u);
    ActivityAccounting none(self_pid, hz);
    auto n0 = snapshot(0, cpu(0, 0), cpu(0, 0), 0, {});
    n0.swap_in_pages.reset();
    none.add(n0);
    none.add(snapshot(1, cpu(0, 100), cpu(0, 100), 0, {}));
    CHECK_FALSE(none.summary().swap_in_pages.has_value());
}

TEST_CASE("activity: a probe's host load counts others and steal per second, not clprobe's child",
          "[system][activity]") {
    // 2 s on 2 CPUs: the probe's child process (a child of clprobe) 150 ticks, a compiler 200, 20 stolen.
    const auto first = snapshot(
        0, cpu(0, 0), cpu(0, 0), 0,
        {process(self_pid, "clprobe", 0), process(1001, "clprobe", 0, 10, self_pid), process(42, "cc1plus", 300)});
    const auto last = snapshot(
        2, cpu(150, 40, 10), cpu(200, 0, 10), 0,
        {process(self_pid, "clprobe", 0), process(1001, "clprobe", 150, 10, self_pid), process(42, "cc1plus", 500)});
    const auto load = host_load_between(first, last, self_pid, hz);
    REQUIRE(load);
    CHECK(load->seconds == Approx(2));
    CHECK(load->cpus == 2);
    CHECK(load->others_cpus == Approx(1.0));  // 200 ticks of 350 busy over 2 s: the child is clprobe's
    CHECK(load->steal_cpus == Approx(0.1));
    // No time between the snapshots: nothing measured.
    CHECK_FALSE(host_load_between(first, first, self_pid, hz));
}
