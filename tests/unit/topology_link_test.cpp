// PCIe link arithmetic, the kernel's link files as clprobe.* infos (and their trip through an
// exported XML), and the link maximum both ends allow.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>

#include "core/pcie_link.hpp"
#include "topology/pci_links.hpp"
#include "topology/topology_summary.hpp"
#include "topology_fixtures.hpp"

using namespace clprobe;
using clprobe::test::edited_topology_fixture;
using clprobe::test::topology_fixture;

namespace fs = std::filesystem;

namespace {

double bandwidth(double gt_per_s, int width) {
    const auto b = pcie_link_bandwidth(gt_per_s, width);
    REQUIRE(b);
    return *b;
}

// A throw-away /sys with link files for some PCI addresses.
class FakeSysfs {
  public:
    FakeSysfs() {
        std::random_device rd;
        root_ = fs::temp_directory_path() / ("clprobe-sysfs-" + std::to_string(rd()));
        fs::create_directories(root_);
    }
    ~FakeSysfs() {
        std::error_code ec;
        fs::remove_all(root_, ec);
    }
    void link(const std::string& address, const std::string& cur_speed, const std::string& max_speed,
              const std::string& cur_width, const std::string& max_width) {
        const fs::path dir = root_ / "bus/pci/devices" / address;
        fs::create_directories(dir);
        std::ofstream(dir / "current_link_speed") << cur_speed << "\n";
        std::ofstream(dir / "max_link_speed") << max_speed << "\n";
        std::ofstream(dir / "current_link_width") << cur_width << "\n";
        std::ofstream(dir / "max_link_width") << max_width << "\n";
    }
    std::string root() const { return root_.string(); }

  private:
    fs::path root_;
};

}  // namespace

TEST_CASE("pcie_link_bandwidth: each generation at x16 and x1", "[topology][link]") {
    CHECK(bandwidth(2.5, 16) == Approx(4.0));                    // 8b/10b
    CHECK(bandwidth(5.0, 16) == Approx(8.0));                    // 8b/10b
    CHECK(bandwidth(8.0, 16) == Approx(8.0 * 128 / 130 * 2));    // 15.75, 128b/130b
    CHECK(bandwidth(16.0, 16) == Approx(16.0 * 128 / 130 * 2));  // 31.51
    CHECK(bandwidth(32.0, 16) == Approx(32.0 * 128 / 130 * 2));  // 63.02
    CHECK(bandwidth(64.0, 16) == Approx(64.0 * 236 / 256 * 2));  // 118.0, FLIT
    CHECK(bandwidth(2.5, 1) == Approx(0.25));
    CHECK(bandwidth(8.0, 1) == Approx(8.0 * 128 / 130 / 8));
    CHECK(bandwidth(64.0, 1) == Approx(7.375));
}

TEST_CASE("pcie_link_bandwidth: proportional to width", "[topology][link]") {
    for (double gt : {2.5, 5.0, 8.0, 16.0, 32.0, 64.0})
        for (int w : {1, 2, 4, 8, 16, 32}) {
            INFO(gt << " GT/s x" << w);
            CHECK(bandwidth(gt, w) == Approx(bandwidth(gt, 1) * w));
        }
    CHECK_FALSE(pcie_link_bandwidth(16.0, 0));
    CHECK_FALSE(pcie_link_bandwidth(10.0, 16));  // not a PCIe rate
}

TEST_CASE("pcie_generation: rates to generations", "[topology][link]") {
    CHECK(pcie_generation(2.5)->generation == 1);
    CHECK(pcie_generation(5.0)->generation == 2);
    CHECK(pcie_generation(8.0)->generation == 3);
    CHECK(pcie_generation(16.0)->generation == 4);
    CHECK(pcie_generation(32.0)->generation == 5);
    CHECK(pcie_generation(64.0)->generation == 6);
    CHECK_FALSE(pcie_generation(0));
    CHECK_FALSE(pcie_generation(12));
}

TEST_CASE("parse_link_speed and parse_link_width: the kernel's texts", "[topology][link]") {
    CHECK(parse_link_speed("16.0 GT/s PCIe") == 16.0);
    CHECK(parse_link_speed("2.5 GT/s PCIe") == 2.5);
    CHECK(parse_link_speed("2.5 GT/s") == 2.5);  // older kernels
    CHECK(parse_link_speed("5 GT/s") == 5.0);
    CHECK(parse_link_speed("64.0 GT/s PCIe") == 64.0);
    CHECK_FALSE(parse_link_speed("Unknown"));
    CHECK_FALSE(parse_link_speed(""));
    CHECK_FALSE(parse_link_speed("3.0 GT/s"));
    CHECK(parse_link_width("16") == 16);
    CHECK(parse_link_width("x8") == 8);
    CHECK_FALSE(parse_link_width("0"));
    CHECK_FALSE(parse_link_width(""));
    CHECK_FALSE(parse_link_width("wide"));
    CHECK(describe_link(16.0, 8) == "PCIe gen4 x8");
    CHECK(describe_link(std::nullopt, 16) == "PCIe gen? x16");
}

TEST_CASE("annotate_pci_links: sysfs readings become infos, and survive an XML export", "[topology][link]") {
    FakeSysfs sysfs;
    sysfs.link("0000:00:03.0", "8.0 GT/s PCIe", "16.0 GT/s PCIe", "4", "8");
    Topology live_like = topology_fixture("vm_1numa_virtio.xml");
    CHECK(annotate_pci_links(live_like, sysfs.root()) == 1);  // the NIC; the disk has no files here
    CHECK(annotate_pci_links(live_like, sysfs.root()) == 0);  // annotated objects are left alone

    const TopologyFacts before = summarize(live_like);
    REQUIRE(before.pci_devices.size() == 1);
    const PcieLinkFacts& link = before.pci_devices[0].link;
    CHECK(link.source == "sysfs");
    CHECK(link.current.gt_per_s == 8.0);
    CHECK(link.current.width == 4);
    CHECK(link.max.gt_per_s == 16.0);
    CHECK(link.max.width == 8);
    REQUIRE(link.current.gb_per_s);
    CHECK(*link.current.gb_per_s == Approx(bandwidth(8.0, 4)));

    const std::string xml = live_like.export_xml();
    CHECK_THAT(xml, Catch::Matchers::Contains("clprobe.max_link_width"));
    const TopologyFacts after = summarize(Topology::from_xml_buffer(xml));
    CHECK(to_json(after) == to_json(before));
}

TEST_CASE("link_facts: hwloc's own figure when there are no link files", "[topology][link]") {
    // Strip the clprobe.* infos of the x8 fixture: only hwloc's pci_link_speed is left.
    const Topology t = edited_topology_fixture(
        "gpu_link_x8_of_x16.xml", {{"pci_busid=\"0000:51:00.0\"", "clprobe.current_link_speed", "x.current_link_speed"},
                                   {"pci_busid=\"0000:51:00.0\"", "clprobe.max_link_speed", "x.max_link_speed"},
                                   {"pci_busid=\"0000:51:00.0\"", "clprobe.current_link_width", "x.current_link_width"},
                                   {"pci_busid=\"0000:51:00.0\"", "clprobe.max_link_width", "x.max_link_width"}});
    const PcieLinkFacts link = summarize(t).pci_devices.at(0).link;
    CHECK(link.source == "hwloc");
    REQUIRE(link.current.gb_per_s);
    CHECK(*link.current.gb_per_s == Approx(15.754).margin(0.001));
    CHECK_FALSE(link.current.width);
    CHECK_FALSE(link.max.gb_per_s);
}

TEST_CASE("link_facts: the maximum is what both ends allow", "[topology][link]") {
    // An x16 card in a slot wired for x8: the root port's maximum is x8.
    const Topology t = edited_topology_fixture("gpu_link_x8_of_x16.xml",
                                               {{"pci_busid=\"0000:50:02.0\"", "clprobe.max_link_width\" value=\"16\"",
                                                 "clprobe.max_link_width\" value=\"8\""}});
    const PcieLinkFacts link = summarize(t).pci_devices.at(0).link;
    CHECK(link.current.width == 8);
    CHECK(link.max.width == 8);
    CHECK(*link.max.gb_per_s == Approx(*link.current.gb_per_s));
    // A gen3 port under a gen4 card: gen3 is the maximum.
    const Topology gen3 = edited_topology_fixture(
        "gpu_link_x8_of_x16.xml", {{"pci_busid=\"0000:50:02.0\"", "clprobe.max_link_speed\" value=\"16.0 GT/s PCIe\"",
                                    "clprobe.max_link_speed\" value=\"8.0 GT/s PCIe\""}});
    CHECK(summarize(gen3).pci_devices.at(0).link.max.gt_per_s == 8.0);
}
