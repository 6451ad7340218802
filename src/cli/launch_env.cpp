#include "cli/launch_env.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

#include "cli/cli_common.hpp"
#include "core/log.hpp"
#include "system/node_turn.hpp"

namespace clprobe {

LauncherEnv current_launcher() {
    EnvironmentMap env;
    for (const auto& name : launcher_variables())
        if (const char* value = std::getenv(name.c_str())) env[name] = value;
    return launcher_env_from(env);
}

std::string expand_output_placeholders(const std::string& path, const LauncherEnv& launcher) {
    if (path.empty() || path == "-") return path;
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    try {
        return expand_output_path(path, short_host_name(host), launcher);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
}

std::unique_ptr<NodeTurn> take_node_turn(const LauncherEnv& launcher) {
    if (!launcher.may_share_node()) return nullptr;
    auto turn = std::make_unique<NodeTurn>(node_turn_lock_path(std::getenv("XDG_RUNTIME_DIR"), ::getuid()));
    try {
        Log::info("rank {}: ranks on this node measure one at a time; waiting for this one's turn", *launcher.rank);
        turn->acquire();
        if (!turn->moved_because().empty())
            Log::warn("node lock: {}; using {} instead", turn->moved_because(), turn->lock_path());
    } catch (const std::runtime_error& e) {
        Log::warn("ranks on this node cannot take turns ({}): they may measure on top of each other", e.what());
        return nullptr;
    }
    return turn;
}

std::optional<LaunchContext> launch_context(const LauncherEnv& launcher, const NodeTurn* turn) {
    if (!launcher.rank) return std::nullopt;
    LaunchContext c;
    c.launcher = launcher.launcher;
    c.rank = *launcher.rank;
    c.local_rank = launcher.local_rank;
    c.local_size = launcher.local_size;
    c.world_size = launcher.world_size;
    c.took_turns = turn != nullptr;
    c.waited = turn != nullptr && turn->waited();
    c.turn_wait_seconds = turn != nullptr ? turn->wait_seconds() : 0;
    return c;
}

}  // namespace clprobe
