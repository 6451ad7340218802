#pragma once
// Parsers for the files that say which cgroup the process is in and what it may use: pure
// functions over text, for cgroup v1 (one hierarchy per controller) and v2 (one unified tree).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace clprobe {

// One line of /proc/self/cgroup: "4:memory:/path" (v1) or "0::/path" (v2: no controllers).
struct CgroupMembership {
    int hierarchy = 0;
    std::vector<std::string> controllers;  // "cpu", "cpuacct", "name=systemd"...; empty for v2
    std::string path;
};
std::vector<CgroupMembership> parse_proc_cgroup(std::string_view text);

// The fields of a /proc/self/mountinfo line that locate a cgroup hierarchy.
struct MountEntry {
    std::string root;                        // the part of the mounted filesystem visible at mount_point
    std::string mount_point;                 // octal escapes (\040 for a space) decoded
    std::string fs_type;                     // "cgroup" (v1) or "cgroup2"
    std::vector<std::string> super_options;  // v1: the controllers ("rw", "cpu", "cpuacct")
};
std::vector<MountEntry> parse_mountinfo(std::string_view text);

// Where one controller's files are for this process.
struct CgroupLocation {
    int version = 0;          // 1 or 2
    std::string path;         // as in /proc/self/cgroup, e.g. "/docker/3f2a"
    std::string mount_point;  // e.g. "/sys/fs/cgroup/cpu,cpuacct" or "/sys/fs/cgroup"
    std::string directory;    // the process's cgroup folder under mount_point
};
// A v1 hierarchy that holds `controller` wins (in hybrid set-ups the v1 controller is the one in
// force); else the v2 tree. nullopt when neither is mounted where this process can see it.
std::optional<CgroupLocation> locate_cgroup(std::string_view controller, const std::vector<CgroupMembership>& groups,
                                            const std::vector<MountEntry>& mounts);

// Limits are set at any level: the folders from `directory` up to the mount point, leaf first.
std::vector<std::string> cgroup_ancestors(const CgroupLocation& where);

// CPU bandwidth: `quota_us` of CPU time per `period_us`; no quota means unlimited.
struct CpuBandwidth {
    std::optional<std::uint64_t> quota_us;
    std::uint64_t period_us = 100000;
    // The quota in CPUs (1.5 = one and a half CPUs' worth of time); nullopt when unlimited.
    std::optional<double> cpus() const;
};
// v2 cpu.max: "max 100000" or "200000 100000". nullopt when malformed.
std::optional<CpuBandwidth> parse_cpu_max(std::string_view text);
// v1 cpu.cfs_quota_us ("-1" = unlimited) and cpu.cfs_period_us.
std::optional<CpuBandwidth> parse_cfs_quota(std::string_view quota, std::string_view period);

// A memory limit in bytes, or none. v2 writes "max"; v1 writes a huge page-rounded number
// (9223372036854771712) for "unlimited".
struct MemoryLimit {
    std::optional<std::uint64_t> bytes;  // nullopt: unlimited
};
std::optional<MemoryLimit> parse_memory_limit(std::string_view text);

}  // namespace clprobe
