// The session of a build without MPI: nothing starts, and the reason says how to get the layer.
#include "network/mpi_session.hpp"

namespace clprobe {

bool built_with_mpi() {
    return false;
}

void MpiSession::start(const LauncherEnv&) {}
void MpiSession::finish() {}

const MpiWorld* MpiSession::world() {
    return nullptr;
}

const std::string& MpiSession::unavailable_reason() {
    static const std::string reason =
        "clprobe was built without MPI (configure with -DCLPROBE_MPI=ON and libopenmpi-dev)";
    return reason;
}

}  // namespace clprobe
