// system.limits: what this process may use — its CPU affinity, its cgroups' CPU quota, cpuset and
// memory limit — and how that compares with the OpenCL device's compute units when the device is
// the CPU itself.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "cl/device_session.hpp"
#include "core/system_facts.hpp"
#include "probe_factories.hpp"
#include "system/affinity.hpp"
#include "system/cgroup_limits.hpp"
#include "system/cpu_list.hpp"
#include "system/system_support.hpp"

namespace clprobe {

namespace {

// Settings that decide how many threads an OpenCL CPU runtime starts.
constexpr const char* cpu_runtime_variables[] = {"POCL_MAX_PTHREAD_COUNT", "POCL_AFFINITY", "DPCPP_CPU_NUM_CUS"};

std::optional<CgroupPlaceFacts> place(const std::optional<CgroupLocation>& where) {
    if (!where) return std::nullopt;
    return CgroupPlaceFacts{where->version, where->path, where->directory};
}

// Who narrows the CPUs: the cgroup's cpuset, the affinity mask inside it (taskset, numactl, a
// parent's sched_setaffinity), or both.
std::string restricted_by(const std::vector<int>& online, const std::optional<std::vector<int>>& cpuset,
                          const std::vector<int>& affinity) {
    const bool by_cpuset = cpuset && cpuset->size() < online.size();
    const bool by_affinity = affinity.size() < (cpuset ? cpuset->size() : online.size());
    if (by_cpuset && by_affinity) return "cpuset,affinity";
    if (by_cpuset) return "cpuset";
    if (by_affinity) return "affinity";
    return "none";
}

class LimitsProbe final : public Probe {
  public:
    std::string id() const override { return "system.limits"; }
    std::string layer() const override { return "system"; }
    std::string title() const override { return "CPU affinity and cgroup limits of this process"; }
    bool needs_device() const override { return false; }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        const SystemFiles files;
        const std::vector<int> affinity = process_affinity();
        if (affinity.empty()) throw ProbeUnsupported("sched_getaffinity did not report the process's CPUs");
        std::vector<int> online = affinity;
        if (const auto t = files.read("/sys/devices/system/cpu/online"))
            if (const auto list = parse_cpu_list(*t); list && !list->empty()) online = *list;
        const CgroupLimits limits = read_cgroup_limits(files);

        LimitsFacts f;
        f.online_cpus = format_cpu_list(online);
        f.allowed_cpus = format_cpu_list(affinity);
        if (limits.cpuset_cpus) f.cpuset_cpus = format_cpu_list(*limits.cpuset_cpus);
        f.cpuset_file = limits.cpuset_file;
        f.restricted_by = restricted_by(online, limits.cpuset_cpus, affinity);
        f.cgroup_cpu = place(limits.cpu);
        f.cgroup_cpuset = place(limits.cpuset);
        f.cgroup_memory = place(limits.memory);
        out.measurements.push_back(fact("system.cpus.allowed", "CPUs", static_cast<double>(affinity.size())));

        double usable = static_cast<double>(affinity.size());
        f.cpu_quota.word = limits.cpu ? "none" : unknown;
        if (limits.cpu_quota && limits.cpu_quota->cpus()) {
            const double cpus = *limits.cpu_quota->cpus();
            f.cpu_quota.value =
                CpuQuotaFacts{cpus, *limits.cpu_quota->quota_us, limits.cpu_quota->period_us, limits.cpu_quota_file};
            out.measurements.push_back(fact("system.cpu.quota", "CPUs", cpus));
            usable = std::min(usable, cpus);
        }
        f.usable_cpus = usable;

        f.memory_limit.word = limits.memory ? "none" : unknown;
        if (limits.memory_limit_bytes) {
            f.memory_limit.value =
                MemoryLimitFacts{*limits.memory_limit_bytes, limits.memory_limit_file, limits.memory_working_set_bytes};
            out.measurements.push_back(fact("system.memory.limit", "GiB", to_gib(*limits.memory_limit_bytes)));
            if (limits.memory_working_set_bytes)
                out.measurements.push_back(
                    fact("system.memory.limit.used", "GiB", to_gib(*limits.memory_working_set_bytes)));
        }

        compare_device(ctx, affinity.size(), usable, f);
        for (const char* name : cpu_runtime_variables)
            if (const char* v = std::getenv(name)) f.opencl_cpu_environment[name] = v;
        record_limits_facts(out, f);
    }

  private:
    static void compare_device(const ProbeContext& ctx, std::size_t allowed, double usable, LimitsFacts& f) {
        if (!ctx.device) {
            f.opencl_cpu_device_note = "no device open";
            return;
        }
        const DeviceInfo& d = ctx.device->info();
        if (d.type != "cpu") {
            f.opencl_cpu_device_note =
                fmt::format("not a CPU device ({}): its compute units are not host CPUs", d.type);
            return;
        }
        // A quota of 1.5 CPUs lets one more thread run part of the time: count whole CPUs, at least 1.
        const double whole = std::max(1.0, std::floor(usable + 1e-9));
        const char* verdict = d.compute_units < whole   ? "fewer compute units than usable CPUs"
                              : d.compute_units > whole ? "more compute units than usable CPUs: threads share CPUs"
                                                        : "one compute unit per usable CPU";
        f.opencl_cpu_device = CpuDeviceShareFacts{d.compute_units, allowed, whole, verdict};
    }
};

}  // namespace

std::unique_ptr<Probe> make_limits_probe() {
    return std::make_unique<LimitsProbe>();
}

}  // namespace clprobe
