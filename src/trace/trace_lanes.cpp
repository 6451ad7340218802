#include "trace/trace_lanes.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "trace/device_clock.hpp"

namespace clprobe {

namespace {

// Views into the trace (a command's name, a kernel's name, a wait's op) or into literals: a
// million-command trace makes two million spans, and two strings each doubled their size.
struct Span {
    double start = 0, end = 0;
    std::string_view kind, name;
    std::size_t count = 1;
};

double seconds(std::uint64_t t, std::uint64_t origin) {
    return t > origin ? static_cast<double>(t - origin) * 1e-9 : 0.0;
}

std::string_view kind_of(CommandKind k) {
    return k == CommandKind::kernel ? "kernel" : "transfer";
}

// Merges neighbouring spans of one kind whose gap is below `gap`, widening the gap until the lane
// holds at most the cap; past a pixel's worth (wall / 2000) spans of different kinds merge too,
// under the kind that covers more of the merged time.
std::vector<Span> condensed(std::vector<Span> spans, double wall) {
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
    double gap = wall / 20000;
    while (true) {
        const bool any_kind = gap >= wall / 2000;
        std::vector<Span> out;
        for (auto& s : spans) {
            if (!out.empty() && (any_kind || out.back().kind == s.kind) && s.start - out.back().end <= gap) {
                Span& last = out.back();
                if (last.kind != s.kind) {
                    if (s.end - s.start > last.end - last.start) last.kind = s.kind;
                    last.name = "command";
                }
                last.end = std::max(last.end, s.end);
                if (last.name != s.name) last.name = last.kind;
                last.count += s.count;
                continue;
            }
            out.push_back(std::move(s));
        }
        if (out.size() <= max_spans_per_lane || gap >= wall) return out;
        spans = std::move(out);
        gap *= 4;
    }
}

nlohmann::json lane(const std::string& kind, const std::string& name, std::vector<Span> spans, double wall) {
    nlohmann::json out = {{"kind", kind}, {"name", name}, {"spans", nlohmann::json::array()}};
    for (auto& s : condensed(std::move(spans), wall)) {
        nlohmann::json span = {
            s.start, s.end, std::string(s.kind),
            s.count > 1 ? std::to_string(s.count) + " x " + std::string(s.name) : std::string(s.name)};
        out["spans"].push_back(std::move(span));
    }
    return out;
}

}  // namespace

nlohmann::json timeline_lanes(const ProgramTrace& trace, const ChildRun& run) {
    const std::uint64_t origin = run.start_ns, end = std::max(run.start_ns, run.end_ns);
    const double wall = std::max(1e-9, seconds(end, origin));
    const AlignedTimes aligned = align_device_times(trace, origin, end);
    std::map<std::uint32_t, std::vector<Span>> queues;
    // A host thread's lane per activity (enqueue calls, waits, builds): condensing a lane then never
    // merges one kind into another, so every kind keeps its colour on the page however dense the run.
    std::map<std::pair<std::uint32_t, std::string>, std::vector<Span>> threads;
    for (std::size_t i = 0; i < trace.commands.size(); ++i) {
        const TracedCommand& c = trace.commands[i];
        const std::string_view name =
            c.kind == CommandKind::kernel ? trace.kernel_name(c) : std::string_view(c.command);
        threads[{c.thread, "enqueue"}].push_back(
            {seconds(c.host_begin, origin), seconds(c.host_end, origin), "enqueue", c.command});
        if (!aligned.spans[i]) continue;
        queues[c.queue].push_back({seconds(aligned.spans[i]->begin, origin), seconds(aligned.spans[i]->end, origin),
                                   kind_of(c.kind), name.empty() ? std::string_view(c.command) : name});
    }
    for (const auto& w : trace.waits)
        threads[{w.thread, "wait"}].push_back(
            {seconds(w.host_begin, origin), seconds(w.host_end, origin), "wait", w.op});
    for (const auto& b : trace.builds)
        threads[{b.thread, "build"}].push_back(
            {seconds(b.host_begin, origin), seconds(b.host_end, origin), "build", b.op});
    nlohmann::json lanes = nlohmann::json::array();
    // Queues that ran commands, as the facts count them (overlap.queues).
    for (auto& [q, spans] : queues) {
        std::string name = "queue " + std::to_string(q);
        const std::int32_t d = q < trace.queues.size() ? trace.queues[q].device : -1;
        if (d >= 0 && static_cast<std::size_t>(d) < trace.devices.size()) name += " (" + trace.devices[d].name + ")";
        lanes.push_back(lane("queue", name, std::move(spans), wall));
    }
    for (auto& [key, spans] : threads) {
        lanes.push_back(lane("thread", "host thread " + std::to_string(key.first), std::move(spans), wall));
        lanes.back()["activity"] = key.second;
    }
    return {{"wall_seconds", wall}, {"lanes", std::move(lanes)}};
}

}  // namespace clprobe
