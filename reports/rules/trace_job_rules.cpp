// Rules over the shape of a traced job's device work: lanes (one process on one device) loaded
// unevenly, kernel sequences whose launch gaps rival their run time (fusion candidates), and
// kernels left to the driver's work-group choice that run far below their roof.
#include <fmt/core.h>

#include <algorithm>
#include <limits>

#include "rules/trace_rule_support.hpp"
#include "rules/trace_rules.hpp"

namespace clprobe {

using namespace trace_rule;

namespace {

// Uneven: the busiest lane busy at least this many times the other over the span both were
// active, and the difference worth this share of the wall time.
constexpr double imbalance_ratio = 1.5;
constexpr double imbalance_share = 0.05;
// Fusion: kernels this short, gaps at least this share of the kernels' time, this many gaps.
constexpr double short_kernel_seconds = 1e-3;
constexpr double gap_over_kernel = 0.5;
constexpr std::uint64_t min_fusion_gaps = 20;
// Lanes listed with their busy fraction in the evidence, at most.
constexpr std::size_t lanes_in_evidence = 8;

std::string lane_text(const TraceFacts& f, std::size_t i) {
    const DeviceLaneFacts& lane = f.lanes[i];
    // Two devices of one name in one process (two identical GPUs) are told apart by their lane.
    bool twin = false;
    for (std::size_t j = 0; j < f.lanes.size(); ++j)
        twin = twin || (j != i && f.lanes[j].pid == lane.pid && f.lanes[j].device == lane.device);
    std::string text = twin ? fmt::format("{} (lane {})", lane.device, i + 1) : lane.device;
    if (f.processes.size() > 1) text += " in " + process_text(f, lane.pid);
    return text;
}

Labels lane_labels(const DeviceLaneFacts& lane) {
    return {{"pid", std::to_string(lane.pid)}, {"device", lane.device}};
}

RuleOutcome device_imbalance(const RunReport&, const TraceFacts& f, const RuleSpec& rule) {
    const DeviceBalanceFacts& b = f.balance;
    const double wall = f.run.wall_seconds;
    if (wall <= 0 || b.busiest < 0 || b.least < 0 || static_cast<std::size_t>(b.busiest) >= f.lanes.size() ||
        static_cast<std::size_t>(b.least) >= f.lanes.size() || b.shared_seconds <= 0)
        return RuleOutcome::none();
    const double difference = b.busiest_busy_seconds - b.least_busy_seconds;
    const double ratio = b.least_busy_seconds > 0 ? b.busiest_busy_seconds / b.least_busy_seconds
                                                  : std::numeric_limits<double>::infinity();
    if (ratio < imbalance_ratio || difference < imbalance_share * wall) return RuleOutcome::none();
    // Moving half the difference to the other lane evens the pair: the busiest lane finishes that
    // much sooner (bounded by the kernel and transfer stages it ran).
    const double saved = difference / 2;
    if (!worth_reporting(f, saved)) return RuleOutcome::none();
    const auto busiest = static_cast<std::size_t>(b.busiest), least = static_cast<std::size_t>(b.least);
    Finding finding = wall_share_finding(
        rule, f,
        fmt::format("Device work is uneven: {} is busy {:.0f}% of the {} both ran, {} only {:.0f}%",
                    lane_text(f, busiest), 100 * b.busiest_busy_seconds / b.shared_seconds,
                    seconds_text(b.shared_seconds), lane_text(f, least), 100 * b.least_busy_seconds / b.shared_seconds),
        saved, "half the difference in busy time over the span both lanes were active, which an even split moves");
    finding.factor = std::isfinite(ratio) ? std::optional<double>(ratio) : std::nullopt;
    finding.confidence = 0.6;  // the work may not split evenly (the lanes may be different devices)
    finding.evidence.push_back(
        fact("app.lane.busy_time", b.busiest_busy_seconds, "s",
             fmt::format("the busiest lane, over the {} both ran", seconds_text(b.shared_seconds)),
             lane_labels(f.lanes[busiest])));
    finding.evidence.push_back(fact("app.lane.busy_time", b.least_busy_seconds, "s",
                                    "the lane it out-worked most, over the same span", lane_labels(f.lanes[least])));
    for (std::size_t i = 0; i < f.lanes.size() && i < lanes_in_evidence; ++i)
        finding.evidence.push_back(fact("app.lane.busy_fraction", f.lanes[i].busy_seconds / wall, "fraction",
                                        fmt::format("{}: busy share of the job's wall time", lane_text(f, i)),
                                        lane_labels(f.lanes[i])));
    finding.suggestion =
        "Split the work by each device's (or process's) measured rate, not evenly by count, or let the lanes pull "
        "chunks from one shared work queue so a faster or less loaded one takes more. Where one process lags, check "
        "what it waits on between its commands (its own stage table).";
    return RuleOutcome::found(std::move(finding));
}

std::string sequence_text(const FusionFacts& s) {
    std::string out;
    for (const auto& name : s.sequence)
        out += (out.empty() ? "" : " -> ") + name;
    return out;
}

RuleOutcome fusion_candidate(const RunReport&, const TraceFacts& f, const RuleSpec& rule) {
    const FusionFacts* best = nullptr;
    for (const auto& s : f.fusion) {
        if (s.sequence.empty() || s.removable_gaps < min_fusion_gaps ||
            s.median_kernel_seconds > short_kernel_seconds ||
            s.median_gap_seconds < gap_over_kernel * s.median_kernel_seconds)
            continue;
        if (!best || s.removable_gap_seconds > best->removable_gap_seconds) best = &s;
    }
    if (!best || !worth_reporting(f, best->removable_gap_seconds)) return RuleOutcome::none();
    const bool one_kernel = best->sequence.size() == 1;
    Finding finding = wall_share_finding(
        rule, f,
        one_kernel ? fmt::format("Kernel {} is launched {} times back to back; the device idles {} between launches "
                                 "of {} each",
                                 best->sequence.front(), best->kernels, seconds_text(best->median_gap_seconds),
                                 seconds_text(best->median_kernel_seconds))
                   : fmt::format("Kernels {} run back to back {} times; the device idles {} between kernels of {} each",
                                 sequence_text(*best), best->occurrences, seconds_text(best->median_gap_seconds),
                                 seconds_text(best->median_kernel_seconds)),
        best->removable_gap_seconds,
        one_kernel ? "the gaps between its launches, which one launch over all of them removes"
                   : "the gaps inside each run of the sequence, which one fused kernel removes");
    const Labels labels = {{"sequence", sequence_text(*best)}};
    finding.evidence.push_back(
        fact("app.kernel.median_time", best->median_kernel_seconds, "s", "one kernel of the sequence", labels));
    finding.evidence.push_back(fact("app.kernel.launch_gap", best->median_gap_seconds, "s",
                                    "device idle from one kernel's end to the next one's start, median", labels));
    finding.evidence.push_back(fact("app.kernel.launch_gap_share", best->gap_seconds / f.run.wall_seconds, "fraction",
                                    fmt::format("the wall time in those gaps ({} of them)", best->kernels - 1),
                                    labels));
    attribute_to_processes(finding, f, processes_among({best->pid}));
    finding.suggestion =
        one_kernel ? fmt::format(
                         "Launch {} once over the combined range (a larger global size, or a loop inside the "
                         "kernel over what the launches did one by one).",
                         best->sequence.front())
                   : fmt::format(
                         "Fuse {} into one kernel: one launch does every step and the intermediate values stay "
                         "in registers or local memory instead of global buffers.",
                         sequence_text(*best));
    return RuleOutcome::found(std::move(finding));
}

// The kernel launched without a local size that loses the most time below the roof that binds it
// (its counted work's, on either side; an uncounted one's by its arguments' sizes).
std::optional<KernelBelowRoof> worst_auto_local(const KernelLimits& limits, const TraceFacts& f) {
    auto below = worst_below_roof(limits, f, mostly_auto_local, RoofSide::memory);
    auto compute = worst_below_roof(limits, f, mostly_auto_local, RoofSide::compute);
    const auto rank = [](const std::optional<KernelBelowRoof>& b) {
        return b ? (b->estimated() ? 0.0 : 1e9) + b->saved : -1.0;  // counted first, then by saving
    };
    return rank(compute) > rank(below) ? compute : below;
}

RuleOutcome no_local_size(const RunReport& r, const TraceFacts& f, const RuleSpec& rule) {
    const KernelLimits limits = kernel_limits_of(r);
    const bool any_auto = std::any_of(f.kernels.begin(), f.kernels.end(), mostly_auto_local);
    if (!limits.roofs.memory_gb_per_s && !limits.roofs.levels) return any_auto ? rule.missing() : RuleOutcome::none();
    const auto below = worst_auto_local(limits, f);
    if (!below || !worth_reporting(f, below->saved)) return RuleOutcome::none();
    const KernelFacts& k = *below->kernel;
    const std::string roof_name = below->estimated() ? below->roof.level + " roof"
                                                     : std::string(to_string(below->placement->bound().kind)) +
                                                           " roof, the one its counted work is bound by";
    Finding finding = wall_share_finding(
        rule, f,
        fmt::format("Kernel {} is launched without a local size ({} of {} launches) and runs at {:.1f}% of the {}",
                    k.name, k.auto_local_launches, k.launches, 100 * below->fraction, roof_name),
        below->saved,
        "at most: the kernel at the measured roof that binds it, and no launch shorter than an empty kernel here (a "
        "better work-group size may recover only part of it)");
    finding.confidence = 0.4;  // the work-group size is one cause among several of a slow kernel
    if (below->estimated()) {
        const double gbs = k.bytes / k.seconds * 1e-9;
        finding.evidence.push_back(fact("app.kernel.bandwidth", gbs, "GB/s",
                                        "estimate: sizes of its buffer arguments over its device time",
                                        {{"kernel", k.name}}));
        finding.evidence.push_back(fact(below->roof.metric, below->roof.gb_per_s, "GB/s",
                                        "this device's roof for a working set of that size", {}));
        const std::string why = uncounted_reason(f, k.name);
        finding.not_ranked = "an estimate from its arguments' sizes: its work was not counted" +
                             (why.empty() ? std::string(" (--work)") : " (" + why + ")");
    } else {
        const RoofPart& bound = below->placement->bound();
        finding.evidence.push_back(fact("app.kernel.roof_fraction", bound.fraction, "fraction",
                                        fmt::format("{}: {:.4g} per launch against {} {:.4g}/s", bound.basis,
                                                    bound.amount, bound.metric, bound.roof),
                                        {{"kernel", k.name}, {"roof", std::string(to_string(bound.kind))}}));
    }
    add_launch_floor_evidence(finding, limits, *below);
    finding.evidence.push_back(fact("app.kernel.auto_local_launches", static_cast<double>(k.auto_local_launches),
                                    "launches", "local_work_size NULL: the driver chose the work-group",
                                    {{"kernel", k.name}}));
    attribute_to_processes(finding, f, processes_among(k.pids));
    finding.suggestion = fmt::format(
        "Pass a local size to clEnqueueNDRangeKernel for {}: start from "
        "CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE (clGetKernelWorkGroupInfo) times a small factor and try a few "
        "(64, 128, 256); a global size the driver cannot divide well makes it pick tiny work-groups. "
        "`clprobe trace --replay N` measures local sizes on the captured launch before you change the code.",
        k.name);
    return RuleOutcome::found(std::move(finding));
}

}  // namespace

std::vector<Rule> trace_job_rules() {
    const auto facts = program_facts();
    return {
        {{"trace.job.device_imbalance",
          layer,
          {facts},
          {{"busiest over least busy", imbalance_ratio},
           {"difference, share of the wall time", imbalance_share, true},
           min_gain_threshold()}},
         over_facts(device_imbalance)},
        {{"trace.kernel.fusion_candidate",
          layer,
          {facts},
          {{"median kernel time, ms", short_kernel_seconds * 1e3},
           {"median gap over median kernel time", gap_over_kernel},
           {"gaps fusing removes", static_cast<double>(min_fusion_gaps)},
           min_gain_threshold()}},
         over_facts(fusion_candidate)},
        {below_roof_spec("trace.kernel.no_local_size"), over_facts_and_ceilings(no_local_size)},
    };
}

}  // namespace clprobe
