#include "topology/device_locality.hpp"

#include <fmt/core.h>

#include "topology/numa_locality.hpp"
#include "topology/pci_address.hpp"
#include "topology/pci_devices.hpp"

namespace clprobe {

namespace {

Bitmap machine_pus(const Topology& t) {
    return Bitmap(t.root()->cpuset);
}

// What is known of the process side; the relation to the device stays "unknown" until a caller
// that has located the device sets it.
ProcessBindingFacts binding_facts(const Topology& t, const ProcessBinding& b) {
    ProcessBindingFacts out;
    out.note = b.note;
    out.memory_policy = b.memory_policy;
    if (b.memory_nodes) out.memory_nodes = b.memory_nodes->indexes();
    if (!b.cpus) return out;
    out.cpuset = b.cpus->list();
    out.numa_nodes = numa_nodes_of(t, *b.cpus);
    return out;
}

// Logical indexes of the cores with a PU in `pus`.
std::string cores_of(const Topology& t, const Bitmap& pus) {
    Bitmap cores;
    for (hwloc_obj_t c = hwloc_get_next_obj_by_type(t.get(), HWLOC_OBJ_CORE, nullptr); c;
         c = hwloc_get_next_obj_by_type(t.get(), HWLOC_OBJ_CORE, c))
        if (hwloc_bitmap_intersects(c->cpuset, pus.get())) hwloc_bitmap_set(cores.get(), c->logical_index);
    return cores.list();
}

// A CPU device runs its work-items on the CPUs the process may use (PoCL, Intel's and AMD's CPU
// runtimes start one worker per such CPU), so that is its locality.
DeviceLocalityFacts locate_cpu_device(const Topology& t, const ProcessBinding& binding, DeviceLocalityFacts f) {
    const Bitmap allowed(hwloc_topology_get_allowed_cpuset(t.get()));
    Bitmap pus = binding.cpus ? *binding.cpus & allowed : allowed;
    if (pus.empty()) pus = allowed;
    f.match = "cpu_device";
    f.cpuset = pus.list();
    f.cores = cores_of(t, pus);
    f.numa_nodes = numa_nodes_of(t, pus);
    f.note = fmt::format(
        "a CPU device spans the CPUs the process may run on{}: PUs {}, cores {} (logical), NUMA "
        "node(s) {}",
        binding.cpus ? "" : " (here: every allowed CPU, the process binding being unknown)", f.cpuset, f.cores,
        index_list(f.numa_nodes));
    f.binding = binding_facts(t, binding);
    if (binding.cpus) f.binding.relation = "inside";  // by construction
    return f;
}

DeviceLocalityFacts locate_pci_device(const Topology& t, const PciAddress& address, const ProcessBinding& binding,
                                      DeviceLocalityFacts f) {
    f.address = address.text();
    f.binding = binding_facts(t, binding);
    if (!hwloc_get_next_pcidev(t.get(), nullptr)) {
        f.match = "no_pci_information";
        f.note = fmt::format("the topology holds no PCI information, so the device at {} cannot be located", f.address);
        return f;
    }
    hwloc_obj_t device = find_pci_device(t, address);
    if (!device) {
        f.match = "not_found";
        f.note = fmt::format("no PCI device at {} in the topology", f.address);
        return f;
    }
    const Locality local = locality_of(t, device);
    f.match = "pci";
    f.pci = pci_device_facts(t, device);
    f.numa_nodes = local.numa_nodes;
    f.cpuset = local.cpuset.list();
    if (binding.cpus) f.binding.relation = binding_relation(*binding.cpus, local.cpuset, machine_pus(t));
    f.note = fmt::format("PCI device {} is local to NUMA node(s) {} (PUs {})", f.address, index_list(f.numa_nodes),
                         f.cpuset);
    return f;
}

}  // namespace

std::string binding_relation(const Bitmap& binding, const Bitmap& device_pus, const Bitmap& machine_pus) {
    if (binding.empty()) return "unknown";
    if (device_pus.includes(binding)) return "inside";
    if (!binding.intersects(device_pus)) return "outside";
    if (binding.includes(machine_pus)) return "unbound";
    return "overlapping";
}

DeviceLocalityFacts locate_device(const Topology& t, const DeviceQuery& query, const ProcessBinding& binding) {
    DeviceLocalityFacts f;
    f.device_type = query.type;
    if (query.pci_address) {
        if (const auto address = parse_pci_address(*query.pci_address))
            return locate_pci_device(t, *address, binding, std::move(f));
        f.match = "not_found";
        f.address = *query.pci_address;
        f.note = fmt::format("'{}' is not a PCI address (dddd:bb:dd.f)", *query.pci_address);
        f.binding = binding_facts(t, binding);
        return f;
    }
    if (query.type == "cpu") return locate_cpu_device(t, binding, std::move(f));
    f.match = "no_pci_address";
    f.note =
        fmt::format("the driver exposes no PCI address for this {} device, so it cannot be matched to the topology",
                    query.type.empty() ? "unknown" : query.type);
    f.binding = binding_facts(t, binding);
    return f;
}

}  // namespace clprobe
