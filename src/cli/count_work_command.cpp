// clprobe __count-work CAPTURE_FOLDER --out FILE [--seconds S]: the child side of work counting
// (cli/trace_command_work.cpp). Hidden from --help. The parent starts it with Oclgrind as the only
// OpenCL platform (OCL_ICD_VENDORS naming Oclgrind's ICD library) and clprobe's counting plugin
// loaded into it (OCLGRIND_PLUGINS); this process replays the captured launch once on Oclgrind's
// simulated device, and the plugin counts its work into FILE.counts while it runs. FILE gets the
// replay's outcome: whether the program built and the launch ran, and, for a launch simulated in
// full, how its outputs compared with the captured ones.
#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "replay/capture_reader.hpp"
#include "replay/replay_engine.hpp"

namespace clprobe {

namespace {

// Oclgrind's platform name (CL_PLATFORM_NAME), which the replay runs on instead of the captured one.
constexpr const char* oclgrind_platform = "Oclgrind";

void write_outcome(const std::string& path, const nlohmann::json& outcome) {
    AtomicFileWriter out(path);
    out.write(outcome.dump() + "\n");
    out.commit();
}

// Oclgrind's simulated device reports small limits by default (128 MiB of global memory, 1024
// work-items per group, 32 KiB of local and 64 KiB of constant memory); the captured launch ran
// within its own device's, so the simulated one gets room for it. Its sizes are 32-bit.
void set_device_limits(const replay::Capture& c) {
    static constexpr std::uint64_t most = 0xFFFFFFFFull;
    std::uint64_t bytes = 0, local = 0;
    for (const auto& a : c.args) {
        if (a.has_data()) bytes += a.size;
        if (a.kind == replay::ArgKind::local) local += a.size;
    }
    const std::uint64_t items = c.local_size ? (*c.local_size)[0] * (*c.local_size)[1] * (*c.local_size)[2] : 0;
    const auto set = [](const char* name, std::uint64_t value) {
        ::setenv(name, std::to_string(std::min(value, most)).c_str(), 1);
    };
    set("OCLGRIND_GLOBAL_MEM_SIZE", std::max<std::uint64_t>(128ull << 20, 2 * bytes + (64ull << 20)));
    set("OCLGRIND_MAX_WGSIZE", std::max<std::uint64_t>(1024, items));
    set("OCLGRIND_LOCAL_MEM_SIZE", std::max<std::uint64_t>(4ull << 20, 2 * local));
    set("OCLGRIND_CONSTANT_MEM_SIZE", 64ull << 20);
}

// -I"/path" as some programs write it (darktable): a driver that passes options to clang without a
// shell's unquoting hands it the quotes, and Oclgrind is one. The same include path, unquoted.
std::string unquoted_includes(std::string options) {
    for (std::size_t at = options.find("-I\""); at != std::string::npos; at = options.find("-I\"", at)) {
        const std::size_t close = options.find('"', at + 3);
        if (close == std::string::npos) break;
        options.erase(close, 1);
        options.erase(at + 2, 1);
    }
    return options;
}

struct CountWorkArgs {
    std::string folder, out, icd, plugin;
    double seconds = 0;
};

int count_work(const CountWorkArgs& a) {
    // Before the first OpenCL call, where the ICD loader reads its vendors and Oclgrind its plugins:
    // Oclgrind alone, whatever other drivers the machine has, with clprobe's plugin in it.
    ::setenv("OCL_ICD_VENDORS", a.icd.c_str(), 1);
    ::setenv("OCLGRIND_PLUGINS", a.plugin.c_str(), 1);
    ::unsetenv("OPENCL_LAYERS");
    const std::string& folder = a.folder;
    const std::string& out = a.out;
    const double seconds = a.seconds;
    replay::CaptureLoad load = replay::read_capture(folder);
    if (load.capture) load.capture->options = unquoted_includes(load.capture->options);
    if (!load.capture) {
        write_outcome(out, {{"status", "invalid"}, {"reason", load.problem}});
        return 0;
    }
    const replay::Capture& c = *load.capture;
    if (c.skipped) {
        write_outcome(out, {{"status", "skipped"}, {"reason", *c.skipped}});
        return 0;
    }
    if (c.origin != replay::ProgramOrigin::source) {
        const bool binary = c.origin == replay::ProgramOrigin::binary;
        write_outcome(out, {{"status", "skipped"},
                            {"reason", fmt::format("the program was created from {} and Oclgrind builds OpenCL C "
                                                   "source only{}",
                                                   binary ? "a binary" : "IL",
                                                   binary ? " (a binary cache of the program's: clear it so the "
                                                            "program builds from source, e.g. hashcat's "
                                                            "~/.cache/hashcat/kernels, darktable's "
                                                            "~/.cache/darktable/cached_*kernels*, or set "
                                                            "PYOPENCL_NO_CACHE=1)"
                                                          : "")}});
        return 0;
    }
    set_device_limits(c);
    // Read by the plugin when Oclgrind's context loads it, which is after this (the first OpenCL call).
    ::setenv("CLPROBE_WORK_OUT", (out + ".counts").c_str(), 1);
    ::setenv("CLPROBE_WORK_SECONDS", fmt::format("{}", seconds).c_str(), 1);
    ::setenv("CLPROBE_WORK_KERNEL", c.kernel.c_str(), 1);
    replay::ReplayOptions options;
    options.launch_only = true;
    options.platform = oclgrind_platform;
    replay::ReplayResult r = replay::replay_capture(load, options);
    std::string note;
    // Oclgrind 21.10 lacks some intrinsics LLVM's optimiser forms (llvm.fshl from a rotate written as
    // shifts, in hashcat's kernels): the program builds but its kernels cannot be created. Without
    // optimisation they are not formed; the count then includes what the optimiser would have removed.
    if (r.status == replay::ReplayStatus::build_failed && r.reason.find("clCreateKernel") != std::string::npos) {
        options.extra_build_options = "-cl-opt-disable";
        r = replay::replay_capture(load, options);
        note =
            "built without optimisation (-cl-opt-disable): Oclgrind could not create the kernel from its "
            "optimised build";
    }
    nlohmann::json outcome = {{"status", std::string(replay::to_string(r.status))},
                              {"reason", r.reason},
                              {"build_ms", r.build_ms},
                              {"note", note}};
    if (!r.variants.empty()) outcome["check"] = std::string(replay::to_string(r.variants.front().check));
    write_outcome(out, outcome);
    return 0;
}

}  // namespace

CommandRunner add_count_work_command(CLI::App& app) {
    auto a = std::make_shared<CountWorkArgs>();
    CLI::App* cmd = app.add_subcommand("__count-work", "Count one captured launch's work under Oclgrind (internal)");
    cmd->group("");  // hidden: not a command for users
    cmd->add_option("folder", a->folder, "A capture folder (<records>/replay/<pid>-<n>)")->required();
    cmd->add_option("--out", a->out, "Where to write the replay's outcome (the plugin writes FILE.counts)")->required();
    cmd->add_option("--icd", a->icd, "Oclgrind's ICD library")->required();
    cmd->add_option("--plugin", a->plugin, "clprobe's counting plugin for Oclgrind")->required();
    cmd->add_option("--seconds", a->seconds, "Simulation budget; 0: simulate every work-group");
    return [a] { return count_work(*a); };
}

}  // namespace clprobe
