#pragma once
// Where the OS lets this process run and allocate: its CPU binding (affinity mask, cgroup
// cpuset included) and the memory policy of the thread that runs the probes (numactl and
// hwloc-bind set it for the whole process).
#include <optional>
#include <string>

#include "topology/bitmap.hpp"
#include "topology/hwloc_topology.hpp"

namespace clprobe {

struct ProcessBinding {
    std::optional<Bitmap> cpus;          // PUs the process may run on; nullopt when unknown
    std::string memory_policy;           // default, firsttouch, bind, interleave, nexttouch, mixed; "" unknown
    std::optional<Bitmap> memory_nodes;  // NUMA node OS indexes the policy names
    std::string note;                    // why a part is unknown
};

// Asks the OS through hwloc; needs a live topology (an XML one gets everything unknown).
ProcessBinding read_process_binding(const Topology& topology);

}  // namespace clprobe
