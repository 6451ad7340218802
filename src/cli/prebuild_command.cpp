// clprobe __prebuild --device P:D [--kernel-dir DIR] [--no-cache] PROGRAM...: one builder of
// runtime/program_prebuild. Hidden from --help: diagnose starts one per hardware thread before its
// first device probe. Each PROGRAM is "file\noptions" (core/program_plan); it builds them in turn
// through the KernelLibrary the probes use, so the driver's cache (and clprobe's binary cache,
// where the driver has none) then holds exactly what the probes will ask for. A program that does
// not build is left to its probe, which reports it; the builder's exit status is not read.
#include <cstdio>
#include <cstdlib>

#include "cl/cl_error.hpp"
#include "cl/device_session.hpp"
#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "core/log.hpp"
#include "core/program_plan.hpp"

namespace clprobe {

namespace {

int run_prebuild(const std::string& device, const std::string& kernel_dir, bool no_cache,
                 const std::vector<std::string>& programs) {
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
    CLI::App* cmd = app.add_subcommand("__prebuild", "Build kernel programs ahead for diagnose (internal)");
    cmd->group("");  // hidden: not a command for users
    cmd->add_option("--device", *device, "The device, P:D")->required();
    cmd->add_option("--kernel-dir", *kernel_dir, "The folder the probes load kernels from");
    cmd->add_flag("--no-cache", *no_cache, "Do not read or write the kernel binary cache");
    cmd->add_option("programs", *programs, "file, newline, options")->required();
    return
        [device, kernel_dir, no_cache, programs] { return run_prebuild(*device, *kernel_dir, *no_cache, *programs); };
}

}  // namespace clprobe
