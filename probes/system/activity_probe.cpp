// system.activity: what else ran on the CPUs this process may use while clprobe measured, and how
// much time the hypervisor stole. It runs last and reads the monitor that sampled /proc since the
// run started, so its window covers every other probe.
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "core/system_facts.hpp"
#include "probe_factories.hpp"
#include "runtime/activity_monitor.hpp"
#include "system/cpu_list.hpp"
#include "system/system_support.hpp"

namespace clprobe {

namespace {

// Shorter windows hold too few ticks (10 ms each) and snapshots to tell a busy neighbour from
// noise; a run of the system layer alone is shorter than this, so the probe waits for it.
constexpr double minimum_window_seconds = 1.0;
constexpr std::size_t named_consumers = 5;

double percent(double part, double whole) {
    return whole > 0 ? 100.0 * part / whole : 0.0;
}
// Shares of the counted CPUs' time: per-process times (exact) and /proc/stat's (per tick) can
// disagree by a tick or two, which must not read as more than all of it.
double share(double part, double whole) {
    return std::clamp(percent(part, whole), 0.0, 100.0);
}

class ActivityProbe final : public Probe {
  public:
    std::string id() const override { return "system.activity"; }
    std::string layer() const override { return "system"; }
    std::string title() const override { return "Other processes and hypervisor steal during the run"; }
    bool needs_device() const override { return false; }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        std::unique_ptr<ActivityMonitor> local;
        ActivityMonitor* monitor = ctx.activity;
        if (!monitor) {
            local = std::make_unique<ActivityMonitor>();
            monitor = local.get();
        }
        ActivitySummary s = monitor->summary();
        if (s.window_seconds < minimum_window_seconds) {
            std::this_thread::sleep_for(std::chrono::duration<double>(minimum_window_seconds - s.window_seconds));
            s = monitor->summary();
        }
        if (s.capacity_seconds <= 0) throw ProbeUnsupported("/proc/stat reported no CPU time for this process's CPUs");

        const double others = share(s.others_cpu_seconds, s.capacity_seconds);
        const double steal = share(s.steal_seconds, s.capacity_seconds);
        out.measurements.push_back(fact("system.activity.others_cpu", "%", others));
        out.measurements.push_back(fact("system.activity.steal", "%", steal));
        out.measurements.push_back(
            fact("system.activity.self_cpu", "%", share(s.self_cpu_seconds, s.capacity_seconds)));
        if (s.swap_in_pages && s.swap_out_pages && s.window_seconds > 0) {
            const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
            const double mib = static_cast<double>(*s.swap_in_pages + *s.swap_out_pages) * page / (1 << 20);
            out.measurements.push_back(fact("system.activity.swap", "MiB/s", mib / s.window_seconds));
        }

        ActivityFacts f;
        for (std::size_t i = 0; i < s.top_others.size() && i < named_consumers; ++i) {
            const auto& p = s.top_others[i];
            f.top_consumers.push_back(
                {p.name, p.pid, p.cpu_seconds, percent(p.cpu_seconds, s.window_seconds), p.kernel_thread});
        }
        f.monitor = local ? "started by this probe (no run-wide monitor)" : "sampled since the run started";
        f.period_ms = monitor->period().count();
        f.window_seconds = s.window_seconds;
        f.samples = s.samples;
        f.online_cpus = s.logical_cpus;
        f.counted_cpus = format_cpu_list(s.counted_cpus);
        f.cpu_seconds = {s.capacity_seconds, s.total_cpu_seconds, s.self_cpu_seconds, s.others_cpu_seconds,
                         s.steal_seconds};
        if (s.swap_in_pages && s.swap_out_pages)
            f.swap_pages = ActivityFacts::SwapPages{*s.swap_in_pages, *s.swap_out_pages};
        f.accounting =
            "percentages are of the CPU time of counted_cpus (this process's CPUs) over the window; others = busy - "
            "clprobe (all its threads and children); cpu_percent of a consumer is of one CPU, counted while a snapshot "
            "found it on a counted CPU. "
            "Processes that start and exit between two snapshots count in others but are not named";
        record_activity_facts(out, f);
    }
};

}  // namespace

std::unique_ptr<Probe> make_activity_probe() {
    return std::make_unique<ActivityProbe>();
}

}  // namespace clprobe
