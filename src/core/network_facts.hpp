#pragma once
// What the network layer knows about the MPI world it ran in, as plain data: filled by the
// network.world probe (src/network), stored in its attributes under "world", read back by the
// network rules. Like TopologyFacts it lives in core, so saved reports are analysed without MPI.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace clprobe {

struct NetworkFacts {
    int rank = 0;                    // this process's rank in MPI_COMM_WORLD
    int world_size = 0;              // ranks in MPI_COMM_WORLD
    std::optional<int> peer;         // the rank this one measured point-to-point against, if any
    std::string library_version;     // MPI_Get_library_version's first line ("Open MPI v4.1.4, ...")
    std::string standard_version;    // MPI_Get_version: "3.1"
    std::string launcher;            // the environment variable that said how many ranks there are
    std::vector<std::string> hosts;  // MPI_Get_processor_name of every rank, by rank
};

nlohmann::json to_json_value(const NetworkFacts& facts);
// Null when a (hand-edited) report's value is not an object with rank and world_size.
std::optional<NetworkFacts> network_facts_from(const nlohmann::json& j);

}  // namespace clprobe
