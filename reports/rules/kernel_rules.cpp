#include "rules/kernel_rules.hpp"

#include <fmt/core.h>

#include "rules/pipeline.hpp"

namespace clprobe {

namespace {

// Differences below 25% rarely repay rewriting a kernel's access pattern or types; above it
// they are the kind of gap users act on.
constexpr double layout_ratio = 1.25;
// Arithmetic vectorisation is a bigger change; flag it from 1.5x.
constexpr double compute_vector_ratio = 1.5;
// fp64 below a quarter of fp32 means double-precision GLM fits are compute-starved on this device.
constexpr double fp64_fraction = 0.25;
// Launch synchronisation: flag when a synchronised launch costs 3x a pipelined one.
constexpr double sync_ratio = 3.0;
// Cold builds above half a second are visible at every process start.
constexpr double slow_build_ms = 500.0;
constexpr double cache_speedup = 5.0;

RuleOutcome access_pattern(const RunReport& r, const RuleSpec& rule) {
    const auto* inter = best_median(find_measurements(r, "kernel.bandwidth", {{"pattern", "interleaved"}}));
    const auto* chunk = best_median(find_measurements(r, "kernel.bandwidth", {{"pattern", "chunked"}}));
    if (!inter || !chunk) return rule.missing();
    const bool chunked_wins = chunk->summary.median > inter->summary.median;
    const Measurement& fast = chunked_wins ? *chunk : *inter;
    const Measurement& slow = chunked_wins ? *inter : *chunk;
    const auto gap = significant_gap(r, fast, slow, layout_ratio);
    if (!gap) return RuleOutcome::none();

    Finding f = rule.comparison(Severity::medium,
                                fmt::format("The {} access pattern moves {:.1f}x the data of the {} one",
                                            label_of(fast, "pattern"), gap->ratio, label_of(slow, "pattern")),
                                fast, "the best pattern on this device", slow,
                                fmt::format("reaches {:.0f}% of the best", 100 / gap->ratio), *gap,
                                "time saved by a memory-bound kernel written in the slower pattern");
    f.suggestion = chunked_wins
                       ? "Give each work-item a contiguous chunk to stream (for k in 0..n: x[gid*n + k]) instead of a "
                         "grid-stride loop (x[gid + k*global_size]); CPU devices run work-items one after another on a "
                         "core, so contiguous chunks become sequential streams the prefetcher follows."
                       : "Make consecutive work-items touch consecutive addresses (x[gid + k*global_size]) instead of "
                         "per-item chunks, so the device can coalesce each group's accesses into wide transactions.";
    return RuleOutcome::found(std::move(f));
}

// Vector width effect inside the pattern and access of the best variant, so the comparison
// changes one thing only.
RuleOutcome bandwidth_vector_width(const RunReport& r, const RuleSpec& rule) {
    const auto* best = best_median(find_measurements(r, "kernel.bandwidth"));
    if (!best) return rule.missing();
    Labels scalar_labels = best->labels;
    scalar_labels["vector"] = "1";
    const auto* scalar = find_measurement(r, "kernel.bandwidth", scalar_labels);
    if (!scalar) return rule.missing();
    if (scalar == best) return RuleOutcome::none();
    const auto gap = significant_gap(r, *best, *scalar, layout_ratio);
    if (!gap) return RuleOutcome::none();

    const std::string width = label_of(*best, "vector");
    Finding f = rule.comparison(
        Severity::medium,
        fmt::format("Scalar loads reach {:.0f}% of the bandwidth of {}-wide vectors", 100 / gap->ratio, width), *best,
        "the best vector width", *scalar, "scalar (float) access", *gap,
        "time saved by a memory-bound kernel using scalar loads");
    f.suggestion = fmt::format(
        "In memory-bound kernels load and store float{0} (vload{0}/vstore{0}, or float{0} pointers) instead of float; "
        "pad arrays to a multiple of {0} elements.",
        width);
    return RuleOutcome::found(std::move(f));
}

RuleOutcome compute_vector_width(const RunReport& r, const RuleSpec& rule) {
    // The best scalar shape, not the first: with several chain counts per width, a scalar kernel
    // starved of independent chains would inflate the gap that the vector width alone explains.
    const auto* scalar = best_median(find_measurements(r, "kernel.compute", {{"precision", "fp32"}, {"vector", "1"}}));
    const auto* best = best_median(find_measurements(r, "kernel.compute", {{"precision", "fp32"}}));
    if (!scalar || !best) return rule.missing();
    if (scalar == best) return RuleOutcome::none();
    const auto gap = significant_gap(r, *best, *scalar, compute_vector_ratio);
    if (!gap) return RuleOutcome::none();

    const std::string width = label_of(*best, "vector");
    Finding f = rule.comparison(
        Severity::high,
        fmt::format("Scalar arithmetic reaches {:.0f}% of the fp32 peak; float{} reaches it", 100 / gap->ratio, width),
        *best, "the fp32 peak", *scalar, "scalar float FMAs", *gap,
        "time saved by a compute-bound kernel written with scalar float arithmetic");
    f.suggestion = fmt::format(
        "This device does not vectorise across work-items by itself: write compute-bound kernels with float{0} "
        "arithmetic (each work-item handling {0} elements), or check with the driver's vectoriser options.",
        width);
    return RuleOutcome::found(std::move(f));
}

RuleOutcome fp64_throughput(const RunReport& r, const RuleSpec& rule) {
    const auto* fp32 = find_measurement(r, "kernel.peak.fp32");
    const auto* fp64 = find_measurement(r, "kernel.peak.fp64");
    if (!fp32 || !fp64) return rule.missing();
    const double fraction = fp64->summary.median / fp32->summary.median;
    const double conf = comparison_confidence(*fp32, *fp64);
    if (fraction >= fp64_fraction || conf < min_confidence) return RuleOutcome::none();

    Finding f = rule.finding(Severity::medium,
                             fmt::format("Double precision runs at 1/{:.0f} of single precision", 1 / fraction));
    f.evidence = {evidence_of(*fp32, "single-precision peak"),
                  evidence_of(*fp64, fmt::format("at least {:.0f}% of fp32 for fp64-heavy work", 100 * fp64_fraction))};
    f.suggestion =
        "Compute in fp32 and keep fp64 for accumulations and the final reductions (mixed precision), or solve the "
        "small p x p systems of IRLS on the host in double.";
    f.estimated_gain = 1.0 - fraction;
    f.gain_basis = "time saved by a compute-bound fp64 kernel moved to fp32";
    f.confidence = conf;
    return RuleOutcome::found(std::move(f));
}

RuleOutcome launch_sync(const RunReport& r, const RuleSpec& rule) {
    const auto* rt = find_measurement(r, "kernel.launch.latency", {{"kind", "round_trip"}});
    const auto* b2b = find_measurement(r, "kernel.launch.latency", {{"kind", "back_to_back"}});
    if (!rt || !b2b) return rule.missing();
    const auto gap = significant_gap(r, *b2b, *rt, sync_ratio);
    if (!gap) return RuleOutcome::none();

    Finding f = rule.comparison(Severity::low,
                                fmt::format("Waiting after every launch costs {:.1f}x a pipelined launch", gap->ratio),
                                *rt, "launch, then clFinish, per kernel", *b2b, "launches queued back to back", *gap,
                                "launch overhead saved by a loop of small kernels that synchronises every launch");
    f.suggestion =
        "Do not call clFinish or a blocking read after each small kernel: enqueue a whole step (or several) and wait "
        "once, using events for dependencies.";
    // A device trait until a measured step synchronises: the GLM pipeline's sync stage makes it a
    // share of that step; without one it stays a note with its factor.
    f.target = stage_target("", Stage::sync, gap->gain());
    return RuleOutcome::found(std::move(f));
}

RuleOutcome build_cache(const RunReport& r, const RuleSpec& rule) {
    const auto* cold = find_measurement(r, "kernel.build.time", {{"path", "cold"}});
    const auto* binary = find_measurement(r, "kernel.build.time", {{"path", "binary_cache"}});
    if (!cold || !binary) return rule.missing();
    if (cold->summary.median < slow_build_ms) return RuleOutcome::none();
    const auto gap = significant_gap(r, *binary, *cold, cache_speedup);
    if (!gap) return RuleOutcome::none();

    Finding f = rule.comparison(Severity::low,
                                fmt::format("Building from source takes {:.0f} ms; a cached binary loads in {:.0f} ms",
                                            cold->summary.median, binary->summary.median),
                                *cold, "a first build of a moderate kernel", *binary, "the same program from a binary",
                                *gap, "start-up time per program; no steady-state gain");
    // Start-up time is not a share of any steady-state pipeline.
    f.estimated_gain.reset();
    f.suggestion =
        "Save program binaries after the first build (clGetProgramInfo CL_PROGRAM_BINARIES) and create later programs "
        "with clCreateProgramWithBinary, keyed by device, driver version, source and options.";
    return RuleOutcome::found(std::move(f));
}

RuleOutcome host_timer(const RunReport& r, const RuleSpec& rule) {
    if (!r.device) return rule.missing();
    if (r.device->profiling) return RuleOutcome::none();
    Finding f =
        rule.finding(Severity::medium, "The device cannot profile commands: kernel times come from the host clock");
    f.suggestion =
        "Treat kernel times as upper bounds (they include launch and synchronisation); try another driver or platform "
        "for the device if one exposes queue profiling.";
    f.gain_basis = "measurement trust, not speed";
    f.confidence = 1.0;
    return RuleOutcome::found(std::move(f));
}

}  // namespace

std::vector<Rule> kernel_rules() {
    using In = RuleInput;
    const std::string layer = "kernel";
    return {
        {{"kernel.timer.host_fallback", layer, {In::device()}, {}}, host_timer},
        {{"kernel.bandwidth.access_pattern",
          layer,
          {In::metric("kernel.bandwidth", "pattern=chunked and pattern=interleaved")},
          {{"ratio", layout_ratio}}},
         access_pattern},
        {{"kernel.bandwidth.vector_width",
          layer,
          {In::metric("kernel.bandwidth", "the best variant and its vector=1 twin")},
          {{"ratio", layout_ratio}}},
         bandwidth_vector_width},
        {{"kernel.compute.vector_width",
          layer,
          {In::metric("kernel.compute", "precision=fp32, the best and the best vector=1")},
          {{"ratio", compute_vector_ratio}}},
         compute_vector_width},
        {{"kernel.fp64.throughput",
          layer,
          {In::metric("kernel.peak.fp32"), In::metric("kernel.peak.fp64")},
          {{"fp64 fraction of fp32", fp64_fraction}}},
         fp64_throughput},
        {{"kernel.launch.sync_overhead",
          layer,
          {In::metric("kernel.launch.latency", "kind=round_trip and kind=back_to_back")},
          {{"ratio", sync_ratio}}},
         launch_sync},
        {{"kernel.build.cache_binaries",
          layer,
          {In::metric("kernel.build.time", "path=cold and path=binary_cache")},
          {{"slow cold build, ms", slow_build_ms}, {"cache speed-up", cache_speedup}}},
         build_cache},
    };
}

}  // namespace clprobe
