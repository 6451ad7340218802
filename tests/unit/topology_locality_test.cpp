// Locating the OpenCL device in a topology: by PCI address, as a CPU device, or not at all; its
// NUMA locality; and how the process binding (given explicitly) relates to it.
#include <catch2/catch.hpp>

#include "topology/bitmap.hpp"
#include "topology/device_locality.hpp"
#include "topology/numa_locality.hpp"
#include "topology/process_binding.hpp"
#include "topology_fixtures.hpp"

using namespace clprobe;
using clprobe::test::topology_fixture;

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
    b.note = "not known in this test";
    return b;
}

DeviceQuery gpu_at(const std::string& address) {
    return {"gpu", address};
}

std::string relation(const std::string& binding, const std::string& device, const std::string& machine) {
    return binding_relation(Bitmap::from_list(binding), Bitmap::from_list(device), Bitmap::from_list(machine));
}

}  // namespace

TEST_CASE("binding_relation: inside, outside, overlapping, unbound", "[topology][locality]") {
    CHECK(relation("0-7", "0-15", "0-31") == "inside");
    CHECK(relation("0-15", "0-15", "0-31") == "inside");
    CHECK(relation("16-31", "0-15", "0-31") == "outside");
    CHECK(relation("16", "0-15", "0-31") == "outside");
    CHECK(relation("15-16", "0-15", "0-31") == "overlapping");
    CHECK(relation("0-31", "0-15", "0-31") == "unbound");
    // On a machine whose every PU is local to the device, an unbound process is inside.
    CHECK(relation("0-31", "0-31", "0-31") == "inside");
    CHECK(relation("", "0-15", "0-31") == "unknown");
}

TEST_CASE("Bitmap: lists in, lists out", "[topology][locality]") {
    CHECK(Bitmap::from_list("0-3,8").list() == "0-3,8");
    CHECK(Bitmap::from_list("").empty());
    CHECK(Bitmap::from_list("2,4").indexes() == std::vector<unsigned>{2, 4});
    CHECK_THROWS_AS(Bitmap::from_list("0-"), std::invalid_argument);
    CHECK_THROWS_AS(Bitmap::from_list("a"), std::invalid_argument);
    CHECK_THROWS_AS(Bitmap::from_list("1,,2"), std::invalid_argument);
}

TEST_CASE("locate_device: a GPU by its PCI address on a two-socket machine", "[topology][locality]") {
    const Topology t = topology_fixture("two_socket_two_gpus.xml");
    const auto f = locate_device(t, gpu_at("0000:17:00.0"), bound_to("0-15,32-47"));
    CHECK(f.match == "pci");
    CHECK(f.address == "0000:17:00.0");
    REQUIRE(f.pci);
    CHECK(f.pci->kind == "gpu");
    CHECK(f.numa_nodes == std::vector<unsigned>{0});
    CHECK(f.cpuset == "0-15,32-47");
    CHECK(f.binding.relation == "inside");
    CHECK(f.binding.cpuset == "0-15,32-47");
    CHECK(f.binding.numa_nodes == std::vector<unsigned>{0});

    const auto other_socket = locate_device(t, gpu_at("0000:ca:00.0"), bound_to("0-15,32-47"));
    CHECK(other_socket.numa_nodes == std::vector<unsigned>{1});
    CHECK(other_socket.binding.relation == "outside");

    CHECK(locate_device(t, gpu_at("0000:17:00.0"), bound_to("15-16")).binding.relation == "overlapping");
    const auto unbound = locate_device(t, gpu_at("0000:17:00.0"), bound_to("0-63"));
    CHECK(unbound.binding.relation == "unbound");
    CHECK(unbound.binding.numa_nodes == std::vector<unsigned>{0, 1});
}

TEST_CASE("locate_device: lspci's short address and upper case work", "[topology][locality]") {
    const Topology t = topology_fixture("two_socket_two_gpus.xml");
    CHECK(locate_device(t, gpu_at("ca:00.0"), unknown_binding()).address == "0000:ca:00.0");
    CHECK(locate_device(t, gpu_at("0000:CA:00.0"), unknown_binding()).match == "pci");
}

TEST_CASE("locate_device: one of eight NUMA nodes", "[topology][locality]") {
    const Topology t = topology_fixture("epyc_8numa_l3_as_numa.xml");
    const auto f = locate_device(t, gpu_at("0000:c1:00.0"), bound_to("0-3", "bind", "0"));
    CHECK(f.numa_nodes == std::vector<unsigned>{6});
    CHECK(f.cpuset == "24-27,56-59");
    CHECK(f.binding.relation == "outside");
    CHECK(f.binding.memory_policy == "bind");
    CHECK(f.binding.memory_nodes == std::vector<unsigned>{0});
    CHECK(locate_device(t, gpu_at("0000:c1:00.0"), bound_to("24-27,56-59")).binding.relation == "inside");
}

TEST_CASE("locate_device: binding unknown (a saved topology)", "[topology][locality]") {
    const Topology t = topology_fixture("two_socket_two_gpus.xml");
    const ProcessBinding b = read_process_binding(t);
    CHECK_FALSE(b.cpus);
    CHECK_FALSE(b.memory_nodes);
    CHECK_THAT(b.note, Catch::Matchers::Contains("saved topology"));
    const auto f = locate_device(t, gpu_at("0000:17:00.0"), b);
    CHECK(f.match == "pci");
    CHECK(f.binding.relation == "unknown");
    CHECK(f.binding.cpuset.empty());
    CHECK_THAT(f.binding.note, Catch::Matchers::Contains("saved topology"));
}

TEST_CASE("locate_device: a device without a PCI address cannot be matched", "[topology][locality]") {
    const Topology t = topology_fixture("two_socket_two_gpus.xml");
    for (const char* type : {"gpu", "accelerator", ""}) {
        INFO(type);
        const auto f = locate_device(t, {type, std::nullopt}, bound_to("0-3"));
        CHECK(f.match == "no_pci_address");
        CHECK_THAT(f.note, Catch::Matchers::Contains("no PCI address"));
        CHECK_FALSE(f.pci);
        CHECK(f.numa_nodes.empty());
        CHECK(f.binding.relation == "unknown");
        CHECK(f.binding.cpuset == "0-3");  // what is known of the process is still said
    }
}

TEST_CASE("locate_device: an address not in the topology, or no PCI information at all", "[topology][locality]") {
    const auto missing =
        locate_device(topology_fixture("two_socket_two_gpus.xml"), gpu_at("0000:99:00.0"), unknown_binding());
    CHECK(missing.match == "not_found");
    CHECK_THAT(missing.note, Catch::Matchers::Contains("0000:99:00.0"));
    const auto no_pci = locate_device(topology_fixture("no_pci_vm.xml"), gpu_at("0000:17:00.0"), unknown_binding());
    CHECK(no_pci.match == "no_pci_information");
    const auto garbage = locate_device(topology_fixture("two_socket_two_gpus.xml"), gpu_at("17:00"), unknown_binding());
    CHECK(garbage.match == "not_found");
    CHECK_THAT(garbage.note, Catch::Matchers::Contains("not a PCI address"));
}

TEST_CASE("locate_device: a CPU device spans the CPUs the process may use", "[topology][locality]") {
    const Topology vm = topology_fixture("vm_1numa_virtio.xml");
    const auto one_pu = locate_device(vm, {"cpu", std::nullopt}, bound_to("1"));
    CHECK(one_pu.match == "cpu_device");
    CHECK(one_pu.cpuset == "1");
    CHECK(one_pu.cores == "1");
    CHECK(one_pu.numa_nodes == std::vector<unsigned>{0});
    CHECK(one_pu.binding.relation == "inside");

    const auto unknown = locate_device(vm, {"cpu", std::nullopt}, unknown_binding());
    CHECK(unknown.cpuset == "0-1");  // every allowed PU
    CHECK(unknown.binding.relation == "unknown");
    CHECK_THAT(unknown.note, Catch::Matchers::Contains("binding being unknown"));

    // On two sockets, bound to socket 1's PUs: socket 1's cores and NUMA node only.
    const Topology two = topology_fixture("two_socket_two_gpus.xml");
    const auto socket1 = locate_device(two, {"cpu", std::nullopt}, bound_to("16-31,48-63"));
    CHECK(socket1.cpuset == "16-31,48-63");
    CHECK(socket1.cores == "16-31");
    CHECK(socket1.numa_nodes == std::vector<unsigned>{1});
    const auto both = locate_device(two, {"cpu", std::nullopt}, bound_to("0-63"));
    CHECK(both.numa_nodes == std::vector<unsigned>{0, 1});
    CHECK(both.cores == "0-31");
}

TEST_CASE("locality_of: an object spanning several NUMA nodes (synthetic)", "[topology][locality]") {
    const Topology t = Topology::synthetic("pack:2 numa:2 core:8 pu:2");
    hwloc_obj_t package1 = hwloc_get_obj_by_type(t.get(), HWLOC_OBJ_PACKAGE, 1);
    REQUIRE(package1);
    const Locality l = locality_of(t, package1);
    CHECK(l.numa_nodes == std::vector<unsigned>{2, 3});
    CHECK(l.cpuset.list() == "32-63");
    // A single core sits below its NUMA node: the node that contains it is local.
    hwloc_obj_t core = hwloc_get_obj_by_type(t.get(), HWLOC_OBJ_CORE, 9);
    CHECK(locality_of(t, core).numa_nodes == std::vector<unsigned>{1});
    CHECK(numa_nodes_of(t, Bitmap::from_list("15-17")) == std::vector<unsigned>{0, 1});
}
