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
#include <vector>

#include "cl/cl_error.hpp"
#include "cl/command_timing.hpp"
#include "cl/device_session.hpp"
#include "common/probe_support.hpp"
#include "core/system_facts.hpp"
#include "probe_factories.hpp"
#include "system/affinity.hpp"
#include "system/cgroup_limits.hpp"
#include "system/cpu_list.hpp"
#include "system/host_fma_threads.hpp"
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

// The loop trips after which one work-group (or one host thread) lasts about `target_seconds`:
// doubling from 256, so the launch overhead is dwarfed.
template <class OneGroupSeconds>
cl_uint calibrated_trips(OneGroupSeconds one_group_seconds, double target_seconds) {
    cl_uint trips = 256;
    one_group_seconds(trips);  // warm-up: the first run pays for compilation and page faults
    for (double t = one_group_seconds(trips); t < target_seconds && trips < (1u << 30); t = one_group_seconds(trips))
        trips = static_cast<cl_uint>(
            std::min<double>(1u << 30, trips * std::clamp(target_seconds / std::max(t, 1e-6), 2.0, 16.0)));
    return trips;
}

// fma_v16_c8 on the device, one work-group per compute unit wanted: seconds per launch, and the
// last launch's output checked against the closed form.
class DeviceFma {
  public:
    DeviceFma(DeviceSession& s, std::size_t groups)
        : s_(s),
          local_(std::min<std::uint64_t>(64, std::max<std::uint64_t>(1, s.info().max_work_group_size))),
          groups_(groups),
          kernel_(s.kernels().program("peak/compute.cl", "-D REAL=float").program, "fma_v16_c8"),
          result_(make_buffer(s.context(), CL_MEM_WRITE_ONLY, groups * local_ * 16 * sizeof(cl_float))) {
        kernel_.setArg(0, result_);
        kernel_.setArg(1, static_cast<cl_float>(coef_b));
        kernel_.setArg(2, static_cast<cl_float>(coef_c));
    }
    TimedBatch run(std::size_t n_groups, cl_uint trips) {
        kernel_.setArg(3, trips);
        cl::CommandQueue& q = s_.queue();
        return time_commands(
            q, s_.profiling(), 1,
            [&] {
                cl::Event e;
                q.enqueueNDRangeKernel(kernel_, cl::NullRange, cl::NDRange(n_groups * local_), cl::NDRange(local_),
                                       nullptr, &e);
                return e;
            },
            "fma_v16_c8 parallelism");
    }
    // The last wide launch's output: 16 items across every group, every lane.
    void check(cl_uint trips) {
        std::vector<cl_float> out(groups_ * local_ * 16);
        s_.queue().enqueueReadBuffer(result_, CL_TRUE, 0, out.size() * sizeof(cl_float), out.data());
        for (std::size_t check = 0; check < 16; ++check) {
            const std::size_t item = check * (groups_ * local_ - 1) / 15;
            double expected = 0;
            for (int j = 0; j < 8; ++j)
                expected += chain_value(start_value(item, j), trips);
            for (std::size_t lane = 0; lane < 16; ++lane)
                if (!(std::fabs(out[item * 16 + lane] - expected) <= 1e-5 * std::fabs(expected)))
                    throw VerificationError(fmt::format("fma_v16_c8 (parallelism): item {} lane {} is {} (expected {})",
                                                        item, lane, out[item * 16 + lane], expected));
        }
    }
    std::size_t local() const { return local_; }

  private:
    DeviceSession& s_;
    std::size_t local_, groups_;
    cl::Kernel kernel_;
    cl::Buffer result_;
};

// The same recurrence on host threads: thread t's chains start where work-item t's do.
class HostFma {
  public:
    double run(std::size_t threads, cl_uint trips) {
        std::vector<float> starts(threads * host_fma_chains);
        for (std::size_t t = 0; t < threads; ++t)
            for (std::size_t j = 0; j < host_fma_chains; ++j)
                starts[t * host_fma_chains + j] = static_cast<float>(start_value(t, static_cast<int>(j)));
        threads_ = threads;
        return run_host_fma(starts, trips, static_cast<float>(coef_b), static_cast<float>(coef_c), lanes_);
    }
    void check(cl_uint trips) const {
        for (std::size_t t = 0; t < threads_; ++t)
            for (std::size_t j = 0; j < host_fma_chains; ++j) {
                const double expected = chain_value(start_value(t, static_cast<int>(j)), trips);
                for (std::size_t l = 0; l < host_fma_lanes; ++l) {
                    const float got = lanes_[(t * host_fma_chains + j) * host_fma_lanes + l];
                    if (!(std::fabs(got - expected) <= 1e-5 * std::fabs(expected)))
                        throw VerificationError(fmt::format(
                            "host FMA threads (parallelism): thread {} chain {} lane {} is {} (expected {})", t, j, l,
                            got, expected));
                }
            }
    }

  private:
    std::size_t threads_ = 0;
    std::vector<float> lanes_;
};

// The single and wide run times of one side (device or host). Interference only lengthens a run:
// each sample is groups x the shortest single run / one wide run, so a slow single run raises no
// sample and a slow wide run lowers only its own; the best sample is the ratio of the shortest
// runs (a per-pair ratio let one slowed single run pass for 1.6 groups at once where 1 ran).
class RunPairs {
  public:
    void add(double one, double many) {
        if (one <= 0 || many <= 0) return;
        one_.push_back(one);
        many_.push_back(many);
    }
    std::vector<double> samples(std::size_t groups) const {
        std::vector<double> out;
        for (double many : many_)
            out.push_back(static_cast<double>(groups) * shortest_one() / many);
        return out;
    }
    double best(std::size_t groups) const {
        return many_.empty() ? 0.0 : static_cast<double>(groups) * shortest_one() / *std::ranges::min_element(many_);
    }
    bool empty() const { return many_.empty(); }

  private:
    double shortest_one() const { return *std::ranges::min_element(one_); }
    std::vector<double> one_, many_;
};

// How many work-groups the CPU device runs at once, and how many host threads of the same work run
// at once on the same CPUs, measured in turns. One work-group of the fp32 FMA kernel (fma_v16_c8,
// compute-bound, every item's work depends on its id) against `groups` of them, each group the same
// work: on `groups` worker threads both take the same time; on one thread the many take `groups`
// times as long (samples: RunPairs). Each device pair is followed by a host pair, so the host's
// figure says what the CPUs gave a moment later. After `samples` pairs, sampling goes on (up to
// three times as many) while the device's best trails the host's, or the host's trails `groups`:
// a shortfall is only the driver's when the device never caught up while the host's threads did.
std::vector<Measurement> measure_parallelism(DeviceSession& s, std::size_t groups, double target_seconds, int samples) {
    DeviceFma device(s, groups);
    HostFma host;
    const cl_uint trips = calibrated_trips([&](cl_uint n) { return device.run(1, n).seconds; }, target_seconds);
    const cl_uint host_trips = calibrated_trips([&](cl_uint n) { return host.run(1, n); }, target_seconds);
    device.run(groups, trips);  // warm-up of the wide launch
    RunPairs on_device, on_host;
    TimerKind timer = TimerKind::host_steady_clock;
    for (int i = 0; i < 3 * samples; ++i) {
        const TimedBatch one = device.run(1, trips), many = device.run(groups, trips);
        timer = many.timer;
        on_device.add(one.seconds, many.seconds);
        const double host_one = host.run(1, host_trips);
        on_host.add(host_one, host.run(groups, host_trips));
        // Done once the device keeps up with the host's threads, and the host's threads have shown
        // most of what the CPUs give (while they have not, a passing interference may be hiding it).
        const double host_best = on_host.best(groups);
        if (i + 1 >= samples && on_device.best(groups) * parallelism_margin >= host_best &&
            host_best * parallelism_margin >= static_cast<double>(groups))
            break;
    }
    if (on_device.empty()) throw ProbeUnsupported("the parallelism kernel reported no time");
    device.check(trips);
    host.check(host_trips);
    std::vector<Measurement> out;
    Measurement m =
        make_measurement("system.opencl_cpu.parallelism", "work-groups", {}, on_device.samples(groups), timer);
    m.note = fmt::format(
        "{0} x the shortest t(1 work-group) / t({0} work-groups) of fma_v16_c8 ({1} items per group, {2} loop trips, "
        "{3:.0f} ms "
        "per group): how many work-groups the device ran at once, at most {0}",
        groups, device.local(), trips, 1e3 * target_seconds);
    out.push_back(std::move(m));
    if (!on_host.empty()) {
        Measurement h = make_measurement("system.host_threads.parallelism", "threads", {}, on_host.samples(groups),
                                         TimerKind::host_steady_clock);
        h.note = fmt::format(
            "{0} x the shortest t(1 thread) / t({0} threads) of fma_v16_c8's recurrence on host threads ({1} loop "
            "trips, {2:.0f} "
            "ms per thread), each pair right after the device's: how many threads the CPUs ran at once, at most {0}",
            groups, host_trips, 1e3 * target_seconds);
        out.push_back(std::move(h));
    }
    return out;
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
            for (auto& m : measure_parallelism(*ctx.device, groups, quick ? 0.01 : 0.02, quick ? 5 : 7))
                out.measurements.push_back(std::move(m));
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
