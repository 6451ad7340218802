// clprobe diagnose: run the layered probes on one device, analyse, and report.
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <memory>
#include <optional>

#include "builtin_probes.hpp"
#include "cl/cl_error.hpp"
#include "cl/command_trace.hpp"
#include "cli/ceilings_cache.hpp"
#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/diagnose_prebuild.hpp"
#include "cli/exit_codes.hpp"
#include "cli/launch_env.hpp"
#include "cli/movement_cache.hpp"
#include "cli/report_outputs.hpp"
#include "core/atomic_file.hpp"
#include "core/clock.hpp"
#include "core/cost_model.hpp"
#include "core/log.hpp"
#include "core/run_eta.hpp"
#include "core/scoped_signals.hpp"
#include "core/stop_points.hpp"
#include "core/text.hpp"
#include "core/version.hpp"
#include "network/mpi_session.hpp"
#include "render/report_formats.hpp"
#include "rules/analysis.hpp"
#include "runtime/activity_monitor.hpp"
#include "runtime/drift_monitor.hpp"
#include "runtime/host_info.hpp"
#include "runtime/probe_isolation.hpp"
#include "runtime/probe_load_meter.hpp"
#include "runtime/provenance_query.hpp"
#include "runtime/runner.hpp"
#include "system/node_turn.hpp"
#include "topology/topology_input.hpp"

namespace clprobe {

namespace {

// SIGINT/SIGTERM request a stop for the duration of a run; a second signal gets the default
// action (terminate).
struct sigaction interrupt_action() {
    struct sigaction action {};
    action.sa_handler = [](int signal_number) { request_interrupt(signal_number); };
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;
    return action;
}

struct DiagnoseOptions {
    std::string device;
    // The node-local layers; the network layer joins them when launched by mpirun/srun with 2+ ranks.
    std::vector<std::string> layers{"system", "topology", "transfer", "kernel"};
    bool layers_given = false;  // --layers on the command line
    std::vector<std::string> workloads = known_workloads();
    RunOptions::GlmShape glm;
    RunOptions::AttentionShape attention;
    bool quick = false;
    bool full = false;
    ReportOutputs outputs;  // --save FORMAT=FILE, --json FILE, --html FILE
    std::string save_topology;
    std::string trace;
    std::string kernel_dir;
    bool no_cache = false;
    std::string topology_xml;
    std::string device_pci;
    bool verbose = false;
    bool quiet = false;
    double probe_timeout = 0;
    ProbeSelection selection;   // --probes, --skip
    bool no_isolation = false;  // --no-isolation: every probe in this process, as before issue 24
    // --price-per-hour, --watts-price: recorded in the report's options; the cost per million
    // steps or tokens is derived from them and the measured figures (core/cost_model.hpp).
    Prices prices;
    // --passes N: the probes run N times, one whole pass after another, each pass kept in the
    // report, so one run shows how far this machine's figures move between runs (compare's gate).
    int passes = 1;
};

// More passes than this would repeat a run of minutes for little more than the spread 3 to 5
// passes already measure; a typo (--passes 100) is refused before anything runs.
constexpr int max_passes = 10;

nlohmann::json options_json(const DiagnoseOptions& o, const RunOptions& run) {
    // Shapes as given (0 = the mode's default); each workload probe records the shape it used.
    const nlohmann::json glm = {
        {"rows", run.glm.rows}, {"cols", run.glm.cols}, {"density", run.glm.density}, {"batch", run.glm.batch}};
    const nlohmann::json attention = {{"batch", run.attention.batch},   {"heads", run.attention.heads},
                                      {"seq", run.attention.seq},       {"head_dim", run.attention.head_dim},
                                      {"kv_len", run.attention.kv_len}, {"causal", run.attention.causal}};
    nlohmann::json out = {{"mode", to_string(run.mode)},
                          {"layers", run.layers},
                          {"workloads", run.workloads},
                          {"device", o.device},
                          {"kernel_dir", o.kernel_dir},
                          {"binary_cache", run.use_cache},
                          {"topology_xml", run.topology_xml},
                          {"device_pci", run.device_pci},
                          {"glm", glm},
                          {"attention", attention},
                          {"probes", run.selection.only},
                          {"skip", run.selection.skip},
                          // Whether device probes ran in processes of their own (false: --no-isolation).
                          {"isolation", !o.no_isolation},
                          {"passes", o.passes}};
    record_prices(out, o.prices);
    return out;
}

// "kernel,system,kernel" -> "kernel,system"; empty items (",,") dropped.
std::vector<std::string> without_repeats(const std::vector<std::string>& items) {
    std::vector<std::string> out;
    for (const auto& item : items)
        if (!item.empty() && std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
    return out;
}

// CLI11 checked every item; what is left is the lists as a whole.
void choose_layers_and_workloads(const DiagnoseOptions& o, RunOptions& run) {
    run.layers = without_repeats(o.layers);
    if (run.layers.empty()) throw UsageError("--layers needs at least one layer");
    run.workloads = without_repeats(o.workloads);
    if (run.workloads.empty()) throw UsageError("--workloads needs at least one workload, or none");
    // "none": the device ceilings only. The list then names no workload, which run_probes reads as
    // "select none" (an empty list would mean all).
    if (run.workloads.size() > 1 &&
        std::find(run.workloads.begin(), run.workloads.end(), "none") != run.workloads.end())
        throw UsageError("--workloads none cannot be combined with a workload");
}

// Under srun or mpirun each rank writes its own files ('reports/{host}.json', 'r-{rank}.json');
// and a path that could not be written fails before a long run, not after it.
void prepare_outputs(DiagnoseOptions& o, const LauncherEnv& launcher) {
    o.outputs.prepare(launcher);
    for (std::string* path : {&o.save_topology, &o.trace})
        *path = expand_output_placeholders(*path, launcher);
    if (!o.save_topology.empty()) check_output_path(o.save_topology);
    if (!o.trace.empty()) check_output_path(o.trace);
}

// The run as the options ask for it. MPI must already be up: under mpirun/srun with 2+ ranks the
// network layer joins the default layers.
RunOptions run_options_of(const DiagnoseOptions& o) {
    RunOptions run;
    run.mode = o.quick ? RunMode::quick : o.full ? RunMode::full : RunMode::standard;
    run.use_cache = !o.no_cache;
    choose_layers_and_workloads(o, run);
    if (!o.layers_given && MpiSession::world() != nullptr) run.layers.push_back("network");
    run.topology_xml = o.topology_xml;
    run.device_pci = o.device_pci;
    run.probe_timeout = o.probe_timeout;
    run.glm = o.glm;
    run.attention = o.attention;
    run.selection = o.selection;
    if (const auto problem = probe_selection_problem(run.selection, builtin_probe_ids())) throw UsageError(*problem);
    if (!run.device_pci.empty() && run.topology_xml.empty())
        throw UsageError("--device-pci names a device inside a saved topology: use it with --topology FILE.xml");
    if (const auto problem = topology_input_problem(run.topology_xml, run.device_pci)) throw UsageError(*problem);
    return run;
}

// Progress on stderr (on a terminal only): layer, probe and the time left, re-estimated as
// probes finish; failures as warnings either way.
class ProgressDisplay {
  public:
    ProgressDisplay(RunMode mode, bool show) : mode_(mode), show_(show) {}

    RunnerHooks hooks() {
        RunnerHooks h;
        h.on_plan = [this](const std::vector<const Probe*>& plan) {
            std::vector<double> expected;
            for (const Probe* p : plan)
                expected.push_back(p->expected_seconds(mode_));
            eta_.emplace(std::move(expected));
        };
        h.on_start = [this](const Probe& p, std::size_t i, std::size_t n) {
            current_ = i;
            if (show_)
                fmt::print(stderr, "[{}/{}] {} layer · {}: {}... ({} left)\n", i + 1, n, p.layer(), p.id(), p.title(),
                           duration_text(eta_ ? eta_->seconds_left(i) : 0));
        };
        h.on_finish = [this](const ProbeResult& r) {
            if (eta_) eta_->finished(current_, r.wall_seconds);
            if (r.status == ProbeStatus::error || r.status == ProbeStatus::crashed ||
                r.status == ProbeStatus::timed_out)
                Log::warn("{} failed: {}", r.id, r.reason);
        };
        return h;
    }

  private:
    RunMode mode_;
    bool show_;
    std::optional<RunEta> eta_;
    std::size_t current_ = 0;
};

// Device probes in child processes (runtime/probe_isolation), unless --no-isolation or there is
// no device to isolate them from. The child opens the very device the parent selected.
std::unique_ptr<ProbeIsolator> make_isolator(const DiagnoseOptions& o, const RunOptions& run,
                                             const DeviceSession* session, const SelectedDevice& selected) {
    if (o.no_isolation || session == nullptr) return nullptr;
    const DeviceListing& listing = selected.catalog.listings[selected.index];
    IsolationSettings settings;
    settings.device_selector = fmt::format("{}:{}", listing.platform_index, listing.device_index);
    settings.kernel_dir = o.kernel_dir;
    settings.trace = !o.trace.empty();
    return std::make_unique<ProbeIsolator>(std::move(settings), run);
}

// Everything the report says before any probe runs.
// The next `trace` of this device judges its program against these ceilings instead of measuring
// them again (cli/ceilings_cache.hpp): only a whole set of the shipped kernels, from a run that was
// not interrupted, on a machine the run trusted (no trust warning: a CPU hog, drift); a planted
// kernel folder's ceilings are not the device's.
void keep_ceilings(const DiagnoseOptions& o, const SelectedDevice& selected, const RunReport& report) {
    const bool doubted =
        std::any_of(report.trust_notes.begin(), report.trust_notes.end(), [](const TrustNote& t) { return t.warning; });
    if (!report.complete || doubted || !o.kernel_dir.empty() || !has_all_ceilings(report.results)) return;
    if (const std::string problem = save_ceilings(ceilings_cache_key(selected.info), report, "diagnose");
        !problem.empty())
        Log::warn("the ceilings were not cached for trace: {}", problem);
}

struct PassSetting {
    const DiagnoseOptions& options;
    const RunOptions& run;
    const SelectedDevice& selected;
    DeviceSession* session;
    std::chrono::steady_clock::time_point started;
};

struct PassOutcome {
    std::vector<ProbeResult> results;
    std::optional<MachineDrift> drift;
};

// One pass of the selected probes. Each pass has its own drift monitor, so each pass's probes are
// judged against the reference timed around them; the kernels are built ahead in the first pass
// only (the later passes find them in the driver's and clprobe's caches).
PassOutcome run_pass(const ProbeList& probes, const RunServices& services, const PassSetting& p,
                     ProgressDisplay& progress, bool prebuild) {
    const std::unique_ptr<DriftMonitor> drift = make_drift_monitor(p.session, p.run, p.started);
    RunnerHooks hooks = drift ? with_drift_checks(progress.hooks(), *drift) : progress.hooks();
    if (p.session && prebuild) {
        const DeviceListing& listing = p.selected.catalog.listings[p.selected.index];
        const bool show = !p.options.quiet && ::isatty(STDERR_FILENO);
        hooks.on_plan = with_prebuild(
            std::move(hooks.on_plan), *p.session, p.run,
            {fmt::format("{}:{}", listing.platform_index, listing.device_index), p.options.kernel_dir, show});
    }
    PassOutcome out;
    out.results = run_probes(probes, services, p.run, hooks);
    if (drift) out.drift = drift->drift();
    return out;
}

// Passes 2..N of --passes N, each whole, one after another (the machine's movement between runs
// shows only between whole passes: a probe repeated at once meets the same state of the machine).
// An interrupt ends them with the pass it stopped, marked incomplete.
std::vector<RunPass> further_passes(const ProbeList& probes, const RunServices& services, const PassSetting& p,
                                    ProgressDisplay& progress, const RunReport& first) {
    std::vector<RunPass> out;
    for (int number = 2; number <= p.options.passes && !interrupt_requested(); ++number) {
        if (!p.options.quiet && ::isatty(STDERR_FILENO))
            fmt::print(stderr, "pass {} of {}\n", number, p.options.passes);
        RunPass pass;
        pass.number = number;
        pass.device = first.device ? first.device->name : std::string("no device");
        pass.started_at = utc_timestamp();
        const auto pass_started = std::chrono::steady_clock::now();
        PassOutcome outcome = run_pass(probes, services, p, progress, /*prebuild=*/false);
        pass.results = std::move(outcome.results);
        pass.drift = std::move(outcome.drift);
        pass.wall_seconds = seconds_since(pass_started);
        pass.complete = !interrupt_requested();
        out.push_back(std::move(pass));
    }
    return out;
}

// Every whole run of the shipped kernels leaves its first pass for later single-pass comparisons of
// this host, device and options (cli/movement_cache.hpp), which hold their figures against the
// movement between such runs.
void keep_run_for_movement(const DiagnoseOptions& o, const RunReport& report) {
    if (!report.complete || !o.kernel_dir.empty() || !report.device) return;
    if (const std::string problem = remember_run(report); !problem.empty())
        Log::warn("the run was not kept for compare's movement between runs: {}", problem);
}

RunReport report_header(const DiagnoseOptions& o, const RunOptions& run, const DeviceSession* session,
                        const SelectedDevice& selected) {
    RunReport report;
    report.tool_version = tool_version;
    report.provenance = current_provenance();
    report.created_at = utc_timestamp();
    report.command_line = command_line();
    report.options = options_json(o, run);
    report.host = query_host_info();
    report.device = session ? session->info() : selected.info;
    return report;
}

// The files the options asked for (each whole or not at all), then the report on stdout.
void write_outputs(const DiagnoseOptions& o, const RunOptions& run, const RunReport& report) {
    const RenderOptions render{o.verbose, color_stdout()};
    o.outputs.write(report, render);
    if (!o.trace.empty()) {
        write_file_atomically(o.trace, CommandTrace::instance().to_json().dump() + "\n");
        Log::info("timeline of {} commands written to {} (open it in Perfetto or chrome://tracing)",
                  CommandTrace::instance().size(), o.trace);
    }
    if (!o.save_topology.empty()) {
        // With the sysfs link readings as clprobe.* attributes, so `--topology` on this file
        // reasons exactly as the live run did (plain lstopo exports lack the link maxima).
        write_file_atomically(o.save_topology, load_analysed_topology(run.topology_xml).export_xml());
        Log::info("topology written to {}", o.save_topology);
    }
    // '-' (--json -, --save md=-) puts that format on stdout instead of the text report.
    fmt::print("{}", report_format(o.outputs.stdout_format().value_or("text")).render(report, render));
}

int run_diagnose(DiagnoseOptions o) {
    const auto started = std::chrono::steady_clock::now();
    if (o.quiet) Log::set_level(LogLevel::quiet);
    const LauncherEnv launcher = current_launcher();
    // MPI starts only under a launcher with 2 or more ranks (and only in a build with MPI); when
    // it cannot, the network layer reports why and the other layers run as usual. Finalised
    // when the run ends, whichever way it ends.
    const ScopedMpiSession mpi(launcher);
    const RunOptions run = run_options_of(o);
    prepare_outputs(o, launcher);
    CommandTrace::instance().enable(!o.trace.empty());

    const SelectedDevice selected = select_device(o.device);
    // A device that cannot be opened (context or queue refused) does not stop the run: the layers
    // that need no device still run, and the others say why they could not.
    std::unique_ptr<DeviceSession> session;
    std::string device_error;
    try {
        session = open_session(selected, o.kernel_dir, run.use_cache);
    } catch (const ClError& e) {
        device_error = std::string("the device could not be opened: ") + e.what();
        Log::warn("{}", device_error);
    }
    RunReport report = report_header(o, run, session.get(), selected);
    ProgressDisplay progress(run.mode, !o.quiet && ::isatty(STDERR_FILENO));

    // Before the activity monitor starts: a rank's wait for its node turn is not its run's load.
    const std::unique_ptr<NodeTurn> turn = take_node_turn(launcher);
    // Sampling host activity from the start is what lets the system layer speak about the whole run.
    std::unique_ptr<ActivityMonitor> activity;
    if (std::find(run.layers.begin(), run.layers.end(), "system") != run.layers.end())
        activity = std::make_unique<ActivityMonitor>();
    const ProbeList probes = make_builtin_probes();
    // Ctrl-C or SIGTERM ends the current probe at its next stop point; the report of what
    // finished is still written, marked incomplete. A second signal terminates at once.
    const ScopedInterruptHandlers interrupt_handlers(interrupt_action());
    const std::unique_ptr<ProbeIsolator> isolator = make_isolator(o, run, session.get(), selected);
    ProbeLoadMeter load_meter;
    RunServices services{session.get(), activity.get(), device_error, turn.get(), {}, &load_meter};
    if (isolator)
        services.isolate = [&](const std::vector<const Probe*>& batch, const std::vector<ProbeResult>& earlier,
                               const std::function<void(std::size_t)>& starting,
                               const std::function<void(ProbeResult)>& finished) {
            return isolator->run_batch(batch, earlier, {starting, finished});
        };
    const PassSetting setting{o, run, selected, session.get(), started};
    PassOutcome first = run_pass(probes, services, setting, progress, /*prebuild=*/true);
    report.results = std::move(first.results);
    report.drift = std::move(first.drift);
    report.passes = further_passes(probes, services, setting, progress, report);
    report.launch = launch_context(launcher, turn.get());
    report.wall_seconds = seconds_since(started);
    report.complete = !interrupt_requested();
    analyze(report);
    write_outputs(o, run, report);
    keep_ceilings(o, selected, report);
    keep_run_for_movement(o, report);
    if (interrupt_requested()) {
        Log::warn("interrupted: the report covers the probes that finished");
        return 128 + interrupt_signal();  // the shell's convention for a death by signal
    }
    const auto lost = [](const std::vector<ProbeResult>& results) {
        return std::any_of(results.begin(), results.end(), [](const ProbeResult& r) {
            return r.status == ProbeStatus::crashed || r.status == ProbeStatus::timed_out;
        });
    };
    const bool lost_probe = lost(report.results) || std::any_of(report.passes.begin(), report.passes.end(),
                                                                [&](const RunPass& p) { return lost(p.results); });
    return lost_probe ? exit_code::probe_crashed : exit_code::ok;
}

}  // namespace

CommandRunner add_diagnose_command(CLI::App& app) {
    auto opts = std::make_shared<DiagnoseOptions>();
    CLI::App* cmd = app.add_subcommand("diagnose", "Measure the device layer by layer and rank what slows it down");
    add_device_option(cmd, opts->device);
    // Validators rather than hand parsing: --help lists the valid values, and a bad one gets
    // CLI11's one-line error (exit code 2) before anything runs.
    std::vector<std::string> workload_choices = known_workloads();
    workload_choices.emplace_back("none");
    auto* layers = cmd->add_option("--layers", opts->layers,
                                   "Comma-separated layers to run (network: MPI between ranks, added by default when "
                                   "launched by mpirun/srun with 2+ ranks)")
                       ->delimiter(',')
                       ->transform(CLI::IsMember(known_layers(), CLI::ignore_space))
                       ->capture_default_str();
    cmd->add_option("--workloads", opts->workloads, "Comma-separated workloads of the kernel layer, or none")
        ->delimiter(',')
        ->transform(CLI::IsMember(workload_choices, CLI::ignore_space))
        ->capture_default_str();
    // Bounds keep a typo from asking for petabytes; the probes then cap sizes by device and host memory.
    const auto count_range = CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40);
    const auto dim_range = CLI::Range(1u, 1u << 24);
    const char* glm_group = "GLM workload shape (0 or unset: the mode's default)";
    cmd->add_option("--glm-rows", opts->glm.rows, "Observations n")->check(count_range)->group(glm_group);
    cmd->add_option("--glm-cols", opts->glm.cols, "Features p")->check(count_range)->group(glm_group);
    cmd->add_option("--glm-density", opts->glm.density, "Non-zero fraction of the sparse design matrix (0, 1]")
        ->check(CLI::Range(1e-9, 1.0))
        ->group(glm_group);
    cmd->add_option("--glm-batch", opts->glm.batch, "Rows per mini-batch")->check(count_range)->group(glm_group);
    const char* attn_group = "Attention workload shape (0 or unset: the mode's default)";
    cmd->add_option("--attn-batch", opts->attention.batch, "Sequences per batch")->check(dim_range)->group(attn_group);
    cmd->add_option("--attn-heads", opts->attention.heads, "Attention heads")->check(dim_range)->group(attn_group);
    cmd->add_option("--attn-seq", opts->attention.seq, "Prompt length (prefill)")->check(dim_range)->group(attn_group);
    cmd->add_option("--attn-head-dim", opts->attention.head_dim, "Head dimension")->check(dim_range)->group(attn_group);
    cmd->add_option("--attn-kv-len", opts->attention.kv_len, "KV-cache length (decode)")
        ->check(dim_range)
        ->group(attn_group);
    cmd->add_flag("--attn-causal", opts->attention.causal, "Causal mask")->group(attn_group);
    auto* quick = cmd->add_flag("--quick", opts->quick, "Fewer sizes and samples (seconds)");
    auto* full = cmd->add_flag("--full", opts->full, "More sizes and samples, larger buffers (minutes)");
    quick->excludes(full);
    opts->outputs.add_shorthand(cmd, "--json", "json",
                                "Also write the report as JSON to FILE ('-': JSON on stdout only); = --save json=FILE");
    opts->outputs.add_shorthand(cmd, "--html", "html",
                                "Also write a self-contained HTML report (charts inline) to FILE; = --save html=FILE");
    opts->outputs.add_save_option(cmd);
    cmd->add_option("--trace", opts->trace,
                    "Also write every timed OpenCL command as Chrome trace-event JSON (Perfetto, chrome://tracing)");
    cmd->add_option("--save-topology", opts->save_topology,
                    "Also save the analysed hwloc topology, with clprobe's PCIe link readings, as XML to FILE");
    cmd->add_option("--kernel-dir", opts->kernel_dir, "Load kernels from this folder instead of the embedded copies");
    cmd->add_flag("--no-cache", opts->no_cache, "Do not read or write the kernel binary cache");
    cmd->add_option("--probe-timeout", opts->probe_timeout,
                    "Seconds one probe may run before it ends as an error (default: 60 quick, 180, 900 full)")
        ->check(CLI::Range(0.001, 86400.0));
    cmd->add_option("--topology", opts->topology_xml,
                    "Analyse this saved hwloc XML topology instead of the live machine (topology layer)");
    cmd->add_option("--device-pci", opts->device_pci,
                    "The device's PCI address (DDDD:BB:DD.F) inside the --topology file");
    cmd->add_option("--probes", opts->selection.only,
                    "Comma-separated probe ids or prefixes ending in '.' (attention.) to run, within --layers and "
                    "--workloads (clprobe list --probes)")
        ->delimiter(',');
    cmd->add_option("--skip", opts->selection.skip, "Comma-separated probe ids or prefixes ending in '.' to leave out")
        ->delimiter(',');
    cmd->add_flag("--no-isolation", opts->no_isolation,
                  "Run device probes in this process instead of a child process per layer (faster by a little; a "
                  "crashing or hung driver then ends the run)");
    const char* cost_group = "Cost (recorded in the report; cost per million steps and tokens derived from it)";
    // Non-negative: a price below zero is a typo, refused with CLI11's one-line error (exit code 2).
    cmd->add_option("--price-per-hour", opts->prices.per_hour, "What an hour of this machine costs, in USD")
        ->check(CLI::NonNegativeNumber)
        ->group(cost_group);
    cmd->add_option("--watts-price", opts->prices.per_kwh,
                    "What a kWh costs, in USD, for a machine billed by the energy it uses (needs energy sensors)")
        ->check(CLI::NonNegativeNumber)
        ->group(cost_group);
    cmd->footer("Probe ids: " + text::sentence_list(builtin_probe_ids(), ", "));
    cmd->add_option("--passes", opts->passes,
                    fmt::format("Run the probes N times, one whole pass after another, and keep every pass: one "
                                "report then carries how far figures move between runs, which compare and "
                                "--fail-on-regression use (1 to {})",
                                max_passes))
        ->check(CLI::Range(1, max_passes))
        ->capture_default_str();
    cmd->add_flag("-v,--verbose", opts->verbose, "Show every measurement and the rules that could not run");
    cmd->add_flag("-q,--quiet", opts->quiet, "No progress or warnings on stderr");
    return [opts, layers] {
        opts->layers_given = layers->count() > 0;
        return run_diagnose(*opts);
    };
}

}  // namespace clprobe
