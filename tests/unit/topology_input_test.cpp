// The check of --topology and --device-pci that runs before any probe: one line saying what is wrong.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "topology/pci_address.hpp"
#include "topology/topology_input.hpp"
#include "topology_fixtures.hpp"

using namespace clprobe;
using clprobe::test::topology_fixture_path;
using clprobe::test::topology_fixture_text;

namespace fs = std::filesystem;

namespace {

std::string problem(const std::string& xml, const std::string& pci = "") {
    const auto p = topology_input_problem(xml, pci);
    REQUIRE(p);
    CHECK(p->find('\n') == std::string::npos);
    return *p;
}

std::string temp_file(const std::string& name, const std::string& text) {
    const fs::path path = fs::temp_directory_path() / ("clprobe-topology-input-" + name);
    std::ofstream(path) << text;
    return path.string();
}

}  // namespace

TEST_CASE("topology_input_problem: nothing to check", "[topology][input]") {
    CHECK_FALSE(topology_input_problem("", ""));
    CHECK_FALSE(topology_input_problem(topology_fixture_path("two_socket_two_gpus.xml"), ""));
    CHECK_FALSE(topology_input_problem(topology_fixture_path("two_socket_two_gpus.xml"), "0000:17:00.0"));
    CHECK_FALSE(topology_input_problem(topology_fixture_path("two_socket_two_gpus.xml"), "ca:00.0"));
}

TEST_CASE("topology_input_problem: files that are not a topology", "[topology][input]") {
    CHECK(problem("/nonexistent/clprobe/t.xml") ==
          "--topology /nonexistent/clprobe/t.xml: cannot read it: No such file or directory");
    CHECK(problem(fs::temp_directory_path().string()) ==
          "--topology " + fs::temp_directory_path().string() + ": it is a directory");
    const std::string empty = temp_file("empty.xml", "");
    CHECK(problem(empty) == "--topology " + empty + ": the file is empty");
    for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
             {"garbage.xml", "not xml at all"},
             {"truncated.xml", topology_fixture_text("two_socket_two_gpus.xml").substr(0, 3000)},
             {"other.xml", "<?xml version=\"1.0\"?><html><body/></html>"},
             {"future.xml", "<?xml version=\"1.0\"?><topology version=\"9.0\"></topology>"}}) {
        INFO(name);
        const std::string path = temp_file(name, text);
        CHECK(problem(path) == "--topology " + path + ": not a valid hwloc XML topology");
    }
}

TEST_CASE("topology_input_problem: --device-pci not an address, or not in the file", "[topology][input]") {
    const std::string two = topology_fixture_path("two_socket_two_gpus.xml");
    CHECK(problem(two, "gpu0") == "--device-pci 'gpu0': not a PCI address (expected DDDD:BB:DD.F, e.g. 0000:17:00.0)");
    CHECK(problem(two, "0000:99:00.0") ==
          "--device-pci 0000:99:00.0: no PCI device at this address in " + two +
              " (devices of interest there: 0000:03:00.0 (gpu), 0000:17:00.0 (gpu), 0000:31:00.0 (nic), 0000:ca:00.0 "
              "(gpu))");
    // A bridge's address is not a device.
    CHECK_THAT(problem(two, "0000:16:02.0"), Catch::Matchers::Contains("no PCI device at this address"));
    const std::string no_pci = topology_fixture_path("no_pci_vm.xml");
    CHECK(problem(no_pci, "0000:17:00.0") == "--device-pci 0000:17:00.0: " + no_pci + " holds no PCI information");
}

TEST_CASE("parse_pci_address: the forms accepted", "[topology][input]") {
    CHECK(parse_pci_address("0000:17:00.0")->text() == "0000:17:00.0");
    CHECK(parse_pci_address("17:00.0")->text() == "0000:17:00.0");
    CHECK(parse_pci_address("0001:CA:1f.7")->text() == "0001:ca:1f.7");
    CHECK_FALSE(parse_pci_address("0000:17:00"));
    CHECK_FALSE(parse_pci_address("0000:17:00.8"));
    CHECK_FALSE(parse_pci_address("0000:17:20.0"));  // device numbers stop at 1f
    CHECK_FALSE(parse_pci_address(" 0000:17:00.0"));
    CHECK_FALSE(parse_pci_address(""));
}
