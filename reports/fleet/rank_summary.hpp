#pragma once
// What `fleet` keeps of one rank's trace report (`mpirun -np N clprobe trace --json 'r-{rank}.json'
// -- app`): its wall time and stage table, and its device time per kernel and per transfer kind,
// so that the ranks can be set side by side and the slow one explained (fleet/rank_analysis.hpp).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/report.hpp"
#include "core/trace_facts.hpp"

namespace clprobe {

// One kernel (by name) or one kind of transfer (direction and path, "h2d pageable") of a rank.
struct RankItem {
    std::string kind;  // "kernel" or "transfer"
    std::string name;
    std::uint64_t count = 0;  // launches or transfers
    double seconds = 0;       // device time, summed
    double bytes = 0;         // transfers: bytes moved
};

struct RankSummary {
    std::string source;  // the report file
    // The launcher's rank the report records; the file's name (without folder and extension) for
    // a report written outside a launcher, with rank_from_launcher false.
    std::string rank;
    bool rank_from_launcher = false;
    std::optional<int> size;  // the number of ranks the launcher announced
    std::string host, device;
    double wall_seconds = 0;
    std::array<double, std::size(all_app_stages)> stages{};  // seconds, in all_app_stages order
    std::uint64_t opencl_commands = 0;
    std::uint64_t host_waits = 0;  // clFinish, clWaitForEvents and blocking calls
    std::vector<RankItem> items;   // kernels, then transfers

    double stage(AppStage s) const;
    // The time the rank spent on its own OpenCL work or waiting for it: kernel, transfer, build
    // and host-wait stages. Under a job that synchronises its ranks (MPI barriers, collectives),
    // the fast ranks wait outside OpenCL and every rank's wall time is alike; this time is not.
    double opencl_seconds() const;
};

// Whether the report is a trace report (`clprobe trace`), which fleet compares as ranks.
bool is_rank_report(const RunReport& report);

// The rank's summary; throws std::runtime_error when the report holds no trace facts.
RankSummary summarize_rank(const RunReport& report, std::string source);

}  // namespace clprobe
