#include "topology/process_binding.hpp"

#include <cerrno>
#include <cstring>

namespace clprobe {

namespace {

std::string policy_name(hwloc_membind_policy_t policy) {
    switch (policy) {
        case HWLOC_MEMBIND_DEFAULT:
            return "default";
        case HWLOC_MEMBIND_FIRSTTOUCH:
            return "firsttouch";
        case HWLOC_MEMBIND_BIND:
            return "bind";
        case HWLOC_MEMBIND_INTERLEAVE:
            return "interleave";
        case HWLOC_MEMBIND_NEXTTOUCH:
            return "nexttouch";
        case HWLOC_MEMBIND_MIXED:
            return "mixed";
        default:
            return "other";
    }
}

void read_cpus(const Topology& t, ProcessBinding& out) {
    Bitmap cpus;
    // The process's binding is the union over its threads; where only the calling thread's can
    // be read, that one (the probes run on it).
    if (hwloc_get_cpubind(t.get(), cpus.get(), HWLOC_CPUBIND_PROCESS) != 0 &&
        hwloc_get_cpubind(t.get(), cpus.get(), HWLOC_CPUBIND_THREAD) != 0) {
        out.note = std::string("the CPU binding could not be read: ") + std::strerror(errno);
        return;
    }
    // Keep to PUs the machine has (an unrestricted mask may run past them).
    out.cpus = cpus & Bitmap(hwloc_topology_get_complete_cpuset(t.get()));
    if (out.cpus->empty()) {
        out.cpus.reset();
        out.note = "the CPU binding names no PU of this machine";
    }
}

void read_memory(const Topology& t, ProcessBinding& out) {
    Bitmap nodes;
    hwloc_membind_policy_t policy = HWLOC_MEMBIND_DEFAULT;
    if (hwloc_get_membind(t.get(), nodes.get(), &policy, HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET) != 0) {
        const std::string why = std::string("the memory policy could not be read: ") + std::strerror(errno);
        out.note += (out.note.empty() ? "" : "; ") + why;
        return;
    }
    out.memory_policy = policy_name(policy);
    out.memory_nodes = nodes & Bitmap(hwloc_topology_get_complete_nodeset(t.get()));
}

}  // namespace

ProcessBinding read_process_binding(const Topology& t) {
    ProcessBinding out;
    if (!t.is_live()) {
        out.note = "a saved topology says nothing of the process that will use the device";
        return out;
    }
    read_cpus(t, out);
    read_memory(t, out);
    return out;
}

}  // namespace clprobe
