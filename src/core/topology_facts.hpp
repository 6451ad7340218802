#pragma once
// What the topology layer found out, as plain data: filled from hwloc by src/topology, stored in
// the attributes of the topology.* probes, and read back by the topology rules. Like DeviceInfo,
// it lives in core so that saved reports can be analysed without hwloc or the machine.
//
// Conventions: CPU sets are Linux CPU numbers (hwloc PU OS indexes) in list form ("0-15,32-47");
// NUMA nodes are OS indexes, the numbers numactl takes; PCI addresses are "dddd:bb:dd.f".
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace clprobe {

struct ProbeResult;
struct RunReport;

// One end of a PCIe link as read at one moment. Unknown parts stay empty.
struct PcieLinkReading {
    std::optional<double> gt_per_s;  // per-lane transfer rate (2.5, 5, 8, 16, 32, 64)
    std::optional<int> width;        // lanes
    std::optional<double> gb_per_s;  // theoretical bandwidth of this rate and width (src/core/pcie_link.hpp)
};

struct PcieLinkFacts {
    PcieLinkReading current;  // what the link trained at
    PcieLinkReading max;      // what both ends could do
    // "sysfs": the kernel's current/max link files (live, or clprobe.* infos in a saved XML);
    // "hwloc": only hwloc's own current-bandwidth attribute; "": no link information.
    std::string source;
};

// A PCI device of interest: GPU/display (class 03xx), processing accelerator (12xx),
// co-processor (0b40) or network/InfiniBand controller (02xx, 0c06).
struct PciDeviceFacts {
    std::string address;
    std::string kind;      // gpu, accelerator, coprocessor, nic
    std::string class_id;  // four hex digits, e.g. "0302"
    std::string vendor_id, device_id;
    std::string name;  // hwloc's PCIVendor/PCIDevice, else its OS devices (eth0, card0), else ""
    PcieLinkFacts link;
    std::vector<unsigned> numa_nodes;  // NUMA nodes local to the device
    std::string cpuset;                // PUs local to the device
    std::string parent;                // nearest PCI bridge or switch port above it; "" on a host bridge
    std::string upstream;              // topmost PCI bridge above it (a root port); "" on a host bridge
};

// The link below a root port (or topmost bridge), which every device under it shares.
struct PciUpstreamLinkFacts {
    std::string address;  // the bridge's own address
    PcieLinkFacts link;
    std::vector<std::string> devices;  // addresses of the devices of interest below it
    // A device of interest sits right below the bridge, so this link is that device's own link
    // (already in its PciDeviceFacts); false above a switch or bridge.
    bool is_device_link = false;
};

struct PackageFacts {
    unsigned os_index = 0;
    std::string cpuset;
    std::string cpu_model;
};

struct NumaNodeFacts {
    unsigned os_index = 0;
    std::uint64_t memory_bytes = 0;
    std::string cpuset;
};

// Caches of one level and type with one size, and how many there are.
struct CacheLevelFacts {
    unsigned level = 0;
    std::string type;  // unified, data, instruction
    std::uint64_t size_bytes = 0;
    unsigned count = 0;
};

struct TopologyFacts {
    std::vector<PackageFacts> packages;
    std::vector<NumaNodeFacts> numa_nodes;
    std::vector<CacheLevelFacts> caches;
    unsigned cores = 0;
    unsigned pus = 0;
    std::string allowed_pus;  // PUs the OS lets processes use (cgroups, isolcpus)
    bool has_pci = false;     // the topology holds PCI objects at all
    std::vector<PciDeviceFacts> pci_devices;
    std::vector<PciUpstreamLinkFacts> upstream_links;
};

// Where the process runs, relative to the device's CPUs.
struct ProcessBindingFacts {
    // inside: every allowed PU is local to the device; outside: none is; overlapping: some are;
    // unbound: the process may run on every PU of the machine (and not all are local); unknown.
    std::string relation = "unknown";
    std::string cpuset;                // PUs the process may run on; "" unknown
    std::vector<unsigned> numa_nodes;  // NUMA nodes of those PUs
    std::string memory_policy;         // default, bind, interleave, nexttouch, mixed; "" unknown
    std::vector<unsigned> memory_nodes;
    std::string note;  // why something is unknown
};

struct DeviceLocalityFacts {
    // pci: found by address; cpu_device: a CPU device, located where the process may run;
    // no_pci_address: the driver gave no address, so the device cannot be located;
    // not_found: the address is not in the topology; no_pci_information: the topology has no PCI objects.
    std::string match;
    std::string note;  // the match in words
    std::string device_type;
    std::string address;
    std::optional<PciDeviceFacts> pci;
    std::vector<unsigned> numa_nodes;  // local to the device
    std::string cpuset;                // PUs local to the device
    std::string cores;                 // cpu_device: logical indexes of the cores it spans
    ProcessBindingFacts binding;
};

nlohmann::json to_json(const TopologyFacts& facts);
nlohmann::json to_json(const DeviceLocalityFacts& facts);
nlohmann::json to_json(const PcieLinkFacts& link);

// Readers for saved reports: nullopt when the JSON is not in this shape (rules never throw).
std::optional<TopologyFacts> topology_facts_from_json(const nlohmann::json& j);
std::optional<DeviceLocalityFacts> device_locality_from_json(const nlohmann::json& j);

// The topology probes write their facts with one call: topology.host under "summary",
// topology.device under "locality".
void record_topology_facts(ProbeResult& out, const TopologyFacts& facts);
void record_device_locality(ProbeResult& out, const DeviceLocalityFacts& facts);

// Rules and renderers read them back with one call: nullopt when the probe did not run, did not
// end ok, or left no readable facts.
std::optional<TopologyFacts> topology_facts_of(const ProbeResult& result);
std::optional<TopologyFacts> topology_facts_of(const RunReport& report);
std::optional<DeviceLocalityFacts> device_locality_of(const RunReport& report);

// "0,2-3" for {0, 2, 3}: the form numactl takes.
std::string index_list(const std::vector<unsigned>& indexes);

}  // namespace clprobe
