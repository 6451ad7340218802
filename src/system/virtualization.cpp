#include "system/virtualization.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "core/text.hpp"
#include "system/cgroup_parse.hpp"

namespace clprobe {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

bool contains(const std::string& haystack, std::string_view needle) {
    return haystack.find(needle) != std::string::npos;
}

// DMI vendor and product strings of the common hypervisors and clouds.
std::string hypervisor_from_dmi(const std::string& vendor, const std::string& product) {
    const std::string v = lower(vendor), p = lower(product);
    if (contains(v, "qemu") || contains(p, "kvm") || contains(p, "qemu")) return "KVM";
    if (contains(v, "vmware")) return "VMware";
    if (contains(v, "innotek") || contains(p, "virtualbox")) return "VirtualBox";
    if (contains(v, "xen") || contains(p, "hvm domu")) return "Xen";
    if (contains(v, "microsoft") && contains(p, "virtual machine")) return "Hyper-V";
    if (contains(v, "amazon ec2") || contains(p, "amazon ec2")) return "Amazon EC2";
    if (contains(v, "google") && contains(p, "compute engine")) return "Google Compute Engine";
    if (contains(v, "parallels")) return "Parallels";
    if (contains(p, "openstack")) return "OpenStack";
    return {};
}

// A container runtime named by a cgroup path.
std::string runtime_from_cgroup_path(const std::string& path) {
    if (contains(path, "kubepods")) return "kubernetes";
    if (contains(path, "libpod")) return "podman";
    if (contains(path, "docker")) return "docker";
    if (contains(path, "containerd") || contains(path, "cri-containerd")) return "containerd";
    if (contains(path, "/lxc") || contains(path, "lxc.payload")) return "lxc";
    return {};
}

}  // namespace

std::string hypervisor_name_from_signature(const std::string& signature) {
    static const std::pair<const char*, const char*> names[] = {
        {"KVMKVMKVM", "KVM"},      {"Microsoft Hv", "Hyper-V"},    {"VMwareVMware", "VMware"},
        {"XenVMMXenVMM", "Xen"},   {"TCGTCGTCGTCG", "QEMU (TCG)"}, {"VBoxVBoxVBox", "VirtualBox"},
        {"bhyve bhyve ", "bhyve"}, {" lrpepyh  vr", "Parallels"},  {"ACRNACRNACRN", "ACRN"},
    };
    for (const auto& [sig, name] : names)
        if (signature == sig) return name;
    return signature;
}

std::string cpuid_hypervisor_signature() {
#if defined(__x86_64__) || defined(__i386__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    // Leaf 1, ECX bit 31: a hypervisor is present; only then does leaf 0x40000000 mean anything.
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 31))) return {};
    __cpuid(0x40000000, a, b, c, d);
    char sig[13] = {};
    std::memcpy(sig + 0, &b, 4);
    std::memcpy(sig + 4, &c, 4);
    std::memcpy(sig + 8, &d, 4);
    std::string s(sig);
    // Signatures are padded with NULs ("KVMKVMKVM\0\0\0"); keep the printable part.
    s.erase(std::find_if(s.begin(), s.end(), [](char ch) { return ch < 0x20 || ch > 0x7e; }), s.end());
    return s;
#else
    return {};
#endif
}

Virtualization detect_virtualization(const SystemFiles& files, const VirtualizationHints& hints) {
    Virtualization v;
    if (hints.cpuinfo_hypervisor_flag) v.hypervisor_evidence.push_back("cpuinfo flag 'hypervisor'");
    if (!hints.cpuid_vendor.empty()) {
        v.hypervisor_evidence.push_back("CPUID hypervisor signature '" + hints.cpuid_vendor + "'");
        v.hypervisor_vendor = hypervisor_name_from_signature(hints.cpuid_vendor);
    }
    if (const auto t = files.read("/sys/hypervisor/type"); t && !text::trim(*t).empty()) {
        const std::string type(text::trim(*t));
        v.hypervisor_evidence.push_back("/sys/hypervisor/type: " + type);
        if (v.hypervisor_vendor.empty()) v.hypervisor_vendor = type == "xen" ? "Xen" : type;
    }
    const auto vendor = files.read("/sys/class/dmi/id/sys_vendor");
    const auto product = files.read("/sys/class/dmi/id/product_name");
    if (vendor || product) {
        const std::string ven(vendor ? text::trim(*vendor) : ""), prod(product ? text::trim(*product) : "");
        const std::string name = hypervisor_from_dmi(ven, prod);
        if (!name.empty()) {
            v.hypervisor_evidence.push_back("DMI: " + ven + " / " + prod);
            if (v.hypervisor_vendor.empty()) v.hypervisor_vendor = name;
        }
    }
    v.hypervisor = !v.hypervisor_evidence.empty();

    if (files.exists("/.dockerenv")) {
        v.container_evidence.push_back("/.dockerenv exists");
        v.container_runtime = "docker";
    }
    if (files.exists("/run/.containerenv")) {
        v.container_evidence.push_back("/run/.containerenv exists");
        v.container_runtime = "podman";
    }
    if (!hints.container_env.empty()) {
        v.container_evidence.push_back("container=" + hints.container_env + " in the environment");
        if (v.container_runtime.empty()) v.container_runtime = hints.container_env;
    }
    if (const auto t = files.read("/proc/self/cgroup")) {
        for (const auto& g : parse_proc_cgroup(*t)) {
            const std::string runtime = runtime_from_cgroup_path(g.path);
            if (runtime.empty()) continue;
            v.container_evidence.push_back("cgroup path " + g.path);
            // The orchestrator (kubernetes) says more than the runtime file it leaves behind.
            if (v.container_runtime.empty() || runtime == "kubernetes") v.container_runtime = runtime;
            break;
        }
    }
    v.container = !v.container_evidence.empty();
    return v;
}

}  // namespace clprobe
