#pragma once
// Which ISA extensions the CPU offers, from /proc/cpuinfo's flags: they decide which code paths an
// OpenCL CPU driver's compiler (and host BLAS) can use, so two machines with one model name but
// different flags (a VM that hides AVX-512) measure differently.
#include <string>
#include <string_view>
#include <vector>

namespace clprobe {

struct IsaFeature {
    std::string name;  // x86: the cpuinfo flag (avx2, amx_tile); ARM: neon, sve, ...
    bool present = false;
};

// The extensions that matter on `machine` (uname's machine: x86_64, aarch64, armv7l), each with
// whether `flags` has it; empty for other architectures.
std::vector<IsaFeature> isa_features(const std::vector<std::string>& flags, std::string_view machine);

// cpuinfo's "hypervisor" flag: x86 CPUs set it when running under one.
bool has_hypervisor_flag(const std::vector<std::string>& flags);

}  // namespace clprobe
