#include "cli/diagnose_prebuild.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>

#include "cl/kernel_library.hpp"
#include "cl/kernel_sources.hpp"

#include "core/log.hpp"
#include "core/stop_points.hpp"
#include "program_needs.hpp"
#include "runtime/program_prebuild.hpp"
#include "runtime/run_options_json.hpp"
#include "runtime/warm_up_stamp.hpp"

namespace clprobe {

namespace {

bool env_off(const char* name) {
    const char* env = std::getenv(name);
    return env && std::string(env) == "0";
}

// The stamp key of each probe of `groups` (runtime/warm_up_stamp), by probe id.
std::map<std::string, std::string> warm_up_keys(const std::vector<WarmUpGroup>& groups, const RunOptions& options,
                                                const DeviceInfo& device) {
    const KernelSources sources = KernelSources::embedded();
    std::map<std::string, std::string> keys;
    for (const auto& g : groups)
        for (const auto& id : g.probe_ids) {
            std::vector<std::string> texts;
            for (const auto& need : programs_needed({id}, options, device))
                texts.push_back(sources.source(need.file) + "\n" + need.options);
            keys[id] = warm_up_key(device, options, id, texts);
        }
    return keys;
}

// The groups whose probes have not all been warmed up on this machine; a group's probes that
// have are dropped from it, its programs kept (a probe alone still builds what it shares).
std::vector<WarmUpGroup> not_yet_warmed(std::vector<WarmUpGroup> groups, const std::map<std::string, std::string>& keys,
                                        const std::filesystem::path& dir) {
    std::vector<WarmUpGroup> out;
    for (auto& g : groups) {
        std::erase_if(g.probe_ids, [&](const std::string& id) { return warmed_up(dir, keys.at(id)); });
        if (!g.probe_ids.empty()) out.push_back(std::move(g));
    }
    return out;
}

}  // namespace

std::function<void(const std::vector<const Probe*>&)> with_prebuild(
    std::function<void(const std::vector<const Probe*>&)> inner, const DeviceSession& session,
    const RunOptions& options, PrebuildRequest request) {
    if (env_off("CLPROBE_PREBUILD")) return inner;
    return [inner = std::move(inner), &session, &options,
            request = std::move(request)](const std::vector<const Probe*>& plan) {
        if (inner) inner(plan);
        if (interrupt_requested()) return;
        std::vector<std::string> ids;
        for (const Probe* p : plan)
            ids.push_back(p->id());
        const std::vector<ProgramNeed> programs = programs_needed(ids, options, session.info());
        if (programs.empty()) return;
        // Warm-ups fill the driver's cache: none where clprobe keeps no cache of its own to stamp
        // them in, and none for kernels from --kernel-dir (edited copies, timed as they are).
        std::vector<WarmUpGroup> groups;
        std::map<std::string, std::string> keys;
        const std::filesystem::path cache = default_cache_dir();
        if (options.use_cache && request.kernel_dir.empty() && !env_off("CLPROBE_WARM_UP")) {
            groups = warm_up_groups(ids, options, session.info());
            keys = warm_up_keys(groups, options, session.info());
            groups = not_yet_warmed(std::move(groups), keys, cache);
        }
        PrebuildSettings settings;
        settings.executable = "/proc/self/exe";
        settings.device_selector = request.device_selector;
        settings.kernel_dir = request.kernel_dir;
        settings.use_cache = options.use_cache;
        settings.run_options_json = run_options_to_json(options).dump();
        const auto shares = plan_builders(programs, groups, std::max(1u, std::thread::hardware_concurrency()));
        if (request.show_progress)
            fmt::print(stderr, "building {} kernel programs ahead{}, {} at a time...\n", programs.size(),
                       groups.empty() ? "" : " and warming up the workloads' first launches", shares.size());
        const PrebuildOutcome o = prebuild_programs(shares, settings);
        // Stamped once tried, whatever the builder's end: a warm-up that crashes or overruns here
        // would do so on every run, and its probe reports the failure itself. Not when the run was
        // interrupted: the builders were stopped, not done.
        std::size_t stamped = 0;
        for (const auto& share : shares)
            for (const auto& id : share.warm_ups)
                if (!interrupt_requested() && mark_warmed_up(cache, keys.at(id))) ++stamped;
        Log::debug("built {} kernel programs ahead in {:.1f} s by {} processes ({} failed); {} warm-ups stamped",
                   o.programs, o.seconds, o.workers, o.failed_workers, stamped);
    };
}

}  // namespace clprobe
