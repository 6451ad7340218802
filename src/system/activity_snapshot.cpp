#include "system/activity_snapshot.hpp"

#include <algorithm>

#include "system/proc_parse.hpp"

namespace clprobe {

namespace {

bool all_digits(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<std::uint64_t> vmstat_value(const std::map<std::string, std::uint64_t>& kv, const char* key) {
    const auto it = kv.find(key);
    return it == kv.end() ? std::nullopt : std::optional<std::uint64_t>(it->second);
}

}  // namespace

ActivitySnapshot take_activity_snapshot(const SystemFiles& files, const std::vector<int>& counted_cpus,
                                        double seconds) {
    ActivitySnapshot s;
    s.seconds = seconds;
    if (const auto t = files.read("/proc/uptime"))
        if (const auto up = parse_uptime(*t)) s.uptime_seconds = *up;
    if (const auto t = files.read("/proc/stat"))
        if (const auto stat = parse_proc_stat(*t)) {
            s.online_cpus = static_cast<int>(stat->per_cpu.size());
            for (const auto& [cpu, times] : stat->per_cpu)
                if (counted_cpus.empty() || std::binary_search(counted_cpus.begin(), counted_cpus.end(), cpu))
                    s.cpus[cpu] = times;
        }
    if (const auto t = files.read("/proc/self/stat"))
        if (const auto self = parse_pid_stat(*t)) s.self_ticks = self->cpu_ticks() + self->cutime + self->cstime;
    if (const auto t = files.read("/proc/vmstat")) {
        const auto kv = parse_key_values(*t);
        s.swap_in_pages = vmstat_value(kv, "pswpin");
        s.swap_out_pages = vmstat_value(kv, "pswpout");
    }
    for (const auto& name : files.list("/proc")) {
        if (!all_digits(name)) continue;
        // A process may exit between the listing and the read: it is simply not in this snapshot.
        const auto t = files.read("/proc/" + name + "/stat");
        if (!t) continue;
        if (const auto p = parse_pid_stat(*t))
            s.processes.push_back(
                {p->pid, p->ppid, p->start_ticks, p->comm, p->cpu_ticks(), p->processor, p->kernel_thread()});
    }
    return s;
}

}  // namespace clprobe
