#pragma once
// Whether a launcher (mpirun, srun, a PMI-based one) started this process as one of several
// ranks, read from the variables each launcher sets. Pure: the lookup is passed in, so tests
// feed it synthetic environments.
#include <functional>
#include <optional>
#include <string>

namespace clprobe {

struct LaunchInfo {
    int ranks = 0;         // the world size the launcher announced
    std::string variable;  // which variable said so, e.g. "OMPI_COMM_WORLD_SIZE"
};

using EnvLookup = std::function<const char*(const char*)>;

// The first of OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS, SLURM_NPROCS that holds a positive
// integer (Slurm's only when srun gave the tasks a PMI: PMIX_RANK, PMI_RANK or PMI_FD); nullopt
// when none does (a plain process, or `srun` without --mpi).
std::optional<LaunchInfo> launch_from_env(const EnvLookup& getenv_fn);

}  // namespace clprobe
