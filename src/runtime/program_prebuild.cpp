#include "runtime/program_prebuild.hpp"

#include <chrono>
#include <thread>

#include "runtime/child_process.hpp"

namespace clprobe {

PrebuildOutcome prebuild_programs(const std::vector<BuilderShare>& shares, const PrebuildSettings& settings) {
    const auto start = std::chrono::steady_clock::now();
    PrebuildOutcome out;
    out.workers = shares.size();
    // Written by one supervisor each, read after the joins (a vector<bool> would share bytes).
    std::vector<char> ok(shares.size(), 0);
    // A thread per builder only supervises it (run_child polls its pipes and its clock).
    std::vector<std::thread> supervisors;
    for (std::size_t i = 0; i < shares.size(); ++i) {
        const BuilderShare& share = shares[i];
        out.programs += share.programs.size();
        std::vector<std::string> argv{settings.executable, "__prebuild", "--device", settings.device_selector};
        if (!settings.kernel_dir.empty()) argv.insert(argv.end(), {"--kernel-dir", settings.kernel_dir});
        if (!settings.use_cache) argv.emplace_back("--no-cache");
        for (const auto& id : share.warm_ups)
            argv.insert(argv.end(), {"--warm-up", id});
        if (!share.warm_ups.empty()) argv.insert(argv.end(), {"--run-options", settings.run_options_json});
        argv.emplace_back("--");
        for (const auto& need : share.programs)
            argv.push_back(program_argument(need));
        try {
            supervisors.emplace_back([argv = std::move(argv), &settings, flag = &ok[i]] {
                ChildConversation quiet;  // a builder sends nothing on its channel
                const ChildOutcome o = run_child(argv, {settings.budget_seconds, 2.0, 2.0}, quiet);
                *flag = o.exited && o.exit_status == 0;
            });
        } catch (const std::exception&) {
            // no thread: that share is built by its probes
        }
    }
    for (auto& t : supervisors)
        t.join();
    for (const char flag : ok)
        if (!flag) ++out.failed_workers;
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

}  // namespace clprobe
