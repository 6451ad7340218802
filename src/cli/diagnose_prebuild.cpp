#include "cli/diagnose_prebuild.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "core/log.hpp"
#include "core/stop_points.hpp"
#include "program_needs.hpp"
#include "runtime/program_prebuild.hpp"

namespace clprobe {

std::function<void(const std::vector<const Probe*>&)> with_prebuild(
    std::function<void(const std::vector<const Probe*>&)> inner, const DeviceSession& session,
    const RunOptions& options, PrebuildRequest request) {
    const char* env = std::getenv("CLPROBE_PREBUILD");
    if (env && std::string(env) == "0") return inner;
    return [inner = std::move(inner), &session, &options,
            request = std::move(request)](const std::vector<const Probe*>& plan) {
        if (inner) inner(plan);
        if (interrupt_requested()) return;
        std::vector<std::string> ids;
        for (const Probe* p : plan)
            ids.push_back(p->id());
        const std::vector<ProgramNeed> programs = programs_needed(ids, options, session.info());
        if (programs.empty()) return;
        PrebuildSettings settings;
        settings.executable = "/proc/self/exe";
        settings.device_selector = request.device_selector;
        settings.kernel_dir = request.kernel_dir;
        settings.use_cache = options.use_cache;
        settings.workers = std::max(1u, std::thread::hardware_concurrency());
        if (request.show_progress)
            fmt::print(stderr, "building {} kernel programs ahead, {} at a time...\n", programs.size(),
                       std::min<std::size_t>(settings.workers, programs.size()));
        const PrebuildOutcome o = prebuild_programs(programs, settings);
        Log::debug("built {} kernel programs ahead in {:.1f} s by {} processes ({} failed)", o.programs, o.seconds,
                   o.workers, o.failed_workers);
    };
}

}  // namespace clprobe
