#include "core/launcher_env.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <stdexcept>
#include <string_view>

namespace clprobe {

namespace {

struct LauncherVariables {
    const char* launcher;
    const char* rank;
    const char* local_rank;
    const char* local_size;  // nullptr: the launcher has no plain variable for it
};

// In order of preference: under srun inside an Open MPI job both are set and Slurm's names the
// node placement the scheduler chose.
const LauncherVariables launchers[] = {
    {"slurm", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"pmi", "PMI_RANK", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
    // PMIx launchers that set none of the above (prterun, PMIx-only srun plugins).
    {"pmix", "PMIX_RANK", nullptr, nullptr},
};

// The world size, in its own order: Open MPI's own variable first (under srun with Open MPI both
// are set and agree); PMI_SIZE covers MPICH/PMI launchers. Slurm's task count alone is not
// enough: plain `srun -n 2` (--mpi=none) starts the tasks with no process-management interface
// to wire MPI up, and Open MPI then aborts inside MPI_Init_thread (and sbatch sets it for a single
// batch shell too). It counts only when srun also gave the tasks a PMI (slurm_pmi_variables).
const char* const world_size_variables[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", "SLURM_NPROCS"};
const char* const slurm_pmi_variables[] = {"PMIX_RANK", "PMI_RANK", "PMI_FD"};

std::optional<std::string> get(const EnvironmentMap& env, const char* name) {
    if (name == nullptr) return std::nullopt;
    const auto it = env.find(name);
    if (it == env.end() || it->second.empty()) return std::nullopt;
    return it->second;
}

std::optional<int> get_int(const EnvironmentMap& env, const char* name) {
    const auto text = get(env, name);
    if (!text) return std::nullopt;
    int value = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec != std::errc() || end != text->data() + text->size() || value < 0) return std::nullopt;
    return value;
}

void read_world_size(const EnvironmentMap& env, LauncherEnv& out) {
    const bool slurm_wired = std::any_of(std::begin(slurm_pmi_variables), std::end(slurm_pmi_variables),
                                         [&](const char* name) { return get(env, name).has_value(); });
    for (const char* name : world_size_variables) {
        if (std::string_view(name).starts_with("SLURM_") && !slurm_wired) continue;
        const auto size = get_int(env, name);
        if (!size || *size <= 0) continue;
        out.world_size = size;
        out.world_size_variable = name;
        return;
    }
}

bool is_placeholder_name(const std::string& s) {
    if (s.empty()) return false;
    for (const char c : s)
        if (!((c >= 'a' && c <= 'z') || c == '_')) return false;
    return true;
}

}  // namespace

bool LauncherEnv::may_share_node() const {
    if (local_size) return *local_size > 1;
    return local_rank.has_value();
}

const std::vector<std::string>& launcher_variables() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        const auto add = [&](const char* n) {
            if (n != nullptr && std::find(out.begin(), out.end(), n) == out.end()) out.emplace_back(n);
        };
        for (const auto& l : launchers)
            for (const char* n : {l.rank, l.local_rank, l.local_size})
                add(n);
        for (const char* n : world_size_variables)
            add(n);
        for (const char* n : slurm_pmi_variables)
            add(n);
        return out;
    }();
    return names;
}

LauncherEnv launcher_env_from(const EnvironmentMap& env) {
    LauncherEnv out;
    read_world_size(env, out);
    for (const auto& l : launchers) {
        auto rank = get(env, l.rank);
        if (!rank) continue;
        out.launcher = l.launcher;
        out.rank = std::move(rank);
        out.rank_variable = l.rank;
        out.local_rank = get_int(env, l.local_rank);
        out.local_size = get_int(env, l.local_size);
        return out;
    }
    return out;
}

std::string short_host_name(const std::string& host) {
    return host.substr(0, host.find('.'));
}

std::string expand_output_path(const std::string& pattern, const std::string& short_host, const LauncherEnv& launcher) {
    std::string out;
    std::size_t pos = 0;
    while (pos < pattern.size()) {
        const auto open = pattern.find('{', pos);
        const auto close = open == std::string::npos ? std::string::npos : pattern.find('}', open);
        if (close == std::string::npos) break;
        const std::string name = pattern.substr(open + 1, close - open - 1);
        out += pattern.substr(pos, open - pos);
        pos = close + 1;
        if (name == "host") {
            if (short_host.empty())
                throw std::invalid_argument(
                    fmt::format("'{}': {{host}} needs a host name, and this one has none", pattern));
            out += short_host;
        } else if (name == "rank") {
            if (!launcher.rank)
                throw std::invalid_argument(
                    fmt::format("'{}': {{rank}} needs a launcher's rank (SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK "
                                "or PMIX_RANK), and "
                                "none "
                                "is set: run under srun or mpirun, or use {{host}}",
                                pattern));
            out += *launcher.rank;
        } else if (name == "size") {
            if (!launcher.world_size)
                throw std::invalid_argument(fmt::format(
                    "'{}': {{size}} needs a launcher's rank count (OMPI_COMM_WORLD_SIZE, PMI_SIZE, or SLURM_NTASKS "
                    "under a PMI), and none is set",
                    pattern));
            out += std::to_string(*launcher.world_size);
        } else if (is_placeholder_name(name)) {
            throw std::invalid_argument(
                fmt::format("'{}': unknown placeholder '{{{}}}' (known: {{host}}, {{rank}}, {{size}})", pattern, name));
        } else {
            out += pattern.substr(open, close - open + 1);
        }
    }
    out += pattern.substr(std::min(pos, pattern.size()));
    return out;
}

}  // namespace clprobe
