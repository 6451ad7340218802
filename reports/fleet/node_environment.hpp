#pragma once
// What a node's report says about the circumstances of its numbers, as one typed record filled
// from a RunReport by one function: `fleet` compares each outlier's with the fleet's majority.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/report.hpp"

namespace clprobe {

struct NodeEnvironment {
    std::string tool_version;
    std::string device_name, device_type;
    std::string platform;        // platform name and version
    std::string driver_version;  // the device's driver version
    std::uint32_t compute_units = 0;
    std::uint32_t max_clock_mhz = 0;
    std::string pcie_link;     // the device link as trained, "PCIe gen4 x16"; "" unknown or no PCIe
    std::string numa_binding;  // where the process ran relative to the device: "inside, NUMA 0"
    std::string governor;      // CPU frequency governors, "performance" or "powersave,performance"
    std::string cpu_quota;     // cgroup CPU quota: "4 CPUs", "none"
    std::string memory_limit;  // cgroup memory limit: "16 GiB", "none"
    std::string kernel;        // OS kernel
    std::string mode;          // options.mode
    std::string layers;        // options.layers, comma-joined
    Provenance provenance;     // the build and runtime libraries; all "" for a report without provenance
};

NodeEnvironment node_environment_of(const RunReport& report);

// Every field as (stable id, value) in a fixed order; values "" mean unknown.
std::vector<std::pair<std::string_view, std::string>> environment_fields(const NodeEnvironment& env);

}  // namespace clprobe
