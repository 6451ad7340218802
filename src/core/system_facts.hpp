#pragma once
// What the system layer's probes found out, as plain data: system.host (the clock policy, a
// hypervisor, a container), system.limits (affinity, cgroup limits, the CPU runtime's settings)
// and system.activity (who else used the CPUs during the run). Each probe records its struct with
// one call; the system rules and the fleet's node environment read it back with one call. Like
// TopologyFacts it lives in core, so saved reports are analysed without the machine.
//
// The attributes keep the names and shapes of earlier reports: a fact the host did not expose is
// written as "unknown" and read back as empty. Readers take each field on its own, so a damaged
// field of a hand-edited report reads as unknown while the rest still counts; they never throw.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace clprobe {

struct ProbeResult;
struct RunReport;

// ---------------------------------------------------------------- system.host

struct CpuFrequencyFacts {
    bool cpufreq = false;                // the kernel exposes cpufreq at all (most VMs do not)
    std::string driver;                  // scaling_driver; "" unknown
    std::vector<std::string> governors;  // distinct scaling_governor values; empty when unknown
    struct Range {
        double min = 0, mean = 0, max = 0;
    };
    std::optional<Range> current_mhz;  // scaling_cur_freq over the online CPUs
    std::optional<double> policy_min_mhz, policy_max_mhz, hardware_min_mhz, hardware_max_mhz, base_mhz;
    std::optional<double> cpuinfo_mhz;  // in a VM the nominal clock the hypervisor advertises, not a measurement
};

// A hypervisor or a container: whether one was detected, its name (vendor or runtime; "" unknown)
// and what gave it away.
struct VirtualizationFacts {
    bool detected = false;
    std::string name;
    std::vector<std::string> evidence;
};

// The parts of system.host that rules read; the descriptive rest (OS, CPU model, ISA, memory,
// load, timer) stays free-form attributes that renderers show as they are.
struct HostFacts {
    CpuFrequencyFacts frequency;
    VirtualizationFacts hypervisor;  // attribute "hypervisor", name under "vendor"
    VirtualizationFacts container;   // attribute "container", name under "runtime"
};

// ---------------------------------------------------------------- system.limits

struct CgroupPlaceFacts {
    int version = 0;        // 1 or 2
    std::string path;       // as in /proc/self/cgroup
    std::string directory;  // the process's cgroup folder
};

struct CpuQuotaFacts {
    double cpus = 0;  // the quota in CPUs (1.5 = one and a half CPUs' worth of time)
    std::uint64_t quota_us = 0, period_us = 100000;
    std::string file;  // cpu.max or cpu.cfs_quota_us that sets it: the knob to turn
};

struct MemoryLimitFacts {
    std::uint64_t bytes = 0;
    std::string file;  // memory.max or memory.limit_in_bytes that sets it
    std::optional<std::uint64_t> working_set_bytes;
};

// A cgroup limit: its value when one is set, else the word recorded instead ("none": the cgroup
// sets none; "unknown": the controller is not visible). Both empty: not recorded, or unreadable.
// A value whose amount reads 0 was damaged: no cgroup sets a limit of nothing.
template <typename T>
struct CgroupLimit {
    std::optional<T> value;
    std::string word;
};

// How the OpenCL CPU device's compute units compare with the CPUs this process may use.
struct CpuDeviceShareFacts {
    unsigned compute_units = 0;
    std::uint64_t allowed_cpus = 0;
    double usable_cpus = 0;  // whole CPUs, at least 1
    std::string comparison;  // in words
};

// A CPU device measured to run fewer work-groups at once than it could by more than this factor
// (4 of 5 usable cores and less) runs on fewer threads than it reports: the scaling of a
// compute-bound kernel over cores stays well above that, even with a busy neighbour now and then.
// system.cpu_device_underused judges by it, and system.limits samples until its figures clear it.
inline constexpr double parallelism_margin = 1.25;

struct LimitsFacts {
    std::string online_cpus, allowed_cpus;  // CPU lists ("0-15,32-47")
    std::string cpuset_cpus, cpuset_file;   // the cgroup's effective cpuset and the file imposing it; "" unknown
    std::string restricted_by;              // cpuset, affinity, "cpuset,affinity" or none
    std::optional<CgroupPlaceFacts> cgroup_cpu, cgroup_cpuset, cgroup_memory;  // nullopt: not visible
    CgroupLimit<CpuQuotaFacts> cpu_quota;
    std::optional<double> usable_cpus;  // allowed CPUs, or the quota when it is lower
    CgroupLimit<MemoryLimitFacts> memory_limit;
    std::optional<CpuDeviceShareFacts> opencl_cpu_device;
    std::string opencl_cpu_device_note;  // why there is no comparison (no device open, not a CPU device)
    // Settings that decide how many threads an OpenCL CPU runtime starts, as set in the environment.
    std::map<std::string, std::string> opencl_cpu_environment;
};

// ---------------------------------------------------------------- system.activity

struct ConsumerFacts {
    std::string name;  // "" unknown
    long long pid = 0;
    double cpu_seconds = 0;
    double cpu_percent = 0;      // of one CPU, over the window
    bool kernel_thread = false;  // cannot be stopped or moved
};

struct ActivityFacts {
    std::string monitor;  // who sampled: the run-wide monitor, or the probe itself
    long long period_ms = 0;
    double window_seconds = 0;  // 0 unknown
    int samples = 0;
    int online_cpus = 0;
    std::string counted_cpus;  // the CPUs the times are measured on (this process's)
    struct CpuSeconds {
        double capacity = 0, busy = 0, self = 0, others = 0, steal = 0;
    } cpu_seconds;
    struct SwapPages {
        std::uint64_t in = 0, out = 0;
    };
    std::optional<SwapPages> swap_pages;
    std::vector<ConsumerFacts> top_consumers;  // entries without a pid or cpu_percent are left out
    std::string accounting;                    // how the percentages are computed, in words
};

// ---------------------------------------------------------------- writing and reading

inline constexpr const char* system_host_probe_id = "system.host";
inline constexpr const char* system_limits_probe_id = "system.limits";
inline constexpr const char* system_activity_probe_id = "system.activity";

void record_host_facts(ProbeResult& out, const HostFacts& facts);
void record_limits_facts(ProbeResult& out, const LimitsFacts& facts);
void record_activity_facts(ProbeResult& out, const ActivityFacts& facts);

// nullopt when the report has no result of that probe (whatever its status); otherwise what its
// attributes hold, unknown fields empty.
std::optional<HostFacts> host_facts_of(const RunReport& report);
std::optional<LimitsFacts> limits_facts_of(const RunReport& report);
std::optional<ActivityFacts> activity_facts_of(const RunReport& report);

}  // namespace clprobe
