// system.host: what machine the run is on — OS, kernel, CPU model and ISA, topology, clock policy,
// memory, load, timer resolution, hypervisor and container. Facts go to attributes; the numbers a
// later `compare` should line up are one-sample measurements.
#include <sys/utsname.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "core/system_facts.hpp"
#include "core/text.hpp"
#include "probe_factories.hpp"
#include "runtime/host_info.hpp"
#include "system/cpu_facts.hpp"
#include "system/cpu_features.hpp"
#include "system/cpu_list.hpp"
#include "system/memory_facts.hpp"
#include "system/proc_parse.hpp"
#include "system/system_support.hpp"
#include "system/virtualization.hpp"

namespace clprobe {

namespace {

std::string machine_name() {
    struct utsname u {};
    return ::uname(&u) == 0 ? std::string(u.machine) : std::string();
}

// The smallest step the steady clock (what clprobe's host timings use) can show, call overhead
// included: the shortest interval between two readings that differ. Spinning stops after
// `budget` so a coarse clock costs milliseconds, not seconds.
double steady_clock_granularity_ns(std::chrono::milliseconds budget) {
    using clock = std::chrono::steady_clock;
    const auto stop = clock::now() + budget;
    auto best = clock::duration::max();
    for (int i = 0; i < 2000 && clock::now() < stop; ++i) {
        const auto t0 = clock::now();
        auto t1 = t0;
        while (t1 == t0)
            t1 = clock::now();
        best = std::min(best, t1 - t0);
    }
    return std::chrono::duration<double, std::nano>(best).count();
}

nlohmann::json cpu_attributes(const CpuInfo& info, const CpuTopology& topo, const std::string& machine) {
    nlohmann::json isa = nlohmann::json::object();
    for (const auto& f : isa_features(info.flags, machine))
        isa[f.name] = f.present;
    nlohmann::json cpu = {
        {"model", or_unknown(info.model)},
        {"vendor", or_unknown(info.vendor)},
        {"architecture", or_unknown(machine)},
        {"isa", isa},
        {"online_cpus", topo.online.empty() ? nlohmann::json(unknown) : nlohmann::json(format_cpu_list(topo.online))},
        {"sockets", topo.sockets > 0 ? nlohmann::json(topo.sockets) : nlohmann::json(unknown)},
        {"cores", topo.cores > 0 ? nlohmann::json(topo.cores) : nlohmann::json(unknown)},
        {"threads", topo.online.size()},
        {"threads_per_core",
         topo.threads_per_core() > 0 ? nlohmann::json(topo.threads_per_core()) : nlohmann::json(unknown)},
        {"smt_control", or_unknown(topo.smt_control)},
        {"smt_active", or_unknown(topo.smt_active)},
    };
    return cpu;
}

CpuFrequencyFacts frequency_facts(const CpuFrequency& f, const CpuInfo& info) {
    std::optional<CpuFrequencyFacts::Range> current;
    if (f.current_mean) current = CpuFrequencyFacts::Range{*f.current_min, *f.current_mean, *f.current_max};
    return {f.known(),    f.driver,       f.governors,    current, f.policy_min,
            f.policy_max, f.hardware_min, f.hardware_max, f.base,  info.mhz};
}

class HostProbe final : public Probe {
  public:
    std::string id() const override { return "system.host"; }
    std::string layer() const override { return "system"; }
    std::string title() const override { return "Host: OS, CPU, clocks, memory, virtualization"; }
    bool needs_device() const override { return false; }

    void run(ProbeContext&, ProbeResult& out) override {
        const SystemFiles files;
        const HostInfo host = query_host_info();
        const std::string machine = machine_name();
        const CpuInfo cpuinfo = parse_cpuinfo(files.read("/proc/cpuinfo").value_or(""));
        const CpuTopology topo = read_cpu_topology(files, cpuinfo);
        const CpuFrequency freq = read_cpu_frequency(files, topo.online);
        const MemoryFacts mem = read_memory_facts(files);

        out.attributes["os"] = or_unknown(host.os);
        out.attributes["kernel"] = or_unknown(host.kernel);
        out.attributes["cpu"] = cpu_attributes(cpuinfo, topo, machine);
        // Without sysfs's online list, cpuinfo's processor entries are the online CPUs.
        const std::size_t online =
            topo.online.empty() ? static_cast<std::size_t>(cpuinfo.processors) : topo.online.size();
        if (online > 0) out.measurements.push_back(fact("system.cpus.online", "CPUs", static_cast<double>(online)));
        if (topo.cores > 0) out.measurements.push_back(fact("system.cpu.cores", "cores", topo.cores));
        if (const auto max = freq.hardware_max ? freq.hardware_max : freq.policy_max)
            out.measurements.push_back(fact("system.cpu.frequency.max", "MHz", *max));

        record_memory(mem, out);
        record_load(files, out);
        record_timer(files, out);
        const auto [hypervisor, container] = virtualization_facts(files, cpuinfo);
        record_host_facts(out, {frequency_facts(freq, cpuinfo), hypervisor, container});
    }

  private:
    static void record_memory(const MemoryFacts& mem, ProbeResult& out) {
        out.attributes["memory"] = {
            {"total_bytes", or_unknown(mem.total_bytes)},
            {"available_bytes", or_unknown(mem.available_bytes)},
            {"swap_total_bytes", or_unknown(mem.swap_total_bytes)},
            {"swap_used_bytes", or_unknown(mem.swap_used_bytes)},
            {"transparent_hugepages", or_unknown(mem.thp_enabled)},
            {"transparent_hugepages_defrag", or_unknown(mem.thp_defrag)},
        };
        if (mem.total_bytes) out.measurements.push_back(fact("system.memory.total", "GiB", to_gib(*mem.total_bytes)));
        if (mem.available_bytes)
            out.measurements.push_back(fact("system.memory.available", "GiB", to_gib(*mem.available_bytes)));
        if (mem.swap_used_bytes)
            out.measurements.push_back(fact("system.swap.used", "GiB", to_gib(*mem.swap_used_bytes)));
    }

    static void record_load(const SystemFiles& files, ProbeResult& out) {
        const auto load = parse_loadavg(files.read("/proc/loadavg").value_or(""));
        if (!load) {
            out.attributes["load_average"] = unknown;
            return;
        }
        out.attributes["load_average"] = {{"1min", load->one},
                                          {"5min", load->five},
                                          {"15min", load->fifteen},
                                          {"runnable", load->running},
                                          {"tasks", load->tasks}};
        out.measurements.push_back(fact("system.load.average", "tasks", load->one));
    }

    static void record_timer(const SystemFiles& files, ProbeResult& out) {
        nlohmann::json timer = nlohmann::json::object();
        struct timespec res {};
        if (::clock_getres(CLOCK_MONOTONIC, &res) == 0)
            timer["clock_getres_ns"] = static_cast<double>(res.tv_sec) * 1e9 + static_cast<double>(res.tv_nsec);
        else
            timer["clock_getres_ns"] = unknown;
        const auto source = files.read("/sys/devices/system/clocksource/clocksource0/current_clocksource");
        // tsc is read in user space; hpet or acpi_pm cost a system call per reading.
        timer["clocksource"] = source ? nlohmann::json(std::string(text::trim(*source))) : nlohmann::json(unknown);
        std::vector<double> samples;
        for (int i = 0; i < 5; ++i)
            samples.push_back(steady_clock_granularity_ns(std::chrono::milliseconds(4)));
        timer["steady_clock_granularity"] =
            "the shortest step between two differing std::chrono::steady_clock readings (call overhead included), "
            "one sample per round of up to 2000 readings";
        out.attributes["timer"] = timer;
        out.measurements.push_back(
            make_measurement("system.timer.granularity", "ns", {}, std::move(samples), TimerKind::host_steady_clock));
    }

    // The hypervisor and the container the process runs in, if any.
    static std::pair<VirtualizationFacts, VirtualizationFacts> virtualization_facts(const SystemFiles& files,
                                                                                    const CpuInfo& cpuinfo) {
        VirtualizationHints hints;
        hints.cpuid_vendor = cpuid_hypervisor_signature();
        hints.cpuinfo_hypervisor_flag = has_hypervisor_flag(cpuinfo.flags);
        if (const char* c = std::getenv("container")) hints.container_env = c;
        const Virtualization v = detect_virtualization(files, hints);
        return {{v.hypervisor, v.hypervisor_vendor, v.hypervisor_evidence},
                {v.container, v.container_runtime, v.container_evidence}};
    }
};

}  // namespace

std::unique_ptr<Probe> make_host_probe() {
    return std::make_unique<HostProbe>();
}

}  // namespace clprobe
