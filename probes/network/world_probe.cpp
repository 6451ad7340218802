// network.world: who is in the MPI world. Its first action (require_world) is the barrier that
// lines the ranks up after the node-local layers; then it records the typed NetworkFacts every
// other network probe and rule relies on: rank, world size, the measured peer, the MPI library
// and where each rank runs.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/network_facts.hpp"
#include "network/mpi_call.hpp"
#include "network/network_support.hpp"
#include "probe_factories.hpp"

namespace clprobe {

namespace {

class WorldProbe final : public net::MpiProbe {
  public:
    WorldProbe() : MpiProbe(network_world_info) {}

    void run(ProbeContext&, ProbeResult& out) override {
        const MpiWorld& w = net::require_world();
        NetworkFacts facts;
        facts.rank = w.rank;
        facts.world_size = w.size;
        // The size sweep runs between ranks 0 and 1; the others join the pair scan only.
        if (w.rank == 0) facts.peer = 1;
        if (w.rank == 1) facts.peer = 0;
        facts.library_version = w.library_version;
        facts.standard_version = w.standard_version;
        facts.launcher = w.launcher;
        facts.hosts = processor_names(w.size);
        out.attributes["world"] = to_json_value(facts);
        std::vector<std::string> sorted = facts.hosts;
        std::sort(sorted.begin(), sorted.end());
        sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
        out.attributes["hosts"] = sorted.size();
        out.attributes["note"] = sorted.size() == 1
                                     ? "every rank runs on one host: the figures are shared-memory transport, not a "
                                       "network link"
                                     : "ranks run on several hosts: pairs across hosts go over the network";
    }

  private:
    static std::vector<std::string> processor_names(int ranks) {
        char mine[MPI_MAX_PROCESSOR_NAME] = {};
        int length = 0;
        mpi_check(MPI_Get_processor_name(mine, &length), "MPI_Get_processor_name");
        std::vector<char> all(static_cast<std::size_t>(ranks) * MPI_MAX_PROCESSOR_NAME);
        mpi_check(MPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                                MPI_COMM_WORLD),
                  "MPI_Allgather");
        std::vector<std::string> names;
        for (int r = 0; r < ranks; ++r) {
            const char* name = all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME;
            names.emplace_back(name, strnlen(name, MPI_MAX_PROCESSOR_NAME));
        }
        return names;
    }
};

}  // namespace

std::unique_ptr<Probe> make_network_world_probe() {
    return std::make_unique<WorldProbe>();
}

}  // namespace clprobe
