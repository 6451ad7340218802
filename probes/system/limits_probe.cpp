// system.limits: what this process may use — its CPU affinity, its cgroups' CPU quota, cpuset and
// memory limit — and how that compares with the OpenCL device's compute units when the device is
// the CPU itself.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "cl/device_session.hpp"
#include "system/affinity.hpp"
#include "system/cgroup_limits.hpp"
#include "system/cpu_list.hpp"
#include "system/system_probes.hpp"
#include "system/system_support.hpp"

namespace clprobe {

namespace {

// Settings that decide how many threads an OpenCL CPU runtime starts.
constexpr const char* cpu_runtime_variables[] = {"POCL_MAX_PTHREAD_COUNT", "POCL_AFFINITY", "DPCPP_CPU_NUM_CUS"};

nlohmann::json location(const std::optional<CgroupLocation>& where) {
    if (!where) return unknown;
    return {{"version", where->version}, {"path", where->path}, {"directory", where->directory}};
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

        out.attributes["online_cpus"] = format_cpu_list(online);
        out.attributes["allowed_cpus"] = format_cpu_list(affinity);
        out.attributes["cpuset_cpus"] =
            limits.cpuset_cpus ? nlohmann::json(format_cpu_list(*limits.cpuset_cpus)) : nlohmann::json(unknown);
        out.attributes["cpuset_file"] = or_unknown(limits.cpuset_file);
        out.attributes["restricted_by"] = restricted_by(online, limits.cpuset_cpus, affinity);
        out.attributes["cgroup"] = {
            {"cpu", location(limits.cpu)}, {"cpuset", location(limits.cpuset)}, {"memory", location(limits.memory)}};
        out.measurements.push_back(fact("system.cpus.allowed", "CPUs", static_cast<double>(affinity.size())));

        double usable = static_cast<double>(affinity.size());
        if (limits.cpu_quota && limits.cpu_quota->cpus()) {
            const double cpus = *limits.cpu_quota->cpus();
            out.attributes["cpu_quota"] = {{"cpus", cpus},
                                           {"quota_us", *limits.cpu_quota->quota_us},
                                           {"period_us", limits.cpu_quota->period_us},
                                           {"file", limits.cpu_quota_file}};
            out.measurements.push_back(fact("system.cpu.quota", "CPUs", cpus));
            usable = std::min(usable, cpus);
        } else {
            out.attributes["cpu_quota"] = limits.cpu ? "none" : unknown;
        }
        out.attributes["usable_cpus"] = usable;

        if (limits.memory_limit_bytes) {
            out.attributes["memory_limit"] = {{"bytes", *limits.memory_limit_bytes},
                                              {"file", limits.memory_limit_file},
                                              {"working_set_bytes", or_unknown(limits.memory_working_set_bytes)}};
            out.measurements.push_back(fact("system.memory.limit", "GiB", to_gib(*limits.memory_limit_bytes)));
            if (limits.memory_working_set_bytes)
                out.measurements.push_back(
                    fact("system.memory.limit.used", "GiB", to_gib(*limits.memory_working_set_bytes)));
        } else {
            out.attributes["memory_limit"] = limits.memory ? "none" : unknown;
        }

        record_device(ctx, affinity.size(), usable, out);
        nlohmann::json env = nlohmann::json::object();
        for (const char* name : cpu_runtime_variables)
            if (const char* v = std::getenv(name)) env[name] = v;
        out.attributes["opencl_cpu_environment"] = env;
    }

  private:
    static void record_device(const ProbeContext& ctx, std::size_t allowed, double usable, ProbeResult& out) {
        if (!ctx.device) {
            out.attributes["opencl_cpu_device"] = "no device open";
            return;
        }
        const DeviceInfo& d = ctx.device->info();
        if (d.type != "cpu") {
            out.attributes["opencl_cpu_device"] =
                fmt::format("not a CPU device ({}): its compute units are not host CPUs", d.type);
            return;
        }
        // A quota of 1.5 CPUs lets one more thread run part of the time: count whole CPUs, at least 1.
        const double whole = std::max(1.0, std::floor(usable + 1e-9));
        const char* verdict = d.compute_units < whole   ? "fewer compute units than usable CPUs"
                              : d.compute_units > whole ? "more compute units than usable CPUs: threads share CPUs"
                                                        : "one compute unit per usable CPU";
        out.attributes["opencl_cpu_device"] = {{"compute_units", d.compute_units},
                                               {"allowed_cpus", allowed},
                                               {"usable_cpus", whole},
                                               {"comparison", verdict}};
    }
};

}  // namespace

std::unique_ptr<Probe> make_limits_probe() {
    return std::make_unique<LimitsProbe>();
}

}  // namespace clprobe
