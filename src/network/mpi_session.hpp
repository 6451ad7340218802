#pragma once
// The process's MPI session. MPI is process-wide (one MPI_Init_thread, one MPI_Finalize per
// process), so this is too: diagnose starts it before the probes and finishes it after the
// report is written; the network probes read world(). Built without MPI (CLPROBE_HAVE_MPI unset)
// the same interface reports why the network layer cannot run. No MPI header here.
#include <string>

#include "core/launcher_env.hpp"

namespace clprobe {

struct MpiWorld {
    int rank = 0;
    int size = 0;
    std::string library_version;   // MPI_Get_library_version, first line
    std::string standard_version;  // MPI_Get_version, "3.1"
    std::string launcher;          // the launcher variable that announced the ranks
};

// True when this binary was built with MPI (the CLPROBE_HAVE_MPI define).
bool built_with_mpi();

class MpiSession {
  public:
    // Initialises MPI when built with it and the launcher (its world_size, read by
    // launcher_env_from; the CLI's current_launcher()) says this process is one of 2 or more
    // ranks; otherwise, or when initialisation fails, records why (unavailable_reason). Never throws.
    static void start(const LauncherEnv& launcher);
    // MPI_Finalize when start() initialised MPI; safe to call more than once.
    static void finish();
    // The world while MPI runs with 2 or more ranks; null otherwise.
    static const MpiWorld* world();
    // Why world() is null: built without MPI, not launched with ranks, or the failed MPI call.
    static const std::string& unavailable_reason();
};

// Starts the session for a scope (diagnose's run) and finishes it on every exit path.
class ScopedMpiSession {
  public:
    explicit ScopedMpiSession(const LauncherEnv& launcher) { MpiSession::start(launcher); }
    ~ScopedMpiSession() { MpiSession::finish(); }
    ScopedMpiSession(const ScopedMpiSession&) = delete;
    ScopedMpiSession& operator=(const ScopedMpiSession&) = delete;
};

}  // namespace clprobe
