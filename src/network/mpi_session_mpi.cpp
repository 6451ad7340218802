// The session of a build with MPI: MPI_Init_thread only when a launcher announced 2 or more
// ranks, so a plain `clprobe diagnose` never pays for (or depends on) MPI start-up.
#include <mpi.h>

#include "network/mpi_call.hpp"
#include "network/mpi_session.hpp"

namespace clprobe {

namespace {

struct SessionState {
    bool initialised = false;  // by us: only then do we finalise
    bool active = false;
    MpiWorld world;
    std::string reason = "the MPI session was not started";
};

SessionState& state() {
    static SessionState s;
    return s;
}

std::string first_line(const char* text) {
    std::string s(text);
    const auto end = s.find_first_of("\r\n");
    return end == std::string::npos ? s : s.substr(0, end);
}

void read_world(SessionState& s, const std::string& launcher_variable) {
    mpi_check(MPI_Comm_rank(MPI_COMM_WORLD, &s.world.rank), "MPI_Comm_rank");
    mpi_check(MPI_Comm_size(MPI_COMM_WORLD, &s.world.size), "MPI_Comm_size");
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    mpi_check(MPI_Get_library_version(version, &length), "MPI_Get_library_version");
    s.world.library_version = first_line(version);
    int major = 0, minor = 0;
    mpi_check(MPI_Get_version(&major, &minor), "MPI_Get_version");
    s.world.standard_version = std::to_string(major) + "." + std::to_string(minor);
    s.world.launcher = launcher_variable;
}

}  // namespace

bool built_with_mpi() {
    return true;
}

std::string mpi_error_text(const char* call, int code) {
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return std::string(call) + " failed";
    return std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length));
}

bool all_ranks_agree(bool ok) {
    int mine = ok ? 1 : 0, all = 0;
    mpi_check(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD), "MPI_Allreduce (agreement)");
    return all != 0;
}

void MpiSession::start(const LauncherEnv& launcher) {
    SessionState& s = state();
    if (s.initialised) return;
    if (!launcher.world_size || *launcher.world_size < 2) {
        s.reason = "not started by mpirun/srun with 2 or more ranks";
        return;
    }
    // Probes call MPI from the main thread only; the activity monitor's thread never does.
    int provided = 0;
    const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS) {
        s.reason = "MPI initialisation failed: " + mpi_error_text("MPI_Init_thread", rc);
        return;
    }
    s.initialised = true;
    try {
        mpi_check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
        read_world(s, launcher.world_size_variable);
    } catch (const MpiError& e) {
        s.reason = std::string("MPI initialisation failed: ") + e.what();
        return;
    }
    if (s.world.size < 2) {
        s.reason = "MPI_COMM_WORLD has " + std::to_string(s.world.size) + " rank although " +
                   launcher.world_size_variable + " announced " + std::to_string(*launcher.world_size);
        return;
    }
    s.active = true;
    s.reason.clear();
}

void MpiSession::finish() {
    SessionState& s = state();
    if (!s.initialised) return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
    s.initialised = false;
    s.active = false;
    s.reason = "the MPI session has finished";
}

const MpiWorld* MpiSession::world() {
    return state().active ? &state().world : nullptr;
}

const std::string& MpiSession::unavailable_reason() {
    return state().reason;
}

}  // namespace clprobe
