#pragma once
// What the kernel says about the CPUs: topology, clock frequency policy and the last-level cache.
// Read through SystemFiles, so unit tests can point it at a synthetic /sys.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "system/proc_parse.hpp"
#include "system/system_files.hpp"

namespace clprobe {

struct CpuTopology {
    std::vector<int> online;  // /sys/devices/system/cpu/online; empty when unknown
    int sockets = 0;          // physical packages among the online CPUs; 0 when unknown
    int cores = 0;            // physical cores among the online CPUs; 0 when unknown
    std::string smt_control;  // /sys/devices/system/cpu/smt/control: on, off, notsupported...; "" unknown
    std::optional<bool> smt_active;
    int threads_per_core() const { return cores > 0 ? static_cast<int>(online.size()) / cores : 0; }
};
// sysfs topology first (it exists on every architecture); /proc/cpuinfo's physical and core ids
// when it is missing.
CpuTopology read_cpu_topology(const SystemFiles& files, const CpuInfo& cpuinfo);

// cpufreq, in MHz. Everything is nullopt or empty when the kernel exposes no cpufreq (most VMs).
struct CpuFrequency {
    std::optional<double> current_min, current_mean, current_max;  // scaling_cur_freq over the CPUs
    std::optional<double> policy_min, policy_max;                  // scaling_min/max_freq: what the policy allows
    std::optional<double> hardware_min, hardware_max;              // cpuinfo_min/max_freq (max includes boost)
    std::optional<double> base;                                    // base_frequency, where the driver says
    std::vector<std::string> governors;                            // distinct scaling_governor values
    std::string driver;                                            // scaling_driver
    bool known() const { return hardware_max || policy_max || current_mean || !governors.empty(); }
};
CpuFrequency read_cpu_frequency(const SystemFiles& files, const std::vector<int>& cpus);

// Each CPU's current clock (scaling_cur_freq, MHz); CPUs without it are left out.
std::vector<double> read_current_mhz(const SystemFiles& files, const std::vector<int>& cpus);

// The last-level cache the given CPUs use: the highest cache level, counted once per instance
// (shared_cpu_list), as STREAM sizes its arrays against every cache in use.
struct LastLevelCache {
    int level = 0;
    std::uint64_t bytes_per_instance = 0;
    int instances = 0;
    std::uint64_t total_bytes = 0;
};
std::optional<LastLevelCache> read_last_level_cache(const SystemFiles& files, const std::vector<int>& cpus);

}  // namespace clprobe
