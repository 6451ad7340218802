// system.limits: what this process may use — its CPU affinity, its cgroups' CPU quota, cpuset and
// memory limit — and how that compares with the OpenCL device's compute units when the device is
// the CPU itself: the compute units it reports, and how many work-groups it was measured to run at
// once (a runtime can report every CPU as a compute unit and still run one worker thread).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <utility>

#include "cl/cl_error.hpp"
#include "cl/command_timing.hpp"
#include "cl/device_session.hpp"
#include "common/probe_support.hpp"
#include "core/system_facts.hpp"
#include "probe_factories.hpp"
#include "system/affinity.hpp"
#include "system/cgroup_limits.hpp"
#include "system/cpu_list.hpp"
#include "system/system_support.hpp"

namespace clprobe {

namespace {

// Settings that decide how many threads an OpenCL CPU runtime starts or where it places them, per
// runtime (reports/rules/system_rules.cpp names the runtime of each): PoCL (POCL_MAX_PTHREAD_COUNT
// sets its compute units; POCL_CPU_MAX_CU_COUNT is its newer name), Intel's CPU runtime
// (CL_CONFIG_CPU_TBB_NUM_WORKERS caps its TBB worker threads while the device still reports every
// CPU as a compute unit; the DPCPP_/SYCL_ variables are read by the same library) and the OpenMP
// variable some runtimes' thread pools honour.
constexpr const char* cpu_runtime_variables[] = {
    "POCL_MAX_PTHREAD_COUNT", "POCL_CPU_MAX_CU_COUNT", "POCL_AFFINITY",    "CL_CONFIG_CPU_TBB_NUM_WORKERS",
    "DPCPP_CPU_NUM_CUS",      "SYCL_CPU_NUM_CUS",      "DPCPP_CPU_PLACES", "SYCL_CPU_PLACES",
    "DPCPP_CPU_CU_AFFINITY",  "SYCL_CPU_CU_AFFINITY",  "OMP_NUM_THREADS"};

// Distinct physical cores among `cpus` (package and core id from sysfs); nullopt when the topology
// is not readable. SMT siblings share one core's FMA units, so a compute-bound kernel scales with
// cores, not with logical CPUs.
std::optional<std::size_t> distinct_cores(const SystemFiles& files, const std::vector<int>& cpus) {
    std::set<std::pair<std::string, std::string>> cores;
    for (int cpu : cpus) {
        const std::string dir = fmt::format("/sys/devices/system/cpu/cpu{}/topology/", cpu);
        const auto core = files.read(dir + "core_id");
        const auto package = files.read(dir + "physical_package_id");
        if (!core || !package) return std::nullopt;
        cores.insert({*package, *core});
    }
    return cores.size();
}

// peak/compute.cl's recurrence (the compute probe's checks): a <- a*b + c from a0, n steps.
constexpr double coef_b = 0.875, coef_c = 0.125;
double chain_value(double a0, std::uint64_t n) {
    const double bn = std::pow(coef_b, static_cast<double>(n));
    return bn * a0 + coef_c * (1.0 - bn) / (1.0 - coef_b);
}
double start_value(std::uint64_t item, int chain) {
    return static_cast<double>((item * 8 + static_cast<std::uint64_t>(chain)) & 1023) / 1024.0;
}

// How many work-groups the CPU device runs at once, measured: one work-group of the fp32 FMA
// kernel (fma_v16_c8, compute-bound, every item's work depends on its id) against `groups` of
// them, each group the same work. On `groups` worker threads both take the same time; on one
// thread the many take `groups` times as long. Each sample is groups x t(1) / t(groups) of one
// adjacent pair, so a burst of interference lowers one sample, not all of them.
Measurement measure_parallelism(DeviceSession& s, std::size_t groups, double target_seconds, int samples) {
    cl::CommandQueue& q = s.queue();
    const DeviceInfo& info = s.info();
    const cl::Program& program = s.kernels().program("peak/compute.cl", "-D REAL=float").program;
    cl::Kernel k(program, "fma_v16_c8");
    const std::size_t local = std::min<std::uint64_t>(64, std::max<std::uint64_t>(1, info.max_work_group_size));
    cl::Buffer result = make_buffer(s.context(), CL_MEM_WRITE_ONLY, groups * local * 16 * sizeof(cl_float));
    k.setArg(0, result);
    k.setArg(1, static_cast<cl_float>(coef_b));
    k.setArg(2, static_cast<cl_float>(coef_c));
    const auto run = [&](std::size_t n_groups, cl_uint trips) {
        k.setArg(3, trips);
        return time_commands(
            q, s.profiling(), 1,
            [&] {
                cl::Event e;
                q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(n_groups * local), cl::NDRange(local), nullptr,
                                       &e);
                return e;
            },
            "fma_v16_c8 parallelism");
    };
    // One group long enough to dwarf a launch: double the trips until it lasts target_seconds.
    cl_uint trips = 256;
    run(1, trips);  // warm-up: the first launch pays for compilation and page faults
    for (double t = run(1, trips).seconds; t < target_seconds && trips < (1u << 30); t = run(1, trips).seconds)
        trips = static_cast<cl_uint>(
            std::min<double>(1u << 30, trips * std::clamp(target_seconds / std::max(t, 1e-6), 2.0, 16.0)));
    run(groups, trips);  // warm-up of the wide launch
    std::vector<double> ratios;
    TimerKind timer = TimerKind::host_steady_clock;
    for (int i = 0; i < samples; ++i) {
        const TimedBatch one = run(1, trips), many = run(groups, trips);
        timer = many.timer;
        if (one.seconds > 0 && many.seconds > 0)
            ratios.push_back(static_cast<double>(groups) * one.seconds / many.seconds);
    }
    if (ratios.empty()) throw ProbeUnsupported("the parallelism kernel reported no time");
    // The last wide launch's output: every group's items, checked against the closed form.
    std::vector<cl_float> out(groups * local * 16);
    q.enqueueReadBuffer(result, CL_TRUE, 0, out.size() * sizeof(cl_float), out.data());
    for (std::size_t check = 0; check < 16; ++check) {
        const std::size_t item = check * (groups * local - 1) / 15;
        double expected = 0;
        for (int j = 0; j < 8; ++j)
            expected += chain_value(start_value(item, j), trips);
        for (std::size_t lane = 0; lane < 16; ++lane)
            if (!(std::fabs(out[item * 16 + lane] - expected) <= 1e-5 * std::fabs(expected)))
                throw VerificationError(fmt::format("fma_v16_c8 (parallelism): item {} lane {} is {} (expected {})",
                                                    item, lane, out[item * 16 + lane], expected));
    }
    Measurement m = make_measurement("system.opencl_cpu.parallelism", "work-groups", {}, ratios, timer);
    m.note = fmt::format(
        "{0} x t(1 work-group) / t({0} work-groups) of fma_v16_c8 ({1} items per group, {2} loop trips, {3:.0f} ms "
        "per group): how many work-groups the device ran at once, at most {0}",
        groups, local, trips, 1e3 * target_seconds);
    return m;
}

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

        const auto cores = distinct_cores(files, affinity);
        if (cores) out.measurements.push_back(fact("system.cpus.allowed_cores", "cores", static_cast<double>(*cores)));
        compare_device(ctx, affinity.size(), usable, f);
        for (const char* name : cpu_runtime_variables)
            if (const char* v = std::getenv(name)) f.opencl_cpu_environment[name] = v;
        if (f.opencl_cpu_device) measure_device(ctx, usable, out);
        record_limits_facts(out, f);
    }

  private:
    // The CPU device's measured parallelism over as many work-groups as it could run at once: the
    // larger of its compute units and the usable CPUs.
    static void measure_device(ProbeContext& ctx, double usable, ProbeResult& out) {
        const DeviceInfo& d = ctx.device->info();
        const double whole = std::max(1.0, std::floor(usable + 1e-9));
        const std::size_t groups = static_cast<std::size_t>(std::max<double>(d.compute_units, whole));
        if (groups < 2) {
            out.attributes["opencl_cpu_parallelism"] = "not measured: one CPU, nothing to run in parallel";
            return;
        }
        const bool quick = ctx.options.mode == RunMode::quick;
        try {
            out.measurements.push_back(measure_parallelism(*ctx.device, groups, quick ? 0.01 : 0.02, quick ? 5 : 7));
        } catch (const VerificationError&) {
            throw;
        } catch (const std::exception& e) {
            // The limits are facts whatever happens to the kernel: record why it was not measured.
            out.attributes["opencl_cpu_parallelism"] = std::string("not measured: ") + e.what();
        }
    }

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
