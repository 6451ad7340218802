#pragma once
// Synthetic program traces for the trace reader, analysis and rule tests: a builder that lays
// commands, waits, builds and allocations on a timeline in microseconds, with the device's clock
// offset from the host's by a large constant (as a real GPU's is), and a report that holds the
// analysed program and whatever ceilings a test gives it.
#include <string>
#include <vector>

#include "core/report.hpp"
#include "rule_test_support.hpp"
#include "rules/trace_rules.hpp"
#include "trace/trace_analysis.hpp"

namespace clprobe::test {

class TraceBuilder {
  public:
    // Device time = host time + this many ns: the analysis must find and remove it.
    static constexpr std::uint64_t device_offset = 7'000'000'000'000ull;
    static constexpr std::uint64_t origin = 1'000'000'000ull;  // the child's start, host ns

    TraceBuilder() {
        trace.format_version = 1;
        trace.pid = 42;
        trace.layer_start = origin;
        trace.clean_exit = true;
        trace.devices.push_back({"d1", "cpu", "Synthetic", "Synthetic device"});
        trace.queues.push_back({"q1", 0, origin, true});
    }

    static std::uint64_t at(double us) { return origin + static_cast<std::uint64_t>(us * 1000); }

    // A command enqueued at `enqueue_us` (the call takes 1 us) that runs [start_us, end_us) on the device.
    TraceBuilder& command(const std::string& name, CommandKind kind, double enqueue_us, double start_us, double end_us,
                          std::uint64_t bytes = 0, HostMemory memory = HostMemory::none, std::uint32_t thread = 1) {
        TracedCommand c;
        c.seq = trace.commands.size() + 1;
        c.host_begin = at(enqueue_us);
        c.host_end = at(enqueue_us + 1);
        c.thread = thread;
        c.queue = 0;
        c.command = name;
        c.kind = kind;
        c.bytes = bytes;
        c.host_memory = memory;
        c.device = DeviceTimes{at(enqueue_us + 0.5) + device_offset, at(start_us) + device_offset,
                               at(start_us) + device_offset, at(end_us) + device_offset, 0};
        trace.commands.push_back(c);
        return *this;
    }

    TraceBuilder& kernel(const std::string& name, double enqueue_us, double start_us, double end_us,
                         std::uint64_t bytes = 0) {
        auto it = std::find(trace.kernel_names.begin(), trace.kernel_names.end(), name);
        if (it == trace.kernel_names.end()) it = trace.kernel_names.insert(trace.kernel_names.end(), name);
        command("kernel", CommandKind::kernel, enqueue_us, start_us, end_us, bytes);
        trace.commands.back().kernel = static_cast<std::int32_t>(it - trace.kernel_names.begin());
        trace.commands.back().global_items = 1024;
        return *this;
    }

    TraceBuilder& wait(double begin_us, double end_us, std::uint32_t thread = 1) {
        trace.waits.push_back({at(begin_us), at(end_us), thread, "finish", 0});
        return *this;
    }

    TraceBuilder& build(double begin_us, double end_us, std::uint64_t hash, const std::string& origin = "source") {
        trace.builds.push_back({at(begin_us), at(end_us), "build", origin, hash, 0, 1});
        return *this;
    }

    TraceBuilder& allocation(std::uint64_t bytes, double created_us, std::optional<double> released_us,
                             double call_us = 1) {
        TracedAllocation a;
        a.handle = "m" + std::to_string(trace.allocations.size());
        a.kind = "buffer";
        a.bytes = bytes;
        a.created_begin = at(created_us);
        a.created_end = at(created_us + call_us);
        if (released_us) {
            a.released_begin = at(*released_us);
            a.released_end = at(*released_us + call_us);
        }
        trace.allocations.push_back(a);
        return *this;
    }

    ChildRun run(double wall_us) const {
        ChildRun r;
        r.argv = {"./synthetic"};
        r.start_ns = origin;
        r.end_ns = at(wall_us);
        r.exit_code = 0;
        r.linked_opencl = true;
        return r;
    }

    ProgramTrace trace;
};

// A trace report: the analysed program plus the given ceiling measurements.
inline RunReport trace_report(const ProgramTrace& trace, const ChildRun& run, std::vector<Measurement> ceilings = {},
                              std::optional<double> peak = std::nullopt) {
    TraceAnalysis a = analyse_trace(trace, run, BandwidthRoofs{std::nullopt, peak});
    RunReport r;
    DeviceInfo d;
    d.name = "Synthetic device";
    d.type = "cpu";
    d.global_mem_bytes = 1ull << 30;
    d.max_alloc_bytes = 1ull << 28;
    r.device = d;
    ProbeResult ceilings_probe;
    ceilings_probe.id = "kernel.ceilings";
    ceilings_probe.layer = "kernel";
    ceilings_probe.measurements = std::move(ceilings);
    r.results.push_back(std::move(ceilings_probe));
    r.results.push_back(program_probe_result(std::move(a)));
    return r;
}

// The counted work `trace --work` would have added for a kernel (facts.work), as the report stores it.
inline void add_counted_work(RunReport& r, KernelWorkFacts w) {
    for (auto& result : r.results) {
        if (result.id != trace_probe_id) continue;
        auto facts = trace_facts_from_json(result.attributes["facts"]);
        REQUIRE(facts);
        facts->work.push_back(std::move(w));
        record_trace_facts(result, *facts);
    }
}

// A counted launch of a kernel: `bytes` loaded (and as many distinct), `flops` fp32, exact.
inline KernelWorkFacts counted_work(const std::string& kernel, double launch_seconds, double bytes, double flops = 0,
                                    double int_ops = 0) {
    KernelWorkFacts w;
    w.kernel = kernel;
    w.counted = true;
    w.method = "exact";
    w.groups_total = w.groups_counted = w.groups_covered = 1;
    w.launch_seconds = launch_seconds;
    w.like_launches = 1;
    w.global_load_bytes = bytes;
    w.footprint_bytes = bytes;
    w.flops_fp32 = flops;
    w.int_ops = int_ops;
    return w;
}

inline Measurement ceiling(const std::string& metric, const std::string& unit, double value, Labels labels = {},
                           bool higher_is_better = true) {
    return make_measurement(metric, unit, std::move(labels), {value, value, value}, TimerKind::device_profiling,
                            higher_is_better);
}

// The one finding of a trace rule run, by value: callers pass the temporary report run_trace_rule
// returns (rule_test_support's only_finding returns a reference into the report).
inline Finding only_trace_finding(const RunReport& r, const std::string& id) {
    REQUIRE(r.findings.size() == 1);
    CHECK(r.findings[0].id == id);
    return r.findings[0];
}

// One trace rule run through the analysis, as the tool runs it.
inline RunReport run_trace_rule(const RunReport& r, const std::string& id) {
    return analyzed(r, trace_rules(), id);
}

}  // namespace clprobe::test
