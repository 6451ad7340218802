// The typed facts probes record and rules read back (core/system_facts, core/attention_facts and
// the one-call accessors of core/topology_facts and core/trace_facts): a round trip through a
// report's JSON, the attribute shapes earlier reports hold, and damaged or missing facts.
#include <catch2/catch.hpp>

#include "core/attention_facts.hpp"
#include "core/system_facts.hpp"
#include "core/topology_facts.hpp"
#include "core/trace_facts.hpp"
#include "json/report_json.hpp"
#include "rule_test_support.hpp"
#include "rules/analysis.hpp"
#include "rules/system_rules.hpp"

using namespace clprobe;
using namespace clprobe::test;

namespace {

// Through the report's JSON and back, as `clprobe report` reads a saved report.
RunReport saved_and_loaded(const RunReport& r) {
    return report_from_json(report_to_json(r));
}

// A one-sample fact, as the system probes record them (anonymous in system_rules_test.cpp too).
Measurement one_fact(const std::string& metric, const std::string& unit, double value) {
    return make_measurement(metric, unit, {}, {value}, TimerKind::none);
}

RunReport report_of(ProbeResult p) {
    RunReport r;
    r.results.push_back(std::move(p));
    return r;
}

HostFacts sample_host() {
    HostFacts h;
    h.frequency.cpufreq = true;
    h.frequency.driver = "intel_pstate";
    h.frequency.governors = {"powersave"};
    h.frequency.current_mhz = CpuFrequencyFacts::Range{800, 1900.5, 3100};
    h.frequency.policy_max_mhz = 3000;
    h.frequency.hardware_max_mhz = 3900;
    h.hypervisor = {true, "KVM", {"cpuinfo flag 'hypervisor'"}};
    return h;
}

// A job's cgroup that narrows 64 CPUs to 16 and caps them at 8 with a quota.
LimitsFacts sample_limits() {
    return {
        .online_cpus = "0-63",
        .allowed_cpus = "0-15",
        .cpuset_cpus = "0-15",
        .cpuset_file = "/sys/fs/cgroup/job/cpuset.cpus.effective",
        .restricted_by = "cpuset",
        .cgroup_cpu = CgroupPlaceFacts{2, "/job", "/sys/fs/cgroup/job"},
        .cpu_quota = {CpuQuotaFacts{8, 800000, 100000, "/sys/fs/cgroup/job/cpu.max"}, ""},
        .usable_cpus = 8,
        .memory_limit = {std::nullopt, "none"},
        .opencl_cpu_device = CpuDeviceShareFacts{64, 16, 8, "more compute units than usable CPUs: threads share CPUs"},
        .opencl_cpu_environment = {{"POCL_MAX_PTHREAD_COUNT", "4"}}};
}

// A busy neighbour and a kernel thread over a 3.5 s window.
ActivityFacts sample_activity() {
    return {.monitor = "sampled since the run started",
            .period_ms = 250,
            .window_seconds = 3.5,
            .samples = 14,
            .online_cpus = 64,
            .counted_cpus = "0-15",
            .cpu_seconds = {56, 30, 10, 20, 0.5},
            .swap_pages = ActivityFacts::SwapPages{3, 4},
            .top_consumers = {{"stress", 4242, 12.5, 357.1, false}, {"kworker/3:1", 17, 0.2, 5.7, true}},
            .accounting = "in words"};
}

}  // namespace

TEST_CASE("system facts: host facts round trip in the shape earlier reports hold", "[facts][system]") {
    ProbeResult p = probe_result(system_host_probe_id, "system");
    record_host_facts(p, sample_host());
    // The attribute names and the "unknown" marker of earlier reports.
    CHECK(p.attributes.at("frequency").at("policy_min_mhz") == "unknown");
    CHECK(p.attributes.at("hypervisor").at("vendor") == "KVM");
    CHECK(p.attributes.at("container").at("runtime") == "unknown");

    const auto back = host_facts_of(saved_and_loaded(report_of(p)));
    REQUIRE(back);
    CHECK(back->frequency.cpufreq);
    CHECK(back->frequency.driver == "intel_pstate");
    CHECK(back->frequency.governors == std::vector<std::string>{"powersave"});
    REQUIRE(back->frequency.current_mhz);
    CHECK(back->frequency.current_mhz->mean == 1900.5);
    CHECK(back->frequency.policy_max_mhz == 3000);
    CHECK(back->frequency.hardware_max_mhz == 3900);
    CHECK_FALSE(back->frequency.policy_min_mhz);
    CHECK(back->hypervisor.detected);
    CHECK(back->hypervisor.name == "KVM");
    CHECK(back->hypervisor.evidence.size() == 1);
    CHECK_FALSE(back->container.detected);
    CHECK(back->container.name.empty());
}

TEST_CASE("system facts: limits facts round trip", "[facts][system]") {
    ProbeResult p = probe_result(system_limits_probe_id, "system");
    record_limits_facts(p, sample_limits());
    CHECK(p.attributes.at("memory_limit") == "none");
    CHECK(p.attributes.at("cgroup").at("memory") == "unknown");
    CHECK(p.attributes.at("cpu_quota").at("cpus") == 8.0);

    const auto back = limits_facts_of(saved_and_loaded(report_of(p)));
    REQUIRE(back);
    CHECK(back->online_cpus == "0-63");
    CHECK(back->allowed_cpus == "0-15");
    CHECK(back->cpuset_file == "/sys/fs/cgroup/job/cpuset.cpus.effective");
    CHECK(back->restricted_by == "cpuset");
    REQUIRE(back->cgroup_cpu);
    CHECK(back->cgroup_cpu->version == 2);
    CHECK(back->cgroup_cpu->directory == "/sys/fs/cgroup/job");
    CHECK_FALSE(back->cgroup_memory);
    REQUIRE(back->cpu_quota.value);
    CHECK(back->cpu_quota.value->quota_us == 800000);
    CHECK(back->cpu_quota.value->file == "/sys/fs/cgroup/job/cpu.max");
    CHECK(back->usable_cpus == 8);
    CHECK_FALSE(back->memory_limit.value);
    CHECK(back->memory_limit.word == "none");
    REQUIRE(back->opencl_cpu_device);
    CHECK(back->opencl_cpu_device->compute_units == 64);
    CHECK(back->opencl_cpu_device->usable_cpus == 8);
    CHECK(back->opencl_cpu_environment.at("POCL_MAX_PTHREAD_COUNT") == "4");
}

TEST_CASE("system facts: activity facts round trip", "[facts][system]") {
    ProbeResult p = probe_result(system_activity_probe_id, "system");
    record_activity_facts(p, sample_activity());
    const auto back = activity_facts_of(saved_and_loaded(report_of(p)));
    REQUIRE(back);
    CHECK(back->period_ms == 250);
    CHECK(back->window_seconds == 3.5);
    CHECK(back->samples == 14);
    CHECK(back->counted_cpus == "0-15");
    CHECK(back->cpu_seconds.others == 20);
    REQUIRE(back->swap_pages);
    CHECK(back->swap_pages->out == 4);
    REQUIRE(back->top_consumers.size() == 2);
    CHECK(back->top_consumers[0].name == "stress");
    CHECK(back->top_consumers[0].pid == 4242);
    CHECK(back->top_consumers[0].cpu_percent == Approx(357.1));
    CHECK(back->top_consumers[1].kernel_thread);
}

TEST_CASE("system facts: a missing probe reads as nullopt, damaged fields as unknown", "[facts][system]") {
    CHECK_FALSE(host_facts_of(RunReport{}));
    CHECK_FALSE(limits_facts_of(RunReport{}));
    CHECK_FALSE(activity_facts_of(RunReport{}));

    ProbeResult limits = probe_result(system_limits_probe_id, "system");
    limits.attributes = {{"online_cpus", 64},
                         {"allowed_cpus", "0-15"},
                         {"cpu_quota", {{"period_us", "often"}}},
                         {"memory_limit", nlohmann::json::array()},
                         {"opencl_cpu_environment", {{"POCL_MAX_PTHREAD_COUNT", 4}}}};
    const auto l = limits_facts_of(report_of(limits));
    REQUIRE(l);
    CHECK(l->online_cpus.empty());  // a number where a CPU list belongs
    CHECK(l->allowed_cpus == "0-15");
    REQUIRE(l->cpu_quota.value);  // an object without its amount: a damaged limit
    CHECK(l->cpu_quota.value->cpus == 0);
    CHECK(l->cpu_quota.value->period_us == 100000);
    CHECK_FALSE(l->memory_limit.value);
    CHECK(l->memory_limit.word.empty());
    CHECK(l->opencl_cpu_environment.empty());

    ProbeResult activity = probe_result(system_activity_probe_id, "system");
    activity.attributes = {
        {"window_seconds", "long"},
        {"top_consumers", {{{"name", "no pid"}, {"cpu_percent", 50}}, {{"pid", 7}, {"cpu_percent", 9}}}}};
    const auto a = activity_facts_of(report_of(activity));
    REQUIRE(a);
    CHECK(a->window_seconds == 0);
    REQUIRE(a->top_consumers.size() == 1);
    CHECK(a->top_consumers[0].pid == 7);
    CHECK(a->top_consumers[0].name.empty());

    ProbeResult host = probe_result(system_host_probe_id, "system");
    host.attributes = {{"frequency", "garbage"}, {"hypervisor", {{"vendor", 3}, {"detected", true}}}};
    const auto h = host_facts_of(report_of(host));
    REQUIRE(h);
    CHECK(h->frequency.governors.empty());
    CHECK(h->hypervisor.detected);
    CHECK(h->hypervisor.name.empty());
}

TEST_CASE("system facts: rules read the recorded facts and fall back on damaged ones", "[facts][system][rules]") {
    RunReport r;
    r.device = synthetic_device("gpu");
    ProbeResult host = probe_result(system_host_probe_id, "system", {one_fact("system.cpus.online", "CPUs", 64)});
    ProbeResult limits = probe_result(system_limits_probe_id, "system", {one_fact("system.cpus.allowed", "CPUs", 16)});
    record_limits_facts(limits, sample_limits());
    r.results = {host, limits};
    const auto found = analyzed(r, system_rules(), "system.affinity_restricted");
    const Finding& f = only_finding(found, "system.affinity_restricted", "system");
    CHECK_THAT(f.suggestion, Catch::Contains("echo 0-63 > /sys/fs/cgroup/job/cpuset.cpus.effective"));

    // A damaged online list: the rule still finds the restriction and names the CPUs from the count.
    r.results[1].attributes["online_cpus"] = nlohmann::json::array();
    r.results[1].attributes["cpuset_file"] = 5;
    const auto damaged = analyzed(r, system_rules(), "system.affinity_restricted");
    const Finding& g = only_finding(damaged, "system.affinity_restricted", "system");
    CHECK_THAT(g.suggestion, Catch::Contains("echo 0-63 > <cgroup>/cpuset.cpus"));
}

TEST_CASE("attention facts: prefill skips round trip; none when the probe is absent", "[facts][attention]") {
    CHECK_FALSE(prefill_skips_of(RunReport{}).shape);
    ProbeResult p = probe_result("attention.prefill", "kernel");
    const auto none = prefill_skips_of(report_of(p));
    CHECK_FALSE(none.shape);
    CHECK_FALSE(none.unfused);
    record_prefill_unfused_skipped(p, "its score matrix (64 GiB) does not fit the device");
    const auto back = prefill_skips_of(saved_and_loaded(report_of(p)));
    CHECK_FALSE(back.shape);
    REQUIRE(back.unfused);
    CHECK_THAT(*back.unfused, Catch::Contains("score matrix"));
    CHECK(p.attributes.at("unfused_skipped").is_string());  // the attribute earlier reports hold
}

TEST_CASE("topology facts: one call each way; a failed or damaged probe reads as nullopt", "[facts][topology]") {
    TopologyFacts t;
    t.cores = 8;
    t.pus = 16;
    t.numa_nodes = {{0, 1u << 30, "0-15"}};
    ProbeResult host = probe_result("topology.host", "topology");
    record_topology_facts(host, t);
    DeviceLocalityFacts d;
    d.match = "cpu_device";
    d.binding.relation = "inside";
    ProbeResult device = probe_result("topology.device", "topology");
    record_device_locality(device, d);
    RunReport r;
    r.results = {host, device};

    const RunReport loaded = saved_and_loaded(r);
    const auto facts = topology_facts_of(loaded);
    REQUIRE(facts);
    CHECK(facts->pus == 16);
    CHECK(facts->numa_nodes.at(0).cpuset == "0-15");
    const auto locality = device_locality_of(loaded);
    REQUIRE(locality);
    CHECK(locality->binding.relation == "inside");

    RunReport failed = r;
    failed.results[0].status = ProbeStatus::error;
    CHECK_FALSE(topology_facts_of(failed));
    RunReport damaged = r;
    damaged.results[1].attributes["locality"] = "damaged";
    CHECK_FALSE(device_locality_of(damaged));
    CHECK_FALSE(topology_facts_of(RunReport{}));
}

TEST_CASE("trace facts: one call each way; damaged facts read as nullopt", "[facts][trace]") {
    TraceFacts t;
    t.run.wall_seconds = 2.5;
    t.run.opencl_commands = 40;
    ProbeResult p = probe_result(trace_probe_id, "trace");
    record_trace_facts(p, t);
    const auto back = trace_facts_of(saved_and_loaded(report_of(p)));
    REQUIRE(back);
    CHECK(back->run.wall_seconds == 2.5);
    CHECK(back->run.opencl_commands == 40);
    p.attributes["facts"] = "damaged";
    CHECK_FALSE(trace_facts_of(report_of(p)));
    CHECK_FALSE(trace_facts_of(RunReport{}));
}
