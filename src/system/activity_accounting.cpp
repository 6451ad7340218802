#include "system/activity_accounting.hpp"

#include <algorithm>

namespace clprobe {

namespace {

std::uint64_t delta(std::uint64_t later, std::uint64_t earlier) {
    // Counters only grow; a smaller later value (a CPU's line reset by hotplug) counts as nothing.
    return later > earlier ? later - earlier : 0;
}

std::optional<std::uint64_t> delta(std::optional<std::uint64_t> later, std::optional<std::uint64_t> earlier) {
    if (!later || !earlier) return std::nullopt;
    return delta(*later, *earlier);
}

}  // namespace

bool ActivityAccounting::is_descendant(int pid, const std::map<int, int>& parent_of) const {
    // A bounded walk: a pid cycle in a racy snapshot must not hang the monitor.
    for (int depth = 0; depth < 64 && pid > 1; ++depth) {
        const auto it = parent_of.find(pid);
        if (it == parent_of.end()) return false;
        pid = it->second;
        if (pid == self_pid_) return true;
    }
    return false;
}

void ActivityAccounting::add(const ActivitySnapshot& s) {
    const bool first = !first_;
    std::map<int, int> parent_of;
    for (const auto& p : s.processes)
        parent_of[p.pid] = p.ppid;
    for (auto& [key, t] : processes_)
        t.alive = false;
    // Ticks since boot when the window started: a process that started after it used all its
    // CPU time inside the window.
    const double window_start_ticks = (first ? s.uptime_seconds : first_->uptime_seconds) * hz_;
    for (const auto& p : s.processes) {
        if (p.pid == self_pid_) continue;
        auto [it, inserted] = processes_.try_emplace({p.pid, p.start_ticks});
        Tracked& t = it->second;
        if (inserted) {
            // One tick of slack: uptime and start times are both rounded to ticks.
            const bool started_inside = !first && static_cast<double>(p.start_ticks) + 1 >= window_start_ticks;
            t.baseline = started_inside ? 0 : p.cpu_ticks;
            t.last = t.baseline;
        }
        // The interval's time counts against the counted CPUs when the process was found on one of
        // them: the CPU it ran on last is all /proc says about where its time went.
        const bool on_counted = p.processor < 0 || s.cpus.empty() || s.cpus.count(p.processor) > 0;
        if (on_counted) t.on_counted += delta(p.cpu_ticks, t.last);
        t.last = std::max(t.last, p.cpu_ticks);
        t.kernel_thread = p.kernel_thread;
        t.comm = p.comm;  // a process may rename itself after exec
        t.alive = true;
        t.descendant = t.descendant || is_descendant(p.pid, parent_of);
    }
    ActivitySnapshot counters = s;
    counters.processes.clear();
    if (first) first_ = counters;
    last_ = std::move(counters);
    ++samples_;
}

ActivitySummary ActivityAccounting::summary(std::size_t top) const {
    ActivitySummary out;
    out.samples = samples_;
    if (!first_ || !last_) return out;
    out.window_seconds = std::max(0.0, last_->seconds - first_->seconds);
    out.logical_cpus = last_->online_cpus;
    std::uint64_t busy = 0, steal = 0, elapsed = 0;
    for (const auto& [cpu, later] : last_->cpus) {
        const auto it = first_->cpus.find(cpu);
        if (it == first_->cpus.end()) continue;  // came online mid-window: no baseline
        out.counted_cpus.push_back(cpu);
        busy += delta(later.busy(), it->second.busy());
        steal += delta(later.steal, it->second.steal);
        elapsed += delta(later.elapsed(), it->second.elapsed());
    }
    out.total_cpu_seconds = static_cast<double>(busy) / hz_;
    out.steal_seconds = static_cast<double>(steal) / hz_;
    out.capacity_seconds = static_cast<double>(elapsed) / hz_;

    // clprobe: its own threads and reaped children (cutime), plus children still running.
    std::uint64_t self = delta(last_->self_ticks, first_->self_ticks);
    std::vector<ProcessActivity> others;
    for (const auto& [key, t] : processes_) {
        const std::uint64_t used = delta(t.last, t.baseline);
        if (t.descendant) {
            if (t.alive) self += used;
            continue;
        }
        if (used > 0 && t.on_counted > 0)
            others.push_back({key.first, t.comm, static_cast<double>(t.on_counted) / hz_, t.kernel_thread});
    }
    out.self_cpu_seconds = static_cast<double>(self) / hz_;
    out.others_cpu_seconds = std::max(0.0, out.total_cpu_seconds - out.self_cpu_seconds);
    std::sort(others.begin(), others.end(), [](const ProcessActivity& a, const ProcessActivity& b) {
        return a.cpu_seconds != b.cpu_seconds ? a.cpu_seconds > b.cpu_seconds : a.pid < b.pid;
    });
    if (others.size() > top) others.resize(top);
    out.top_others = std::move(others);
    out.swap_in_pages = delta(last_->swap_in_pages, first_->swap_in_pages);
    out.swap_out_pages = delta(last_->swap_out_pages, first_->swap_out_pages);
    return out;
}

}  // namespace clprobe
