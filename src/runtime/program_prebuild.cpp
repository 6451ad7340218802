#include "runtime/program_prebuild.hpp"

#include <atomic>
#include <chrono>
#include <thread>

#include "runtime/child_process.hpp"

namespace clprobe {

PrebuildOutcome prebuild_programs(const std::vector<ProgramNeed>& programs, const PrebuildSettings& settings) {
    const auto start = std::chrono::steady_clock::now();
    PrebuildOutcome out;
    out.programs = programs.size();
    const auto shares = share_programs(programs, settings.workers);
    out.workers = shares.size();
    std::atomic<std::size_t> failed{0};
    // A thread per builder only supervises it (run_child polls its pipes and its clock).
    std::vector<std::thread> supervisors;
    for (const auto& share : shares) {
        std::vector<std::string> argv{settings.executable, "__prebuild", "--device", settings.device_selector};
        if (!settings.kernel_dir.empty()) argv.insert(argv.end(), {"--kernel-dir", settings.kernel_dir});
        if (!settings.use_cache) argv.emplace_back("--no-cache");
        argv.emplace_back("--");
        for (const auto& need : share)
            argv.push_back(program_argument(need));
        try {
            supervisors.emplace_back([argv = std::move(argv), &settings, &failed] {
                ChildConversation quiet;  // a builder sends nothing on its channel
                const ChildOutcome o = run_child(argv, {settings.budget_seconds, 2.0, 2.0}, quiet);
                if (!o.exited || o.exit_status != 0) ++failed;
            });
        } catch (const std::exception&) {
            ++failed;  // no thread: that share is built by its probes
        }
    }
    for (auto& t : supervisors)
        t.join();
    out.failed_workers = failed.load();
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

}  // namespace clprobe
