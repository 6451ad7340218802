// The report's topology summary of each fixture machine and of hwloc synthetic topologies, and
// its JSON form.
#include <catch2/catch.hpp>

#include "core/topology_facts.hpp"
#include "topology/topology_summary.hpp"
#include "topology_fixtures.hpp"

using namespace clprobe;
using clprobe::test::topology_fixture;

namespace {

const PciDeviceFacts& device(const TopologyFacts& f, const std::string& address) {
    for (const auto& d : f.pci_devices)
        if (d.address == address) return d;
    FAIL("no device " << address);
    static const PciDeviceFacts none;
    return none;
}

const PciUpstreamLinkFacts& upstream(const TopologyFacts& f, const std::string& address) {
    for (const auto& u : f.upstream_links)
        if (u.address == address) return u;
    FAIL("no upstream link " << address);
    static const PciUpstreamLinkFacts none;
    return none;
}

unsigned cache_count(const TopologyFacts& f, unsigned level, const std::string& type, std::uint64_t size) {
    for (const auto& c : f.caches)
        if (c.level == level && c.type == type && c.size_bytes == size) return c.count;
    return 0;
}

void check_link(const PcieLinkReading& r, double gt_per_s, int width, double gb_per_s) {
    REQUIRE(r.gt_per_s);
    REQUIRE(r.width);
    REQUIRE(r.gb_per_s);
    CHECK(*r.gt_per_s == gt_per_s);
    CHECK(*r.width == width);
    CHECK(*r.gb_per_s == Approx(gb_per_s).epsilon(1e-9));
}

constexpr double gen4_x16 = 16.0 * 128 / 130 * 16 / 8;  // 31.51 GB/s

}  // namespace

TEST_CASE("summary: two sockets, one NUMA node and one A100 each", "[topology][summary]") {
    const TopologyFacts f = summarize(topology_fixture("two_socket_two_gpus.xml"));
    REQUIRE(f.packages.size() == 2);
    CHECK(f.packages[0].cpu_model == "Intel(R) Xeon(R) Gold 6326 CPU @ 2.90GHz");
    CHECK(f.packages[1].cpuset == "16-31,48-63");
    REQUIRE(f.numa_nodes.size() == 2);
    CHECK(f.numa_nodes[0].os_index == 0);
    CHECK(f.numa_nodes[0].memory_bytes == 274877906944ull);
    CHECK(f.numa_nodes[0].cpuset == "0-15,32-47");
    CHECK(f.numa_nodes[1].cpuset == "16-31,48-63");
    CHECK(f.cores == 32);
    CHECK(f.pus == 64);
    CHECK(f.allowed_pus == "0-63");
    CHECK(cache_count(f, 1, "data", 49152) == 32);
    CHECK(cache_count(f, 1, "instruction", 32768) == 32);
    CHECK(cache_count(f, 2, "unified", 1310720) == 32);
    CHECK(cache_count(f, 3, "unified", 25165824) == 2);
    CHECK(f.caches.size() == 4);

    CHECK(f.has_pci);
    REQUIRE(f.pci_devices.size() == 4);  // the BMC's VGA, two A100s, a ConnectX-6 (not the root ports)
    const auto& a100 = device(f, "0000:17:00.0");
    CHECK(a100.kind == "gpu");
    CHECK(a100.class_id == "0302");
    CHECK(a100.vendor_id == "10de");
    CHECK(a100.device_id == "20f1");
    CHECK(a100.name == "NVIDIA Corporation GA100 [A100 PCIe 40GB] (card1, renderD128)");
    CHECK(a100.numa_nodes == std::vector<unsigned>{0});
    CHECK(a100.cpuset == "0-15,32-47");
    CHECK(a100.parent == "0000:16:02.0");
    CHECK(a100.upstream == "0000:16:02.0");
    CHECK(a100.link.source == "sysfs");
    check_link(a100.link.current, 16, 16, gen4_x16);
    check_link(a100.link.max, 16, 16, gen4_x16);

    const auto& idle = device(f, "0000:ca:00.0");
    CHECK(idle.numa_nodes == std::vector<unsigned>{1});
    check_link(idle.link.current, 2.5, 16, 4.0);
    check_link(idle.link.max, 16, 16, gen4_x16);

    CHECK(device(f, "0000:31:00.0").kind == "nic");
    const auto& bmc = device(f, "0000:03:00.0");
    CHECK(bmc.kind == "gpu");
    CHECK(bmc.link.source.empty());  // conventional PCI behind the AST1150 bridge: no link of its own
    CHECK(bmc.parent == "0000:02:00.0");
    CHECK(bmc.upstream == "0000:00:1c.5");

    REQUIRE(f.upstream_links.size() == 4);
    const auto& bmc_link = upstream(f, "0000:00:1c.5");
    CHECK_FALSE(bmc_link.is_device_link);
    CHECK(bmc_link.devices == std::vector<std::string>{"0000:03:00.0"});
    check_link(bmc_link.link.current, 2.5, 1, 0.25);
    check_link(bmc_link.link.max, 5, 1, 0.5);
    CHECK(upstream(f, "0000:16:02.0").is_device_link);
}

TEST_CASE("summary: one EPYC package with eight NUMA nodes (LLC as NUMA)", "[topology][summary]") {
    const TopologyFacts f = summarize(topology_fixture("epyc_8numa_l3_as_numa.xml"));
    CHECK(f.packages.size() == 1);
    REQUIRE(f.numa_nodes.size() == 8);
    for (unsigned i = 0; i < 8; ++i) {
        CHECK(f.numa_nodes[i].os_index == i);
        CHECK(f.numa_nodes[i].memory_bytes == 68719476736ull);
    }
    CHECK(f.numa_nodes[6].cpuset == "24-27,56-59");
    CHECK(cache_count(f, 3, "unified", 33554432) == 8);
    CHECK(f.cores == 32);
    CHECK(f.pus == 64);
    // The NVMe drive is PCI but not a device of interest.
    REQUIRE(f.pci_devices.size() == 2);
    CHECK(device(f, "0000:41:00.0").numa_nodes == std::vector<unsigned>{2});
    const auto& mi210 = device(f, "0000:c1:00.0");
    CHECK(mi210.kind == "gpu");
    CHECK(mi210.class_id == "0380");
    CHECK(mi210.numa_nodes == std::vector<unsigned>{6});
    CHECK(mi210.cpuset == "24-27,56-59");
}

TEST_CASE("summary: a GPU whose link trained at x8 of x16", "[topology][summary]") {
    const TopologyFacts f = summarize(topology_fixture("gpu_link_x8_of_x16.xml"));
    REQUIRE(f.pci_devices.size() == 1);
    const auto& gpu = f.pci_devices[0];
    CHECK(gpu.address == "0000:51:00.0");
    check_link(gpu.link.current, 16, 8, gen4_x16 / 2);
    check_link(gpu.link.max, 16, 16, gen4_x16);
    REQUIRE(f.upstream_links.size() == 1);
    CHECK(f.upstream_links[0].is_device_link);
}

TEST_CASE("summary: a machine saved without PCI information", "[topology][summary]") {
    const TopologyFacts f = summarize(topology_fixture("no_pci_vm.xml"));
    CHECK_FALSE(f.has_pci);
    CHECK(f.pci_devices.empty());
    CHECK(f.upstream_links.empty());
    CHECK(f.packages.size() == 1);
    CHECK(f.numa_nodes.size() == 1);
    CHECK(f.cores == 4);
    CHECK(f.pus == 8);
}

TEST_CASE("summary: two GPUs behind one PCIe switch", "[topology][summary]") {
    const TopologyFacts f = summarize(topology_fixture("two_gpus_one_switch.xml"));
    REQUIRE(f.pci_devices.size() == 3);
    CHECK(device(f, "0000:83:00.0").parent == "0000:82:00.0");
    CHECK(device(f, "0000:83:00.0").upstream == "0000:80:01.1");
    CHECK(device(f, "0000:84:00.0").parent == "0000:82:01.0");
    REQUIRE(f.upstream_links.size() == 2);
    const auto& shared = upstream(f, "0000:80:01.1");
    CHECK(shared.devices == std::vector<std::string>{"0000:83:00.0", "0000:84:00.0"});
    CHECK_FALSE(shared.is_device_link);
    check_link(shared.link.current, 16, 16, gen4_x16);
    CHECK(upstream(f, "0000:c0:01.1").is_device_link);
}

TEST_CASE("summary: the CI VM's real export (virtio devices, no link information)", "[topology][summary]") {
    const TopologyFacts f = summarize(topology_fixture("vm_1numa_virtio.xml"));
    CHECK(f.packages.size() == 1);
    CHECK(f.numa_nodes.size() == 1);
    CHECK(f.cores == 2);
    CHECK(f.pus == 2);
    CHECK(f.has_pci);
    REQUIRE(f.pci_devices.size() == 1);  // the virtio NIC; the virtio disk is not of interest
    const auto& nic = f.pci_devices[0];
    CHECK(nic.kind == "nic");
    CHECK(nic.name == "eth0");
    CHECK(nic.link.source.empty());
    CHECK(nic.parent.empty());  // right on the host bridge
    CHECK(f.upstream_links.empty());
}

TEST_CASE("summary: hwloc synthetic topologies", "[topology][summary]") {
    const TopologyFacts f = summarize(Topology::synthetic("pack:2 numa:2 core:8 pu:2"));
    CHECK(f.packages.size() == 2);
    REQUIRE(f.numa_nodes.size() == 4);
    CHECK(f.numa_nodes[1].cpuset == "16-31");
    CHECK(f.cores == 32);
    CHECK(f.pus == 64);
    CHECK_FALSE(f.has_pci);

    const TopologyFacts cached =
        summarize(Topology::synthetic("pack:1 numa:1 l3:2(size=16MiB) core:4 l1d:1(size=32KiB) pu:1"));
    CHECK(cache_count(cached, 3, "unified", 16u << 20) == 2);
    CHECK(cache_count(cached, 1, "data", 32u << 10) == 8);
}

TEST_CASE("summary: JSON round trip, and small", "[topology][summary][json]") {
    for (const char* name : {"two_socket_two_gpus.xml", "epyc_8numa_l3_as_numa.xml", "two_gpus_one_switch.xml",
                             "no_pci_vm.xml", "vm_1numa_virtio.xml"}) {
        INFO(name);
        const TopologyFacts f = summarize(topology_fixture(name));
        const nlohmann::json j = to_json(f);
        CHECK(j.dump().size() < 8192);
        const auto back = topology_facts_from_json(j);
        REQUIRE(back);
        CHECK(to_json(*back) == j);
    }
}

TEST_CASE("summary: reading a damaged summary never throws", "[topology][summary][json]") {
    CHECK_FALSE(topology_facts_from_json(nlohmann::json("text")));
    CHECK_FALSE(topology_facts_from_json(nlohmann::json{{"cores", "many"}}));
    CHECK_FALSE(topology_facts_from_json(nlohmann::json{{"upstream_links", {1, 2}}}));
    const auto empty = topology_facts_from_json(nlohmann::json::object());
    REQUIRE(empty);
    CHECK(empty->pci_devices.empty());
    CHECK_FALSE(empty->has_pci);
    CHECK_FALSE(device_locality_from_json(nlohmann::json::array()));
    CHECK_FALSE(device_locality_from_json(nlohmann::json{{"binding", {{"numa_nodes", "x"}}}}));
}

TEST_CASE("index_list: the numactl form", "[topology][summary]") {
    CHECK(index_list({}) == "");
    CHECK(index_list({3}) == "3");
    CHECK(index_list({0, 1, 2, 3}) == "0-3");
    CHECK(index_list({5, 0, 2, 3, 3}) == "0,2-3,5");
}
