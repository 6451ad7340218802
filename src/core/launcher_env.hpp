#pragma once
// What a parallel launcher (srun, mpirun, mpiexec) tells each process it starts, read from an
// environment given as a map so that tests need no real environment: the one reader of the
// launchers' variables (rank and placement for output paths and node turns, world size for the
// MPI session); and the expansion of the {host} and {rank} placeholders in output paths
// (docs/fleet.md).
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace clprobe {

using EnvironmentMap = std::map<std::string, std::string>;

struct LauncherEnv {
    std::string launcher;             // "slurm", "openmpi", "pmi"; "" when no launcher is seen
    std::optional<std::string> rank;  // this process's global rank, as the launcher wrote it
    std::string rank_variable;        // the variable it came from, e.g. SLURM_PROCID
    std::optional<int> local_rank;    // rank among the processes on this node
    std::optional<int> local_size;    // processes on this node; nullopt when the launcher does not say
    // The number of ranks the launcher announced (a positive integer), and the variable it came
    // from, e.g. OMPI_COMM_WORLD_SIZE: whether to start MPI (src/network/mpi_session.hpp). Read
    // on its own, in its own order: OMPI_COMM_WORLD_SIZE, PMI_SIZE, then SLURM_NTASKS and
    // SLURM_NPROCS only when srun gave the tasks a PMI (PMIX_RANK, PMI_RANK or PMI_FD is set).
    std::optional<int> world_size;
    std::string world_size_variable;
    // Several ranks may run on this node: the local size says so, or it is unknown but a local
    // rank is given. Node-wide measurements then take turns (src/system/node_turn.hpp).
    bool may_share_node() const;
};

// The variables launcher_env_from reads, for whoever collects them from the real environment.
const std::vector<std::string>& launcher_variables();

LauncherEnv launcher_env_from(const EnvironmentMap& env);

// Expands {host} (the short host name), {rank} and {size} (the ranks the launcher announced) in an
// output path. Throws std::invalid_argument naming the problem: {rank} or {size} with no launcher
// rank or count in the environment, or an unknown {placeholder}. Braces around anything other than a lowercase name are
// kept as written.
std::string expand_output_path(const std::string& pattern, const std::string& short_host, const LauncherEnv& launcher);

// "node7" for "node7.cluster.example.org".
std::string short_host_name(const std::string& host);

}  // namespace clprobe
