// clprobe trace -- PROGRAM: measure this device's ceilings (or take them from a saved report),
// run the user's program with the trace layer loaded, and diagnose the program against them.
// The program owns stdin, stdout and its exit code; clprobe's report goes to stderr or files.
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>

#include "builtin_probes.hpp"
#include "cl/cl_error.hpp"
#include "cli/ceilings_cache.hpp"
#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/launch_env.hpp"
#include "cli/report_outputs.hpp"
#include "cli/trace_capture.hpp"
#include "cli/trace_command_energy.hpp"
#include "cli/trace_command_records.hpp"
#include "cli/trace_command_replay.hpp"
#include "cli/trace_command_work.hpp"
#include "cli/trace_replay_options.hpp"
#include "core/atomic_file.hpp"
#include "core/log.hpp"
#include "core/memory_roofs.hpp"
#include "core/version.hpp"
#include "render/report_formats.hpp"
#include "rules/analysis.hpp"
#include "rules/trace_rules.hpp"
#include "runtime/activity_monitor.hpp"
#include "runtime/host_info.hpp"
#include "runtime/provenance_query.hpp"
#include "runtime/runner.hpp"
#include "trace/app_measurements.hpp"
#include "trace/job_trace.hpp"
#include "trace/program_runner.hpp"
#include "trace/trace_lanes.hpp"
#include "trace/trace_reader.hpp"
#include "trace/trace_timeline.hpp"

namespace clprobe {

namespace {

struct TraceOptions {
    std::vector<std::string> argv;
    std::string device;
    std::string baseline;
    bool no_ceilings = false;
    bool fresh_ceilings = false;  // --fresh-ceilings: measure them even when the cache holds them
    // --save FORMAT=FILE, --json FILE, --html FILE, and -o FILE (= --save text=FILE): a text
    // file takes the text report's place on stderr.
    ReportOutputs outputs;
    std::string timeline, records;
    bool records_shared = false;  // --records-shared: a folder other users may read or write is accepted
    std::string layer;
    bool verbose = false, quiet = false;
    double timeout = 0;  // --timeout: seconds the program may run; 0: no limit
    // --wait-descendants: seconds to wait for descendants still running when the program ended.
    double wait_descendants = 10;
    CaptureOptions capture;  // --delay, --duration, --capture, --max-size (cli/trace_capture.hpp)
    // --replay N, --replay-budget SIZE (cli/trace_replay_options.hpp): after the program ends,
    // replay.dir holds the layer's captures and replay.replay_kernels says how many to replay.
    ReplayOptions replay;
    // --work N, --work-budget (cli/trace_command_work.hpp): the hottest kernels' work counted.
    WorkOptions work;
};

// The probes run before the program: the system and topology facts, and the quick ceilings the
// trace rules hold the program against. The activity probe runs after it, over its lifetime.
const std::set<std::string> context_probes = {"system.host", "system.limits", "system.memory_bandwidth",
                                              "topology.host", "topology.device"};
// kernel.memory_levels is not among them: under LeakSanitizer its run in the tracing process made
// LSan's exit-time tracer crash (reproduced 3 of 3), so the level roofs come from a --baseline
// report of `clprobe diagnose`, which measures them; without one, kernels meet kernel.peak.bandwidth.
// kernel.compute.int32 is the roof of kernels whose time goes to integer work (hashing, bit
// manipulation), which --work tells apart from floating-point and memory-bound ones.
ProbeList probes_named(const std::set<std::string>& ids) {
    ProbeList all = make_builtin_probes(), chosen;
    for (auto& p : all)
        if (ids.count(p->id())) chosen.push_back(std::move(p));
    return chosen;
}

// Where `cmake --install` and the package put the layer, relative to the binary's folder (from
// GNUInstallDirs at configure time, e.g. ../lib/x86_64-linux-gnu/clprobe under /usr).
#ifndef CLPROBE_INSTALLED_LAYER_DIR
#define CLPROBE_INSTALLED_LAYER_DIR "../lib/clprobe"
#endif

// Next to the clprobe binary (the build folder), else where an install puts it.
std::string find_layer(const std::string& option) {
    if (!option.empty()) {
        if (::access(option.c_str(), R_OK) != 0) throw UsageError(fmt::format("--layer {}: no such file", option));
        return std::filesystem::absolute(option).string();
    }
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    const std::filesystem::path dir = ec ? std::filesystem::current_path() : exe.parent_path();
    for (const auto& candidate :
         {dir / "libclprobe_trace_layer.so", dir / CLPROBE_INSTALLED_LAYER_DIR / "libclprobe_trace_layer.so",
          dir / "../lib/clprobe/libclprobe_trace_layer.so"})
        if (::access(candidate.c_str(), R_OK) == 0) return std::filesystem::weakly_canonical(candidate).string();
    throw UsageError(
        fmt::format("the trace layer libclprobe_trace_layer.so is not next to clprobe ({}) nor where an install "
                    "puts it ({}); build it (cmake --build build) or name it with --layer",
                    dir.string(), (dir / CLPROBE_INSTALLED_LAYER_DIR).lexically_normal().string()));
}

void prepare_outputs(TraceOptions& o, const LauncherEnv& launcher) {
    constexpr const char* owned = "the program owns stdout under trace: name a file, not '-'";
    o.outputs.prepare(launcher);
    if (o.outputs.stdout_format()) throw UsageError(owned);
    o.timeline = expand_output_placeholders(o.timeline, launcher);
    if (o.timeline == "-") throw UsageError(owned);
    if (!o.timeline.empty()) check_output_path(o.timeline);
    o.records = expand_output_placeholders(o.records, launcher);
    if (o.records == "-") throw UsageError("--records names a folder, not '-'");
}

// A baseline stands in for the ceilings clprobe would measure: one without any (a trace report,
// a diagnose of the system layer only) would leave every ceiling rule silently unevaluated.
void require_ceilings(const RunReport& baseline, const std::string& path) {
    const bool has_ceilings = std::any_of(baseline.results.begin(), baseline.results.end(), [](const ProbeResult& r) {
        return (r.layer == "kernel" || r.layer == "transfer") && !r.measurements.empty();
    });
    if (has_ceilings) return;
    throw UsageError(
        fmt::format("--baseline {}: it holds no device ceilings ({}); give a report of `clprobe diagnose` "
                    "with the kernel and transfer layers, or --no-ceilings",
                    path,
                    is_trace_report(baseline) ? "it is a trace report"
                                              : "no kernel or transfer "
                                                "measurements"));
}

// The device of a baseline report, found among this machine's devices; throws when absent.
std::string baseline_selector(const RunReport& baseline, const std::string& path) {
    if (!baseline.device) throw UsageError(fmt::format("--baseline {}: the report names no device", path));
    const DeviceInfo& want = *baseline.device;
    const SelectedDevice any = select_device("");
    for (const auto& d : any.catalog.listings)
        if (d.device_name == want.name && d.platform_name == want.platform_name)
            return fmt::format("{}:{}", d.platform_index, d.device_index);
    throw UsageError(fmt::format("--baseline {}: it was measured on '{}' (driver {}), which is not a device here", path,
                                 want.name, want.driver_version));
}

void require_same_device(const RunReport& baseline, const DeviceInfo& device, const std::string& path) {
    if (!baseline.device || baseline.device->name != device.name ||
        baseline.device->driver_version != device.driver_version)
        throw UsageError(
            fmt::format("--baseline {}: it was measured on '{}' (driver {}), not on the selected '{}' "
                        "(driver {})",
                        path, baseline.device ? baseline.device->name : "?",
                        baseline.device ? baseline.device->driver_version : "?", device.name, device.driver_version));
}

void progress(const TraceOptions& o, const std::string& line) {
    if (!o.quiet && ::isatty(STDERR_FILENO)) fmt::print(stderr, "[clprobe trace] {}\n", line);
}

// Context and ceilings before the program runs: measured now, or the baseline's.
std::vector<ProbeResult> measure_before(const TraceOptions& o, const SelectedDevice& selected,
                                        const std::optional<RunReport>& baseline, RunReport& report) {
    RunOptions run;
    run.mode = RunMode::quick;
    std::set<std::string> ids = context_probes;
    std::unique_ptr<DeviceSession> session;
    std::string device_error;
    if (!baseline && !o.no_ceilings) {
        ids.insert(ceiling_probe_ids().begin(), ceiling_probe_ids().end());
        try {
            session = open_session(selected, "", true);
            report.device = session->info();
        } catch (const ClError& e) {
            device_error = std::string("the device could not be opened: ") + e.what();
            Log::warn("{}", device_error);
        }
    }
    progress(o, baseline || o.no_ceilings ? "reading the system and topology"
                                          : "measuring this device's ceilings (quick, about 15 s)");
    std::vector<ProbeResult> results = run_probes(probes_named(ids), {session.get(), nullptr, device_error}, run);
    if (baseline)
        for (const auto& r : baseline->results)
            if (r.layer == "kernel" || r.layer == "transfer") results.push_back(r);
    return results;
}

ProbeResult program_result(const std::vector<ProgramTrace>& processes, const ProgramTrace& trace, const JobRun& job,
                           const RunReport& report, const std::string& layer, const std::string& perfetto_file,
                           std::vector<KernelWorkFacts> work) {
    const ChildRun run = job_lifetime(job);
    const BandwidthRoofs roofs = bandwidth_roofs_of(report.results);
    TraceAnalysis analysis = analyse_job(processes, trace, job, roofs);
    analysis.facts.work = std::move(work);
    // Counted work meets the fastest samples of the roofs (core/memory_roofs.hpp, RoofSample).
    add_work_measurements(analysis.facts, bandwidth_roofs_of(report.results, RoofSample::fastest),
                          compute_roofs_of(report.results), analysis.measurements);
    ProbeResult r = program_probe_result(std::move(analysis));
    // The HTML page draws the timeline from these lanes and links the Perfetto file.
    r.attributes["timeline"] = timeline_lanes(trace, run);
    if (!perfetto_file.empty()) r.attributes["perfetto_file"] = perfetto_file;
    r.attributes["layer_library"] = layer;
    if (run.timed_out) {
        // What it recorded up to then is still analysed; the status says it was cut short.
        r.status = ProbeStatus::timed_out;
        r.reason = fmt::format("the program ran past --timeout and was ended by clprobe ({})",
                               run.signal ? "killed by signal " + std::to_string(*run.signal) : "it exited");
    }
    r.attributes["kernels_bytes_note"] =
        "app.kernel.bandwidth is an estimate: the summed sizes of the buffers bound as a kernel's arguments over its "
        "device time (a kernel may touch less, or the same bytes many times)";
    return r;
}

void write_outputs(const TraceOptions& o, const RunReport& report, const ProgramTrace& trace, const ChildRun& run) {
    const RenderOptions render{o.verbose, false};
    o.outputs.write(report, render);
    if (!o.timeline.empty()) {
        AtomicFileWriter timeline(o.timeline);
        write_program_timeline(trace, run, [&](std::string_view piece) { timeline.write(piece); });
        timeline.commit();
    }
    if (!o.outputs.has_format("text") && !o.quiet)
        fmt::print(stderr, "{}", report_format("text").render(report, render));
}

RunReport new_report(const TraceOptions& o, const DeviceInfo& device) {
    RunReport report;
    report.tool_version = tool_version;
    report.provenance = current_provenance();
    report.created_at = utc_timestamp();
    report.command_line = command_line();
    report.host = query_host_info();
    report.device = device;
    report.options = {{"command", "trace"},
                      {"program", o.argv},
                      {"mode", "quick"},
                      {"device", o.device},
                      {"ceilings", !o.baseline.empty() ? "baseline"
                                   : o.no_ceilings     ? "none"
                                                       : "measured"},
                      {"baseline", o.baseline}};
    return report;
}

int run_trace(TraceOptions o) {
    const auto started = std::chrono::steady_clock::now();
    if (o.quiet) Log::set_level(LogLevel::quiet);
    if (o.argv.empty()) throw UsageError("no program to trace: clprobe trace [options] -- PROGRAM [ARGS...]");
    if (const auto problem = check_runnable(o.argv.front())) {
        fmt::print(stderr, "clprobe trace: {}\n", problem->message);
        return problem->exit_code;
    }
    if (o.fresh_ceilings && (!o.baseline.empty() || o.no_ceilings))
        throw UsageError("--fresh-ceilings measures the ceilings: not with --baseline or --no-ceilings");
    const LauncherEnv launcher = current_launcher();
    prepare_outputs(o, launcher);
    check_replay_options(o.replay);
    const std::string layer = find_layer(o.layer);
    std::optional<RunReport> baseline;
    if (!o.baseline.empty()) {
        baseline = load_report(o.baseline);
        require_ceilings(*baseline, o.baseline);
    }
    const SelectedDevice selected =
        select_device(baseline && o.device.empty() ? baseline_selector(*baseline, o.baseline) : o.device);
    if (baseline) require_same_device(*baseline, selected.info, o.baseline);
    // Without --baseline, the ceilings of the last trace of this device, driver, build and driver
    // environment (cli/ceilings_cache.hpp), unless --fresh-ceilings.
    const std::string cache_key = baseline || o.no_ceilings ? std::string() : ceilings_cache_key(selected.info);
    std::optional<CachedCeilings> cached;
    if (!cache_key.empty() && !o.fresh_ceilings) {
        std::string why;
        cached = load_cached_ceilings(cache_key, why);
        if (!why.empty() && !o.quiet)
            fmt::print(stderr, "clprobe trace: cached ceilings not used: {}; measuring them again\n", why);
    }
    // Before the ceilings and the program: a trace that cannot keep its records must not run.
    const RecordsFolder records = prepare_records_folder(o.records, o.records_shared);
    // A temporary folder goes whatever way this ends (an error measuring the ceilings included).
    const struct RemoveAtEnd {
        const RecordsFolder& folder;
        ~RemoveAtEnd() { remove_temporary(folder); }
    } remove_at_end{records};
    CaptureSession capture(o.capture, records.path);
    // Counting needs the layer's captures: they are taken when it can run here.
    const WorkCounter work_counter = o.work.enabled() ? find_work_counter() : WorkCounter{};
    o.replay.capture_for_work = o.work.enabled() && work_counter.available();
    o.work.capture_launch = o.replay.capture_launch();
    const std::vector<std::string> replay_env = prepare_replay(o.replay, records.path);

    RunReport report = new_report(o, baseline ? *baseline->device : selected.info);
    // Under mpirun or srun each rank's report says which rank it is: `clprobe fleet` sets them
    // side by side (docs/trace.md, MPI jobs). The ranks trace at once: no node turn is taken.
    report.launch = launch_context(launcher, nullptr);
    report.results = measure_before(o, selected,
                                    baseline ? baseline
                                    : cached ? std::optional(cached->report)
                                             : std::nullopt,
                                    report);
    if (cached) {
        report.options["ceilings"] = "cache";
        report.options["ceilings_cache"] = {
            {"path", cached->path.string()},
            {"measured_at", cached->report.created_at},
            {"git_commit", cached->report.provenance ? cached->report.provenance->git_commit : "unknown"}};
    } else if (!cache_key.empty() && has_all_ceilings(report.results)) {
        // Only a whole set is kept: a probe that failed this time is measured again next time.
        if (const std::string problem = save_ceilings(cache_key, report, "trace"); !problem.empty() && !o.quiet)
            fmt::print(stderr, "clprobe trace: the ceilings were not cached: {}\n", problem);
    }
    // The machine's energy over the program's lifetime, where sensors exist (app.energy): found
    // and their intervals measured now, so the program's own time holds none of it.
    ProgramEnergy energy;
    progress(o, fmt::format("running {}", o.argv.front()));
    // Sampled once a second rather than four times: the program's own time is what is measured
    // now, and on a small machine the monitor's /proc scans would come out of it.
    std::optional<ActivityMonitor> activity(std::in_place, std::chrono::milliseconds(1000));
    energy.start();
    std::vector<std::string> layer_env = capture.start();
    layer_env.insert(layer_env.end(), replay_env.begin(), replay_env.end());
    const LaunchOutcome launched =
        run_traced_program({o.argv, layer, records.path, o.timeout, o.wait_descendants, std::move(layer_env)});
    capture.finish();
    energy.stop();
    if (launched.exec_error) {
        remove_temporary(records);
        fmt::print(stderr, "clprobe trace: {}\n", *launched.exec_error);
        return shell_status(launched.run);
    }
    for (auto& r : run_probes(probes_named({"system.activity"}), {nullptr, &*activity, ""}, RunOptions{}))
        report.results.push_back(std::move(r));
    const std::vector<ProgramTrace> processes = read_job_records(records.path);
    std::vector<KernelWorkFacts> work;
    if (o.work.enabled()) {
        const auto counting = std::chrono::steady_clock::now();
        work = count_hot_kernels(processes, records.path + "/replay", o.work, work_counter,
                                 [&](const std::string& line) { progress(o, line); });
        report.results.push_back(work_result(
            work, work_counter, std::chrono::duration<double>(std::chrono::steady_clock::now() - counting).count()));
    }
    // References where no new trace is made: a trace of a million commands holds ~250 MB, and a
    // copy for the one process of most runs, and another for the unwindowed analysis, tripled it.
    std::optional<ProgramTrace> merged_job, windowed;
    const ProgramTrace& merged =
        processes.size() == 1 ? processes.front() : merged_job.emplace(merge_processes(processes));
    // Under --delay/--duration or windows on demand, the analysis covers the windows alone.
    const std::vector<CaptureWindow> windows = capture.windows(launched.job);
    const ProgramTrace& trace =
        capture.windowed() ? windowed.emplace(cut_to_windows(merged, windows, windows.size() <= 1)) : merged;
    const JobRun job = in_windows(launched.job, windows, capture.windowed());
    ProbeResult program = program_result(
        processes, trace, job, report, layer,
        o.timeline.empty() ? std::string() : std::filesystem::absolute(o.timeline).string(), std::move(work));
    energy.record(program, launched.run);
    report.results.push_back(std::move(program));
    report.complete = !launched.run.interrupted && !launched.run.timed_out;
    report.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    analyze(report);
    // Before the records folder goes: the captures live in it.
    add_replays(report, processes, records.path, o.replay, o.quiet);
    // clprobe's own run, replay included (each step's own time is its result's wall_seconds).
    report.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    capture.describe(report, merged, launched.job);
    try {
        write_outputs(o, report, trace, job_lifetime(job));
    } catch (const OutputError& e) {
        // The program's status stays the exit code when it failed itself; a failed report of a
        // successful program is clprobe's failure.
        fmt::print(stderr, "clprobe trace: {}\n", e.what());
        if (shell_status(launched.run) == 0) return exit_code::output;
    }
    return shell_status(launched.run);
}

}  // namespace

CommandRunner add_trace_command(CLI::App& app) {
    auto opts = std::make_shared<TraceOptions>();
    CLI::App* cmd = app.add_subcommand(
        "trace", "Run PROGRAM with clprobe's OpenCL layer and rank what slows it down (clprobe trace -- PROGRAM ARGS)");
    add_device_option(cmd, opts->device);
    cmd->add_option("--baseline", opts->baseline,
                    "Take the device ceilings from this saved diagnose report (same device and driver)");
    cmd->add_flag("--no-ceilings", opts->no_ceilings, "Measure no ceilings; rules that need them are not evaluated");
    cmd->add_flag("--fresh-ceilings", opts->fresh_ceilings,
                  "Measure the ceilings again even when the last trace of this device, driver, clprobe build and "
                  "driver environment cached them (docs/trace.md)");
    opts->outputs.add_shorthand(cmd, "-o,--output", "text",
                                "Write the text report to FILE instead of stderr; = --save text=FILE");
    opts->outputs.add_shorthand(cmd, "--json", "json", "Also write the JSON report to FILE; = --save json=FILE");
    opts->outputs.add_shorthand(cmd, "--html", "html",
                                "Also write a self-contained HTML report to FILE; = --save html=FILE");
    opts->outputs.add_save_option(cmd);
    cmd->add_option("--trace", opts->timeline,
                    "Also write the program's timeline (one row per queue, host waits per thread) as Chrome "
                    "trace-event JSON (Perfetto, chrome://tracing)");
    cmd->add_option("--timeout", opts->timeout,
                    "Seconds the program may run; then it gets SIGTERM (SIGKILL 2 s later) and the report of what "
                    "it did is written, the program marked timed out")
        ->check(CLI::Range(0.001, 31536000.0));
    cmd->add_option("--records", opts->records,
                    "Keep the layer's raw records in folder DIR, one file per process (PID.rec; made when missing, "
                    "earlier *.rec in it replaced; docs/trace.md has the format). Made private (0700, files "
                    "0600): they hold the program's data; an existing folder others may read or write is refused");
    cmd->add_flag("--records-shared", opts->records_shared,
                  "Accept a --records folder other users may read or write, or that another user owns (its files "
                  "are still made 0600)");
    cmd->add_option("--wait-descendants", opts->wait_descendants,
                    "Seconds to wait, after the program ends, for its descendants still running (daemonised "
                    "children); those still running then are named in the report and left running (default 10)")
        ->check(CLI::Range(0.0, 31536000.0));
    add_capture_options(cmd, opts->capture);
    add_replay_options(cmd, opts->replay);
    add_work_options(cmd, opts->work);
    cmd->add_option("--layer", opts->layer, "The trace layer library (default: next to the clprobe binary)");
    cmd->add_flag("-v,--verbose", opts->verbose, "Show every measurement and the rules that could not run");
    cmd->add_flag("-q,--quiet", opts->quiet, "No progress and no text report on stderr (files are still written)");
    cmd->add_option("program", opts->argv, "The program and its arguments, after --")->expected(-1);
    return [opts] { return run_trace(*opts); };
}

}  // namespace clprobe
