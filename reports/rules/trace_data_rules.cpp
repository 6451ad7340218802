// Rules about what a traced program moves, computes, builds and allocates, each held against the
// ceilings this machine measured (the trace command's quick probes, or a --baseline report).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "core/memory_roofs.hpp"
#include "rules/kernel_roof_rules.hpp"
#include "rules/trace_rule_support.hpp"
#include "rules/trace_rules.hpp"

namespace clprobe {

using namespace trace_rule;

namespace {

constexpr std::uint64_t min_small_transfers = 100;
constexpr std::uint64_t min_loop_allocations = 20;
// A faster path must beat what the program achieved by a quarter to be worth a change.
constexpr double better_path_ratio = 1.25;
// Overlap: both stages substantial, almost no overlap seen, and the device measured to overlap.
constexpr double overlap_stage_share = 0.1;
constexpr double overlap_seen_fraction = 0.1;
constexpr double overlap_works_efficiency = 0.2;
constexpr double capacity_fraction = 0.9;
// A cold build worth avoiding: a twentieth of the program's time.
constexpr double build_share = 0.05;

// A faster way to move one direction's pageable copies, measured on this device: pinned staging
// (a rate: the copies' time at that rate), or no copy at all where the device shares host memory
// (the zero-copy mapping's time per transfer, transfer.<dir>.zero_copy.time at the nearest
// measured size at or above the transfers' mean size). Zero-copy is never a rate: it copies nothing.
struct BetterPath {
    std::string name;                       // "pinned" or "zero-copy"
    const Measurement* measured = nullptr;  // the pinned rate, or the zero-copy time at that size
    double seconds = 0;                     // the transfers' time along that path
};

// Seconds per hand-over for `bytes`, from the zero-copy times measured at their sizes.
std::optional<std::pair<const Measurement*, double>> zero_copy_seconds(const RunReport& r, const std::string& dir,
                                                                       double bytes) {
    const Measurement* chosen = nullptr;
    double chosen_size = 0, largest_size = 0;
    const Measurement* largest = nullptr;
    for (const Measurement* m : find_measurements(r, fmt::format("transfer.{}.zero_copy.time", dir))) {
        const auto it = m->labels.find("size");
        if (it == m->labels.end() || m->summary.median <= 0) continue;
        const double size = std::strtod(it->second.c_str(), nullptr);
        if (size >= bytes && (!chosen || size < chosen_size)) chosen = m, chosen_size = size;
        if (size > largest_size) largest = m, largest_size = size;
    }
    if (!chosen) chosen = largest;  // larger than every measured size: the largest hand-over's time
    if (!chosen) return std::nullopt;
    const double scale = chosen->unit == "us" ? 1e-6 : chosen->unit == "ms" ? 1e-3 : 1.0;
    return std::pair{chosen, chosen->summary.median * scale};
}

std::optional<BetterPath> better_path(const RunReport& r, const TransferFacts& t) {
    std::optional<BetterPath> best;
    if (const Measurement* m = headline(r, fmt::format("transfer.{}.pinned.bandwidth", t.direction));
        m && m->summary.median > 0)
        best = BetterPath{"pinned", m, t.bytes / (m->summary.median * 1e9)};
    if (const auto zc =
            zero_copy_seconds(r, t.direction, t.bytes / static_cast<double>(std::max<std::uint64_t>(1, t.count))))
        if (const double s = zc->second * static_cast<double>(t.count); !best || s < best->seconds)
            best = BetterPath{"zero-copy", zc->first, s};
    return best;
}

RuleOutcome pageable(const RunReport& r, const TraceFacts& f, const RuleSpec& rule) {
    const TransferFacts* worst = nullptr;
    BetterPath path;
    double saved = 0;
    bool any_ceiling = false;
    for (const auto& t : f.transfers) {
        if (t.path != "pageable" || t.seconds <= 0 || (t.direction != "h2d" && t.direction != "d2h")) continue;
        const auto better = better_path(r, t);
        if (!better) continue;
        any_ceiling = true;
        // Worth a change only when the other path is clearly faster (by better_path_ratio).
        if (better->seconds * better_path_ratio > t.seconds) continue;
        const double s = t.seconds - better->seconds;
        if (s > saved) saved = s, worst = &t, path = *better;
    }
    if (!worst) {
        const bool any_pageable = std::any_of(f.transfers.begin(), f.transfers.end(),
                                              [](const TransferFacts& t) { return t.path == "pageable"; });
        if (any_pageable && !any_ceiling) return rule.missing();
        return RuleOutcome::none();
    }
    if (!worth_reporting(f, saved)) return RuleOutcome::none();
    const double achieved = worst->bytes / worst->seconds * 1e-9;
    const bool zero_copy = path.name == "zero-copy";
    const std::string title =
        zero_copy
            ? fmt::format(
                  "{} pageable {} transfers ({}) take {}; this device hands the data over without a "
                  "copy in {} ({} per transfer, zero-copy mapping)",
                  worst->count, worst->direction, bytes_text(worst->bytes), seconds_text(worst->seconds),
                  seconds_text(path.seconds), seconds_text(path.seconds / static_cast<double>(worst->count)))
            : fmt::format(
                  "{} pageable {} transfers ({}) run at {:.3g} GB/s; this device's pinned path "
                  "measured {:.3g} GB/s",
                  worst->count, worst->direction, bytes_text(worst->bytes), achieved, path.measured->summary.median);
    Finding finding = wall_share_finding(
        rule, f, title, saved,
        zero_copy ? fmt::format("the {} transfers' time less their zero-copy mappings' measured time", worst->direction)
                  : fmt::format("the {} transfers' time at the measured pinned rate", worst->direction));
    finding.evidence.push_back(fact("app.transfer.bandwidth", achieved, "GB/s", "what the program's copies reached",
                                    {{"direction", worst->direction}, {"path", "pageable"}}));
    finding.evidence.push_back(evidence_of(*path.measured, zero_copy ? "the zero-copy mapping at this size, measured "
                                                                       "on this device"
                                                                     : "the faster path, measured on this device"));
    finding.suggestion =
        zero_copy
            ? "The device shares host memory: do not copy. Create the buffers with CL_MEM_ALLOC_HOST_PTR, write "
              "inputs through clEnqueueMapBuffer (CL_MAP_WRITE_INVALIDATE_REGION) and unmap before the kernel; map "
              "with CL_MAP_READ to read results."
            : "Copy from pinned memory: allocate a staging buffer with CL_MEM_ALLOC_HOST_PTR, map it once, fill it and "
              "pass that pointer to clEnqueueWriteBuffer (read into it with clEnqueueReadBuffer).";
    return RuleOutcome::found(std::move(finding));
}

// Small transfers in both directions: count, device and host-call time, bytes.
struct SmallTransfers {
    std::uint64_t count = 0;
    double seconds = 0, bytes = 0;
};

SmallTransfers small_transfers_below(const TraceFacts& f, double threshold) {
    SmallTransfers s;
    for (const auto& t : f.transfers) {
        if (t.direction != "h2d" && t.direction != "d2h") continue;
        for (const auto& b : t.bins) {
            if (double(b.upper_bytes) > threshold) continue;
            s.count += b.count;
            s.seconds += std::max(b.seconds, b.enqueue_seconds);
            s.bytes += b.bytes;
        }
    }
    return s;
}

RuleOutcome small_transfers(const RunReport& r, const TraceFacts& f, const RuleSpec& rule) {
    const Measurement* half =
        headline(r, "transfer.half_peak_size", {{"direction", "h2d"}, {"path", "pageable"}, {"blocking", "true"}});
    const Measurement* peak = headline(r, "transfer.h2d.pageable.bandwidth");
    if (!half || !peak) return rule.missing();
    const SmallTransfers s = small_transfers_below(f, half->summary.median);
    if (s.count < min_small_transfers) return RuleOutcome::none();
    // Batched into one transfer, the bytes would move at the measured peak.
    const double saved = std::max(0.0, s.seconds - s.bytes / (peak->summary.median * 1e9));
    if (!worth_reporting(f, saved)) return RuleOutcome::none();
    Finding finding = wall_share_finding(
        rule, f,
        fmt::format("{} transfers below {} (this device's half-peak size) cost {} for {}", s.count,
                    bytes_text(half->summary.median), seconds_text(s.seconds), bytes_text(s.bytes)),
        saved, "their device and enqueue time, less the same bytes moved at the measured peak in one transfer");
    finding.evidence.push_back(evidence_of(*half, "transfers below this size reach less than half the peak"));
    finding.suggestion =
        "Batch small transfers: gather the pieces into one host array and copy it with one clEnqueueWriteBuffer (or "
        "clEnqueueWriteBufferRect for strided pieces), or map the buffer once and write the pieces through the "
        "pointer.";
    return RuleOutcome::found(std::move(finding));
}

RuleOutcome serialised_copies(const RunReport& r, const TraceFacts& f, const RuleSpec& rule) {
    const OverlapFacts& o = f.overlap;
    const double wall = f.run.wall_seconds;
    if (wall <= 0 || o.kernel_seconds < overlap_stage_share * wall || o.transfer_seconds < overlap_stage_share * wall)
        return RuleOutcome::none();
    const double overlappable = std::min(o.kernel_seconds, o.transfer_seconds);
    if (o.overlapped_seconds > overlap_seen_fraction * overlappable) return RuleOutcome::none();
    const Measurement* efficiency = headline(r, "transfer.overlap.efficiency");
    if (!efficiency) return rule.missing();
    if (efficiency->summary.median < overlap_works_efficiency) return RuleOutcome::none();
    const double saved = overlappable * std::min(1.0, efficiency->summary.median);
    if (!worth_reporting(f, saved)) return RuleOutcome::none();
    Finding finding = wall_share_finding(
        rule, f,
        fmt::format("Copies and kernels run one after the other ({} of {} overlapped) on a device that overlaps them",
                    seconds_text(o.overlapped_seconds), seconds_text(overlappable)),
        saved, "the shorter of kernel and transfer time, times the overlap efficiency measured here");
    finding.evidence.push_back(evidence_of(*efficiency, "share of the possible saving this device delivered"));
    finding.suggestion =
        "Split the data into chunks and use two in-order queues (or one out-of-order queue with events): upload "
        "chunk i+1 while the kernel works on chunk i, and download results as they complete.";
    return RuleOutcome::found(std::move(finding));
}

RuleOutcome repeated_builds(const RunReport&, const TraceFacts& f, const RuleSpec& rule) {
    const BuildFacts& b = f.builds;
    if (b.repeated == 0 || !worth_reporting(f, b.repeated_seconds)) return RuleOutcome::none();
    Finding finding =
        wall_share_finding(rule, f,
                           fmt::format("The same OpenCL source was built {} more times in one run ({} of builds)",
                                       b.repeated, seconds_text(b.repeated_seconds)),
                           b.repeated_seconds, "the time of every build after the first of the same source");
    finding.evidence.push_back(fact("app.build.time", b.seconds, "s", fmt::format("{} builds in all", b.builds)));
    finding.suggestion =
        "Build each program once and keep the cl_program and its cl_kernel objects for the whole run (create kernels "
        "once; clSetKernelArg is cheap). Across runs, save the binary (clGetProgramInfo CL_PROGRAM_BINARIES) and load "
        "it with clCreateProgramWithBinary.";
    return RuleOutcome::found(std::move(finding));
}

RuleOutcome cold_builds(const RunReport& r, const TraceFacts& f, const RuleSpec& rule) {
    const BuildFacts& b = f.builds;
    const double once = b.source_seconds - b.repeated_seconds;
    if (b.from_source == 0 || f.run.wall_seconds <= 0 || once < build_share * f.run.wall_seconds)
        return RuleOutcome::none();
    const Measurement* cold = headline(r, "kernel.build.time", {{"path", "cold"}});
    const Measurement* cached = headline(r, "kernel.build.time", {{"path", "binary_cache"}});
    if (!cold || !cached || cold->summary.median <= 0) return rule.missing();
    const double saved = once * std::max(0.0, 1 - cached->summary.median / cold->summary.median);
    if (!worth_reporting(f, saved)) return RuleOutcome::none();
    Finding finding = wall_share_finding(
        rule, f,
        fmt::format("Building from source takes {:.0f}% of the program's time", 100 * once / f.run.wall_seconds), saved,
        "the source builds at this device's measured binary-load / cold-build ratio");
    finding.evidence.push_back(evidence_of(*cold, "a cold build here"));
    finding.evidence.push_back(evidence_of(*cached, "loading a saved binary here"));
    finding.suggestion =
        "Cache program binaries: after the first build save clGetProgramInfo(CL_PROGRAM_BINARIES) keyed by device, "
        "driver version and source hash, and create the program with clCreateProgramWithBinary next time.";
    return RuleOutcome::found(std::move(finding));
}

RuleOutcome allocations_in_loop(const RunReport& r, const TraceFacts& f, const RuleSpec& rule) {
    const AllocationFacts& a = f.memory;
    if (a.in_loop < min_loop_allocations) return RuleOutcome::none();
    // A fresh allocation costs its create and release calls, and its first use: page faults or the
    // driver's lazy allocation make that command slower than the same bytes at the memory roof.
    const Measurement* peak = headline(r, "kernel.peak.bandwidth");
    const double first_touch =
        peak && peak->summary.median > 0
            ? std::max(0.0, a.in_loop_first_use_seconds - a.in_loop_first_use_bytes / (peak->summary.median * 1e9))
            : 0.0;
    const double saved = a.in_loop_call_seconds + first_touch;
    if (!worth_reporting(f, saved)) return RuleOutcome::none();
    Finding finding = wall_share_finding(
        rule, f,
        fmt::format("{} device allocations ({} sizes) are created and released while the program runs its commands",
                    a.in_loop, a.in_loop_distinct_sizes),
        saved,
        peak ? "host time in the create and release calls, plus each fresh allocation's first command beyond the "
               "same bytes at the measured memory roof"
             : "host time in the create and release calls (first-touch cost not estimated: no memory roof measured)");
    finding.evidence.push_back(fact("app.memory.in_loop_first_use_time", a.in_loop_first_use_seconds, "s",
                                    fmt::format("the first command on {} fresh allocations", a.in_loop_first_uses)));
    if (peak) finding.evidence.push_back(evidence_of(*peak, "this device's memory roof"));
    finding.suggestion =
        "Allocate buffers once, outside the loop, at the largest size needed (or keep a pool keyed by size) and reuse "
        "them; sub-buffers give views of different sizes without allocating.";
    return RuleOutcome::found(std::move(finding));
}

RuleOutcome near_capacity(const RunReport& r, const TraceFacts& f, const RuleSpec& rule) {
    if (!r.device || r.device->global_mem_bytes == 0) return rule.missing();
    const double global = double(r.device->global_mem_bytes), max_alloc = double(r.device->max_alloc_bytes);
    const bool peak_close = f.memory.peak_bytes >= capacity_fraction * global;
    const bool alloc_close = max_alloc > 0 && f.memory.largest_bytes >= capacity_fraction * max_alloc;
    if (!peak_close && !alloc_close) return RuleOutcome::none();
    Finding finding =
        rule.finding(peak_close ? Severity::high : Severity::medium,
                     peak_close ? fmt::format("Device allocations peak at {} of {} global memory",
                                              bytes_text(f.memory.peak_bytes), bytes_text(global))
                                : fmt::format("An allocation of {} is close to the largest the device allows ({})",
                                              bytes_text(f.memory.largest_bytes), bytes_text(max_alloc)));
    finding.confidence = 1.0;  // a fact of this run, not a comparison
    finding.evidence = {fact("app.memory.peak", f.memory.peak_bytes, "bytes", "live device allocations at their peak"),
                        fact("device.global_mem_bytes", global, "bytes", "the device's global memory")};
    finding.suggestion =
        "A larger batch or sequence will not fit: process the data in chunks, release buffers as soon as their "
        "last command is enqueued, or use a device with more memory.";
    return RuleOutcome::found(std::move(finding));
}

}  // namespace

std::vector<Rule> trace_data_rules() {
    using In = RuleInput;
    const auto facts = program_facts();
    const auto small_count = static_cast<double>(min_small_transfers);
    const auto loop_count = static_cast<double>(min_loop_allocations);
    return {
        {{"trace.transfer.pageable",
          layer,
          {facts, In::any_metric({"transfer.h2d.pinned.bandwidth", "transfer.h2d.zero_copy.time",
                                  "transfer.d2h.pinned.bandwidth", "transfer.d2h.zero_copy.time"},
                                 "the direction of the program's pageable copies")},
          {{"faster path over achieved", better_path_ratio}, min_gain_threshold()}},
         over_facts_and_ceilings(pageable)},
        {{"trace.transfer.small",
          layer,
          {facts, In::metric("transfer.half_peak_size", "direction=h2d, path=pageable, blocking=true"),
           In::metric("transfer.h2d.pageable.bandwidth")},
          {{"small transfers", small_count}, min_gain_threshold()}},
         over_facts_and_ceilings(small_transfers)},
        {{"trace.overlap.serialised",
          layer,
          {facts, In::metric("transfer.overlap.efficiency")},
          {{"kernel and transfer share of the wall time", overlap_stage_share, true},
           {"overlapped share of the shorter", overlap_seen_fraction, true},
           {"measured overlap efficiency", overlap_works_efficiency},
           min_gain_threshold()}},
         over_facts_and_ceilings(serialised_copies)},
        {below_roof_spec("trace.kernel.below_roof"), over_facts_and_ceilings(kernel_below_roof)},
        {below_compute_roof_spec(), over_facts_and_ceilings(kernel_below_compute_roof)},
        {{"trace.build.repeated", layer, {facts}, {min_gain_threshold()}}, over_facts(repeated_builds)},
        {{"trace.build.from_source",
          layer,
          {facts, In::metric("kernel.build.time", "path=cold and path=binary_cache")},
          {{"build share of the wall time", build_share, true}, min_gain_threshold()}},
         over_facts_and_ceilings(cold_builds)},
        // kernel.peak.bandwidth only adds the first-touch part of the gain: not an input.
        {{"trace.memory.alloc_in_loop", layer, {facts}, {{"allocations", loop_count}, min_gain_threshold()}},
         over_facts_and_ceilings(allocations_in_loop)},
        {{"trace.memory.near_capacity",
          layer,
          {facts, In::device()},
          {{"share of global memory or of the largest allocation", capacity_fraction, true}}},
         over_facts_and_ceilings(near_capacity)},
    };
}

}  // namespace clprobe
