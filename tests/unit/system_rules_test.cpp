// System-layer rules on synthetic reports: each just above and just below its threshold, and with
// its inputs missing. Facts are one-sample measurements, as the system probes record them.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "core/report.hpp"
#include "rule_test_support.hpp"
#include "rules/analysis.hpp"
#include "rules/system_rules.hpp"

using namespace clprobe;
using namespace clprobe::test;

namespace {

// A rule whose inputs are missing gives the "needs ..." sentence derived from its declaration,
// and that sentence names what the test removed.
void check_needs(const RunReport& r, const std::string& rule_id, const std::string& names) {
    const std::string reason = skipped_rule(r, rule_id).reason;
    CHECK(reason == rule_named(system_rules(), rule_id).needs());
    CHECK_THAT(reason, Catch::Contains(names));
}

}  // namespace

namespace {

Measurement fact(const std::string& metric, const std::string& unit, double value) {
    return make_measurement(metric, unit, {}, {value}, TimerKind::none);
}

// A report whose device is a CPU (or `type`) with `cus` compute units, and no results yet.
RunReport report_with_device(const std::string& type = "cpu", std::uint32_t cus = 2,
                             const std::string& platform = "Portable Computing Language") {
    RunReport r;
    r.device = synthetic_device(type);
    r.device->compute_units = cus;
    r.device->platform_name = platform;
    return r;
}

ProbeResult& result(RunReport& r, const std::string& id) {
    for (auto& p : r.results)
        if (p.id == id) return p;
    r.results.push_back(probe_result(id, "system"));
    return r.results.back();
}

void add(RunReport& r, const std::string& probe, Measurement m) {
    result(r, probe).measurements.push_back(std::move(m));
}

// system.activity with `others` and `steal` percent over a `window` and these top consumers.
void add_activity(RunReport& r, double others, double steal, nlohmann::json top = nlohmann::json::array(),
                  double window = 3.0) {
    add(r, "system.activity", fact("system.activity.others_cpu", "%", others));
    add(r, "system.activity", fact("system.activity.steal", "%", steal));
    add(r, "system.activity", fact("system.activity.self_cpu", "%", 50));
    auto& a = result(r, "system.activity").attributes;
    a["top_consumers"] = std::move(top);
    a["window_seconds"] = window;
}

void add_cpus(RunReport& r, double online, double allowed) {
    add(r, "system.host", fact("system.cpus.online", "CPUs", online));
    add(r, "system.limits", fact("system.cpus.allowed", "CPUs", allowed));
}

// A copy: callers often pass a temporary report.
Finding single_finding(const RunReport& r, const std::string& id) {
    const Finding& f = only_finding(r, id, "system");
    CHECK_FALSE(f.evidence.empty());
    for (const auto& e : f.evidence) {
        CHECK_FALSE(e.unit.empty());
        CHECK_FALSE(e.metric.empty());
    }
    CHECK(f.confidence >= 0.5);
    CHECK(f.confidence <= 1.0);
    return f;
}

nlohmann::json consumer(const std::string& name, int pid, double percent, bool kernel = false) {
    return {{"name", name},
            {"pid", pid},
            {"cpu_seconds", percent / 100 * 3},
            {"cpu_percent", percent},
            {"kernel_thread", kernel}};
}

using Catch::Matchers::Contains;

}  // namespace

TEST_CASE("system_rules: every documented id, once, in layer system, all in all_rules", "[rules][system]") {
    const std::set<std::string> documented = {"system.cpu_contention",      "system.hypervisor_steal",
                                              "system.affinity_restricted", "system.cpu_device_underused",
                                              "system.cpu_governor",        "system.memory_pressure"};
    std::set<std::string> ids, all;
    for (const auto& rule : system_rules()) {
        CHECK(ids.insert(rule.id).second);
        CHECK(rule.layer == "system");
        CHECK(static_cast<bool>(rule.check));
    }
    CHECK(ids == documented);
    for (const auto& rule : all_rules())
        all.insert(rule.id);
    for (const auto& id : documented)
        CHECK(all.count(id) == 1);
}

TEST_CASE("system rules: a healthy VM produces no findings", "[rules][system]") {
    RunReport r = report_with_device("cpu", 2);
    add_cpus(r, 2, 2);
    add(r, "system.host", fact("system.memory.total", "GiB", 23.5));
    add(r, "system.host", fact("system.memory.available", "GiB", 22.9));
    add_activity(r, 1.5, 0.4, nlohmann::json::array({consumer("kdamond.0", 70, 1.0, true)}));
    add(r, "system.activity", fact("system.activity.swap", "MiB/s", 0));
    result(r, "system.host").attributes["frequency"] = {{"governors", "unknown"}};
    analyze(r, system_rules());
    CHECK(r.findings.empty());
    // No cpufreq in the VM: the governor rule says why it could not run, nothing else is missing.
    REQUIRE(r.rules_not_evaluated.size() == 1);
    CHECK(r.rules_not_evaluated[0].rule == "system.cpu_governor");
}

// ---------------------------------------------------------------- system.cpu_contention

TEST_CASE("rule cpu_contention: 10% of the CPUs taken by others names them", "[rules][system]") {
    RunReport r = report_with_device();
    add_cpus(r, 2, 2);
    add_activity(r, 10.0, 0,
                 nlohmann::json::array({consumer("stress-ng-cpu", 4242, 19.5), consumer("kworker/0:1", 11, 2.5, true),
                                        consumer("sshd", 900, 1.0)}));
    const Finding& f = single_finding(analyzed(r, system_rules(), "system.cpu_contention"), "system.cpu_contention");
    CHECK(f.severity == Severity::medium);
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == Approx(0.10));
    CHECK(f.confidence == Approx(1.0));  // 3 s window
    CHECK_THAT(f.title, Contains("stress-ng-cpu (pid 4242, 20% of a CPU)"));
    CHECK_THAT(f.title, Contains("kworker/0:1"));
    CHECK_THAT(f.title, !Contains("sshd"));  // under 2% of a CPU: background
    CHECK_THAT(f.title, Contains("2 CPUs"));
    CHECK_THAT(f.suggestion, Contains("kill -STOP 4242"));
    CHECK_THAT(f.suggestion, !Contains(" 11"));  // kernel threads cannot be stopped
    REQUIRE(f.evidence.size() == 2);
    CHECK(f.evidence[0].metric == "system.activity.others_cpu");
    CHECK(f.evidence[0].value == Approx(10.0));
    CHECK(f.evidence[0].unit == "%");
}

TEST_CASE("rule cpu_contention: 9.9% is below the threshold", "[rules][system]") {
    RunReport r = report_with_device();
    add_activity(r, 9.9, 0, nlohmann::json::array({consumer("stress-ng-cpu", 4242, 19.8)}));
    check_silent(analyzed(r, system_rules(), "system.cpu_contention"));
}

TEST_CASE("rule cpu_contention: half the CPUs is high severity; a short window lowers confidence", "[rules][system]") {
    RunReport r = report_with_device();
    add_activity(r, 50.0, 0, nlohmann::json::array({consumer("make", 1, 100)}), 1.0);
    const Finding& f = single_finding(analyzed(r, system_rules(), "system.cpu_contention"), "system.cpu_contention");
    CHECK(f.severity == Severity::high);
    CHECK(f.confidence == Approx(0.5));
    CHECK_THAT(f.title, Contains("the CPUs clprobe may use"));  // system.cpus.allowed missing
}

TEST_CASE("rule cpu_contention: no named consumer still explains", "[rules][system]") {
    RunReport r = report_with_device();
    add_activity(r, 30.0, 0);
    result(r, "system.activity").attributes["top_consumers"] = "garbage";  // hand-edited report
    const Finding& f = single_finding(analyzed(r, system_rules(), "system.cpu_contention"), "system.cpu_contention");
    CHECK_THAT(f.title, Contains("short-lived"));
    CHECK_THAT(f.suggestion, Contains("pidstat"));
}

TEST_CASE("rule cpu_contention: without the activity probe it is not evaluated", "[rules][system]") {
    check_needs(analyzed(report_with_device(), system_rules(), "system.cpu_contention"), "system.cpu_contention",
                "system.activity.others_cpu");
}

// ---------------------------------------------------------------- system.hypervisor_steal

TEST_CASE("rule hypervisor_steal: 5% steal is a finding", "[rules][system]") {
    RunReport r = report_with_device();
    add_activity(r, 0, 5.0);
    result(r, "system.host").attributes["hypervisor"] = {{"detected", true}, {"vendor", "KVM"}};
    const Finding& f =
        single_finding(analyzed(r, system_rules(), "system.hypervisor_steal"), "system.hypervisor_steal");
    CHECK(f.severity == Severity::medium);
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == Approx(0.05));
    CHECK_THAT(f.title, Contains("KVM"));
    CHECK_THAT(f.suggestion, Contains("vmstat"));
    CHECK(f.evidence[0].metric == "system.activity.steal");
}

TEST_CASE("rule hypervisor_steal: 4.9% is below; 20% is high", "[rules][system]") {
    RunReport low = report_with_device();
    add_activity(low, 0, 4.9);
    check_silent(analyzed(low, system_rules(), "system.hypervisor_steal"));
    RunReport high = report_with_device();
    add_activity(high, 0, 20.0);
    CHECK(
        single_finding(analyzed(high, system_rules(), "system.hypervisor_steal"), "system.hypervisor_steal").severity ==
        Severity::high);
}

TEST_CASE("rule hypervisor_steal: missing input", "[rules][system]") {
    check_needs(analyzed(report_with_device(), system_rules(), "system.hypervisor_steal"), "system.hypervisor_steal",
                "system.activity.steal");
}

// ---------------------------------------------------------------- system.affinity_restricted

TEST_CASE("rule affinity_restricted: one CPU fewer than online, by affinity", "[rules][system]") {
    RunReport r = report_with_device("cpu", 2);
    add_cpus(r, 2, 1);
    auto& l = result(r, "system.limits").attributes;
    l["restricted_by"] = "affinity";
    l["online_cpus"] = "0-1";
    l["allowed_cpus"] = "0";
    const Finding& f =
        single_finding(analyzed(r, system_rules(), "system.affinity_restricted"), "system.affinity_restricted");
    CHECK(f.severity == Severity::medium);
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == Approx(0.5));
    CHECK(f.confidence == 1.0);
    CHECK_THAT(f.title, Contains("1 of the 2 CPUs"));
    CHECK_THAT(f.suggestion, Contains("taskset -c 0-1"));
    // PoCL still runs 2 compute units on 1 CPU.
    CHECK_THAT(f.suggestion, Contains("POCL_MAX_PTHREAD_COUNT=1"));
    REQUIRE(f.evidence.size() == 2);
    CHECK(f.evidence[0].metric == "system.cpus.allowed");
    CHECK(f.evidence[0].value == 1);
}

TEST_CASE("rule affinity_restricted: a cpuset names its file", "[rules][system]") {
    RunReport r = report_with_device("gpu", 80);
    add_cpus(r, 64, 16);
    auto& l = result(r, "system.limits").attributes;
    l["restricted_by"] = "cpuset";
    l["online_cpus"] = "0-63";
    l["allowed_cpus"] = "0-15";
    l["cpuset_cpus"] = "0-15";
    l["cpuset_file"] = "/sys/fs/cgroup/docker/abc/cpuset.cpus";
    const Finding& f =
        single_finding(analyzed(r, system_rules(), "system.affinity_restricted"), "system.affinity_restricted");
    CHECK(f.severity == Severity::low);  // a GPU device: only host-side work is limited
    CHECK_FALSE(f.estimated_gain.has_value());
    CHECK_THAT(f.suggestion, Contains("echo 0-63 > /sys/fs/cgroup/docker/abc/cpuset.cpus"));
    CHECK_THAT(f.suggestion, Contains("--cpuset-cpus 0-63"));
    CHECK_THAT(f.suggestion, !Contains("taskset"));
}

TEST_CASE("rule affinity_restricted: a quota just below the allowed CPUs, and just at them", "[rules][system]") {
    auto with_quota = [](double quota) {
        RunReport r = report_with_device("cpu", 4);
        add_cpus(r, 4, 4);
        add(r, "system.limits", fact("system.cpu.quota", "CPUs", quota));
        result(r, "system.limits").attributes["cpu_quota"] = {
            {"cpus", quota}, {"period_us", 100000}, {"file", "/sys/fs/cgroup/job/cpu.max"}};
        return r;
    };
    const RunReport below = analyzed(with_quota(3.95), system_rules(), "system.affinity_restricted");
    const Finding& f = single_finding(below, "system.affinity_restricted");
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == Approx(1 - 3.95 / 4));
    CHECK_THAT(f.title, Contains("quota"));
    CHECK_THAT(f.suggestion, Contains("echo 'max 100000' > /sys/fs/cgroup/job/cpu.max"));
    CHECK_THAT(f.suggestion, Contains("docker update --cpus 4"));
    CHECK(f.evidence.size() == 3);
    check_silent(analyzed(with_quota(3.97), system_rules(), "system.affinity_restricted"));
    check_silent(analyzed(with_quota(4.0), system_rules(), "system.affinity_restricted"));
    check_silent(analyzed(with_quota(8.0), system_rules(), "system.affinity_restricted"));
}

TEST_CASE("rule affinity_restricted: v1 quota file gets the v1 knob", "[rules][system]") {
    RunReport r = report_with_device("cpu", 1);
    add_cpus(r, 8, 8);
    add(r, "system.limits", fact("system.cpu.quota", "CPUs", 0.5));
    result(r, "system.limits").attributes["cpu_quota"] = {
        {"cpus", 0.5}, {"period_us", 100000}, {"file", "/sys/fs/cgroup/cpu/docker/abc/cpu.cfs_quota_us"}};
    const Finding& f =
        single_finding(analyzed(r, system_rules(), "system.affinity_restricted"), "system.affinity_restricted");
    CHECK_THAT(f.suggestion, Contains("echo -1 > /sys/fs/cgroup/cpu/docker/abc/cpu.cfs_quota_us"));
}

TEST_CASE("rule affinity_restricted: all online CPUs allowed is silent; missing inputs", "[rules][system]") {
    RunReport r = report_with_device();
    add_cpus(r, 2, 2);
    check_silent(analyzed(r, system_rules(), "system.affinity_restricted"));
    RunReport only_online = report_with_device();
    add(only_online, "system.host", fact("system.cpus.online", "CPUs", 2));
    check_needs(analyzed(only_online, system_rules(), "system.affinity_restricted"), "system.affinity_restricted",
                "system.cpus.allowed");
}

// ---------------------------------------------------------------- system.cpu_device_underused

TEST_CASE("rule cpu_device_underused: one compute unit fewer than usable CPUs", "[rules][system]") {
    RunReport r = report_with_device("cpu", 1);
    add_cpus(r, 2, 2);
    result(r, "system.limits").attributes["opencl_cpu_environment"] = {{"POCL_MAX_PTHREAD_COUNT", "1"}};
    const Finding& f =
        single_finding(analyzed(r, system_rules(), "system.cpu_device_underused"), "system.cpu_device_underused");
    CHECK(f.severity == Severity::high);
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == Approx(0.5));
    CHECK_THAT(f.suggestion, Contains("unset POCL_MAX_PTHREAD_COUNT"));
    CHECK_THAT(f.suggestion, Contains("POCL_MAX_PTHREAD_COUNT=2"));
    REQUIRE(f.evidence.size() == 2);
    CHECK(f.evidence[0].metric == "device.compute_units");
    CHECK(f.evidence[0].value == 1);
}

TEST_CASE("rule cpu_device_underused: compute units equal to usable CPUs is silent", "[rules][system]") {
    RunReport r = report_with_device("cpu", 8);
    add_cpus(r, 8, 8);
    check_silent(analyzed(r, system_rules(), "system.cpu_device_underused"));
    RunReport more = report_with_device("cpu", 8);  // oversubscribed: affinity_restricted's business
    add_cpus(more, 8, 4);
    check_silent(analyzed(more, system_rules(), "system.cpu_device_underused"));
}

TEST_CASE("rule cpu_device_underused: 7 of 8 is medium; a quota counts whole CPUs", "[rules][system]") {
    RunReport r = report_with_device("cpu", 7, "Intel(R) OpenCL");
    add_cpus(r, 8, 8);
    const Finding& f =
        single_finding(analyzed(r, system_rules(), "system.cpu_device_underused"), "system.cpu_device_underused");
    CHECK(f.severity == Severity::medium);
    CHECK(*f.estimated_gain == Approx(1.0 / 8));
    // Nothing set: the thread count of the device's own driver.
    CHECK_THAT(f.suggestion, Contains("Intel's CPU runtime"));
    CHECK_THAT(f.suggestion, Contains("CL_CONFIG_CPU_TBB_NUM_WORKERS=8"));
    CHECK_THAT(f.suggestion, !Contains("POCL"));

    RunReport quota = report_with_device("cpu", 2);
    add_cpus(quota, 8, 8);
    add(quota, "system.limits", fact("system.cpu.quota", "CPUs", 2.5));  // 2 whole CPUs: 2 CUs is right
    check_silent(analyzed(quota, system_rules(), "system.cpu_device_underused"));
}

TEST_CASE("rule cpu_device_underused: GPUs are out of scope; missing inputs", "[rules][system]") {
    RunReport gpu = report_with_device("gpu", 1);
    add_cpus(gpu, 64, 64);
    check_silent(analyzed(gpu, system_rules(), "system.cpu_device_underused"));
    check_needs(analyzed(report_with_device("cpu", 1), system_rules(), "system.cpu_device_underused"),
                "system.cpu_device_underused", "system.cpus.allowed");
    RunReport no_device;
    add_cpus(no_device, 2, 2);
    check_needs(analyzed(no_device, system_rules(), "system.cpu_device_underused"), "system.cpu_device_underused",
                "the device context");
}

namespace {
// The work-groups the device ran at once, one sample per pair of launches (system.limits).
Measurement parallelism(std::vector<double> samples) {
    return make_measurement("system.opencl_cpu.parallelism", "work-groups", {}, std::move(samples),
                            TimerKind::device_profiling);
}
}  // namespace

TEST_CASE("rule cpu_device_underused: Intel's runtime with one TBB worker reports 2 units but runs 1 group at once",
          "[rules][system]") {
    RunReport r = report_with_device("cpu", 2, "Intel(R) OpenCL");
    add_cpus(r, 2, 2);
    add(r, "system.limits", parallelism({0.97, 1.0, 0.99, 0.98, 1.0}));
    result(r, "system.limits").attributes["opencl_cpu_environment"] = {{"CL_CONFIG_CPU_TBB_NUM_WORKERS", "1"}};
    const Finding& f =
        single_finding(analyzed(r, system_rules(), "system.cpu_device_underused"), "system.cpu_device_underused");
    CHECK(f.severity == Severity::high);
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == Approx(1.0 - 1.0 / 2));  // the most it ran at once, against 2 CPUs
    CHECK_THAT(f.title, Contains("1.0 work-groups at once"));
    CHECK_THAT(f.title, Contains("2 compute units"));
    CHECK_THAT(f.suggestion, Contains("Intel's CPU runtime"));
    CHECK_THAT(f.suggestion, Contains("CL_CONFIG_CPU_TBB_NUM_WORKERS=1 is set"));
    CHECK_THAT(f.suggestion, Contains("export CL_CONFIG_CPU_TBB_NUM_WORKERS=2"));
    CHECK_THAT(f.suggestion, !Contains("POCL"));
    REQUIRE_FALSE(f.evidence.empty());
    CHECK(f.evidence[0].metric == "system.opencl_cpu.parallelism");
}

TEST_CASE("rule cpu_device_underused: measured parallelism near the usable CPUs is silent; just below 1.25x fires",
          "[rules][system]") {
    for (const double ran : {1.95, 1.61}) {
        INFO("ran " << ran);
        RunReport r = report_with_device("cpu", 2, "Intel(R) OpenCL");
        add_cpus(r, 2, 2);
        add(r, "system.limits", parallelism({ran, ran, ran}));
        check_silent(analyzed(r, system_rules(), "system.cpu_device_underused"));
    }
    RunReport below = report_with_device("cpu", 2, "Intel(R) OpenCL");
    add_cpus(below, 2, 2);
    add(below, "system.limits", parallelism({1.59, 1.59, 1.59}));
    const Finding& f =
        single_finding(analyzed(below, system_rules(), "system.cpu_device_underused"), "system.cpu_device_underused");
    CHECK(f.severity == Severity::medium);
    // A burst of interference lowers some samples: the most it ran at once is what counts.
    RunReport noisy = report_with_device("cpu", 2, "Intel(R) OpenCL");
    add_cpus(noisy, 2, 2);
    add(noisy, "system.limits", parallelism({1.1, 1.96, 1.2}));
    check_silent(analyzed(noisy, system_rules(), "system.cpu_device_underused"));
}

namespace {
// The host's own threads of the same work, measured in turns with the device (system.limits).
Measurement host_threads(std::vector<double> samples) {
    return make_measurement("system.host_threads.parallelism", "threads", {}, std::move(samples),
                            TimerKind::host_steady_clock);
}
}  // namespace

TEST_CASE("rule cpu_device_underused: a shortfall the host's own threads shared is the machine's, not the driver's",
          "[rules][system]") {
    // CI's red run: PoCL with 2 CUs on 2 vCPUs ran 1.0 work-groups at once while the hypervisor gave
    // the process one CPU's worth; its own threads, a moment later, ran 1.0 too.
    RunReport r = report_with_device("cpu", 2);
    add_cpus(r, 2, 2);
    add(r, "system.limits", parallelism({1.0, 1.01, 0.99, 1.0, 1.0}));
    add(r, "system.limits", host_threads({1.02, 1.05, 1.0, 1.2, 1.1}));
    check_silent(analyzed(r, system_rules(), "system.cpu_device_underused"));
    // The device within 1.25x of what the host's threads reached is silent as well.
    RunReport near = report_with_device("cpu", 2);
    add_cpus(near, 2, 2);
    add(near, "system.limits", parallelism({1.4, 1.5, 1.3}));
    add(near, "system.limits", host_threads({1.6, 1.8, 1.7}));
    check_silent(analyzed(near, system_rules(), "system.cpu_device_underused"));
}

TEST_CASE("rule cpu_device_underused: the host's threads ran 1.95 at once where the device ran 1.0",
          "[rules][system]") {
    RunReport r = report_with_device("cpu", 2, "Intel(R) OpenCL");
    add_cpus(r, 2, 2);
    add(r, "system.limits", parallelism({0.98, 1.0, 0.99}));
    add(r, "system.limits", host_threads({1.2, 1.95, 1.5}));
    const Finding& f =
        single_finding(analyzed(r, system_rules(), "system.cpu_device_underused"), "system.cpu_device_underused");
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == Approx(1.0 - 1.0 / 1.95));  // against what the host's threads ran
    CHECK(f.severity == Severity::medium);
    CHECK_THAT(f.title, Contains("1.0 work-groups at once"));
    CHECK_THAT(f.title, Contains("the host's own threads of the same work ran 1.9 at once"));
    REQUIRE(f.evidence.size() >= 2);
    CHECK(f.evidence[0].metric == "system.opencl_cpu.parallelism");
    CHECK_THAT(f.evidence[0].expectation, Contains("as many as the host's own threads ran"));
    CHECK(f.evidence[1].metric == "system.host_threads.parallelism");
    // Host threads beyond the usable CPUs do not raise the bar above one group per CPU.
    RunReport over = report_with_device("cpu", 2, "Intel(R) OpenCL");
    add_cpus(over, 2, 2);
    add(over, "system.limits", parallelism({1.0, 1.0, 1.0}));
    add(over, "system.limits", host_threads({2.1, 2.0, 1.9}));
    const Finding& g =
        single_finding(analyzed(over, system_rules(), "system.cpu_device_underused"), "system.cpu_device_underused");
    REQUIRE(g.estimated_gain);
    CHECK(*g.estimated_gain == Approx(0.5));
    CHECK_THAT(g.evidence[0].expectation, Contains("one work-group per usable CPU"));
}

TEST_CASE("rule cpu_device_underused: SMT siblings count as one core for the measured parallelism", "[rules][system]") {
    // 8 logical CPUs on 4 cores: a compute-bound kernel running 4.2 groups at once uses every core.
    RunReport r = report_with_device("cpu", 8);
    add_cpus(r, 8, 8);
    add(r, "system.limits", fact("system.cpus.allowed_cores", "cores", 4));
    add(r, "system.limits", parallelism({4.2, 4.1, 4.2}));
    check_silent(analyzed(r, system_rules(), "system.cpu_device_underused"));
    // Without the core count the same numbers are half the usable CPUs.
    RunReport no_cores = report_with_device("cpu", 8);
    add_cpus(no_cores, 8, 8);
    add(no_cores, "system.limits", parallelism({4.2, 4.1, 4.2}));
    CHECK(
        single_finding(analyzed(no_cores, system_rules(), "system.cpu_device_underused"), "system.cpu_device_underused")
            .severity == Severity::medium);
}

TEST_CASE("rule cpu_device_underused: names the variable that is set and the driver that reads it", "[rules][system]") {
    // PoCL device, with Intel's variable set as well: PoCL's is the one to change; Intel's is named
    // as not read by this driver.
    RunReport r = report_with_device("cpu", 1);
    add_cpus(r, 4, 4);
    result(r, "system.limits").attributes["opencl_cpu_environment"] = {{"POCL_MAX_PTHREAD_COUNT", "1"},
                                                                       {"CL_CONFIG_CPU_TBB_NUM_WORKERS", "1"}};
    const Finding& f =
        single_finding(analyzed(r, system_rules(), "system.cpu_device_underused"), "system.cpu_device_underused");
    CHECK_THAT(f.suggestion, Contains("The device's driver is PoCL (platform Portable Computing Language)"));
    CHECK_THAT(f.suggestion, Contains("export POCL_MAX_PTHREAD_COUNT=4"));
    CHECK_THAT(f.suggestion,
               Contains("CL_CONFIG_CPU_TBB_NUM_WORKERS=1 is set but is read by Intel's CPU runtime, not by this "
                        "device's driver"));
    CHECK_THAT(f.suggestion, !Contains("export CL_CONFIG_CPU_TBB_NUM_WORKERS"));
    // An unknown runtime with nothing set: both known settings, as examples.
    RunReport other = report_with_device("cpu", 2, "Some Vendor OpenCL");
    add_cpus(other, 4, 4);
    const Finding& g =
        single_finding(analyzed(other, system_rules(), "system.cpu_device_underused"), "system.cpu_device_underused");
    CHECK_THAT(g.suggestion, Contains("platform Some Vendor OpenCL"));
    CHECK_THAT(g.suggestion, Contains("POCL_MAX_PTHREAD_COUNT=4"));
    CHECK_THAT(g.suggestion, Contains("CL_CONFIG_CPU_TBB_NUM_WORKERS=4"));
}

// ---------------------------------------------------------------- system.cpu_governor

namespace {
RunReport with_frequency(const nlohmann::json& governors, std::optional<double> loaded, std::optional<double> max) {
    RunReport r = report_with_device();
    result(r, "system.host").attributes["frequency"] = {
        {"governors", governors}, {"policy_max_mhz", 3000.0}, {"hardware_max_mhz", 3500.0}};
    if (max) add(r, "system.host", fact("system.cpu.frequency.max", "MHz", *max));
    if (loaded)
        add(r, "system.memory_bandwidth",
            make_measurement("system.cpu.frequency.loaded", "MHz", {}, {*loaded, *loaded, *loaded}, TimerKind::none));
    return r;
}
}  // namespace

TEST_CASE("rule cpu_governor: a clock under load below 60% of the maximum", "[rules][system]") {
    const RunReport r = analyzed(with_frequency(nlohmann::json::array({"powersave"}), 2090, 3500), system_rules(),
                                 "system.cpu_governor");
    const Finding& f = single_finding(r, "system.cpu_governor");
    CHECK(f.severity == Severity::medium);
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == Approx(1 - 2090.0 / 3500));
    CHECK_THAT(f.title, Contains("2090 MHz"));
    CHECK_THAT(f.suggestion, Contains("cpupower frequency-set -g performance"));
    CHECK_THAT(f.suggestion, Contains("-u 3500MHz"));  // the policy caps the clock below the hardware's
    REQUIRE(f.evidence.size() == 2);
    CHECK(f.evidence[0].metric == "system.cpu.frequency.loaded");
}

TEST_CASE("rule cpu_governor: at 60% of the maximum with the performance governor is silent", "[rules][system]") {
    check_silent(analyzed(with_frequency(nlohmann::json::array({"performance"}), 2100, 3500), system_rules(),
                          "system.cpu_governor"));
}

TEST_CASE("rule cpu_governor: a governor other than performance alone is a low note", "[rules][system]") {
    const RunReport r = analyzed(with_frequency(nlohmann::json::array({"schedutil"}), 3400, 3500), system_rules(),
                                 "system.cpu_governor");
    const Finding& f = single_finding(r, "system.cpu_governor");
    CHECK(f.severity == Severity::low);
    CHECK_FALSE(f.estimated_gain.has_value());
    CHECK_THAT(f.title, Contains("schedutil"));
}

TEST_CASE("rule cpu_governor: performance but a low clock points at firmware", "[rules][system]") {
    const RunReport r = analyzed(with_frequency(nlohmann::json::array({"performance"}), 1500, 3500), system_rules(),
                                 "system.cpu_governor");
    CHECK_THAT(single_finding(r, "system.cpu_governor").suggestion, Contains("firmware"));
}

TEST_CASE("rule cpu_governor: no cpufreq (a VM) is not evaluated", "[rules][system]") {
    check_needs(analyzed(with_frequency("unknown", std::nullopt, std::nullopt), system_rules(), "system.cpu_governor"),
                "system.cpu_governor", "system.cpu.frequency.loaded");
    check_needs(analyzed(report_with_device(), system_rules(), "system.cpu_governor"), "system.cpu_governor",
                "system.cpu.frequency.loaded");
}

// ---------------------------------------------------------------- system.memory_pressure

namespace {
RunReport with_memory(double available, double total, std::optional<double> swap) {
    RunReport r = report_with_device();
    add(r, "system.host", fact("system.memory.total", "GiB", total));
    add(r, "system.host", fact("system.memory.available", "GiB", available));
    if (swap) add(r, "system.activity", fact("system.activity.swap", "MiB/s", *swap));
    return r;
}
}  // namespace

TEST_CASE("rule memory_pressure: just under 10% available", "[rules][system]") {
    const Finding& f = single_finding(analyzed(with_memory(3.19, 32, 0), system_rules(), "system.memory_pressure"),
                                      "system.memory_pressure");
    CHECK(f.severity == Severity::medium);
    CHECK_FALSE(f.estimated_gain.has_value());
    CHECK_THAT(f.title, Contains("3.2 GiB"));
    CHECK_THAT(f.suggestion, Contains("ps aux --sort=-rss"));
}

TEST_CASE("rule memory_pressure: 10% available and no swapping is silent", "[rules][system]") {
    check_silent(analyzed(with_memory(3.2, 32, 0.99), system_rules(), "system.memory_pressure"));
}

TEST_CASE("rule memory_pressure: 1 MiB/s of swap traffic is high severity", "[rules][system]") {
    const Finding& f = single_finding(analyzed(with_memory(16, 32, 1.0), system_rules(), "system.memory_pressure"),
                                      "system.memory_pressure");
    CHECK(f.severity == Severity::high);
    CHECK_THAT(f.title, Contains("1.0 MiB/s"));
    CHECK(f.evidence[0].metric == "system.activity.swap");
}

TEST_CASE("rule memory_pressure: a nearly full cgroup limit names its file", "[rules][system]") {
    RunReport r = with_memory(16, 32, 0);
    add(r, "system.limits", fact("system.memory.limit", "GiB", 4));
    add(r, "system.limits", fact("system.memory.limit.used", "GiB", 3.7));
    result(r, "system.limits").attributes["memory_limit"] = {{"file", "/sys/fs/cgroup/job/memory.max"}};
    const Finding& f = single_finding(analyzed(r, system_rules(), "system.memory_pressure"), "system.memory_pressure");
    CHECK_THAT(f.title, Contains("cgroup"));
    CHECK_THAT(f.suggestion, Contains("echo 8G > /sys/fs/cgroup/job/memory.max"));
    RunReport roomy = with_memory(16, 32, 0);
    add(roomy, "system.limits", fact("system.memory.limit", "GiB", 4));
    add(roomy, "system.limits", fact("system.memory.limit.used", "GiB", 3.59));
    check_silent(analyzed(roomy, system_rules(), "system.memory_pressure"));
}

TEST_CASE("rule memory_pressure: missing inputs", "[rules][system]") {
    check_needs(analyzed(report_with_device(), system_rules(), "system.memory_pressure"), "system.memory_pressure",
                "system.activity.swap");
    // Swap alone is enough to evaluate.
    RunReport swap_only = report_with_device();
    add(swap_only, "system.activity", fact("system.activity.swap", "MiB/s", 0));
    check_silent(analyzed(swap_only, system_rules(), "system.memory_pressure"));
}

TEST_CASE("rule cpu_device_underused: on a contended machine a shortfall without a thread setting is not the driver's",
          "[rules][system]") {
    // Other processes held 79% of the CPUs: the device ran 1.1 groups at once because they left it
    // no more. system.cpu_contention names them; the driver is not to blame.
    auto contended = [](bool thread_setting) {
        RunReport r = report_with_device("cpu", 2, "Intel(R) OpenCL");
        add_cpus(r, 2, 2);
        add(r, "system.limits", parallelism({1.1, 1.05, 1.1}));
        add(r, "system.activity", fact("system.activity.others_cpu", "%", 79));
        if (thread_setting)
            result(r, "system.limits").attributes["opencl_cpu_environment"] = {{"CL_CONFIG_CPU_TBB_NUM_WORKERS", "1"}};
        return r;
    };
    check_silent(analyzed(contended(false), system_rules(), "system.cpu_device_underused"));
    // With the setting that caps the threads, the finding stands however busy the machine was.
    single_finding(analyzed(contended(true), system_rules(), "system.cpu_device_underused"),
                   "system.cpu_device_underused");
}
