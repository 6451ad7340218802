#pragma once
// The launcher environment of this process (srun, mpirun) as the CLI uses it: placeholders in
// output paths, and the node turn of the node-local layers (docs/fleet.md).
#include <memory>
#include <string>

#include "core/launcher_env.hpp"
#include "core/report.hpp"

namespace clprobe {

class NodeTurn;

// Read from the real environment.
LauncherEnv current_launcher();

// {host} and {rank} expanded against this process; throws UsageError naming the problem.
// "" and "-" (stdout) are returned unchanged.
std::string expand_output_placeholders(const std::string& path, const LauncherEnv& launcher);

// The node turn for a run under a launcher that may place several ranks on this node; null
// otherwise. Already acquired: it blocks until the ranks before it on this node are done with
// their node-local layers. A lock that cannot be taken is a warning, not a failure.
std::unique_ptr<NodeTurn> take_node_turn(const LauncherEnv& launcher);

// The report's record of the launch: the rank, and the turn's wait so far. nullopt without a launcher.
std::optional<LaunchContext> launch_context(const LauncherEnv& launcher, const NodeTurn* turn);

}  // namespace clprobe
