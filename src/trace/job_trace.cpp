#include "trace/job_trace.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <unordered_map>

#include "core/launcher_env.hpp"
#include "layer/trace_format.hpp"
#include "trace/trace_reader.hpp"

namespace clprobe {

namespace {

constexpr double ns = 1e-9;

double seconds_between(std::uint64_t from, std::uint64_t to) {
    return to > from ? static_cast<double>(to - from) * ns : 0;
}

// The process's own start: its O record (exec: /proc, fork: the fork), else the layer's start.
std::uint64_t start_of(const ProgramTrace& p) {
    return p.origin && p.origin->start ? p.origin->start : p.layer_start;
}

const ReapedProcess* reaped_as(const JobRun& job, const ProgramTrace& p) {
    for (const auto& r : job.reaped)
        if (r.pid == p.pid && r.end_ns >= p.layer_start) return &r;
    return nullptr;
}

// How the process ended and when: clprobe's own wait status first (exact), then the records.
ProcessEnd end_of(const ProgramTrace& p, const JobRun& job, ProcessFacts& f, std::uint64_t& end_ns) {
    if (const ReapedProcess* r = reaped_as(job, p)) {
        end_ns = r->end_ns;
        f.exit_code = r->exit_code;
        f.signal = r->signal;
        return r->signal ? ProcessEnd::killed : ProcessEnd::exited;
    }
    if (p.clean_exit) {
        end_ns = *p.layer_end;
        return ProcessEnd::exit_handler;
    }
    if (p.fatal_signal) {
        end_ns = *p.fatal_signal_at;
        f.signal = p.fatal_signal;
        return ProcessEnd::killed;
    }
    end_ns = p.last_record;
    const bool running =
        std::find(job.still_running.begin(), job.still_running.end(), p.pid) != job.still_running.end();
    return running ? ProcessEnd::still_running : ProcessEnd::no_exit_handler;
}

// Transfers up to this size count as small in a process's own share of trace.transfer.small (the
// rule's own threshold is the device's measured half-peak size, which the analysis does not know;
// it is near this on the devices measured so far).
constexpr std::uint64_t small_transfer_bytes = 1 << 20;

// Per ranked rule: how much of the rule's pattern is in one process's own facts, which names the
// process a job's finding concerns (reports/rules/trace_rule_support: wall_share_finding). Rules
// about one kernel, lane or sequence name its process from their own facts instead.
std::map<std::string, double> pattern_seconds_of(const TraceFacts& f) {
    double pageable = 0, small = 0;
    for (const auto& t : f.transfers) {
        if (t.direction != "h2d" && t.direction != "d2h") continue;
        if (t.path == "pageable") pageable += t.seconds;
        for (const auto& b : t.bins)
            if (b.upper_bytes <= small_transfer_bytes) small += std::max(b.seconds, b.enqueue_seconds);
    }
    return {{"trace.sync.wait_after_kernel", f.sync.gap_seconds},
            {"trace.memory.alloc_in_loop", f.memory.in_loop_call_seconds + f.memory.in_loop_first_use_seconds},
            {"trace.build.repeated", f.builds.repeated_seconds},
            {"trace.build.from_source", std::max(0.0, f.builds.source_seconds - f.builds.repeated_seconds)},
            {"trace.transfer.pageable", pageable},
            {"trace.transfer.small", small},
            {"trace.overlap.serialised", f.device_busy_seconds()},
            {"trace.device.idle_gaps", f.stage_seconds(AppStage::device_idle)}};
}

std::string prefixed(int pid, const std::string& handle) {
    return handle.empty() ? handle : std::to_string(pid) + ":" + handle;
}

}  // namespace

std::vector<ProgramTrace> read_job_records(const std::string& dir) {
    std::vector<ProgramTrace> out;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (!entry.is_regular_file(ec) || !name.ends_with(trace_format::stream_suffix)) continue;
        auto trace = read_program_trace_file(entry.path().string());
        if (trace && !trace->empty()) out.push_back(std::move(*trace));
    }
    std::sort(out.begin(), out.end(), [](const ProgramTrace& a, const ProgramTrace& b) {
        return start_of(a) != start_of(b) ? start_of(a) < start_of(b) : a.pid < b.pid;
    });
    return out;
}

ProgramTrace merge_processes(const std::vector<ProgramTrace>& processes) {
    if (processes.size() == 1) return processes.front();
    ProgramTrace job;
    std::unordered_map<std::string, std::int32_t> kernel_index;
    std::uint32_t thread_base = 0;
    job.clean_exit = !processes.empty();
    for (const ProgramTrace& p : processes) {
        if (job.empty()) {
            job.format_version = p.format_version;
            job.pid = p.pid;
            job.layer_start = p.layer_start;
            job.origin = p.origin;
        }
        job.layer_start = std::min(job.layer_start, p.layer_start);
        job.clean_exit = job.clean_exit && p.clean_exit;
        if (p.layer_end) job.layer_end = std::max(job.layer_end.value_or(0), *p.layer_end);
        job.last_record = std::max(job.last_record, p.last_record);
        job.records += p.records;
        job.unreadable_lines += p.unreadable_lines;
        job.failed_commands += p.failed_commands;

        const auto device_base = static_cast<std::int32_t>(job.devices.size());
        for (TracedDevice d : p.devices) {
            d.handle = prefixed(p.pid, d.handle);
            job.devices.push_back(std::move(d));
        }
        const auto queue_base = static_cast<std::uint32_t>(job.queues.size());
        for (TracedQueue q : p.queues) {
            q.handle = prefixed(p.pid, q.handle);
            q.pid = p.pid;
            if (q.device >= 0) q.device += device_base;
            job.queues.push_back(std::move(q));
        }
        // One kernel of one name across the job: its launches in every process add up.
        std::vector<std::int32_t> kernel_of(p.kernel_names.size());
        for (std::size_t k = 0; k < p.kernel_names.size(); ++k) {
            const auto [it, added] =
                kernel_index.try_emplace(p.kernel_names[k], static_cast<std::int32_t>(job.kernel_names.size()));
            if (added) job.kernel_names.push_back(p.kernel_names[k]);
            kernel_of[k] = it->second;
        }
        std::uint32_t threads = 0;
        for (TracedCommand c : p.commands) {
            c.queue += queue_base;
            if (c.kernel >= 0 && static_cast<std::size_t>(c.kernel) < kernel_of.size()) c.kernel = kernel_of[c.kernel];
            threads = std::max(threads, c.thread);
            c.thread += thread_base;
            c.mem = prefixed(p.pid, c.mem);
            job.commands.push_back(std::move(c));
        }
        for (TracedAggregate a : p.aggregates) {
            a.queue += queue_base;
            if (a.kernel >= 0 && static_cast<std::size_t>(a.kernel) < kernel_of.size()) a.kernel = kernel_of[a.kernel];
            job.aggregates.push_back(std::move(a));
        }
        job.sampling.limited = job.sampling.limited || p.sampling.limited;
        if (p.sampling.since && (!job.sampling.since || *p.sampling.since < *job.sampling.since))
            job.sampling.since = p.sampling.since;
        job.sampling.max_period = std::max(job.sampling.max_period, p.sampling.max_period);
        job.sampling.dropped_writes += p.sampling.dropped_writes;
        job.captures.insert(job.captures.end(), p.captures.begin(), p.captures.end());
        for (TracedWait w : p.waits) {
            if (w.queue) *w.queue += queue_base;
            threads = std::max(threads, w.thread);
            w.thread += thread_base;
            job.waits.push_back(std::move(w));
        }
        for (TracedAllocation a : p.allocations) {
            a.handle = prefixed(p.pid, a.handle);
            job.allocations.push_back(std::move(a));
        }
        for (TracedBuild b : p.builds) {
            threads = std::max(threads, b.thread);
            b.thread += thread_base;
            b.pid = p.pid;
            job.builds.push_back(std::move(b));
        }
        thread_base += threads;
    }
    std::stable_sort(job.commands.begin(), job.commands.end(),
                     [](const TracedCommand& a, const TracedCommand& b) { return a.host_begin < b.host_begin; });
    for (std::size_t i = 0; i < job.commands.size(); ++i)
        job.commands[i].seq = i + 1;
    auto by_begin = [](const auto& a, const auto& b) { return a.host_begin < b.host_begin; };
    std::stable_sort(job.waits.begin(), job.waits.end(), by_begin);
    std::stable_sort(job.builds.begin(), job.builds.end(), by_begin);
    std::stable_sort(
        job.allocations.begin(), job.allocations.end(),
        [](const TracedAllocation& a, const TracedAllocation& b) { return a.created_begin < b.created_begin; });
    return job;
}

std::vector<ProcessFacts> process_facts(const std::vector<ProgramTrace>& processes, const JobRun& job) {
    std::vector<ProcessFacts> out;
    const std::uint64_t job_start = job.program.start_ns;
    for (const ProgramTrace& p : processes) {
        ProcessFacts f;
        f.pid = p.pid;
        if (p.origin) {
            f.ppid = p.origin->ppid;
            f.origin = p.origin->origin;
            f.command_line = p.origin->command_line;
        }
        if (const auto rank = launcher_env_from(p.environment).rank) f.rank = *rank;
        // An exec'd process's start comes from /proc at 10 ms resolution: never before the job's.
        const std::uint64_t start = std::max(start_of(p), job_start);
        std::uint64_t end = 0;
        f.end = end_of(p, job, f, end);
        end = std::max(end, start);
        f.start_seconds = seconds_between(job_start, start);
        f.wall_seconds = seconds_between(start, end);
        f.records_end_seconds = seconds_between(job_start, p.last_record);
        ChildRun own;
        own.start_ns = start;
        own.end_ns = end;
        const TraceAnalysis a = analyse_trace(p, own);
        f.opencl_commands = a.facts.run.opencl_commands;
        f.commands_without_times = a.facts.run.commands_without_times;
        f.device_seconds = a.facts.device_busy_seconds();
        f.stages = a.facts.stages;
        f.pattern_seconds = pattern_seconds_of(a.facts);
        out.push_back(std::move(f));
    }
    return out;
}

ChildRun job_lifetime(const JobRun& job) {
    ChildRun run = job.program;
    run.end_ns = std::max(run.end_ns, job.end_ns);
    return run;
}

TraceAnalysis analyse_job(const std::vector<ProgramTrace>& processes, const ProgramTrace& merged, const JobRun& job,
                          const BandwidthRoofs& roofs) {
    TraceAnalysis out = analyse_trace(merged, job_lifetime(job), roofs);
    out.facts.processes = process_facts(processes, job);
    // Cut short (core/trace_facts.hpp, cut_short): killed or still running when clprobe stopped
    // waiting. A process that ended without exit handlers (a forked worker's _exit), or one its
    // parent ended after its work completed, is complete as far as its records go.
    bool cut = false;
    for (const auto& p : out.facts.processes)
        cut = cut || cut_short(p, out.facts.processes, out.facts.run);
    out.facts.run.layer_clean_exit = !processes.empty() && !cut;
    return out;
}

}  // namespace clprobe
