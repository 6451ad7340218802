// Topology rules on reports built from the fixture machines (as the topology probes build them)
// and on variants of them: each rule just inside and just outside its trigger, and with inputs
// missing.
#include <fmt/core.h>
#include <catch2/catch.hpp>

#include <set>

#include "core/report.hpp"
#include "core/topology_facts.hpp"
#include "rule_test_support.hpp"
#include "rules/analysis.hpp"
#include "rules/topology_rules.hpp"
#include "topology/bitmap.hpp"
#include "topology/device_locality.hpp"
#include "topology/topology_summary.hpp"
#include "topology_fixtures.hpp"

using namespace clprobe;
using namespace clprobe::test;

namespace {

ProcessBinding bound_to(const std::string& pus, std::string policy = "firsttouch", const std::string& nodes = "") {
    ProcessBinding b;
    b.cpus = Bitmap::from_list(pus);
    b.memory_policy = std::move(policy);
    if (!nodes.empty()) b.memory_nodes = Bitmap::from_list(nodes);
    return b;
}

ProcessBinding unknown_binding() {
    ProcessBinding b;
    b.note = "a saved topology says nothing of the process that will use the device";
    return b;
}

// What topology.host and topology.device put in a report, from a topology, a device and a binding.
RunReport topology_report(const Topology& t, const std::optional<DeviceQuery>& device = std::nullopt,
                          const ProcessBinding& binding = unknown_binding()) {
    RunReport r;
    ProbeResult host = probe_result("topology.host", "topology");
    host.attributes["summary"] = to_json(summarize(t));
    r.results.push_back(std::move(host));
    if (device) {
        const DeviceLocalityFacts f = locate_device(t, *device, binding);
        ProbeResult dev = probe_result("topology.device", "topology");
        if (f.numa_nodes.size() == 1)
            dev.measurements.push_back(make_measurement("topology.device.numa_node", "index", {},
                                                        {static_cast<double>(f.numa_nodes[0])}, TimerKind::none));
        dev.attributes["locality"] = to_json(f);
        r.results.push_back(std::move(dev));
    }
    return r;
}

DeviceQuery gpu_at(const std::string& address) {
    return {"gpu", address};
}

// Reasons go on to name details of the machine: the part that says what is missing is enough.
void check_not_evaluated(const RunReport& r, const std::string& rule_id, const std::string& why_part) {
    CHECK_THAT(skipped_rule(r, rule_id).reason, Catch::Matchers::Contains(why_part));
}

// A probe that did not run, or ran without usable facts: the "needs ..." sentence derived from the
// rule's declaration, naming that probe.
void check_needs(const RunReport& r, const std::string& rule_id, const std::string& probe_id) {
    const std::string reason = skipped_rule(r, rule_id).reason;
    CHECK(reason == rule_named(topology_rules(), rule_id).needs());
    CHECK_THAT(reason, Catch::Matchers::Contains(probe_id));
}

const char* const numa = "topology.numa_mismatch";
const char* const degraded = "topology.pcie_link_degraded";
const char* const shared = "topology.shared_link";

constexpr double gen4_x16 = 16.0 * 128 / 130 * 16 / 8;

// The x8 fixture's GPU link and its root port trained at `width` lanes.
Topology x8_fixture_at(const std::string& width) {
    const std::string from = "clprobe.current_link_width\" value=\"8\"";
    const std::string to = "clprobe.current_link_width\" value=\"" + width + "\"";
    return edited_topology_fixture(
        "gpu_link_x8_of_x16.xml", {{"pci_busid=\"0000:50:02.0\"", from, to}, {"pci_busid=\"0000:51:00.0\"", from, to}});
}

// The switch fixture with the link above the switch (root port 80:01.1 and switch upstream port
// 81:00.0, its two ends) edited alike.
Topology switch_fixture_with_upstream(const std::vector<std::pair<std::string, std::string>>& changes) {
    std::vector<FixtureEdit> edits;
    for (const char* end : {"pci_busid=\"0000:80:01.1\"", "pci_busid=\"0000:81:00.0\""})
        for (const auto& [from, to] : changes)
            edits.push_back({end, from, to});
    return edited_topology_fixture("two_gpus_one_switch.xml", edits);
}

std::string speed_info(const char* which, const char* gt) {
    return fmt::format("clprobe.{}_link_speed\" value=\"{} GT/s PCIe\"", which, gt);
}

}  // namespace

TEST_CASE("topology rules are registered with the analysis", "[rules][topology]") {
    std::set<std::string> ids;
    for (const auto& r : all_rules())
        if (r.layer == "topology") ids.insert(r.id);
    CHECK(ids == std::set<std::string>{numa, degraded, shared});
}

// ---------------------------------------------------------------- topology.numa_mismatch

TEST_CASE("numa_mismatch: a process on the device's node is silent", "[rules][topology]") {
    const Topology t = topology_fixture("two_socket_two_gpus.xml");
    check_silent(analyzed(topology_report(t, gpu_at("0000:17:00.0"), bound_to("0-15,32-47")), topology_rules(), numa));
    check_silent(
        analyzed(topology_report(t, gpu_at("0000:17:00.0"), bound_to("0-3", "bind", "0")), topology_rules(), numa));
    // Memory bound to both nodes includes the device's.
    check_silent(
        analyzed(topology_report(t, gpu_at("0000:17:00.0"), bound_to("0-3", "bind", "0-1")), topology_rules(), numa));
}

TEST_CASE("numa_mismatch: one PU across the node boundary is a finding", "[rules][topology]") {
    const Topology t = topology_fixture("two_socket_two_gpus.xml");
    const auto r = analyzed(topology_report(t, gpu_at("0000:17:00.0"), bound_to("0-16,32-47")), topology_rules(), numa);
    const Finding& f = ranked_finding(r, numa, "topology");
    CHECK(f.severity == Severity::medium);
    CHECK_THAT(f.title, Catch::Matchers::Contains("NUMA node 1"));
    CHECK_THAT(f.suggestion, Catch::Matchers::Contains("numactl --cpunodebind=0 --membind=0 <command>"));
}

TEST_CASE("numa_mismatch: a process on the other socket", "[rules][topology]") {
    const Topology t = topology_fixture("two_socket_two_gpus.xml");
    const auto r =
        analyzed(topology_report(t, gpu_at("0000:17:00.0"), bound_to("16-31,48-63")), topology_rules(), numa);
    const Finding& f = ranked_finding(r, numa, "topology");
    CHECK(f.severity == Severity::high);
    CHECK(f.title == "The process runs on NUMA node 1 (PUs 16-31,48-63); the GPU 0000:17:00.0 is local to node 0");
    CHECK_THAT(f.suggestion, Catch::Matchers::Contains("numactl --cpunodebind=0 --membind=0 <command>"));
    CHECK_THAT(f.suggestion, Catch::Matchers::Contains("hwloc-bind -p --cpubind node:0 --membind node:0 -- <command>"));
    CHECK_FALSE(f.estimated_gain);
    CHECK(f.confidence == 1.0);
    REQUIRE(f.evidence.size() == 1);
    CHECK(f.evidence[0].metric == "topology.device.numa_node");
    CHECK(f.evidence[0].value == 0);
}

TEST_CASE("numa_mismatch: an unbound process on a two-socket machine", "[rules][topology]") {
    const Topology t = topology_fixture("two_socket_two_gpus.xml");
    const auto r = analyzed(topology_report(t, gpu_at("0000:ca:00.0"), bound_to("0-63")), topology_rules(), numa);
    const Finding& f = ranked_finding(r, numa, "topology");
    CHECK(f.severity == Severity::low);
    CHECK_THAT(f.title, Catch::Matchers::Contains("not bound"));
    CHECK_THAT(f.suggestion, Catch::Matchers::Contains("numactl --cpunodebind=1 --membind=1"));
}

TEST_CASE("numa_mismatch: memory bound away from the device", "[rules][topology]") {
    const Topology t = topology_fixture("two_socket_two_gpus.xml");
    const auto r =
        analyzed(topology_report(t, gpu_at("0000:17:00.0"), bound_to("0-15", "bind", "1")), topology_rules(), numa);
    const Finding& f = ranked_finding(r, numa, "topology");
    CHECK(f.severity == Severity::high);
    CHECK(f.title == "The process's memory is bound (bind) to NUMA node 1; the GPU 0000:17:00.0 is local to node 0");
    const auto both = analyzed(topology_report(t, gpu_at("0000:17:00.0"), bound_to("16-31", "interleave", "1")),
                               topology_rules(), numa);
    CHECK_THAT(ranked_finding(both, numa, "topology").title,
               Catch::Matchers::Contains("and its memory is bound (interleave)"));
}

TEST_CASE("numa_mismatch: eight NUMA nodes, process on node 0, GPU on node 6", "[rules][topology]") {
    const Topology t = topology_fixture("epyc_8numa_l3_as_numa.xml");
    const auto r = analyzed(topology_report(t, gpu_at("0000:c1:00.0"), bound_to("0-3,32-35")), topology_rules(), numa);
    const Finding& f = ranked_finding(r, numa, "topology");
    CHECK(f.severity == Severity::high);
    CHECK_THAT(f.suggestion, Catch::Matchers::Contains("numactl --cpunodebind=6 --membind=6"));
    check_silent(analyzed(topology_report(t, gpu_at("0000:c1:00.0"), bound_to("24-27,56-59")), topology_rules(), numa));
}

TEST_CASE("numa_mismatch: one NUMA node, CPU devices, unknown binding", "[rules][topology]") {
    // One NUMA node: any binding is local.
    check_silent(
        analyzed(topology_report(topology_fixture("gpu_link_x8_of_x16.xml"), gpu_at("0000:51:00.0"), bound_to("0-3")),
                 topology_rules(), numa));
    // A CPU device runs where the process runs.
    check_silent(analyzed(
        topology_report(topology_fixture("two_socket_two_gpus.xml"), DeviceQuery{"cpu", {}}, bound_to("16-31")),
        topology_rules(), numa));
    const Topology t = topology_fixture("two_socket_two_gpus.xml");
    check_not_evaluated(analyzed(topology_report(t, gpu_at("0000:17:00.0")), topology_rules(), numa), numa,
                        "the process binding is not known (a saved topology");
}

TEST_CASE("numa_mismatch: inputs missing", "[rules][topology]") {
    const Topology t = topology_fixture("two_socket_two_gpus.xml");
    check_needs(analyzed(topology_report(t), topology_rules(), numa), numa, "topology.device");
    check_not_evaluated(analyzed(topology_report(t, DeviceQuery{"gpu", {}}, bound_to("0-3")), topology_rules(), numa),
                        numa, "no PCI address");
    check_needs(analyzed(RunReport{}, topology_rules(), numa), numa, "topology.device");
    RunReport broken = topology_report(t, gpu_at("0000:17:00.0"), bound_to("16-31"));
    broken.results[1].attributes["locality"] = "damaged";
    check_needs(analyzed(broken, topology_rules(), numa), numa, "topology.device");
}

// ---------------------------------------------------------------- topology.pcie_link_degraded

TEST_CASE("pcie_link_degraded: x16 of x16 is silent, x8 of x16 is a finding", "[rules][topology]") {
    check_silent(analyzed(topology_report(x8_fixture_at("16"), gpu_at("0000:51:00.0")), topology_rules(), degraded));
    const auto r = analyzed(topology_report(x8_fixture_at("8"), gpu_at("0000:51:00.0")), topology_rules(), degraded);
    const Finding& f = ranked_finding(r, degraded, "topology");
    CHECK(f.severity == Severity::high);
    CHECK(f.title == "GPU 0000:51:00.0 trained at PCIe gen4 x8; both ends can do PCIe gen4 x16");
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == Approx(0.5));
    CHECK(f.confidence == 1.0);
    CHECK_THAT(f.suggestion, Catch::Matchers::Contains("reseat"));
    CHECK_THAT(f.suggestion, Catch::Matchers::Contains("lspci -vv -s 0000:51:00.0"));
    REQUIRE(f.evidence.size() == 2);
    CHECK(f.evidence[0].metric == "topology.pci.link_bandwidth");
    CHECK(f.evidence[0].labels == Labels{{"address", "0000:51:00.0"}, {"link", "current"}});
    CHECK(f.evidence[0].value == Approx(gen4_x16 / 2));
    CHECK(f.evidence[1].labels.at("link") == "max");
    CHECK(f.evidence[1].value == Approx(gen4_x16));
}

TEST_CASE("pcie_link_degraded: x12 of x16 is a width shortfall too", "[rules][topology]") {
    const auto r = analyzed(topology_report(x8_fixture_at("12"), gpu_at("0000:51:00.0")), topology_rules(), degraded);
    CHECK(ranked_finding(r, degraded, "topology").severity == Severity::high);
    CHECK(*r.findings[0].estimated_gain == Approx(0.25));
}

TEST_CASE("pcie_link_degraded: a narrow link on a device not diagnosed", "[rules][topology]") {
    const auto r = analyzed(topology_report(x8_fixture_at("8")), topology_rules(), degraded);
    const Finding& f = ranked_finding(r, degraded, "topology");
    CHECK(f.severity == Severity::medium);
    CHECK_FALSE(f.estimated_gain);
}

TEST_CASE("pcie_link_degraded: an idle rate drop counts only on the diagnosed device", "[rules][topology]") {
    const Topology t = topology_fixture("two_socket_two_gpus.xml");
    // GPU ca:00.0 idles at 2.5 GT/s; the BMC's link runs at gen1 of gen2: neither is the device diagnosed.
    check_silent(analyzed(topology_report(t, gpu_at("0000:17:00.0")), topology_rules(), degraded));
    check_silent(analyzed(topology_report(t), topology_rules(), degraded));
    const auto r = analyzed(topology_report(t, gpu_at("0000:ca:00.0")), topology_rules(), degraded);
    const Finding& f = ranked_finding(r, degraded, "topology");
    CHECK(f.severity == Severity::low);
    CHECK(f.confidence == 0.5);
    CHECK_FALSE(f.estimated_gain);
    CHECK(f.title == "GPU 0000:ca:00.0 trained at PCIe gen1 x16; both ends can do PCIe gen4 x16");
    CHECK_THAT(f.suggestion, Catch::Matchers::Contains("idle"));
}

TEST_CASE("pcie_link_degraded: one generation below on the diagnosed device", "[rules][topology]") {
    const std::string from = "clprobe.current_link_speed\" value=\"16.0 GT/s PCIe\"";
    const std::string to = "clprobe.current_link_speed\" value=\"8.0 GT/s PCIe\"";
    const Topology gen3 =
        edited_topology_fixture("two_gpus_one_switch.xml",
                                {{"pci_busid=\"0000:c0:01.1\"", from, to}, {"pci_busid=\"0000:c1:00.0\"", from, to}});
    const auto r = analyzed(topology_report(gen3, gpu_at("0000:c1:00.0")), topology_rules(), degraded);
    CHECK(ranked_finding(r, degraded, "topology").severity == Severity::low);
    check_silent(analyzed(topology_report(topology_fixture("two_gpus_one_switch.xml"), gpu_at("0000:c1:00.0")),
                          topology_rules(), degraded));
}

TEST_CASE("pcie_link_degraded: the link above a switch trained narrow", "[rules][topology]") {
    const Topology t = switch_fixture_with_upstream(
        {{"clprobe.current_link_width\" value=\"16\"", "clprobe.current_link_width\" value=\"8\""}});
    const auto r = analyzed(topology_report(t, gpu_at("0000:83:00.0")), topology_rules(), degraded);
    const Finding& f = ranked_finding(r, degraded, "topology");
    CHECK(f.severity == Severity::high);
    CHECK_THAT(f.title, Catch::Matchers::Contains("root port 0000:80:01.1"));
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == Approx(0.5));  // the path's bottleneck: 15.75 of 31.5 GB/s
    // The GPU with a root port of its own is not behind it.
    CHECK(ranked_finding(analyzed(topology_report(t, gpu_at("0000:c1:00.0")), topology_rules(), degraded), degraded,
                         "topology")
              .severity == Severity::medium);
}

TEST_CASE("pcie_link_degraded: an x16 card in an x8 slot is not degraded", "[rules][topology]") {
    const Topology t = edited_topology_fixture("gpu_link_x8_of_x16.xml",
                                               {{"pci_busid=\"0000:50:02.0\"", "clprobe.max_link_width\" value=\"16\"",
                                                 "clprobe.max_link_width\" value=\"8\""}});
    check_silent(analyzed(topology_report(t, gpu_at("0000:51:00.0")), topology_rules(), degraded));
}

TEST_CASE("pcie_link_degraded: inputs missing", "[rules][topology]") {
    check_needs(analyzed(RunReport{}, topology_rules(), degraded), degraded, "topology.host");
    check_not_evaluated(analyzed(topology_report(topology_fixture("no_pci_vm.xml")), topology_rules(), degraded),
                        degraded, "no PCI information");
    // The VM's virtio NIC reports no link.
    check_not_evaluated(analyzed(topology_report(topology_fixture("vm_1numa_virtio.xml")), topology_rules(), degraded),
                        degraded, "no PCIe link of interest reports both");
    RunReport broken = topology_report(topology_fixture("gpu_link_x8_of_x16.xml"));
    broken.results[0].attributes["summary"] = nlohmann::json::array();
    check_not_evaluated(analyzed(broken, topology_rules(), degraded), degraded, "no readable summary");
    broken.results[0].status = ProbeStatus::error;
    check_needs(analyzed(broken, topology_rules(), degraded), degraded, "topology.host");
}

// ---------------------------------------------------------------- topology.shared_link

TEST_CASE("shared_link: two GPUs behind one x16 switch uplink", "[rules][topology]") {
    const Topology t = topology_fixture("two_gpus_one_switch.xml");
    const auto r = analyzed(topology_report(t, gpu_at("0000:83:00.0")), topology_rules(), shared);
    const Finding& f = ranked_finding(r, shared, "topology");
    CHECK(f.severity == Severity::medium);
    CHECK(f.title ==
          "2 devices share one PCIe gen4 x16 link (31.5 GB/s) below root port 0000:80:01.1: GPU 0000:83:00.0, GPU "
          "0000:84:00.0 (63.0 GB/s of device links behind it)");
    REQUIRE(f.estimated_gain);
    CHECK(*f.estimated_gain == Approx(0.5));
    CHECK(f.confidence == 1.0);
    CHECK_THAT(f.suggestion, Catch::Matchers::Contains("0000:c1:00.0 has a link of its own"));
    REQUIRE(f.evidence.size() == 3);
    CHECK(f.evidence[0].labels.at("address") == "0000:80:01.1");
    CHECK(f.evidence[0].value == Approx(gen4_x16));

    // Diagnosing the GPU with its own root port: the shared link is only worth a low word.
    const auto other = analyzed(topology_report(t, gpu_at("0000:c1:00.0")), topology_rules(), shared);
    CHECK(ranked_finding(other, shared, "topology").severity == Severity::low);
    CHECK_FALSE(other.findings[0].estimated_gain);
}

TEST_CASE("shared_link: an uplink as fast as the devices below is silent, a slower one is not", "[rules][topology]") {
    // gen5 x16 above two gen4 x16 GPUs: 63.0 GB/s for 63.0 GB/s of demand.
    const Topology gen5 = switch_fixture_with_upstream({{speed_info("current", "16.0"), speed_info("current", "32.0")},
                                                        {speed_info("max", "16.0"), speed_info("max", "32.0")}});
    check_silent(analyzed(topology_report(gen5, gpu_at("0000:83:00.0")), topology_rules(), shared));
    // gen4 x16 is just short of it (gen3 x16, further).
    CHECK(ranked_finding(analyzed(topology_report(topology_fixture("two_gpus_one_switch.xml"), gpu_at("0000:83:00.0")),
                                  topology_rules(), shared),
                         shared, "topology")
              .severity == Severity::medium);
    const Topology gen3 = switch_fixture_with_upstream({{speed_info("current", "16.0"), speed_info("current", "8.0")},
                                                        {speed_info("max", "16.0"), speed_info("max", "8.0")}});
    CHECK(*ranked_finding(analyzed(topology_report(gen3, gpu_at("0000:83:00.0")), topology_rules(), shared), shared,
                          "topology")
               .estimated_gain == Approx(0.75));
}

TEST_CASE("shared_link: idle GPUs count with what their links can carry", "[rules][topology]") {
    // Both GPUs idle at 2.5 GT/s (8 GB/s together, well below the uplink): under load they draw 63 GB/s.
    const std::string from = speed_info("current", "16.0"), to = speed_info("current", "2.5");
    const Topology idle =
        edited_topology_fixture("two_gpus_one_switch.xml", {{"pci_busid=\"0000:82:00.0\"", from, to},
                                                            {"pci_busid=\"0000:83:00.0\"", from, to},
                                                            {"pci_busid=\"0000:82:01.0\"", from, to},
                                                            {"pci_busid=\"0000:84:00.0\"", from, to}});
    const auto r = analyzed(topology_report(idle, gpu_at("0000:83:00.0")), topology_rules(), shared);
    CHECK(*ranked_finding(r, shared, "topology").estimated_gain == Approx(0.5));
    CHECK(r.findings[0].evidence.at(1).labels.at("link") == "max");
}

TEST_CASE("shared_link: unknown rates still name the sharing, with less confidence", "[rules][topology]") {
    const Topology t = switch_fixture_with_upstream(
        {{"clprobe.current_link_speed", "x.current_link_speed"}, {"clprobe.max_link_speed", "x.max_link_speed"}});
    const auto r = analyzed(topology_report(t, gpu_at("0000:83:00.0")), topology_rules(), shared);
    const Finding& f = ranked_finding(r, shared, "topology");
    CHECK(f.severity == Severity::low);
    CHECK(f.confidence == 0.5);
    CHECK_FALSE(f.estimated_gain);
}

TEST_CASE("shared_link: one device per root port, and the functions of one card", "[rules][topology]") {
    check_silent(analyzed(topology_report(topology_fixture("two_socket_two_gpus.xml")), topology_rules(), shared));
    // A dual-port NIC: two functions of one card below one root port.
    TopologyFacts f;
    f.has_pci = true;
    for (const char* address : {"0000:31:00.0", "0000:31:00.1"}) {
        PciDeviceFacts d;
        d.address = address;
        d.kind = "nic";
        d.parent = d.upstream = "0000:30:02.0";
        f.pci_devices.push_back(d);
    }
    f.upstream_links.push_back({"0000:30:02.0", {}, {"0000:31:00.0", "0000:31:00.1"}, true});
    RunReport r;
    ProbeResult host = probe_result("topology.host", "topology");
    host.attributes["summary"] = to_json(f);
    r.results.push_back(host);
    check_silent(analyzed(r, topology_rules(), shared));
}

TEST_CASE("shared_link: inputs missing", "[rules][topology]") {
    check_needs(analyzed(RunReport{}, topology_rules(), shared), shared, "topology.host");
    check_not_evaluated(analyzed(topology_report(topology_fixture("no_pci_vm.xml")), topology_rules(), shared), shared,
                        "no PCI information");
}

// ---------------------------------------------------------------- the layer as a whole

TEST_CASE("topology rules: the CI VM (one NUMA node, a CPU device) gets no finding", "[rules][topology]") {
    RunReport r = topology_report(topology_fixture("vm_1numa_virtio.xml"), DeviceQuery{"cpu", {}}, bound_to("0-1"));
    analyze(r, topology_rules());
    CHECK(r.findings.empty());
    // Only the link rule lacks input: virtio devices have no PCIe link.
    REQUIRE(r.rules_not_evaluated.size() == 1);
    CHECK(r.rules_not_evaluated[0].rule == degraded);
}
