#include "network/launch_env.hpp"

#include <array>
#include <charconv>
#include <cstring>

namespace clprobe {

std::optional<LaunchInfo> launch_from_env(const EnvLookup& getenv_fn) {
    // Open MPI's own variable first: under srun with Open MPI both are set and agree; PMI_SIZE
    // covers MPICH/PMI launchers. Slurm's task count alone is not enough: plain `srun -n 2`
    // (--mpi=none) starts the tasks with no process-management interface to wire MPI up, and
    // Open MPI then aborts inside MPI_Init_thread (and sbatch sets it for a single batch shell
    // too). It counts only when srun also gave the tasks a PMI (PMIX_RANK, PMI_RANK or PMI_FD).
    static constexpr std::array<const char*, 4> variables = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS",
                                                             "SLURM_NPROCS"};
    const auto set = [&](const char* name) {
        const char* v = getenv_fn(name);
        return v != nullptr && *v != '\0';
    };
    const bool slurm_wired = set("PMIX_RANK") || set("PMI_RANK") || set("PMI_FD");
    for (const char* name : variables) {
        if (std::strncmp(name, "SLURM_", 6) == 0 && !slurm_wired) continue;
        const char* value = getenv_fn(name);
        if (value == nullptr || *value == '\0') continue;
        int ranks = 0;
        const char* end = value + std::strlen(value);
        const auto [ptr, ec] = std::from_chars(value, end, ranks);
        if (ec != std::errc() || ptr != end || ranks <= 0) continue;
        return LaunchInfo{ranks, name};
    }
    return std::nullopt;
}

}  // namespace clprobe
