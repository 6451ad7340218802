#include "rules/kernel_roof_rules.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>

#include "core/kernel_roofs.hpp"
#include "rules/trace_rule_support.hpp"

namespace clprobe::trace_rule {

namespace {

// A sample of unlike work-groups makes a less certain count.
constexpr double uneven_groups_cv = 0.25;
// Transcendental builtins beyond this share of the FLOPs make the FLOP peak a loose roof.
constexpr double special_share = 0.1;

bool starts_with(std::string_view s, std::string_view p) {
    return s.substr(0, p.size()) == p;
}

std::string kernel_text(const KernelFacts& k, const TraceFacts& f) {
    return fmt::format("Kernel {} takes {:.0f}% of the wall time", k.name, 100 * k.seconds / f.run.wall_seconds);
}

// A counted kernel whose launches of the counted size are only part of its time says so: the
// judgement is of those launches.
std::string counted_text(const KernelBelowRoof& b, const TraceFacts& f) {
    const KernelFacts& k = *b.kernel;
    if (b.work->like_share >= 0.9) return kernel_text(k, f);
    return fmt::format(
        "Kernel {}'s launches of {} work-items (the size counted: {:.0f}% of its device time) take "
        "{:.0f}% of the wall time",
        k.name, b.work->global_items, 100 * b.work->like_share, 100 * b.represented_seconds / f.run.wall_seconds);
}

// How sure the counted work is: exact, or sampled over alike or unlike work-groups.
double count_confidence(const KernelWorkFacts& w, double base) {
    if (w.method == "exact") return base;
    return w.group_instructions_cv > uneven_groups_cv ? base - 0.2 : base - 0.1;
}

std::string how_counted(const KernelWorkFacts& w) {
    if (w.upper_bound) return "counted under Oclgrind from an unoptimised build (" + w.note + "): an upper bound";
    if (w.method == "exact") return "counted under Oclgrind over every work-group of its captured launch";
    return fmt::format(
        "counted under Oclgrind on {} of {} work-groups of its captured launch, evenly spread, and extrapolated "
        "(instructions per group varied by {:.0f}%)",
        w.groups_counted, w.groups_total, 100 * w.group_instructions_cv);
}

// The counted work and its place on every roof, as evidence.
void add_work_evidence(Finding& finding, const KernelBelowRoof& b) {
    const KernelWorkFacts& w = *b.work;
    const Labels labels{{"kernel", w.kernel}};
    for (const auto& part : b.placement->parts) {
        Labels l = labels;
        l["roof"] = std::string(to_string(part.kind));
        const bool binds = &part == &b.placement->bound();
        finding.evidence.push_back(
            fact("app.kernel.roof_fraction", part.fraction, "fraction",
                 fmt::format("{}: {:.4g} per launch, {:.4g}/s against {} {:.4g}/s{}", part.basis, part.amount,
                             part.achieved, part.metric, part.roof, binds ? " (the roof that binds it)" : ""),
                 l));
    }
    finding.evidence.push_back(fact("app.kernel.launch_time", b.placement->launch_seconds, "s",
                                    fmt::format("{}; the median of its {} traced launches of {} work-items",
                                                how_counted(w), w.like_launches, w.global_items),
                                    labels));
    for (const auto& missing : b.placement->unroofed)
        finding.evidence.push_back(fact("app.kernel.unroofed", 0, "", missing, labels));
}

std::string memory_access_advice(const KernelBelowRoof& b);

std::string memory_advice(const KernelBelowRoof& b) {
    const std::string& name = b.kernel->name;
    // Atomics on shared addresses serialise whatever the roof: their contention comes first.
    const std::string atomics =
        b.work && b.work->atomics > 0
            ? fmt::format(
                  "{} does {:.3g} atomic operations a launch: where many work-items update the same "
                  "addresses they serialise, so accumulate in private or local memory first and commit "
                  "once per work-group. ",
                  name, b.work->atomics)
            : std::string();
    return atomics + memory_access_advice(b);
}

std::string memory_access_advice(const KernelBelowRoof& b) {
    const std::string& name = b.kernel->name;
    if (b.placement && b.placement->bound().kind == RoofKind::cache)
        return fmt::format(
            "{} loads and stores the same bytes many times ({} per launch against a footprint of {}): keep what "
            "work-items reuse in registers or local memory (tile it), load vectors (float4) where consecutive "
            "work-items read consecutive addresses, and drop re-reads the compiler cannot remove.",
            name, bytes_text(b.work->global_bytes()), bytes_text(b.work->footprint_bytes));
    if (b.work)
        return fmt::format(
            "{} moves {} per launch and its bytes bind it: make consecutive work-items touch consecutive addresses "
            "(coalesced, vectorisable), load vectors, fuse it with the kernels that read or write the same buffers, "
            "or store the data in a smaller type (half or bfloat16 storage with float arithmetic).",
            name, bytes_text(b.work->global_bytes()));
    return fmt::format(
        "Count its work first: `clprobe trace --work N` with Oclgrind installed counts the bytes it really moves and "
        "its operations, and tells which roof binds it. Then look inside {}: redundant arithmetic or loops that "
        "re-read the same data, scalar code where vectors would do, uncoalesced access.",
        name);
}

std::string compute_advice(const KernelBelowRoof& b) {
    const KernelWorkFacts& w = *b.work;
    const RoofPart& bound = b.placement->bound();
    std::string advice;
    if (bound.kind == RoofKind::int32)
        advice = fmt::format(
            "{}'s integer operations bind it: use vector types (uint4, uint8) so each instruction works on several "
            "lanes, rotate() where shifts and an or spell a rotation, 32-bit arithmetic where 64-bit (size_t, long) "
            "is not needed, and bitselect() for (a & b) | (~a & c).",
            w.kernel);
    else
        advice = fmt::format(
            "{}'s {} arithmetic binds it: let the compiler fuse a*b+c (fma(), mad(), or -cl-mad-enable), give it "
            "independent accumulators rather than one dependency chain, use vector types of the device's preferred "
            "width (CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT) or a work-group size it can vectorise, and a lower "
            "precision where the accuracy allows.",
            w.kernel, to_string(bound.kind));
    if (w.special_ops > special_share * w.flops())
        advice +=
            " Its transcendental builtins (sqrt, exp, ...) cost more than a FLOP each: native_ versions or "
            "-cl-fast-relaxed-math where their accuracy is enough.";
    if (const auto library = library_tuning_advice(w.kernel)) advice = *library + " " + advice;
    return advice;
}

// The kernel the rule names: the worst with a local size; else the worst the driver chose the
// work-group for, counted (an estimate of one is trace.kernel.no_local_size's alone). That one is
// trace.kernel.no_local_size's first: shown, not ranked (pending_local_size), until a replay of its
// local sizes finds no gain in them (replay::judge_heuristics).
std::optional<KernelBelowRoof> worst_roof_candidate(const KernelLimits& limits, const TraceFacts& f, RoofSide side) {
    if (auto below = worst_below_roof(
            limits, f, [](const KernelFacts& k) { return !mostly_auto_local(k); }, side))
        return below;
    auto automatic = worst_below_roof(limits, f, mostly_auto_local, side);
    if (automatic && automatic->estimated()) return std::nullopt;
    return automatic;
}

}  // namespace

std::optional<std::string> library_tuning_advice(std::string_view kernel) {
    // CLBlast's kernels: X<routine> (Xgemm, XgemmDirectTN, Xgemv, Xaxpy...) and its helpers.
    constexpr std::array<std::string_view, 8> clblast_helpers = {
        "CopyMatrix",     "CopyPadMatrix",       "TransposeMatrix", "TransposePadMatrix",
        "CopyMatrixFast", "TransposeMatrixFast", "FillMatrix",      "FillVector"};
    const bool clblast_routine = kernel.size() > 2 && kernel[0] == 'X' && kernel[1] >= 'a' && kernel[1] <= 'z';
    const bool clblast_helper = std::any_of(clblast_helpers.begin(), clblast_helpers.end(),
                                            [&](std::string_view h) { return starts_with(kernel, h); });
    if (clblast_routine || clblast_helper) {
        const bool gemm = starts_with(kernel, "Xgemm");
        return fmt::format(
            "{} is CLBlast's: its tile sizes and vector widths come from CLBlast's tuning database, which may hold "
            "nothing for this device. Run CLBlast's tuner on it ({}, from a CLBlast build with -DTUNERS=ON) and "
            "apply the result with CLBlast::OverrideParameters or a rebuilt database.",
            kernel, gemm ? "clblast_tuner_xgemm and clblast_tuner_xgemm_direct" : "the clblast_tuner_* of the routine");
    }
    if (starts_with(kernel, "fft_") || starts_with(kernel, "clfft")) {
        return fmt::format(
            "{} looks like clFFT's: its plan fixes the work-group and radices at clfftBakePlan; set them for this "
            "device (clfftSetPlanBatchSize, the plan's layout) or try VkFFT's OpenCL back end, which tunes per device.",
            kernel);
    }
    return std::nullopt;
}

RuleOutcome kernel_below_roof(const RunReport& r, const TraceFacts& f, const RuleSpec& rule) {
    const KernelLimits limits = kernel_limits_of(r);
    if (!limits.roofs.memory_gb_per_s && !limits.roofs.levels) return rule.missing();
    const auto below = worst_roof_candidate(limits, f, RoofSide::memory);
    if (!below || !worth_reporting(f, below->saved)) return RuleOutcome::none();
    const KernelFacts& k = *below->kernel;
    Finding finding;
    if (below->work) {
        const double gbs = below->placement->bound().achieved * 1e-9;
        finding = wall_share_finding(
            rule, f,
            fmt::format("{} moving {:.3g} GB/s, {}{:.1f}% of the {} roof it is bound by (its bytes take longer at "
                        "their roof than its operations at theirs)",
                        counted_text(*below, f), gbs, below->work->upper_bound ? "at most " : "", 100 * below->fraction,
                        below->roof.level),
            below->saved,
            "at most: the kernel at the roof that binds its counted work (each launch like the counted one), and no "
            "launch shorter than an empty kernel here");
        finding.confidence = count_confidence(*below->work, 0.7);
        add_work_evidence(finding, *below);
    } else {
        const double gbs = k.bytes / k.seconds * 1e-9;
        const std::string why = uncounted_reason(f, k.name);
        finding = wall_share_finding(
            rule, f,
            fmt::format("{}; by its arguments' sizes ~{:.2g} GB/s, {:.1f}% of the {} roof: an estimate, its work "
                        "was not counted",
                        kernel_text(k, f), gbs, 100 * below->fraction, below->roof.level),
            below->saved,
            "at most: the kernel at the measured roof of the memory level its buffers fit in, if it moved its "
            "buffers' bytes once (unknown: a compute-bound kernel gains less)");
        finding.confidence = 0.2;
        finding.not_ranked = why.empty()
                                 ? "an estimate from its arguments' sizes: its work was not counted (--work)"
                                 : "an estimate from its arguments' sizes: its work was not counted (" + why + ")";
        finding.evidence.push_back(fact("app.kernel.bandwidth", gbs, "GB/s",
                                        "estimate: sizes of its buffer arguments over its device time",
                                        {{"kernel", k.name}}));
        finding.evidence.push_back(fact(below->roof.metric, below->roof.gb_per_s, "GB/s",
                                        "this device's roof for a working set of that size", {}));
    }
    add_launch_floor_evidence(finding, limits, *below);
    finding.suggestion = memory_advice(*below);
    attribute_to_processes(finding, f, processes_among(k.pids));
    if (mostly_auto_local(k) && finding.not_ranked.empty()) finding.not_ranked = pending_local_size;
    return RuleOutcome::found(std::move(finding));
}

RuleOutcome kernel_below_compute_roof(const RunReport& r, const TraceFacts& f, const RuleSpec& rule) {
    const KernelLimits limits = kernel_limits_of(r);
    if (!limits.compute.fp32 && !limits.compute.int32 && !limits.compute.fp64 && !limits.compute.fp16)
        return rule.missing();
    if (f.work.empty()) return RuleOutcome::none();  // nothing counted: nothing is known to be compute-bound
    const auto below = worst_roof_candidate(limits, f, RoofSide::compute);
    if (!below || !worth_reporting(f, below->saved)) return RuleOutcome::none();
    const KernelFacts& k = *below->kernel;
    const RoofPart& bound = below->placement->bound();
    const bool integer = bound.kind == RoofKind::int32;
    Finding finding = wall_share_finding(
        rule, f,
        fmt::format("{} at {}{:.3g} {}, {:.1f}% of the {} peak it is bound by (intensity {:.3g} {} per byte moved)",
                    counted_text(*below, f), below->work->upper_bound ? "at most " : "", bound.achieved * 1e-9,
                    integer ? "GIOP/s" : "GFLOP/s", 100 * below->fraction, to_string(bound.kind),
                    below->work->global_bytes() > 0
                        ? (integer ? below->work->int_ops : below->work->flops()) / below->work->global_bytes()
                        : 0.0,
                    integer ? "operations" : "FLOPs"),
        below->saved,
        "at most: the kernel at the measured peak of the operations that bind its counted work (each launch like "
        "the counted one), and no launch shorter than an empty kernel here");
    finding.confidence = count_confidence(*below->work, 0.6);
    if (!integer && below->work->special_ops > special_share * below->work->flops()) finding.confidence -= 0.1;
    add_work_evidence(finding, *below);
    add_launch_floor_evidence(finding, limits, *below);
    finding.suggestion = compute_advice(*below);
    attribute_to_processes(finding, f, processes_among(k.pids));
    if (mostly_auto_local(k)) finding.not_ranked = pending_local_size;
    return RuleOutcome::found(std::move(finding));
}

RuleSpec below_compute_roof_spec() {
    return {"trace.kernel.below_compute_roof",
            layer,
            {program_facts(),
             RuleInput::any_metric({"kernel.peak.fp32", "kernel.peak.int32", "kernel.peak.fp64", "kernel.peak.fp16"},
                                   "the compute peaks")},
            {{"kernel share of the wall time", kernel_share_of_interest, true},
             {"fraction of the peak that binds it", below_compute_fraction, true},
             min_gain_threshold()}};
}

}  // namespace clprobe::trace_rule
