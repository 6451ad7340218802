#include "fleet/fleet_files.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <optional>
#include <thread>

#include "core/atomic_file.hpp"
#include "json/report_json.hpp"
#include "rules/analysis.hpp"

namespace clprobe {

namespace {

// One file's outcome: its summary, or why it could not be read.
struct Slot {
    std::optional<NodeSummary> node;
    std::optional<RankSummary> rank;
    std::optional<UnpairedReport> unpaired;
};

Slot read_one(const std::string& path) {
    try {
        RunReport r = report_from_json_text(read_file(path, max_report_bytes));
        // A trace report is one rank of a traced job (fleet/rank_analysis.hpp), not a node.
        if (is_rank_report(r)) return {std::nullopt, summarize_rank(r, path), std::nullopt};
        // Every node judged by the same (current) rules: a finding on only some nodes is then
        // their numbers, not the rules of the clprobe version that wrote them.
        analyze(r);
        return {summarize_node(r, path), std::nullopt, std::nullopt};
    } catch (const std::exception& e) {
        return {std::nullopt, std::nullopt, UnpairedReport{path, std::string("cannot read report: ") + e.what()}};
    }
}

}  // namespace

FleetFiles read_fleet_files(const std::vector<std::string>& paths) {
    // Parsing dominates, and reports are independent: a few workers each hold one report at a
    // time, so memory stays bounded by (workers x one report) + the summaries. Results land in
    // their file's slot, so the order, and so the output, does not depend on the threads.
    std::vector<Slot> slots(paths.size());
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i = next++; i < paths.size(); i = next++)
            slots[i] = read_one(paths[i]);
    };
    const std::size_t workers =
        std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, std::min<std::size_t>(8, paths.size() + 1));
    std::vector<std::thread> threads;
    for (std::size_t t = 1; t < workers; ++t)
        threads.emplace_back(work);
    work();
    for (auto& t : threads)
        t.join();
    FleetFiles out;
    for (auto& s : slots) {
        if (s.node) out.nodes.push_back(std::move(*s.node));
        if (s.rank) out.ranks.push_back(std::move(*s.rank));
        if (s.unpaired) out.unpaired.push_back(std::move(*s.unpaired));
    }
    return out;
}

FleetAnalysis analyze_fleet_files(const std::vector<std::string>& paths, const FleetOptions& options) {
    FleetFiles files = read_fleet_files(paths);
    return analyze_fleet(std::move(files.nodes), std::move(files.unpaired), options);
}

}  // namespace clprobe
