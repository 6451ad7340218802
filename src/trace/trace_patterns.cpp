#include "trace/trace_patterns.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

namespace clprobe {

ProgramRunFacts run_facts(const ProgramTrace& trace, const ChildRun& run) {
    ProgramRunFacts r;
    r.argv = run.argv;
    r.wall_seconds = run.end_ns > run.start_ns ? static_cast<double>(run.end_ns - run.start_ns) * 1e-9 : 0;
    r.exit_code = run.exit_code;
    r.signal = run.signal;
    r.interrupted = run.interrupted;
    r.layer_loaded = !trace.empty();
    r.linked_opencl = run.linked_opencl || !trace.empty();
    r.layer_clean_exit = trace.clean_exit;
    r.records = trace.records;
    r.unreadable_records = trace.unreadable_lines;
    r.opencl_commands = trace.commands.size();
    r.failed_commands = trace.failed_commands;
    return r;
}

SyncFacts sync_facts(const ProgramTrace& trace, const AlignedTimes& aligned) {
    SyncFacts s;
    // Each thread's waits by start time, to find the first wait after a given moment.
    std::unordered_map<std::uint32_t, std::vector<std::uint64_t>> waits_by_thread;
    for (const auto& w : trace.waits) {
        waits_by_thread[w.thread].push_back(w.host_begin);
        ++s.waits;
        s.wait_seconds += static_cast<double>(w.host_end - w.host_begin) * 1e-9;
    }
    for (auto& [thread, starts] : waits_by_thread)
        std::sort(starts.begin(), starts.end());
    // Kernels per queue in enqueue order, and every command per queue, to find what ran next.
    std::map<std::uint32_t, std::vector<std::size_t>> kernels_by_queue, commands_by_queue;
    for (std::size_t i = 0; i < trace.commands.size(); ++i) {
        const TracedCommand& c = trace.commands[i];
        if (c.kind == CommandKind::kernel) kernels_by_queue[c.queue].push_back(i);
        if (c.kind != CommandKind::sync) commands_by_queue[c.queue].push_back(i);
    }
    for (const auto& [queue, kernels] : kernels_by_queue) {
        const std::vector<std::size_t>& all = commands_by_queue[queue];
        for (std::size_t k = 0; k < kernels.size(); ++k) {
            const TracedCommand& c = trace.commands[kernels[k]];
            ++s.kernels;
            const bool has_next = k + 1 < kernels.size();
            const std::uint64_t until = has_next ? trace.commands[kernels[k + 1]].host_begin : UINT64_MAX;
            const auto it = waits_by_thread.find(c.thread);
            if (it == waits_by_thread.end()) continue;
            const auto first = std::lower_bound(it->second.begin(), it->second.end(), c.host_end);
            if (first == it->second.end() || *first >= until) continue;
            ++s.kernels_followed_by_wait;
            if (!has_next) continue;
            // The idle the wait causes ends when the queue's next command starts, whatever it is:
            // a transfer or fill in between is work the fix would not remove, so it is not counted.
            const auto at = std::lower_bound(all.begin(), all.end(), kernels[k]);
            if (at == all.end() || at + 1 == all.end()) continue;
            const auto& here = aligned.spans[kernels[k]];
            const auto& next = aligned.spans[*(at + 1)];
            if (!here || !next) continue;
            ++s.gaps_measured;
            if (next->begin > here->end) s.gap_seconds += static_cast<double>(next->begin - here->end) * 1e-9;
        }
    }
    return s;
}

BuildFacts build_facts(const ProgramTrace& trace) {
    BuildFacts b;
    std::set<std::tuple<int, std::string, std::uint64_t>> built;
    for (const auto& build : trace.builds) {
        const double seconds = static_cast<double>(build.host_end - build.host_begin) * 1e-9;
        ++b.builds;
        b.seconds += seconds;
        const bool from_source = build.origin == "source" || build.origin == "il";
        if (build.origin == "binary") ++b.from_binary;
        if (!from_source) continue;
        ++b.from_source;
        b.source_seconds += seconds;
        // The same text built again (compile and link steps of one program are one build).
        if (build.op != "link" && !built.insert({build.pid, build.origin, build.source_hash}).second) {
            ++b.repeated;
            b.repeated_seconds += seconds;
        }
    }
    return b;
}

namespace {

// For each in-loop allocation, the first command that names it while it lives.
void add_first_uses(const ProgramTrace& trace, const AlignedTimes& aligned,
                    const std::vector<const TracedAllocation*>& in_loop, AllocationFacts& a) {
    std::unordered_map<std::string, std::vector<std::size_t>> by_mem;  // commands in host order
    for (std::size_t i = 0; i < trace.commands.size(); ++i)
        if (!trace.commands[i].mem.empty()) by_mem[trace.commands[i].mem].push_back(i);
    for (auto& [mem, list] : by_mem)
        std::sort(list.begin(), list.end(), [&](std::size_t x, std::size_t y) {
            return trace.commands[x].host_begin < trace.commands[y].host_begin;
        });
    for (const TracedAllocation* m : in_loop) {
        const auto it = by_mem.find(m->handle);
        if (it == by_mem.end()) continue;
        const auto first = std::find_if(it->second.begin(), it->second.end(), [&](std::size_t i) {
            return trace.commands[i].host_begin >= m->created_begin;
        });
        if (first == it->second.end() || trace.commands[*first].host_begin > *m->released_begin) continue;
        ++a.in_loop_first_uses;
        a.in_loop_first_use_bytes += static_cast<double>(trace.commands[*first].bytes);
        if (aligned.spans[*first]) a.in_loop_first_use_seconds += aligned.spans[*first]->seconds();
    }
}

}  // namespace

AllocationFacts allocation_facts(const ProgramTrace& trace, const AlignedTimes& aligned) {
    AllocationFacts a;
    std::uint64_t first = UINT64_MAX, last = 0;
    for (const auto& c : trace.commands) {
        first = std::min(first, c.host_begin);
        last = std::max(last, c.host_begin);
    }
    struct Change {
        std::uint64_t t;
        double bytes;
    };
    std::vector<Change> changes;
    std::set<std::uint64_t> loop_sizes;
    std::vector<const TracedAllocation*> in_loop;
    for (const auto& m : trace.allocations) {
        ++a.allocations;
        a.largest_bytes = std::max(a.largest_bytes, static_cast<double>(m.bytes));
        // A sub-buffer is a window on its parent's memory: it holds nothing of its own.
        if (m.kind != "subbuffer") changes.push_back({m.created_end, static_cast<double>(m.bytes)});
        if (!m.released_begin) continue;
        ++a.released;
        if (m.kind != "subbuffer") changes.push_back({*m.released_begin, -static_cast<double>(m.bytes)});
        if (m.created_begin >= first && *m.released_end <= last) {
            ++a.in_loop;
            a.in_loop_call_seconds +=
                static_cast<double>((m.created_end - m.created_begin) + (*m.released_end - *m.released_begin)) * 1e-9;
            loop_sizes.insert(m.bytes);
            in_loop.push_back(&m);
        }
    }
    a.in_loop_distinct_sizes = loop_sizes.size();
    add_first_uses(trace, aligned, in_loop, a);
    // Releases before allocations at the same instant: the peak is what was live at once.
    std::sort(changes.begin(), changes.end(),
              [](const Change& x, const Change& y) { return x.t != y.t ? x.t < y.t : x.bytes < y.bytes; });
    double live = 0;
    for (const auto& c : changes) {
        live += c.bytes;
        a.peak_bytes = std::max(a.peak_bytes, live);
    }
    return a;
}

std::vector<TracedDeviceFacts> device_facts(const ProgramTrace& trace, const AlignedTimes& aligned) {
    std::vector<TracedDeviceFacts> out;
    for (const auto& d : trace.devices)
        out.push_back({d.name, d.type, d.vendor, 0, 0});
    for (std::size_t i = 0; i < trace.commands.size(); ++i) {
        const auto& c = trace.commands[i];
        const std::int32_t d = c.queue < trace.queues.size() ? trace.queues[c.queue].device : -1;
        if (d < 0 || static_cast<std::size_t>(d) >= out.size()) continue;
        ++out[static_cast<std::size_t>(d)].commands;
        if (aligned.spans[i]) out[static_cast<std::size_t>(d)].busy_seconds += aligned.spans[i]->seconds();
    }
    return out;
}

}  // namespace clprobe
