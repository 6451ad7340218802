#include "rules/trace_rules.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "rules/trace_rule_support.hpp"

// Rules about the program as a whole: whether it was traced at all, how it ended, where its time
// went between host and device, and waits after kernels.
namespace clprobe {

using namespace trace_rule;

namespace {

// A pattern repeated this often is a habit of the program, not an accident of start-up.
constexpr std::uint64_t min_kernels_for_sync = 50;
constexpr double sync_fraction = 0.8;
constexpr double idle_share = 0.2;
// A program whose device is busy less than this is host-bound.
constexpr double busy_share_of_device_program = 0.1;
constexpr double host_bound_share = 0.5;

RuleOutcome no_opencl(const RunReport&, const TraceFacts& f, const RuleSpec& rule) {
    if (f.run.opencl_commands > 0 || (!f.run.layer_loaded && f.run.linked_opencl)) return RuleOutcome::none();
    Finding finding =
        rule.finding(Severity::info, f.run.layer_loaded ? "The program set up OpenCL but enqueued no command"
                                                        : "No OpenCL call was seen: the program does not use OpenCL");
    finding.confidence = 1.0;  // a fact of this run, not a comparison
    finding.evidence.push_back(fact("app.wall_time", f.run.wall_seconds, "s", "the program's lifetime"));
    finding.suggestion =
        "Nothing on the device to diagnose. If the program should use OpenCL, check that it finds a platform "
        "(clinfo) and that it is the binary you meant to trace (a wrapper script may start another one).";
    return RuleOutcome::found(std::move(finding));
}

RuleOutcome layer_not_loaded(const RunReport&, const TraceFacts& f, const RuleSpec& rule) {
    if (f.run.layer_loaded || !f.run.linked_opencl) return RuleOutcome::none();
    Finding finding =
        rule.finding(Severity::high, "The program loaded an OpenCL library, but clprobe's layer recorded nothing");
    finding.confidence = 1.0;  // a fact of this run, not a comparison
    finding.suggestion =
        "The ICD loader the program uses did not load layers: OPENCL_LAYERS needs ocl-icd 2.3 or later or the "
        "Khronos loader. Check with `ldd PROGRAM | grep OpenCL` that it links the system libOpenCL.so.1 (not a "
        "vendor copy bundled with the program), and run `OPENCL_LAYERS=/path/to/libclprobe_trace_layer.so clinfo` "
        "to see whether that loader honours layers.";
    return RuleOutcome::found(std::move(finding));
}

// The processes of the job that were cut short (core/trace_facts.hpp, cut_short): killed, or still
// running when clprobe stopped waiting. One that ended without exit handlers (a forked worker's
// _exit), or that its parent ended once its work was done, kept every record, so it is not among them.
std::string cut_processes(const TraceFacts& f) {
    std::string out;
    for (const auto& p : f.processes) {
        std::string how;
        if (!cut_short(p, f.processes, f.run))
            continue;
        else if (p.end == ProcessEnd::killed)
            how = p.signal ? fmt::format("killed by signal {}", *p.signal) : "killed";
        else if (p.end == ProcessEnd::still_running)
            how = fmt::format("still running, its records end at {} after {} commands",
                              seconds_text(p.records_end_seconds), p.opencl_commands);
        else
            continue;
        out += fmt::format("{}pid {} ({}) {}", out.empty() ? "" : "; ", p.pid,
                           p.command_line.empty() ? "?" : p.command_line.substr(0, 60), how);
    }
    return out;
}

RuleOutcome incomplete(const RunReport&, const TraceFacts& f, const RuleSpec& rule) {
    const bool killed = f.run.signal.has_value();
    if (!killed && !f.run.interrupted && (f.run.layer_clean_exit || !f.run.layer_loaded)) return RuleOutcome::none();
    const std::string cut = cut_processes(f);
    std::string how = killed              ? fmt::format("was killed by signal {}", *f.run.signal)
                      : f.run.interrupted ? "was interrupted"
                      : !cut.empty()      ? "ended, but not every process of it did"
                                          : "ended without the layer seeing a normal exit";
    Finding finding = rule.finding(Severity::medium,
                                   fmt::format("The program {}: the report covers what was recorded until then", how));
    finding.confidence = 1.0;  // a fact of this run, not a comparison
    finding.evidence.push_back(fact("app.wall_time", f.run.wall_seconds, "s", "the program's lifetime"));
    finding.suggestion = fmt::format(
        "{}{} commands of {} had not completed when the program ended; their device time is missing. Trace a run "
        "that finishes to see the whole program{}.",
        cut.empty() ? "" : "Cut short: " + cut + ". ", f.run.commands_without_times, f.run.opencl_commands,
        f.processes.empty() ? "" : " (--wait-descendants waits longer for descendants)");
    return RuleOutcome::found(std::move(finding));
}

RuleOutcome host_bound(const RunReport&, const TraceFacts& f, const RuleSpec& rule) {
    if (f.run.wall_seconds <= 0 || f.run.opencl_commands == 0) return RuleOutcome::none();
    const double host = f.stage_seconds(AppStage::device_idle) + f.stage_seconds(AppStage::host_only);
    const double busy = f.device_busy_seconds() / f.run.wall_seconds;
    if (host / f.run.wall_seconds < host_bound_share || busy >= busy_share_of_device_program)
        return RuleOutcome::none();
    Finding finding =
        rule.finding(Severity::medium,
                     fmt::format("The program spends {:.0f}% of its time on the host; the device is busy {:.1f}% of it",
                                 100 * host / f.run.wall_seconds, 100 * busy));
    finding.confidence = 1.0;  // a fact of this run, not a comparison
    finding.evidence = {fact("app.device.busy_fraction", busy, "fraction", "the device's share of the wall time"),
                        fact("app.pipeline.stage_time", host, "s",
                             "device idle while the host works, and outside "
                             "any OpenCL work",
                             {{"stage", "host"}})};
    finding.suggestion =
        "Device-side changes cannot speed this program up much: profile its host code (perf record, gprof) first. "
        "Offloading more of that host work to the device is the only device-side lever.";
    return RuleOutcome::found(std::move(finding));
}

RuleOutcome wait_after_kernel(const RunReport& r, const TraceFacts& f, const RuleSpec& rule) {
    const SyncFacts& s = f.sync;
    if (s.kernels < min_kernels_for_sync || double(s.kernels_followed_by_wait) < sync_fraction * double(s.kernels))
        return RuleOutcome::none();
    const Measurement* b2b = headline(r, "kernel.launch.latency", {{"kind", "back_to_back"}});
    const double pipelined = b2b ? b2b->summary.median * 1e-6 : 0.0;
    // Only the device idle the waits cause (the gap from a waited-for kernel to its queue's next
    // command), less what a pipelined launch costs anyway; wall_share_finding bounds it by the
    // host_wait and device_idle stages.
    const double saved =
        std::min(std::max(0.0, s.gap_seconds - double(s.gaps_measured) * pipelined), removable_seconds(f, rule.id));
    if (!worth_reporting(f, saved)) return RuleOutcome::none();
    Finding finding = wall_share_finding(
        rule, f,
        fmt::format("The host waits after {} of {} kernel launches; the device sits idle between them",
                    s.kernels_followed_by_wait, s.kernels),
        saved,
        b2b ? "device idle from each waited-for kernel to its queue's next command, less the pipelined launch gap "
              "measured here"
            : "device idle from each waited-for kernel to its queue's next command (no pipelined launch gap measured: "
              "--no-ceilings?)");
    finding.evidence.push_back(
        fact("app.sync.gap_time", s.gap_seconds, "s",
             fmt::format("device idle after {} waited-for kernels, until the next command started", s.gaps_measured)));
    if (b2b) finding.evidence.push_back(evidence_of(*b2b, "a launch queued behind another (this device)"));
    finding.suggestion =
        "Do not call clFinish, clWaitForEvents or a blocking read after each kernel: enqueue the whole step (or "
        "several) and wait once, expressing dependencies with events; read results with one blocking call at the end.";
    return RuleOutcome::found(std::move(finding));
}

RuleOutcome idle_gaps(const RunReport&, const TraceFacts& f, const RuleSpec& rule) {
    if (f.run.wall_seconds <= 0) return RuleOutcome::none();
    const double idle = f.stage_seconds(AppStage::device_idle);
    const double busy = f.device_busy_seconds();
    if (idle / f.run.wall_seconds < idle_share || busy / f.run.wall_seconds < busy_share_of_device_program)
        return RuleOutcome::none();
    // Host work overlapped with device work hides the shorter of the two at best.
    const double saved = std::min(idle, busy);
    if (!worth_reporting(f, saved)) return RuleOutcome::none();
    Finding finding = wall_share_finding(
        rule, f,
        fmt::format("The device is idle {:.0f}% of the time while the host works between commands",
                    100 * idle / f.run.wall_seconds),
        saved, "the shorter of the device's idle gaps and its busy time, which overlapping could hide");
    finding.evidence.push_back(
        fact("app.pipeline.stage_time", idle, "s", "device idle while the host works", {{"stage", "device_idle"}}));
    finding.suggestion =
        "Keep the device fed while the host works: enqueue the next step's commands (non-blocking writes, kernels) "
        "before the host-side work of this step, double-buffer inputs, and wait on events only where the result is "
        "needed.";
    return RuleOutcome::found(std::move(finding));
}

}  // namespace

std::vector<Rule> trace_program_rules() {
    const auto facts = program_facts();
    const auto kernels = static_cast<double>(min_kernels_for_sync);
    return {
        {{"trace.layer.not_loaded", layer, {facts}, {}}, over_facts(layer_not_loaded)},
        {{"trace.program.no_opencl", layer, {facts}, {}}, over_facts(no_opencl)},
        {{"trace.program.incomplete", layer, {facts}, {}}, over_facts(incomplete)},
        {{"trace.program.host_bound",
          layer,
          {facts},
          {{"host share of the wall time", host_bound_share, true},
           {"device busy share of the wall time", busy_share_of_device_program, true}}},
         over_facts(host_bound)},
        // kernel.launch.latency{kind=back_to_back} only refines the gain: not an input.
        {{"trace.sync.wait_after_kernel",
          layer,
          {facts},
          {{"kernel launches", kernels}, {"share of launches waited for", sync_fraction, true}, min_gain_threshold()}},
         over_facts_and_ceilings(wait_after_kernel)},
        {{"trace.device.idle_gaps",
          layer,
          {facts},
          {{"device idle share of the wall time", idle_share, true},
           {"device busy share of the wall time", busy_share_of_device_program, true},
           min_gain_threshold()}},
         over_facts(idle_gaps)},
    };
}

}  // namespace clprobe
