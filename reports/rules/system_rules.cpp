#include "rules/system_rules.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "core/system_facts.hpp"

namespace clprobe {

namespace {

// Other processes using a tenth of the CPU time this process may use slow a CPU-bound run by
// about as much: more than the run-to-run noise of its measurements, and enough to act on. An idle
// server's daemons and kernel threads stay near 1%.
constexpr double contention_percent = 10.0;
// Half the CPU time gone to others halves what a CPU-bound run gets.
constexpr double contention_high_percent = 50.0;
// Consumers under 2% of one CPU are background (daemons, kernel threads), not worth naming.
constexpr double named_consumer_percent = 2.0;
// A CPU quota within 1% of the allowed CPUs is the same limit written in round numbers.
constexpr double quota_tolerance = 0.99;
// Below 60% of the maximum clock under load the clock itself is held down: all-core turbo on
// large servers runs at 65-90% of the single-core maximum that cpufreq reports.
constexpr double low_clock_fraction = 0.6;
// Under 10% of memory left, the kernel reclaims page cache and starts swapping under the next
// allocation; an OpenCL runtime's staging buffers are such allocations.
constexpr double low_memory_fraction = 0.10;
// Sustained paging of 1 MiB/s (256 pages a second) is a working set that does not fit, not the
// odd page a daemon gets back.
constexpr double swap_mib_per_second = 1.0;
// Every shared VM shows a little steal; from 5% one time slice in twenty goes to another guest.
constexpr double steal_percent = 5.0;
constexpr double steal_high_percent = 20.0;
// A CPU device using half the usable CPUs or fewer loses half the throughput or more.
constexpr double underused_high_gain = 0.5;
// Activity windows shorter than this hold few samples: confidence grows with the window.
constexpr double confident_window_seconds = 2.0;

std::string or_else(const std::string& s, std::string fallback) {
    return s.empty() ? fallback : s;
}

double median(const Measurement* m) {
    return m ? m->summary.median : 0;
}

std::string cpus_word(double n) {
    return fmt::format("{:g} CPU{}", n, n == 1 ? "" : "s");
}

// How sure a finding over the activity window is: more snapshots, more certainty.
double window_confidence(const RunReport& r) {
    const auto activity = activity_facts_of(r);
    const double window = activity ? activity->window_seconds : 0;
    return std::clamp(window / confident_window_seconds, 0.5, 1.0);
}

// ---------------------------------------------------------------- system.cpu_contention

// The named consumers worth naming. A kernel thread cannot be stopped or moved: the finding names
// it and suggests nothing for it.
std::vector<ConsumerFacts> top_consumers(const RunReport& r) {
    std::vector<ConsumerFacts> out;
    const auto activity = activity_facts_of(r);
    if (!activity) return out;
    for (const auto& c : activity->top_consumers)
        if (c.cpu_percent >= named_consumer_percent) out.push_back(c);
    return out;
}

RuleOutcome cpu_contention(const RunReport& r, const RuleSpec& rule) {
    const auto* others = find_measurement(r, "system.activity.others_cpu");
    if (!others) return rule.missing();
    const double share = others->summary.median;
    if (share < contention_percent) return RuleOutcome::none();

    const auto consumers = top_consumers(r);
    std::string named, pids;
    for (std::size_t i = 0; i < consumers.size() && i < 3; ++i)
        named += fmt::format("{}{} (pid {}, {:.0f}% of a CPU)", i ? ", " : "", or_else(consumers[i].name, "?"),
                             consumers[i].pid, consumers[i].cpu_percent);
    for (const auto& c : consumers)
        if (!c.kernel_thread) pids += fmt::format(" {}", c.pid);
    const auto* allowed = find_measurement(r, "system.cpus.allowed");
    const std::string of_what =
        allowed ? fmt::format("the {} clprobe may use", cpus_word(median(allowed))) : "the CPUs clprobe may use";

    Finding f = rule.finding(
        share >= contention_high_percent ? Severity::high : Severity::medium,
        fmt::format("Other processes used {:.0f}% of the CPU time of {} during the run{}", share, of_what,
                    named.empty()
                        ? fmt::format(" (none alone used {:g}% of a CPU: many small or short-lived processes)",
                                      named_consumer_percent)
                        : ": " + named));
    f.evidence.push_back(
        evidence_of(*others, fmt::format("below {:.0f}% on a machine kept for this work", contention_percent)));
    if (const auto* self = find_measurement(r, "system.activity.self_cpu"))
        f.evidence.push_back(evidence_of(*self, "clprobe's own share, for comparison"));
    f.suggestion =
        pids.empty()
            ? "Find what keeps the CPUs busy (pidstat 1 for processes, execsnoop for short-lived ones, "
              "/proc/interrupts "
              "for kernel work), and stop it or run the OpenCL work when the machine is idle."
            : fmt::format(
                  "Stop or pause them while the OpenCL work runs (kill -STOP{0}; resume with kill -CONT{0}), make them "
                  "yield (renice +19 -p{0}), or confine them to CPUs the work does not use (taskset -acp <cpus> "
                  "<pid>, or a cgroup's cpuset.cpus); otherwise run when the machine is idle.",
                  pids);
    f.estimated_gain = std::min(1.0, share / 100.0);
    f.gain_basis = "CPU time other processes took from the CPUs clprobe may use; a CPU-bound run gets it back";
    f.confidence = window_confidence(r);
    return RuleOutcome::found(std::move(f));
}

// ---------------------------------------------------------------- OpenCL CPU runtimes

// Which OpenCL CPU runtime a device belongs to, from its platform: the settings that size its
// thread pool differ.
enum class CpuRuntime { pocl, intel, other };

CpuRuntime cpu_runtime_of(const DeviceInfo& d) {
    const auto has = [](const std::string& s, const char* part) { return s.find(part) != std::string::npos; };
    if (has(d.platform_name, "Portable Computing Language") || has(d.platform_name, "PoCL") ||
        has(d.platform_vendor, "pocl"))
        return CpuRuntime::pocl;
    if (has(d.platform_name, "Intel") || has(d.platform_vendor, "Intel")) return CpuRuntime::intel;
    return CpuRuntime::other;
}

const char* runtime_name(CpuRuntime rt) {
    return rt == CpuRuntime::pocl ? "PoCL" : rt == CpuRuntime::intel ? "Intel's CPU runtime" : "another runtime";
}

// The settings system.limits records (opencl_cpu_environment), with the runtime that reads each
// and what it does. `count`: its value is a number of threads or compute units, which the
// suggestion can set to the usable CPUs; the others place threads and are only named.
struct RuntimeVariable {
    const char* name;
    CpuRuntime runtime;
    bool count;
    const char* effect;
};
constexpr RuntimeVariable runtime_variables[] = {
    {"POCL_MAX_PTHREAD_COUNT", CpuRuntime::pocl, true, "sets PoCL's worker threads and compute units"},
    {"POCL_CPU_MAX_CU_COUNT", CpuRuntime::pocl, true, "caps the compute units of newer PoCL releases' cpu device"},
    {"POCL_AFFINITY", CpuRuntime::pocl, false, "pins PoCL's worker threads to CPUs"},
    {"CL_CONFIG_CPU_TBB_NUM_WORKERS", CpuRuntime::intel, true,
     "caps the TBB worker threads that run work-groups (the device still reports every CPU as a compute unit)"},
    {"DPCPP_CPU_NUM_CUS", CpuRuntime::intel, true, "sets the compute units of the oneAPI CPU runtime"},
    {"SYCL_CPU_NUM_CUS", CpuRuntime::intel, true, "sets the compute units of the oneAPI CPU runtime"},
    {"DPCPP_CPU_PLACES", CpuRuntime::intel, false, "places the oneAPI CPU runtime's threads"},
    {"SYCL_CPU_PLACES", CpuRuntime::intel, false, "places the oneAPI CPU runtime's threads"},
    {"DPCPP_CPU_CU_AFFINITY", CpuRuntime::intel, false, "pins the oneAPI CPU runtime's threads"},
    {"SYCL_CPU_CU_AFFINITY", CpuRuntime::intel, false, "pins the oneAPI CPU runtime's threads"},
    {"OMP_NUM_THREADS", CpuRuntime::other, true, "caps OpenMP thread pools, which some runtimes use"},
};

// The variable a runtime's thread count is set with, for a suggestion when none is set.
const char* thread_variable(CpuRuntime rt) {
    return rt == CpuRuntime::pocl ? "POCL_MAX_PTHREAD_COUNT" : "CL_CONFIG_CPU_TBB_NUM_WORKERS";
}

// "PoCL: export POCL_MAX_PTHREAD_COUNT=4", for the device's runtime (both known ones otherwise).
std::string thread_setting(const DeviceInfo& d, double threads) {
    const CpuRuntime rt = cpu_runtime_of(d);
    if (rt == CpuRuntime::other)
        return fmt::format(
            "PoCL: export POCL_MAX_PTHREAD_COUNT={0:g}; Intel's CPU runtime: export "
            "CL_CONFIG_CPU_TBB_NUM_WORKERS={0:g}",
            threads);
    return fmt::format("{}: export {}={:g}", runtime_name(rt), thread_variable(rt), threads);
}

// ---------------------------------------------------------------- system.affinity_restricted

std::string quota_knob(const std::optional<CpuQuotaFacts>& quota, double allowed) {
    const std::string file = quota ? quota->file : std::string();
    const double period = quota ? static_cast<double>(quota->period_us) : 100000.0;
    std::string knob;
    if (file.size() >= 7 && file.compare(file.size() - 7, 7, "cpu.max") == 0)
        knob = fmt::format("echo 'max {:.0f}' > {} (or '{:.0f} {:.0f}' for {})", period, file, allowed * period, period,
                           cpus_word(allowed));
    else if (!file.empty())
        knob = fmt::format("echo -1 > {} (or {:.0f} for {})", file, allowed * period, cpus_word(allowed));
    else
        knob = "raise the cgroup's CPU quota (cpu.max, or cpu.cfs_quota_us in cgroup v1)";
    return fmt::format(
        "Lift the CPU quota: {}; Docker: docker update --cpus {:g} <container>; systemd: systemctl "
        "set-property <unit> CPUQuota={:.0f}%.",
        knob, allowed, allowed * 100);
}

RuleOutcome affinity_restricted(const RunReport& r, const RuleSpec& rule) {
    const auto* online = find_measurement(r, "system.cpus.online");
    const auto* allowed = find_measurement(r, "system.cpus.allowed");
    if (!online || !allowed) return rule.missing();
    const auto* quota = find_measurement(r, "system.cpu.quota");
    const double n_online = median(online), n_allowed = median(allowed);
    const bool fewer_cpus = n_allowed < n_online;
    const bool quota_below = quota && median(quota) < n_allowed * quota_tolerance;
    if (!fewer_cpus && !quota_below) return RuleOutcome::none();
    const double usable = quota_below ? median(quota) : n_allowed;

    const bool cpu_device = r.device && r.device->type == "cpu";
    std::string title = fewer_cpus
                            ? fmt::format("This process may run on {} of the {} online", n_allowed, cpus_word(n_online))
                            : fmt::format("A CPU quota of {:.3g} CPUs caps this process below its {} allowed",
                                          median(quota), cpus_word(n_allowed));
    if (fewer_cpus && quota_below) title += fmt::format(", and a CPU quota caps it at {:.3g}", median(quota));
    Finding f = rule.finding(cpu_device ? Severity::medium : Severity::low, std::move(title));
    f.evidence.push_back(evidence_of(*allowed, "every online CPU"));
    f.evidence.push_back(evidence_of(*online));
    if (quota) f.evidence.push_back(evidence_of(*quota, "no quota, or at least the allowed CPUs"));

    const LimitsFacts limits = limits_facts_of(r).value_or(LimitsFacts{});
    const std::string& by = limits.restricted_by;
    const std::string all = or_else(limits.online_cpus, fmt::format("0-{:g}", n_online - 1));
    const std::string mask = or_else(limits.allowed_cpus, "?");
    std::vector<std::string> steps;
    if (fewer_cpus && by.find("cpuset") != std::string::npos) {
        const std::string file = or_else(limits.cpuset_file, "<cgroup>/cpuset.cpus");
        steps.push_back(
            fmt::format("Widen the cgroup's cpuset (it allows {}): echo {} > {}; Docker: docker update "
                        "--cpuset-cpus {} <container>.",
                        or_else(limits.cpuset_cpus, mask), all, file, all));
    }
    if (fewer_cpus && (by.find("affinity") != std::string::npos || by.empty() || by == "none"))
        steps.push_back(
            fmt::format("Start the workload without the CPU mask (it runs on CPUs {} of {}): taskset -c {} "
                        "<command>, or taskset -acp {} <pid> for a running one; check numactl "
                        "--physcpubind and CPUAffinity= in its systemd unit.",
                        mask, all, all, all));
    if (quota_below) steps.push_back(quota_knob(limits.cpu_quota.value, n_allowed));
    if (cpu_device && r.device->compute_units > std::max(1.0, std::floor(usable + 1e-9)))
        steps.push_back(fmt::format(
            "Until then, size the OpenCL CPU device to the CPUs it gets: it runs {} compute units on {}, so its "
            "threads time-share ({}).",
            r.device->compute_units, cpus_word(usable),
            thread_setting(*r.device, std::max(1.0, std::floor(usable + 1e-9)))));
    for (const auto& s : steps)
        f.suggestion += (f.suggestion.empty() ? "" : " ") + s;
    if (cpu_device) {
        f.estimated_gain = std::clamp(1.0 - usable / n_online, 0.0, 1.0);
        f.gain_basis = "time saved by CPU-bound OpenCL work on the CPU device if it could use every online CPU";
    } else {
        f.gain_basis = "not estimated: the device is not the CPU, only host-side work is limited";
    }
    f.confidence = 1.0;
    return RuleOutcome::found(std::move(f));
}

// ---------------------------------------------------------------- system.cpu_device_underused

// What to change: the settings that are set (the device's runtime's own first), else the one its
// runtime reads.
std::string underused_suggestion(const DeviceInfo& d, const LimitsFacts& limits, double usable) {
    const CpuRuntime rt = cpu_runtime_of(d);
    std::vector<std::string> own, foreign;
    for (const auto& v : runtime_variables) {
        const auto it = limits.opencl_cpu_environment.find(v.name);
        if (it == limits.opencl_cpu_environment.end()) continue;
        const bool applies = v.runtime == rt || v.runtime == CpuRuntime::other;
        std::string text = v.count
                               ? fmt::format(
                                     "{0}={1} is set: it {2}; unset {0}, or export {0}={3:g} to match the CPUs this "
                                     "process may use",
                                     v.name, it->second, v.effect, usable)
                               : fmt::format("{}={} is set: it {}; check that it covers all {:g} usable CPUs", v.name,
                                             it->second, v.effect, usable);
        if (applies)
            own.push_back(std::move(text));
        else
            foreign.push_back(fmt::format("{}={} is set but is read by {}, not by this device's driver", v.name,
                                          it->second, runtime_name(v.runtime)));
    }
    std::string out;
    const std::string platform = d.platform_name.empty() ? std::string("?") : d.platform_name;
    if (!own.empty()) {
        out = fmt::format("The device's driver is {} (platform {}). ", runtime_name(rt), platform);
        for (std::size_t i = 0; i < own.size(); ++i)
            out += (i ? "; " : "") + own[i];
        out += ".";
    } else if (rt == CpuRuntime::pocl) {
        out = fmt::format(
            "The device's driver is PoCL (platform {}): export POCL_MAX_PTHREAD_COUNT={:g} before starting the "
            "workload (PoCL runs one thread per compute unit), and check that nothing else caps its thread count.",
            platform, usable);
    } else if (rt == CpuRuntime::intel) {
        out = fmt::format(
            "The device's driver is Intel's CPU runtime (platform {}): export CL_CONFIG_CPU_TBB_NUM_WORKERS={:g}, "
            "and check CL_CONFIG_CPU_TBB_NUM_WORKERS in the cl.cfg next to libintelocl.so (the file sets it when the "
            "environment does not).",
            platform, usable);
    } else {
        out = fmt::format(
            "Configure the OpenCL CPU runtime (platform {}) for {:g} threads: check its configuration for a "
            "thread or core limit ({}).",
            platform, usable, thread_setting(d, usable));
    }
    for (const auto& f : foreign)
        out += " " + f + ".";
    return out;
}

// The most work-groups the device ran at once in any sample: interference only lowers a sample.
double most_parallel(const Measurement& m) {
    return m.samples.empty() ? m.summary.median : *std::max_element(m.samples.begin(), m.samples.end());
}

RuleOutcome cpu_device_underused(const RunReport& r, const RuleSpec& rule) {
    if (!r.device) return rule.missing();
    if (r.device->type != "cpu") return RuleOutcome::none();
    const auto* allowed = find_measurement(r, "system.cpus.allowed");
    if (!allowed) return rule.missing();
    if (r.device->compute_units == 0) return RuleOutcome::missing("the device reported no compute units");
    double usable = median(allowed);
    if (const auto* quota = find_measurement(r, "system.cpu.quota")) usable = std::min(usable, median(quota));
    // A quota of 1.5 CPUs keeps a second thread busy only part of the time: whole CPUs count.
    usable = std::max(1.0, std::floor(usable + 1e-9));
    const double cus = r.device->compute_units;
    // What a compute-bound kernel can use: the compute units, the usable CPUs and, on SMT machines,
    // the distinct cores among them (siblings share one core's FMA units).
    const auto* cores = find_measurement(r, "system.cpus.allowed_cores");
    const auto* parallel = find_measurement(r, "system.opencl_cpu.parallelism");
    const double ran = parallel ? most_parallel(*parallel) : 0;
    // What the CPUs themselves gave: the host's own threads of the same work, measured in turns with
    // the device. Where they too ran fewer at once (vCPUs sharing a core, a hypervisor parking one),
    // the shortfall is the machine's, and no driver setting wins it back (on a 2-vCPU CI machine
    // plain threads of this work dipped to 1.0 at once; the device once read 1.0 in every sample
    // there with nothing else running). Reports without it are judged as before.
    const auto* host_threads = find_measurement(r, "system.host_threads.parallelism");
    const double host_ran = host_threads ? most_parallel(*host_threads) : 0;
    const double per_core = std::min(usable, cores && median(cores) >= 1 ? median(cores) : usable);
    const bool host_limits = host_threads && host_ran > 0 && host_ran < per_core;
    // What it could run at once: the usable CPUs, or their cores on SMT machines, or what the host's
    // own threads ran at once when fewer.
    const double could = host_limits ? host_ran : per_core;
    const double reachable = std::min(cus, could);
    const auto limits = limits_facts_of(r).value_or(LimitsFacts{});
    const bool by_units = cus < usable;
    // While other processes held the CPUs (system.cpu_contention names them), fewer work-groups at
    // once is what they left, not what the driver allows: without a thread setting in the
    // environment to blame, the shortfall is not the driver's. (A loaded CI machine measured 1.1.)
    const auto* others = find_measurement(r, "system.activity.others_cpu");
    const bool contended = others && others->summary.median >= contention_percent;
    const bool by_threads = parallel && ran > 0 && ran * parallelism_margin < reachable &&
                            !(contended && limits.opencl_cpu_environment.empty());
    if (!by_units && !by_threads) return RuleOutcome::none();

    Finding f;
    if (by_threads) {
        const double gain = std::clamp(1.0 - ran / could, 0.0, 1.0);
        f = rule.finding(gain >= underused_high_gain ? Severity::high : Severity::medium,
                         fmt::format("The OpenCL CPU device ran {:.1f} work-groups at once on the {} this process may "
                                     "use, though it reports {:g} compute unit{}{}",
                                     ran, cpus_word(usable), cus, cus == 1 ? "" : "s",
                                     host_threads ? fmt::format(" and the host's own threads of the same work ran "
                                                                "{:.1f} at once",
                                                                host_ran)
                                                  : std::string()));
        f.evidence.push_back(evidence_of(
            *parallel, host_limits ? fmt::format("about {:.1f}: as many as the host's own threads ran at once", could)
                                   : fmt::format("about {:g}: one work-group per usable {}", could,
                                                 could < usable ? "core" : "CPU")));
        if (host_threads)
            f.evidence.push_back(
                evidence_of(*host_threads, "the host's own threads of the same work, measured in turns"));
        f.evidence.push_back({"device.compute_units", {}, cus, "CUs", "one per usable CPU"});
        f.evidence.push_back(evidence_of(*allowed));
        if (cores) f.evidence.push_back(evidence_of(*cores, "a compute-bound kernel scales with cores"));
        f.estimated_gain = gain;
        f.gain_basis =
            "time saved by compute-bound OpenCL work on the CPU device when it runs a work-group per usable CPU "
            "(measured: the same work in one work-group and in many)";
        // As sure as the measured shortfall is clear of the samples' spread.
        const double shortfall = could / ran - 1.0, noise = std::max(0.01, sample_noise(*parallel));
        f.confidence = std::clamp(shortfall <= 2 * noise ? 0.5 : 1.0 - 2 * noise / shortfall, 0.5, 1.0);
    } else {
        const double gain = 1.0 - cus / usable;
        f = rule.finding(gain >= underused_high_gain ? Severity::high : Severity::medium,
                         fmt::format("The OpenCL CPU device uses {:g} compute unit{} of the {} this process may use",
                                     cus, cus == 1 ? "" : "s", cpus_word(usable)));
        f.evidence.push_back({"device.compute_units", {}, cus, "CUs", "one per usable CPU"});
        f.evidence.push_back(evidence_of(*allowed));
        if (parallel) f.evidence.push_back(evidence_of(*parallel, "work-groups the device ran at once"));
        f.estimated_gain = gain;
        f.gain_basis = "time saved by compute-bound OpenCL work on the CPU device when it uses every usable CPU";
        f.confidence = 1.0;
    }
    f.suggestion = underused_suggestion(*r.device, limits, usable);
    return RuleOutcome::found(std::move(f));
}

// ---------------------------------------------------------------- system.cpu_governor

RuleOutcome cpu_governor(const RunReport& r, const RuleSpec& rule) {
    const CpuFrequencyFacts freq = host_facts_of(r).value_or(HostFacts{}).frequency;
    const std::vector<std::string>& governors = freq.governors;
    const auto* loaded = find_measurement(r, "system.cpu.frequency.loaded");
    const auto* max = find_measurement(r, "system.cpu.frequency.max");
    if (governors.empty() && !(loaded && max)) return rule.missing();
    const bool low_clock = loaded && max && median(max) > 0 && median(loaded) < low_clock_fraction * median(max);
    const auto not_performance =
        std::find_if(governors.begin(), governors.end(), [](const std::string& g) { return g != "performance"; });
    if (!low_clock && not_performance == governors.end()) return RuleOutcome::none();

    const std::string governor_text = governors.empty() ? std::string("unknown") : fmt::format("{}", governors[0]);
    Finding f;
    if (low_clock) {
        const double fraction = median(loaded) / median(max);
        f = rule.finding(Severity::medium,
                         fmt::format("Under load the CPUs ran at {:.0f} MHz, {:.0f}% of their {:.0f} MHz maximum "
                                     "(governor {})",
                                     median(loaded), 100 * fraction, median(max), governor_text));
        f.evidence = {evidence_of(*loaded, fmt::format("at least {:.0f}% of the maximum", 100 * low_clock_fraction)),
                      evidence_of(*max)};
        f.estimated_gain = 1.0 - fraction;
        f.gain_basis = "time saved by compute-bound work running at the maximum clock instead of the measured one";
        f.confidence = std::max(min_confidence, comparison_confidence(*max, *loaded));
    } else {
        f = rule.finding(Severity::low,
                         fmt::format("The CPU frequency governor is '{}', not 'performance': clocks rise only "
                                     "after load appears",
                                     *not_performance));
        if (max) f.evidence.push_back(evidence_of(*max));
        if (loaded) f.evidence.push_back(evidence_of(*loaded, "near the maximum, as measured"));
        f.gain_basis = "not estimated: the clock under load was near its maximum; short bursts may start slower";
        f.confidence = 1.0;
    }
    f.suggestion =
        "sudo cpupower frequency-set -g performance (or: echo performance | sudo tee "
        "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor).";
    const auto policy_max = freq.policy_max_mhz;
    const auto hardware_max = freq.hardware_max_mhz;
    if (policy_max && hardware_max && *policy_max < *hardware_max)
        f.suggestion += fmt::format(
            " The policy also caps the clock at {:.0f} MHz: sudo cpupower frequency-set -u "
            "{:.0f}MHz.",
            *policy_max, *hardware_max);
    if (low_clock && not_performance == governors.end())
        f.suggestion =
            "The governor is already 'performance': check the firmware power profile (set it to maximum "
            "performance), power capping and thermal throttling (turbostat shows both).";
    return RuleOutcome::found(std::move(f));
}

// ---------------------------------------------------------------- system.memory_pressure

RuleOutcome memory_pressure(const RunReport& r, const RuleSpec& rule) {
    const auto* available = find_measurement(r, "system.memory.available");
    const auto* total = find_measurement(r, "system.memory.total");
    const auto* swap = find_measurement(r, "system.activity.swap");
    const auto* limit = find_measurement(r, "system.memory.limit");
    const auto* used = find_measurement(r, "system.memory.limit.used");
    if (!(available && total) && !swap) return rule.missing();

    std::optional<double> host_fraction, limit_fraction;
    if (available && total && median(total) > 0) host_fraction = median(available) / median(total);
    if (limit && used && median(limit) > 0)
        limit_fraction = std::max(0.0, median(limit) - median(used)) / median(limit);
    const bool host_low = host_fraction && *host_fraction < low_memory_fraction;
    const bool limit_low = limit_fraction && *limit_fraction < low_memory_fraction;
    const bool swapping = swap && median(swap) >= swap_mib_per_second;
    if (!host_low && !limit_low && !swapping) return RuleOutcome::none();

    std::string title;
    if (swapping) title = fmt::format("The system paged {:.1f} MiB/s to and from swap during the run", median(swap));
    if (host_low)
        title += fmt::format("{}nly {:.1f} GiB ({:.1f}%) of the host's memory was available",
                             title.empty() ? "O" : "; o", median(available), 100 * *host_fraction);
    if (limit_low)
        title += fmt::format("{}nly {:.1f}% of the cgroup's {:.1f} GiB memory limit was free",
                             title.empty() ? "O" : "; o", 100 * *limit_fraction, median(limit));
    Finding f = rule.finding(swapping ? Severity::high : Severity::medium, title);
    if (swap) f.evidence.push_back(evidence_of(*swap, fmt::format("below {:g} MiB/s", swap_mib_per_second)));
    if (available)
        f.evidence.push_back(
            evidence_of(*available, fmt::format("at least {:.0f}% of system.memory.total", 100 * low_memory_fraction)));
    if (total) f.evidence.push_back(evidence_of(*total));
    if (limit) f.evidence.push_back(evidence_of(*limit));
    if (used)
        f.evidence.push_back(
            evidence_of(*used, fmt::format("below {:.0f}% of the limit", 100 * (1 - low_memory_fraction))));
    f.suggestion =
        "Free memory before the OpenCL work runs: find the largest consumers (ps aux --sort=-rss | head) and stop "
        "them, or shrink the workload's footprint (smaller batches, fewer concurrent jobs); vmstat 1 shows paging "
        "(si/so).";
    if (limit_low) {
        const auto limits = limits_facts_of(r);
        const std::string file = limits && limits->memory_limit.value ? limits->memory_limit.value->file : "";
        f.suggestion += fmt::format(
            " Or raise the cgroup limit: echo {:.0f}G > {} (Docker: docker update --memory {:.0f}g --memory-swap "
            "{:.0f}g <container>).",
            std::ceil(2 * median(limit)), file.empty() ? "<cgroup>/memory.max" : file, std::ceil(2 * median(limit)),
            std::ceil(2 * median(limit)));
    }
    f.gain_basis = "not estimated: the slowdown depends on how much of the workload's memory is paged";
    f.confidence = 1.0;
    return RuleOutcome::found(std::move(f));
}

// ---------------------------------------------------------------- system.hypervisor_steal

RuleOutcome hypervisor_steal(const RunReport& r, const RuleSpec& rule) {
    const auto* steal = find_measurement(r, "system.activity.steal");
    if (!steal) return rule.missing();
    const double share = steal->summary.median;
    if (share < steal_percent) return RuleOutcome::none();
    const std::string vendor = host_facts_of(r).value_or(HostFacts{}).hypervisor.name;
    const std::string by = vendor.empty() ? "The hypervisor" : "The hypervisor (" + vendor + ")";
    Finding f = rule.finding(
        share >= steal_high_percent ? Severity::high : Severity::medium,
        fmt::format("{} gave {:.1f}% of this VM's CPU time to other guests during the run (steal)", by, share));
    f.evidence.push_back(evidence_of(*steal, fmt::format("below {:.0f}% of CPU time", steal_percent)));
    f.suggestion =
        "The host's physical CPUs are oversubscribed: move the VM to dedicated vCPUs (dedicated-host or CPU-pinned "
        "instance types), to a less loaded host, or give VMs fewer vCPUs on your own hypervisor; watch the st column "
        "of vmstat 1 while the workload runs.";
    f.estimated_gain = std::min(1.0, share / 100.0);
    f.gain_basis = "CPU time the vCPUs waited for the host during the run";
    f.confidence = window_confidence(r);
    return RuleOutcome::found(std::move(f));
}

}  // namespace

std::vector<Rule> system_rules() {
    using In = RuleInput;
    const std::string layer = "system";
    const RuleThreshold window{"activity window for full confidence, s", confident_window_seconds};
    // The governors come from system.host's facts; the clock under load and its maximum are
    // alternatives to them, so they are named in words rather than checked before the rule runs.
    const In cpufreq{In::Kind::facts,
                     {system_host_probe_id},
                     "the cpufreq governors, or system.cpu.frequency.loaded and system.cpu.frequency.max; "
                     "VMs usually expose no cpufreq"};
    return {
        {{"system.cpu_contention",
          layer,
          {In::metric("system.activity.others_cpu")},
          {{"others' CPU time, % of the usable CPUs", contention_percent},
           {"high severity from, %", contention_high_percent},
           {"consumer named from, % of one CPU", named_consumer_percent},
           window}},
         cpu_contention},
        {{"system.hypervisor_steal",
          layer,
          {In::metric("system.activity.steal")},
          {{"steal, % of CPU time", steal_percent}, {"high severity from, %", steal_high_percent}, window}},
         hypervisor_steal},
        {{"system.affinity_restricted",
          layer,
          {In::metric("system.cpus.online"), In::metric("system.cpus.allowed")},
          {{"quota below this share of the allowed CPUs", quota_tolerance}}},
         affinity_restricted},
        {{"system.cpu_device_underused",
          layer,
          {In::device(),
           In::metric("system.cpus.allowed"),
           {In::Kind::facts,
            {"system.limits"},
            "system.opencl_cpu.parallelism, system.host_threads.parallelism and system.cpus.allowed_cores, when "
            "measured"}},
          {{"high severity from gain", underused_high_gain},
           {"reachable over measured work-groups at once", parallelism_margin}}},
         cpu_device_underused},
        {{"system.cpu_governor",
          layer,
          {cpufreq},
          {{"clock under load, share of the maximum", low_clock_fraction, true}}},
         cpu_governor},
        {{"system.memory_pressure",
          layer,
          {In::any_metric({"system.memory.available", "system.memory.total", "system.activity.swap"},
                          "available and total together, or swap")},
          {{"free memory, share of the total or the limit", low_memory_fraction, true},
           {"swap traffic, MiB/s", swap_mib_per_second}}},
         memory_pressure},
    };
}

}  // namespace clprobe
