#include "trace/job_patterns.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

#include "core/stats.hpp"

namespace clprobe {

namespace {

constexpr double ns = 1e-9;

using Interval = std::pair<std::uint64_t, std::uint64_t>;

// Sorted, disjoint intervals covering the same time as `spans`.
std::vector<Interval> union_of(std::vector<Interval> spans) {
    std::sort(spans.begin(), spans.end());
    std::vector<Interval> out;
    for (const auto& s : spans) {
        if (!out.empty() && s.first <= out.back().second)
            out.back().second = std::max(out.back().second, s.second);
        else
            out.push_back(s);
    }
    return out;
}

double seconds_within(const std::vector<Interval>& spans, std::uint64_t from, std::uint64_t to) {
    double total = 0;
    for (const auto& s : spans) {
        const std::uint64_t a = std::max(s.first, from), b = std::min(s.second, to);
        if (b > a) total += static_cast<double>(b - a) * ns;
    }
    return total;
}

double since(std::uint64_t start, std::uint64_t t) {
    return t > start ? static_cast<double>(t - start) * ns : 0;
}

struct Lane {
    int pid = 0;
    std::int32_t device = -1;
    std::uint64_t commands = 0;
    std::vector<Interval> spans;
};

}  // namespace

void lane_facts(const ProgramTrace& trace, const AlignedTimes& aligned, std::uint64_t job_start, TraceFacts& facts) {
    std::map<std::pair<int, std::int32_t>, Lane> lanes;
    const auto lane_of = [&](std::uint32_t queue) -> Lane& {
        const TracedQueue& q = trace.queues[queue];
        const int pid = q.pid != 0 ? q.pid : trace.pid;
        Lane& lane = lanes[{pid, q.device}];
        lane.pid = pid;
        lane.device = q.device;
        return lane;
    };
    // A queue created and never used still makes a lane: its device idled all along.
    for (std::uint32_t q = 0; q < trace.queues.size(); ++q)
        lane_of(q);
    std::map<int, Interval> windows;  // per process: first enqueue to the last command's end
    for (std::size_t i = 0; i < trace.commands.size(); ++i) {
        const TracedCommand& c = trace.commands[i];
        if (c.queue >= trace.queues.size()) continue;
        Lane& lane = lane_of(c.queue);
        ++lane.commands;
        auto [it, added] = windows.try_emplace(lane.pid, Interval{c.host_begin, c.host_end});
        it->second.first = std::min(it->second.first, c.host_begin);
        it->second.second = std::max(it->second.second, c.host_end);
        const auto& span = aligned.spans[i];
        if (!span || c.kind == CommandKind::sync) continue;
        lane.spans.push_back({span->begin, span->end});
        it->second.second = std::max(it->second.second, span->end);
    }
    facts.lanes.clear();
    facts.balance = {};
    std::vector<std::vector<Interval>> unions;
    std::vector<Interval> lane_windows;
    for (auto& entry : lanes) {
        Lane& lane = entry.second;
        const auto w = windows.find(lane.pid);
        if (w == windows.end()) continue;  // a process without commands has no window to be idle in
        DeviceLaneFacts f;
        f.pid = lane.pid;
        f.device = lane.device >= 0 && static_cast<std::size_t>(lane.device) < trace.devices.size()
                       ? trace.devices[static_cast<std::size_t>(lane.device)].name
                       : "unknown device";
        f.commands = lane.commands;
        unions.push_back(union_of(std::move(lane.spans)));
        f.busy_seconds = seconds_within(unions.back(), 0, UINT64_MAX);
        f.begin_seconds = since(job_start, w->second.first);
        f.end_seconds = since(job_start, w->second.second);
        lane_windows.push_back(w->second);
        facts.lanes.push_back(std::move(f));
    }
    if (facts.lanes.size() < 2) return;
    std::size_t busiest = 0;
    for (std::size_t i = 1; i < facts.lanes.size(); ++i)
        if (facts.lanes[i].busy_seconds > facts.lanes[busiest].busy_seconds) busiest = i;
    // Against each other lane over the span both were active; the one it out-worked most.
    double best = -1;
    for (std::size_t j = 0; j < facts.lanes.size(); ++j) {
        if (j == busiest) continue;
        const std::uint64_t from = std::max(lane_windows[busiest].first, lane_windows[j].first);
        const std::uint64_t to = std::min(lane_windows[busiest].second, lane_windows[j].second);
        if (to <= from) continue;
        const double busy = seconds_within(unions[busiest], from, to);
        const double other = seconds_within(unions[j], from, to);
        if (busy - other <= best) continue;
        best = busy - other;
        facts.balance = {static_cast<std::int32_t>(busiest), static_cast<std::int32_t>(j),
                         static_cast<double>(to - from) * ns, busy, other};
    }
}

std::vector<FusionFacts> fusion_facts(const ProgramTrace& trace, const AlignedTimes& aligned) {
    // Each thread's waits by start: a wait between two launches breaks their run (a gap the host
    // made by waiting is the sync rule's, not a launch gap).
    std::unordered_map<std::uint32_t, std::vector<std::uint64_t>> waits_by_thread;
    for (const auto& w : trace.waits)
        waits_by_thread[w.thread].push_back(w.host_begin);
    for (auto& entry : waits_by_thread)
        std::sort(entry.second.begin(), entry.second.end());
    const auto waited_between = [&](const TracedCommand& a, const TracedCommand& b) {
        const auto it = waits_by_thread.find(a.thread);
        if (it == waits_by_thread.end()) return false;
        const auto first = std::lower_bound(it->second.begin(), it->second.end(), a.host_end);
        return first != it->second.end() && *first < b.host_begin;
    };

    struct Group {
        FusionFacts facts;
        std::vector<double> kernel_samples, gap_samples;
    };
    std::map<std::pair<int, std::vector<std::int32_t>>, Group> groups;
    const auto add_run = [&](const std::vector<std::size_t>& run) {
        if (run.size() < 2) return;
        std::vector<std::int32_t> names;
        for (std::size_t i : run)
            names.push_back(trace.commands[i].kernel);
        std::size_t period = 0;
        for (std::size_t p = 1; p <= std::min(max_fusion_sequence, names.size()) && period == 0; ++p) {
            bool repeats = true;
            for (std::size_t i = p; i < names.size() && repeats; ++i)
                repeats = names[i] == names[i - p];
            if (repeats) period = p;
        }
        if (period == 0) return;  // longer than max_fusion_sequence and not repeating
        const std::vector<std::int32_t> sequence(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(period));
        const int pid = trace.pid_of(trace.commands[run.front()]);
        Group& g = groups[{pid, sequence}];
        if (g.facts.sequence.empty()) {
            g.facts.pid = pid;
            for (std::int32_t k : sequence)
                g.facts.sequence.emplace_back(trace.kernel_names[static_cast<std::size_t>(k)]);
        }
        g.facts.occurrences += std::max<std::size_t>(1, run.size() / period);
        g.facts.kernels += run.size();
        for (std::size_t r = 0; r < run.size(); ++r) {
            const HostSpan& span = *aligned.spans[run[r]];
            g.facts.kernel_seconds += span.seconds();
            g.kernel_samples.push_back(span.seconds());
            if (r == 0) continue;
            const HostSpan& previous = *aligned.spans[run[r - 1]];
            const double gap = span.begin > previous.end ? static_cast<double>(span.begin - previous.end) * ns : 0;
            g.facts.gap_seconds += gap;
            g.gap_samples.push_back(gap);
            // Fusing the sequence removes the gaps inside one occurrence; the gap before the next
            // occurrence stays (one kernel repeated: one launch over all of them removes every gap).
            if (period == 1 || r % period != 0) {
                ++g.facts.removable_gaps;
                g.facts.removable_gap_seconds += gap;
            }
        }
    };

    std::map<std::uint32_t, std::vector<std::size_t>> by_queue;
    for (std::size_t i = 0; i < trace.commands.size(); ++i)
        by_queue[trace.commands[i].queue].push_back(i);
    for (const auto& entry : by_queue) {
        std::vector<std::size_t> run;
        for (std::size_t i : entry.second) {
            const TracedCommand& c = trace.commands[i];
            if (c.kind == CommandKind::sync) continue;  // markers and barriers order, they do not launch
            const bool joins = c.kind == CommandKind::kernel && c.kernel >= 0 &&
                               static_cast<std::size_t>(c.kernel) < trace.kernel_names.size() && aligned.spans[i];
            if (joins && !run.empty() && waited_between(trace.commands[run.back()], c)) {
                add_run(run);
                run.clear();
            }
            if (joins) {
                run.push_back(i);
                continue;
            }
            add_run(run);
            run.clear();
        }
        add_run(run);
    }

    std::vector<FusionFacts> out;
    for (auto& entry : groups) {
        Group& g = entry.second;
        g.facts.median_kernel_seconds = upper_median(std::move(g.kernel_samples));
        g.facts.median_gap_seconds = upper_median(std::move(g.gap_samples));
        out.push_back(std::move(g.facts));
    }
    std::stable_sort(out.begin(), out.end(), [](const FusionFacts& a, const FusionFacts& b) {
        return a.removable_gap_seconds > b.removable_gap_seconds;
    });
    if (out.size() > max_fusion_facts) out.resize(max_fusion_facts);
    return out;
}

}  // namespace clprobe
