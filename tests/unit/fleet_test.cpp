// analyze_fleet on generated report sets: a node with a degraded link and one with another
// driver are outliers with the environment difference named; a merely noisy node is not; reports
// of another device are listed, not mixed in; findings on some nodes are named.
#include <catch2/catch.hpp>

#include <algorithm>

#include "core/topology_facts.hpp"
#include "fleet/fleet_analysis.hpp"

using namespace clprobe;

namespace {

// Seven samples spread evenly around `centre`, about `cv` apart.
std::vector<double> around(double centre, double cv) {
    std::vector<double> v;
    for (int i = -3; i <= 3; ++i)
        v.push_back(centre * (1 + cv * i / 2.0));
    return v;
}

struct NodeSpec {
    std::string host;
    double transfer = 100, kernel = 200;  // medians
    double cv = 0.01;
    int link_width = 16;
    std::string driver = "1.0";
    std::string icd_loader = "OpenCL ICD Loader 2.3.1";
    std::string device = "Test GPU";
    std::vector<std::string> findings;
};

ProbeResult probe(const char* id, const char* layer, std::vector<Measurement> ms) {
    ProbeResult p;
    p.id = id;
    p.layer = layer;
    p.measurements = std::move(ms);
    return p;
}

RunReport node_report(const NodeSpec& s) {
    RunReport r;
    r.tool_version = "0.1.0";
    r.host.hostname = s.host;
    r.device = DeviceInfo{};
    r.device->name = s.device;
    r.device->type = "gpu";
    r.device->driver_version = s.driver;
    r.device->compute_units = 132;
    r.options = {{"mode", "quick"}};
    r.provenance = Provenance{};
    r.provenance->clprobe_version = "0.1.0";
    r.provenance->git_commit = "abc123";
    r.provenance->icd_loader = s.icd_loader;
    r.results.push_back(probe("transfer.bandwidth", "transfer",
                              {make_measurement("transfer.h2d.bandwidth", "GB/s", {}, around(s.transfer, s.cv),
                                                TimerKind::device_profiling)}));
    r.results.push_back(probe(
        "kernel.bandwidth", "kernel",
        {make_measurement("kernel.peak.bandwidth", "GB/s", {}, around(s.kernel, s.cv), TimerKind::device_profiling),
         // labelled: not a headline, never compared across the fleet
         make_measurement("kernel.bandwidth", "GB/s", {{"vector", "4"}}, around(1, 0.5),
                          TimerKind::device_profiling)}));
    DeviceLocalityFacts locality;
    locality.match = "pci";
    locality.pci = PciDeviceFacts{};
    locality.pci->link.current = {16.0, s.link_width, std::nullopt};
    locality.pci->link.source = "sysfs";
    locality.binding.relation = "inside";
    ProbeResult topo = probe("topology.device", "topology", {});
    topo.attributes["locality"] = to_json(locality);
    r.results.push_back(std::move(topo));
    for (const auto& id : s.findings)
        r.findings.push_back(Finding{id});
    return r;
}

std::vector<NodeSpec> healthy(int n) {
    std::vector<NodeSpec> out;
    for (int i = 0; i < n; ++i) {
        NodeSpec s;
        s.host = "node" + std::to_string(i);
        const double jitter = 0.005 * ((i % 5) - 2);  // +-1%: a tight fleet
        s.transfer *= 1 + jitter;
        s.kernel *= 1 - jitter;
        out.push_back(s);
    }
    return out;
}

FleetAnalysis analyse(const std::vector<NodeSpec>& specs, std::vector<UnpairedReport> unpaired = {}) {
    std::vector<NodeSummary> nodes;
    for (const auto& s : specs)
        nodes.push_back(summarize_node(node_report(s), s.host + ".json"));
    return analyze_fleet(std::move(nodes), std::move(unpaired));
}

const NodeOutlier* outlier(const FleetAnalysis& f, const std::string& node) {
    for (const auto& o : f.outliers)
        if (o.node == node) return &o;
    return nullptr;
}

const EnvironmentDeviation* deviation(const NodeOutlier& o, const std::string& field) {
    for (const auto& e : o.environment)
        if (e.field == field) return &e;
    return nullptr;
}

std::vector<NodeSpec> planted_fleet() {
    auto specs = healthy(10);
    specs[3].host = "degraded-link";
    specs[3].link_width = 8;
    specs[3].transfer = 50;
    specs[3].findings = {"topology.link_degraded"};
    specs[5].host = "other-driver";
    specs[5].driver = "2.0";
    specs[5].icd_loader = "Khronos OpenCL ICD Loader 3.0.6";
    specs[5].kernel = 160;
    specs[7].host = "noisy";
    specs[7].cv = 0.15;  // a busy node: wide samples, median a little off
    specs[7].transfer = 92;
    specs[7].kernel = 186;
    return specs;
}

}  // namespace

TEST_CASE("fleet: a degraded link and another driver are outliers, a noisy node is not", "[fleet]") {
    const FleetAnalysis f = analyse(planted_fleet());
    REQUIRE(f.nodes == 10);
    REQUIRE(f.device == "gpu: Test GPU");
    REQUIRE(f.metrics.size() == 2);  // the two headlines; the labelled variant is not one
    CHECK(f.outliers.size() == 2);
    CHECK(f.worse_outliers() == 2);
    CHECK(outlier(f, "noisy") == nullptr);

    const NodeOutlier* link = outlier(f, "degraded-link");
    REQUIRE(link != nullptr);
    REQUIRE(link->metrics.size() == 1);
    CHECK(link->metrics[0].metric == "transfer.h2d.bandwidth");
    CHECK(link->metrics[0].worse);
    CHECK(link->metrics[0].relative == Approx(-0.5).margin(0.01));
    const auto* width = deviation(*link, "device.pcie_link");
    REQUIRE(width != nullptr);
    CHECK(width->value == "PCIe gen4 x8");
    CHECK(width->majority == "PCIe gen4 x16");
    CHECK(width->majority_nodes == 9);
    CHECK(deviation(*link, "device.driver_version") == nullptr);

    const NodeOutlier* driver = outlier(f, "other-driver");
    REQUIRE(driver != nullptr);
    REQUIRE(driver->metrics.size() == 1);
    CHECK(driver->metrics[0].metric == "kernel.peak.bandwidth");
    const auto* d = deviation(*driver, "device.driver_version");
    REQUIRE(d != nullptr);
    CHECK(d->value == "2.0");
    CHECK(d->majority == "1.0");
    CHECK(deviation(*driver, "device.pcie_link") == nullptr);
    // Provenance differences are environment differences too: the other ICD loader is named.
    const auto* loader = deviation(*driver, "provenance.icd_loader");
    REQUIRE(loader != nullptr);
    CHECK(loader->value == "Khronos OpenCL ICD Loader 3.0.6");
    CHECK(deviation(*link, "provenance.icd_loader") == nullptr);
    CHECK(deviation(*driver, "provenance.git_commit") == nullptr);

    REQUIRE(f.partial_findings.size() == 1);
    CHECK(f.partial_findings[0].id == "topology.link_degraded");
    CHECK(f.partial_findings[0].nodes == std::vector<std::string>{"degraded-link"});
}

TEST_CASE("fleet: without the node's own cv the noisy node would be called an outlier", "[fleet]") {
    FleetOptions no_widening;
    no_widening.cv_k = 0;
    std::vector<NodeSummary> nodes;
    for (const auto& s : planted_fleet())
        nodes.push_back(summarize_node(node_report(s), s.host + ".json"));
    const FleetAnalysis f = analyze_fleet(std::move(nodes), {}, no_widening);
    CHECK(outlier(f, "noisy") != nullptr);
}

TEST_CASE("fleet: reports of another device are listed, not mixed in", "[fleet]") {
    auto specs = healthy(5);
    specs[1].device = "Other GPU";
    specs[1].transfer = 10;  // would be an outlier if it were paired
    const FleetAnalysis f = analyse(specs, {{"broken.json", "cannot read report 'broken.json': empty file"}});
    CHECK(f.nodes == 4);
    CHECK(f.outliers.empty());
    REQUIRE(f.unpaired.size() == 2);
    CHECK(f.unpaired[0].source == "broken.json");
    CHECK(f.unpaired[1].source == "node1.json");
    CHECK_THAT(f.unpaired[1].reason, Catch::Contains("another device: gpu: Other GPU"));
}

TEST_CASE("fleet: fewer nodes than min_nodes call no outliers", "[fleet]") {
    auto specs = healthy(2);
    specs[1].transfer = 10;
    const FleetAnalysis f = analyse(specs);
    CHECK(f.nodes == 2);
    CHECK(f.outliers.empty());
    CHECK(f.metrics[0].nodes == 2);
}

TEST_CASE("fleet: a better node is an outlier but not a worse one", "[fleet]") {
    auto specs = healthy(8);
    specs[2].kernel = 300;
    const FleetAnalysis f = analyse(specs);
    REQUIRE(f.outliers.size() == 1);
    CHECK_FALSE(f.outliers[0].worse);
    CHECK(f.worse_outliers() == 0);
}

TEST_CASE("fleet: the node environment read from the system and topology probes", "[fleet]") {
    NodeSpec spec;
    spec.host = "n1";
    RunReport r = node_report(spec);
    ProbeResult host = probe("system.host", "system", {});
    host.attributes["frequency"] = {{"governors", {"powersave", "performance", "powersave"}}};
    r.results.push_back(std::move(host));
    ProbeResult limits = probe("system.limits", "system", {});
    limits.attributes["cpu_quota"] = {{"cpus", 4.0}, {"quota_us", 400000}, {"period_us", 100000}};
    limits.attributes["memory_limit"] = "none";
    r.results.push_back(std::move(limits));
    const NodeEnvironment e = node_environment_of(r);
    CHECK(e.governor == "performance,powersave");
    CHECK(e.cpu_quota == "4 CPUs");
    CHECK(e.memory_limit == "none");
    CHECK(e.pcie_link == "PCIe gen4 x16");
    CHECK(e.numa_binding == "inside");
    CHECK(e.driver_version == "1.0");
    CHECK(e.mode == "quick");
    // Unknown stays empty: a report without these probes differs only where it says something.
    const NodeEnvironment bare = node_environment_of(RunReport{});
    CHECK(bare.governor.empty());
    CHECK(bare.pcie_link.empty());
    CHECK(bare.cpu_quota.empty());
}
