#include "trace/trace_analysis.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <unordered_map>

#include "core/stats.hpp"
#include "trace/app_measurements.hpp"
#include "trace/capture_time.hpp"
#include "trace/capture_windows.hpp"
#include "trace/device_clock.hpp"
#include "trace/job_patterns.hpp"
#include "trace/trace_patterns.hpp"

namespace clprobe {

namespace {

constexpr double ns = 1e-9;

// What occupies a moment of the program's lifetime, in the order AppStage gives them priority.
enum Occupant : int { kernel_running, transfer_running, build_running, host_waiting, in_window, occupants };

struct Edge {
    std::uint64_t t;
    int occupant;
    int delta;
};

struct Sweep {
    std::array<double, static_cast<std::size_t>(AppStage::host_only) + 1> stage{};
    double kernel_union = 0, transfer_union = 0, both = 0;
};

// Walks every interval's edges once; each stretch between two edges goes to the first occupant
// present (AppStage order), so the stages partition the wall time exactly.
Sweep sweep(std::vector<Edge>& edges, std::uint64_t begin, std::uint64_t end) {
    std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.t < b.t; });
    Sweep s;
    std::array<int, occupants> active{};
    std::uint64_t previous = begin;
    const auto account = [&](std::uint64_t until) {
        if (until <= previous) return;
        const double d = static_cast<double>(until - previous) * ns;
        AppStage stage = active[in_window] > 0 ? AppStage::device_idle : AppStage::host_only;
        if (active[host_waiting] > 0) stage = AppStage::host_wait;
        if (active[build_running] > 0) stage = AppStage::build;
        if (active[transfer_running] > 0) stage = AppStage::transfer;
        if (active[kernel_running] > 0) stage = AppStage::kernel;
        s.stage[static_cast<std::size_t>(stage)] += d;
        if (active[kernel_running] > 0) s.kernel_union += d;
        if (active[transfer_running] > 0) s.transfer_union += d;
        if (active[kernel_running] > 0 && active[transfer_running] > 0) s.both += d;
        previous = until;
    };
    for (const Edge& e : edges) {
        account(std::clamp(e.t, begin, end));
        active[e.occupant] += e.delta;
    }
    account(end);
    return s;
}

void add_interval(std::vector<Edge>& edges, Occupant who, std::uint64_t from, std::uint64_t to) {
    if (to <= from) return;
    edges.push_back({from, who, +1});
    edges.push_back({to, who, -1});
}

Occupant occupant_of(CommandKind kind) {
    return kind == CommandKind::kernel ? kernel_running : transfer_running;
}

std::vector<AppStageTime> stages_of(const Sweep& s) {
    std::vector<AppStageTime> out;
    for (AppStage stage : all_app_stages)
        out.push_back({stage, s.stage[static_cast<std::size_t>(stage)]});
    return out;
}

// The stages and the overlap of kernels with transfers.
void time_stages(const ProgramTrace& trace, const AlignedTimes& aligned, const ChildRun& run, TraceFacts& facts) {
    std::vector<Edge> edges;
    edges.reserve(trace.commands.size() * 2 + trace.waits.size() * 2 + 8);
    std::uint64_t window_begin = UINT64_MAX, window_end = 0;
    std::set<std::uint32_t> queues;
    for (std::size_t i = 0; i < trace.commands.size(); ++i) {
        const TracedCommand& c = trace.commands[i];
        window_begin = std::min(window_begin, c.host_begin);
        window_end = std::max(window_end, c.host_end);
        const auto& span = aligned.spans[i];
        if (!span || c.kind == CommandKind::sync) continue;
        add_interval(edges, occupant_of(c.kind), span->begin, span->end);
        window_end = std::max(window_end, span->end);
        queues.insert(c.queue);
    }
    for (const auto& w : trace.waits)
        add_interval(edges, host_waiting, w.host_begin, w.host_end);
    for (const auto& b : trace.builds)
        add_interval(edges, build_running, b.host_begin, b.host_end);
    if (window_begin < window_end) add_interval(edges, in_window, window_begin, window_end);
    const Sweep s = sweep(edges, run.start_ns, std::max(run.start_ns, run.end_ns));
    facts.stages = stages_of(s);
    facts.overlap = {s.kernel_union, s.transfer_union, s.both, static_cast<std::uint32_t>(queues.size())};
}

// Per kernel name: launches, device time, the bytes of its buffer arguments.
std::vector<KernelFacts> kernel_facts(const ProgramTrace& trace, const AlignedTimes& aligned,
                                      std::vector<std::vector<double>>& launch_seconds) {
    std::vector<KernelFacts> out(trace.kernel_names.size());
    launch_seconds.assign(trace.kernel_names.size(), {});
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i].name = trace.kernel_names[i];
    for (std::size_t i = 0; i < trace.commands.size(); ++i) {
        const TracedCommand& c = trace.commands[i];
        if (c.kind != CommandKind::kernel || c.kernel < 0) continue;
        KernelFacts& k = out[static_cast<std::size_t>(c.kernel)];
        ++k.launches;
        k.global_items = std::max(k.global_items, c.global_items);
        // The layer writes "0" for a NULL local size (the driver chooses the work-group).
        if (c.local == "0") ++k.auto_local_launches;
        if (const int pid = trace.pid_of(c); std::find(k.pids.begin(), k.pids.end(), pid) == k.pids.end()) {
            k.pids.insert(std::upper_bound(k.pids.begin(), k.pids.end(), pid), pid);
        }
        if (!aligned.spans[i]) continue;
        const double d = aligned.spans[i]->seconds();
        k.seconds += d;
        k.bytes += static_cast<double>(c.bytes);
        launch_seconds[static_cast<std::size_t>(c.kernel)].push_back(d);
    }
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i].median_launch_seconds = upper_median(launch_seconds[i]);  // a copy: the samples are recorded later
    return out;
}

// Direction and path of a command that moves data.
std::pair<std::string, std::string> transfer_key(const TracedCommand& c) {
    const std::string memory(to_string(c.host_memory));
    switch (c.kind) {
        case CommandKind::write:
            return {"h2d", memory};
        case CommandKind::read:
            return {"d2h", memory};
        case CommandKind::copy:
            return {"d2d", "copy"};
        case CommandKind::fill:
            return {"fill", "fill"};
        case CommandKind::map:
            return {"map", "map"};
        case CommandKind::unmap:
            return {"map", "unmap"};
        case CommandKind::svm:
            return {"svm", c.command};
        case CommandKind::migrate:
            return {"migrate", "migrate"};
        default:
            return {"", ""};
    }
}

std::uint64_t bin_of(std::uint64_t bytes) {
    std::uint64_t upper = 1;
    while (upper < bytes && upper < (std::uint64_t{1} << 62))
        upper <<= 1;
    return upper;
}

std::vector<TransferFacts> transfer_facts(const ProgramTrace& trace, const AlignedTimes& aligned,
                                          std::vector<std::vector<double>>& rates) {
    std::map<std::pair<std::string, std::string>, std::size_t> index;
    std::vector<TransferFacts> out;
    rates.clear();
    for (std::size_t i = 0; i < trace.commands.size(); ++i) {
        const TracedCommand& c = trace.commands[i];
        auto key = transfer_key(c);
        if (key.first.empty()) continue;
        const auto [it, added] = index.try_emplace(key, out.size());
        if (added) {
            out.push_back({key.first, key.second, 0, 0, 0, 0, {}});
            rates.emplace_back();
        }
        TransferFacts& t = out[it->second];
        const double seconds = aligned.spans[i] ? aligned.spans[i]->seconds() : 0;
        ++t.count;
        t.bytes += static_cast<double>(c.bytes);
        t.seconds += seconds;
        t.blocking += c.blocking ? 1 : 0;
        const std::uint64_t upper = bin_of(c.bytes);
        auto bin =
            std::find_if(t.bins.begin(), t.bins.end(), [&](const TransferBin& b) { return b.upper_bytes == upper; });
        if (bin == t.bins.end()) bin = t.bins.insert(t.bins.end(), TransferBin{upper, 0, 0, 0, 0});
        ++bin->count;
        bin->bytes += static_cast<double>(c.bytes);
        bin->seconds += seconds;
        bin->enqueue_seconds += static_cast<double>(c.host_end - c.host_begin) * 1e-9;
        if (seconds > 0 && c.bytes > 0) rates[it->second].push_back(static_cast<double>(c.bytes) / seconds * 1e-9);
    }
    for (auto& t : out)
        std::sort(t.bins.begin(), t.bins.end(),
                  [](const TransferBin& a, const TransferBin& b) { return a.upper_bytes < b.upper_bytes; });
    return out;
}

}  // namespace

ProbeResult program_probe_result(TraceAnalysis analysis) {
    ProbeResult r;
    r.id = trace_probe_id;
    r.layer = "trace";
    r.title = "The traced program";
    r.wall_seconds = analysis.facts.run.wall_seconds;
    r.measurements = std::move(analysis.measurements);
    record_trace_facts(r, analysis.facts);
    return r;
}

namespace {

TraceAnalysis analyse_aligned(const ProgramTrace& trace, const AlignedTimes& aligned, const ChildRun& run,
                              const BandwidthRoofs& roofs);

}  // namespace

TraceAnalysis analyse_trace(const ProgramTrace& trace, const ChildRun& run, const BandwidthRoofs& roofs) {
    const AlignedTimes aligned = align_device_times(trace, run.start_ns, run.end_ns);
    if (trace.captures.empty()) return analyse_aligned(trace, aligned, run, roofs);
    // The layer's capture work, cut out: the program is analysed as it runs without it.
    const TimeCut cut = capture_cut(trace, aligned, run);
    TraceAnalysis out = analyse_aligned(cut.apply(trace), cut.apply(aligned), cut.apply(run), roofs);
    out.facts.run.capture_seconds = static_cast<double>(cut.total_ns()) * 1e-9;
    return out;
}

namespace {

TraceAnalysis analyse_aligned(const ProgramTrace& trace, const AlignedTimes& aligned, const ChildRun& run,
                              const BandwidthRoofs& roofs) {
    TraceAnalysis out;
    TraceFacts& f = out.facts;
    f.run = run_facts(trace, run);
    f.run.commands_without_times = aligned.missing;
    time_stages(trace, aligned, run, f);
    std::vector<std::vector<double>> launch_seconds, rates;
    f.kernels = kernel_facts(trace, aligned, launch_seconds);
    f.transfers = transfer_facts(trace, aligned, rates);
    f.sync = sync_facts(trace, aligned);
    f.builds = build_facts(trace);
    f.memory = allocation_facts(trace, aligned);
    f.devices = device_facts(trace, aligned);
    lane_facts(trace, aligned, run.start_ns, f);
    f.fusion = fusion_facts(trace, aligned);
    // Commands sampled out of the timeline (--max-size): in the totals, not in the stages.
    add_aggregates(trace, f);
    out.measurements = app_measurements(f, launch_seconds, rates, roofs);
    // Largest device time first: the order a user reads them in.
    std::vector<std::size_t> order(f.kernels.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return f.kernels[a].seconds > f.kernels[b].seconds; });
    std::vector<KernelFacts> sorted;
    for (std::size_t i : order)
        if (f.kernels[i].launches > 0) sorted.push_back(f.kernels[i]);
    f.kernels = std::move(sorted);
    return out;
}

}  // namespace

}  // namespace clprobe
