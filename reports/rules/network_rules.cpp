#include "rules/network_rules.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/network_math.hpp"
#include "rules/pipeline.hpp"

namespace clprobe {

namespace {

const std::string stage_metric = std::string(pipeline_ids::network_glm_step) + ".stage_time";
// An all-reduce under a tenth of the step is not worth restructuring the step for.
constexpr double exposed_share_floor = 0.10;
// From 30% of the step the all-reduce is the step's largest cost after compute.
constexpr double exposed_share_high = 0.30;
// A ring all-reduce's busbw reaches the link's bandwidth; below half of it the collective's
// algorithm or transport leaves most of the link unused.
constexpr double busbw_ratio = 2.0;
// A pair below half the median pair is a broken or misrouted link, not spread between links.
constexpr double slow_pair_fraction = 0.5;
// A median needs three pairs to single one out (three ranks): two pairs have no majority.
constexpr std::size_t min_pairs = 3;

const Measurement* step_stage(const RunReport& r, Stage stage) {
    return find_measurement(r, stage_metric, {{"stage", stage_name(stage)}});
}

RuleOutcome not_overlapped(const RunReport& r, const RuleSpec& rule) {
    const auto* reduce = step_stage(r, Stage::allreduce);
    const auto* compute = step_stage(r, Stage::compute);
    if (!reduce || !compute) return rule.missing();
    double total = 0;
    for (const auto* m : find_measurements(r, stage_metric))
        total += std::max(0.0, m->summary.median);
    const double reduce_s = reduce->summary.median;
    if (total <= 0 || reduce_s <= 0) return RuleOutcome::none();
    const double share = reduce_s / total;
    if (share < exposed_share_floor) return RuleOutcome::none();
    Finding f = rule.finding(share >= exposed_share_high ? Severity::high : Severity::medium,
                             fmt::format("The gradient all-reduce takes {:.0f}% of the data-parallel step and nothing "
                                         "overlaps it",
                                         100 * share));
    f.evidence = {evidence_of(*reduce, "all-reduce of the p-vector, after the gradient is complete"),
                  evidence_of(*compute, "local gradient on the device, which could run meanwhile")};
    f.confidence = std::clamp(1.0 - sample_noise(*reduce), 0.0, 1.0);
    // Overlap hides at most the compute time that runs alongside the all-reduce.
    f.target = stage_target(pipeline_ids::network_glm_step, Stage::allreduce,
                            std::min(1.0, compute->summary.median / reduce_s));
    f.gain_basis = "all-reduce time hidden behind the local gradient's compute if the two overlapped";
    f.suggestion =
        "Overlap communication with compute: compute the gradient in row blocks and start MPI_Iallreduce on each "
        "block's partial sum while the next block runs on the device (as DDP buckets gradients), or start the next "
        "step's forward pass while MPI_Iallreduce of this step's gradient is in flight, and MPI_Wait only before the "
        "update.";
    return RuleOutcome::found(std::move(f));
}

std::uint64_t size_of(const Measurement& m) {
    const auto it = m.labels.find("size");
    return it == m.labels.end() ? 0 : std::strtoull(it->second.c_str(), nullptr, 10);
}

RuleOutcome busbw_below_p2p(const RunReport& r, const RuleSpec& rule) {
    // The largest size measured both ways: bandwidth-bound, where the two should agree.
    const Measurement *bus = nullptr, *p2p = nullptr;
    for (const auto* b : find_measurements(r, "network.allreduce.busbw")) {
        const auto* link = find_measurement(r, "network.p2p.bandwidth", {{"size", label_of(*b, "size")}});
        if (link && (!bus || size_of(*b) > size_of(*bus))) {
            bus = b;
            p2p = link;
        }
    }
    if (!bus || !p2p) return rule.missing();
    const auto gap = significant_gap(r, *p2p, *bus, busbw_ratio);
    if (!gap) return RuleOutcome::none();
    Finding f = rule.comparison(
        Severity::medium,
        fmt::format("All-reduce bus bandwidth is {:.1f}x below the point-to-point bandwidth at {} bytes", gap->ratio,
                    label_of(*bus, "size")),
        *p2p, "one link's bandwidth between two ranks (osu_bw)", *bus,
        "all-reduce busbw = algbw * 2(n-1)/n (nccl-tests): a ring reaches the link bandwidth", *gap, "");
    f.target = stage_target(pipeline_ids::network_glm_step, Stage::allreduce, gap->gain());
    f.gain_basis = "all-reduce time saved if its bus bandwidth reached the measured point-to-point bandwidth";
    f.suggestion =
        "Let the all-reduce use the link: try the ring or segmented algorithms (Open MPI: --mca coll_tuned_use_dynamic_"
        "rules 1 --mca coll_tuned_allreduce_algorithm 4, or UCC/HCOLL where installed), check the transport the "
        "ranks picked (--mca btl self,vader,tcp or ucx; ompi_info), and reduce fewer, larger buffers.";
    return RuleOutcome::found(std::move(f));
}

const Measurement* nearest_median(const std::vector<const Measurement*>& ms, double value) {
    const Measurement* best = nullptr;
    for (const auto* m : ms)
        if (!best || std::abs(m->summary.median - value) < std::abs(best->summary.median - value)) best = m;
    return best;
}

RuleOutcome slow_link(const RunReport& r, const RuleSpec& rule) {
    const auto ms = find_measurements(r, "network.pair.bandwidth");
    std::vector<PairBandwidth> pairs;
    for (const auto* m : ms)
        pairs.push_back({label_of(*m, "pair"), m->summary.median});
    if (pairs.size() < min_pairs) return rule.missing();
    const auto slow = slow_pairs(pairs, slow_pair_fraction);
    if (slow.empty()) return RuleOutcome::none();
    const double typical = median_pair_bandwidth(pairs);
    const auto* slowest = find_measurement(r, "network.pair.bandwidth", {{"pair", slow.front().pair}});
    const auto* usual = nearest_median(ms, typical);
    const auto gap = significant_gap(r, *usual, *slowest, 1.0 / slow_pair_fraction);
    if (!gap) return RuleOutcome::none();
    std::string names;
    for (const auto& p : slow)
        names += (names.empty() ? "" : ", ") + p.pair;
    Finding f = rule.comparison(
        Severity::high,
        fmt::format("Rank pair {} moves {:.3g} GB/s, {:.1f}x below the median pair ({} slow: {})", slow.front().pair,
                    slow.front().gb_per_s, typical / slow.front().gb_per_s, slow.size(), names),
        *usual, "the median rank pair", *slowest, "the slowest rank pair", *gap, "");
    f.target = stage_target(pipeline_ids::network_glm_step, Stage::allreduce, gap->gain());
    f.gain_basis =
        "all-reduce time saved if the slowest link ran like the median one (a ring moves at the pace of "
        "its slowest link)";
    f.suggestion = fmt::format(
        "Check the link between the ranks of pair {} (see network.world's hosts): cabling and port speed "
        "(ethtool, ibstat), a rank bound to the wrong NUMA node or NIC (--bind-to core --map-by numa), or traffic "
        "routed over a slower interface (--mca btl_tcp_if_include).",
        slow.front().pair);
    return RuleOutcome::found(std::move(f));
}

}  // namespace

std::vector<Rule> network_rules() {
    using In = RuleInput;
    const std::string layer = "network";
    return {
        {{"network.allreduce.not_overlapped",
          layer,
          {In::metric(stage_metric, "stage=allreduce and stage=compute")},
          {{"all-reduce share of the step", exposed_share_floor, true},
           {"high severity from", exposed_share_high, true}}},
         not_overlapped},
        {{"network.allreduce.below_p2p",
          layer,
          {In::metric("network.allreduce.busbw"),
           In::metric("network.p2p.bandwidth", "at a size network.allreduce.busbw was measured at")},
          {{"p2p over busbw", busbw_ratio}}},
         busbw_below_p2p},
        {{"network.pair.slow_link",
          layer,
          {In::metric("network.pair.bandwidth", fmt::format("{} or more rank pairs: three ranks or more", min_pairs))},
          {{"rank pairs needed", static_cast<double>(min_pairs)},
           {"slow pair, fraction of the median pair", slow_pair_fraction}}},
         slow_link},
    };
}

}  // namespace clprobe
