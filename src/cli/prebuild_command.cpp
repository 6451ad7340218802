// clprobe __prebuild --device P:D [--kernel-dir DIR] [--no-cache] [--warm-up PROBE... --run-options
// JSON] PROGRAM...: one builder of runtime/program_prebuild. Hidden from --help: diagnose starts
// one per hardware thread before its first device probe. Each PROGRAM is "file\noptions"
// (core/program_plan); it builds them in turn through the KernelLibrary the probes use, so the
// driver's cache (and clprobe's binary cache, where the driver has none) then holds exactly what
// the probes will ask for. Then it runs each --warm-up probe with the run's options, warm-up only
// (one launch per variant; the result is discarded). A program that does not build, or a probe
// that fails, is left to the probe in diagnose, which reports it; the exit status (non-zero when
// anything failed) is only counted in diagnose's debug log.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "builtin_probes.hpp"
#include "program_needs.hpp"

#include "cl/cl_error.hpp"
#include "cl/device_session.hpp"
#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "core/log.hpp"
#include "core/program_plan.hpp"
#include "runtime/run_options_json.hpp"
#include "runtime/runner.hpp"
#include "runtime/sampler.hpp"

namespace clprobe {

namespace {

// Whether a probe ran to an end that says its launches were made (or could never be).
bool ended_well(const ProbeResult& r) {
    return r.status == ProbeStatus::ok || r.status == ProbeStatus::unsupported || r.status == ProbeStatus::skipped;
}

int warm_up(DeviceSession& session, const std::vector<std::string>& probe_ids, const std::string& run_options) {
    const RunOptions options = warm_up_options(run_options_from_json(nlohmann::json::parse(run_options)));
    const ProbeList probes = make_builtin_probes();
    set_warm_up_only(true);
    const std::vector<ProbeResult> none;
    int failed = 0;
    for (const auto& id : probe_ids) {
        const auto it = std::find_if(probes.begin(), probes.end(), [&](const auto& p) { return p->id() == id; });
        if (it == probes.end()) {
            ++failed;
            continue;
        }
        ProbeContext ctx{&session, options, none, nullptr, ""};
        if (!ended_well(run_probe(**it, ctx))) ++failed;
    }
    return failed;
}

int run_prebuild(const std::string& device, const std::string& kernel_dir, bool no_cache,
                 const std::vector<std::string>& programs, const std::vector<std::string>& warm_ups,
                 const std::string& run_options) {
    Log::set_level(LogLevel::quiet);  // the parent said what it is doing
    const SelectedDevice selected = select_device(device);
    const std::unique_ptr<DeviceSession> session = open_session(selected, kernel_dir, !no_cache);
    int failed = 0;
    for (const auto& argument : programs) {
        try {
            const ProgramNeed need = parse_program_argument(argument);
            session->kernels().program(need.file, need.options);
        } catch (const std::exception&) {
            ++failed;  // its probe builds it again and reports the error with the log
        }
    }
    if (!warm_ups.empty()) {
        try {
            failed += warm_up(*session, warm_ups, run_options);
        } catch (const std::exception&) {
            ++failed;  // options it cannot read: the probes in diagnose compile at first launch, as before
        }
    }
    // Out at once, as the probe child does: tearing down the context is not this process's job.
    std::fflush(nullptr);
    std::_Exit(failed ? exit_code::failure : exit_code::ok);
}

}  // namespace

CommandRunner add_prebuild_command(CLI::App& app) {
    auto device = std::make_shared<std::string>();
    auto kernel_dir = std::make_shared<std::string>();
    auto no_cache = std::make_shared<bool>(false);
    auto programs = std::make_shared<std::vector<std::string>>();
    auto warm_ups = std::make_shared<std::vector<std::string>>();
    auto run_options = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand("__prebuild", "Build kernel programs ahead for diagnose (internal)");
    cmd->group("");  // hidden: not a command for users
    cmd->add_option("--device", *device, "The device, P:D")->required();
    cmd->add_option("--kernel-dir", *kernel_dir, "The folder the probes load kernels from");
    cmd->add_flag("--no-cache", *no_cache, "Do not read or write the kernel binary cache");
    cmd->add_option("--warm-up", *warm_ups, "A probe to run warm-up only after the builds (repeatable)");
    cmd->add_option("--run-options", *run_options, "The run's options as JSON, for the warm-ups");
    cmd->add_option("programs", *programs, "file, newline, options");
    return [device, kernel_dir, no_cache, programs, warm_ups, run_options] {
        return run_prebuild(*device, *kernel_dir, *no_cache, *programs, *warm_ups, *run_options);
    };
}

}  // namespace clprobe
