#pragma once
// What the process's cgroups allow it: a CPU quota, a cpuset, a memory limit. Limits may be set on
// any ancestor of the process's cgroup (a pod, a systemd slice), so each is the tightest one found
// from the process's folder up to the hierarchy's root, and the report names the file that sets
// it: that file is the knob to turn.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "system/cgroup_parse.hpp"
#include "system/system_files.hpp"

namespace clprobe {

struct CgroupLimits {
    // Where each controller's files are; nullopt when that controller is not mounted (visible).
    std::optional<CgroupLocation> cpu, cpuset, memory;

    std::optional<CpuBandwidth> cpu_quota;  // the tightest quota (fewest CPUs); nullopt: none
    std::string cpu_quota_file;             // cpu.max or cpu.cfs_quota_us that sets it

    std::optional<std::vector<int>> cpuset_cpus;  // effective cpuset; nullopt when unknown
    std::string cpuset_file;                      // the cpuset.cpus that imposes it (topmost with that set)

    std::optional<std::uint64_t> memory_limit_bytes;  // the tightest limit; nullopt: none
    std::string memory_limit_file;
    // Memory charged to the limiting cgroup less its inactive file cache (reclaimable at once):
    // the "working set" container tools report; nullopt when unknown.
    std::optional<std::uint64_t> memory_working_set_bytes;
};

CgroupLimits read_cgroup_limits(const SystemFiles& files);

}  // namespace clprobe
