#include "network/launch_env.hpp"

#include <array>
#include <charconv>
#include <cstring>

namespace clprobe {

std::optional<LaunchInfo> launch_from_env(const EnvLookup& getenv_fn) {
    // Open MPI's own variable first: under srun with Open MPI both are set and agree; PMI_SIZE
    // covers MPICH/PMI launchers; SLURM's task count is the last resort (sbatch sets it for a
    // job script too, where the batch shell is a single process, so it only counts when nothing
    // more specific is set).
    static constexpr std::array<const char*, 4> variables = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS",
                                                             "SLURM_NPROCS"};
    for (const char* name : variables) {
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
