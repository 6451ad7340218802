#pragma once
// Whether the process runs under a hypervisor or inside a container, and what says so. Both
// change what the CPU and memory numbers mean (vCPUs shared with other guests, limits set by the
// container runtime), so the report keeps the evidence, not just a yes/no.
#include <string>
#include <vector>

#include "system/system_files.hpp"

namespace clprobe {

struct Virtualization {
    bool hypervisor = false;
    std::string hypervisor_vendor;                 // "KVM", "Xen", "VMware"...; "" when unknown
    std::vector<std::string> hypervisor_evidence;  // e.g. "cpuinfo flag 'hypervisor'", "/sys/hypervisor/type: xen"
    bool container = false;
    std::string container_runtime;  // "docker", "podman", "kubernetes", "lxc"...; "" when unknown
    std::vector<std::string> container_evidence;
};

// What is outside the files: the CPU's hypervisor vendor signature (CPUID leaf 0x40000000 on x86,
// "" elsewhere), whether cpuinfo has the hypervisor flag, and the `container` environment
// variable (set by systemd-nspawn, podman and LXC).
struct VirtualizationHints {
    std::string cpuid_vendor;
    bool cpuinfo_hypervisor_flag = false;
    std::string container_env;
};
Virtualization detect_virtualization(const SystemFiles& files, const VirtualizationHints& hints);

// CPUID's hypervisor vendor signature ("KVMKVMKVM", "Microsoft Hv"), "" when there is none or the
// CPU is not x86.
std::string cpuid_hypervisor_signature();

// A readable name for a CPUID signature ("KVMKVMKVM" -> "KVM"); the signature itself when unknown.
std::string hypervisor_name_from_signature(const std::string& signature);

}  // namespace clprobe
