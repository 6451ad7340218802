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

// "float4" or "scalar (float)": an element type in advice.
std::string element_of(const std::string& width) {
    return width == "1" ? "scalar (float)" : "float" + width;
}

// One kernel.bandwidth variant in words: "read, float16, two streams per item".
std::string bandwidth_variant(const Measurement& m) {
    std::string text = label_of(m, "access") + ", " + element_of(label_of(m, "vector"));
    const auto streams = m.labels.find("streams");
    if (streams != m.labels.end() && streams->second != "1") text += ", " + streams->second + " streams per item";
    return text;
}

std::string gbs(const Measurement& m) {
    return fmt::format("{:.3g} {}", m.summary.median, m.unit);
}

// The pattern that moved more data on this device, whichever it is: the advice names the
// measured winner and both figures, never how one driver schedules work-items.
RuleOutcome access_pattern(const RunReport& r, const RuleSpec& rule) {
    const auto* inter = best_median(find_measurements(r, "kernel.bandwidth", {{"pattern", "interleaved"}}));
    const auto* chunk = best_median(find_measurements(r, "kernel.bandwidth", {{"pattern", "chunked"}}));
    if (!inter || !chunk) return rule.missing();
    const bool chunked_wins = chunk->summary.median > inter->summary.median;
    const Measurement& fast = chunked_wins ? *chunk : *inter;
    const Measurement& slow = chunked_wins ? *inter : *chunk;
    const auto gap = significant_gap(r, fast, slow, layout_ratio);
    if (!gap) return RuleOutcome::none();

    Finding f = rule.comparison(
        Severity::medium,
        fmt::format("The {} access pattern moves {:.1f}x the data of the {} one on this device ({} against {})",
                    label_of(fast, "pattern"), gap->ratio, label_of(slow, "pattern"), gbs(fast), gbs(slow)),
        fast, fmt::format("the best {} variant measured ({})", label_of(fast, "pattern"), bandwidth_variant(fast)),
        slow, fmt::format("the best {} variant measured ({})", label_of(slow, "pattern"), bandwidth_variant(slow)),
        *gap, "time saved by a memory-bound kernel written in the slower pattern");
    const std::string measured =
        fmt::format("Measured here: {} {} ({}) against {} {} ({}).", label_of(fast, "pattern"), gbs(fast),
                    bandwidth_variant(fast), label_of(slow, "pattern"), gbs(slow), bandwidth_variant(slow));
    f.suggestion =
        chunked_wins
            ? "Give each work-item a contiguous chunk to stream (for k in 0..n: x[gid*n + k]) instead of a "
              "grid-stride loop (x[gid + k*global_size]) in memory-bound kernels for this device. " +
                  measured + " Measure again on another device or driver: the faster pattern differs between them."
            : "Make consecutive work-items touch consecutive addresses (x[gid + k*global_size]) instead of giving each "
              "work-item a contiguous chunk in memory-bound kernels for this device. " +
                  measured + " Measure again on another device or driver: the faster pattern differs between them.";
    return RuleOutcome::found(std::move(f));
}

// Vector width effect inside the access and pattern of the best one-stream variant, so the
// comparison changes one thing only (the two-stream reads exist at some widths only). Either way
// round: explicit vectors faster than scalar loads, or scalar loads faster than the best explicit
// vector width.
RuleOutcome bandwidth_vector_width(const RunReport& r, const RuleSpec& rule) {
    std::vector<const Measurement*> one_stream;
    for (const auto* m : find_measurements(r, "kernel.bandwidth")) {
        const auto streams = m->labels.find("streams");
        if (streams == m->labels.end() || streams->second == "1") one_stream.push_back(m);
    }
    const auto* best = best_median(one_stream);
    if (!best) return rule.missing();
    const Measurement* scalar = nullptr;
    std::vector<const Measurement*> vector_twins;
    for (const auto* m : one_stream) {
        if (label_of(*m, "access") != label_of(*best, "access") ||
            label_of(*m, "pattern") != label_of(*best, "pattern"))
            continue;
        if (label_of(*m, "vector") == "1")
            scalar = m;
        else
            vector_twins.push_back(m);
    }
    if (!scalar) return rule.missing();
    const bool scalar_wins = scalar == best;
    const Measurement* other = scalar_wins ? best_median(vector_twins) : scalar;
    if (!other) return RuleOutcome::none();  // nothing but scalar loads measured
    const auto gap = significant_gap(r, *best, *other, layout_ratio);
    if (!gap) return RuleOutcome::none();

    const std::string pattern = label_of(*best, "pattern");
    if (!scalar_wins) {
        const std::string width = label_of(*best, "vector");
        Finding f = rule.comparison(
            Severity::medium,
            fmt::format("Scalar loads reach {:.0f}% of the bandwidth of {}-wide vectors ({} against {}, {} pattern)",
                        100 / gap->ratio, width, gbs(*scalar), gbs(*best), pattern),
            *best, fmt::format("the best vector width ({})", bandwidth_variant(*best)), *scalar,
            fmt::format("scalar (float) access, same pattern ({})", bandwidth_variant(*scalar)), *gap,
            "time saved by a memory-bound kernel using scalar loads");
        f.suggestion = fmt::format(
            "In memory-bound kernels for this device load and store float{0} (vload{0}/vstore{0}, or float{0} "
            "pointers) instead of float; pad arrays to a multiple of {0} elements. Measured here in the {1} pattern: "
            "float{0} {2}, float {3}.",
            width, pattern, gbs(*best), gbs(*scalar));
        return RuleOutcome::found(std::move(f));
    }
    const std::string width = label_of(*other, "vector");
    Finding f = rule.comparison(
        Severity::medium,
        fmt::format("Scalar loads move {:.1f}x the data of float{} vectors, the best width measured ({} against {}, "
                    "{} pattern)",
                    gap->ratio, width, gbs(*scalar), gbs(*other), pattern),
        *scalar, fmt::format("scalar (float) access, the best variant ({})", bandwidth_variant(*scalar)), *other,
        fmt::format("the best explicit vector width, same pattern ({})", bandwidth_variant(*other)), *gap,
        "time saved by a memory-bound kernel using explicit vector loads");
    f.suggestion = fmt::format(
        "In memory-bound kernels for this device keep loads and stores scalar (float, one element per work-item per "
        "step) rather than float{0}/vload{0}: the driver widens scalar code itself. Measured here in the {1} "
        "pattern: float {2}, float{0} {3}.",
        width, pattern, gbs(*scalar), gbs(*other));
    return RuleOutcome::found(std::move(f));
}

// One kernel.compute variant in words: "float8, 8 chains".
std::string compute_variant(const Measurement& m) {
    const std::string element = element_of(label_of(m, "vector"));
    return m.labels.count("chains") ? fmt::format("{}, {} chains", element, m.labels.at("chains")) : element;
}

// Either way round: the best vector shape against the best scalar one, or the best (scalar)
// shape against the best vector one.
RuleOutcome compute_vector_width(const RunReport& r, const RuleSpec& rule) {
    // The best scalar shape, not the first: with several chain counts per width, a scalar kernel
    // starved of independent chains would inflate the gap that the vector width alone explains.
    const auto* scalar = best_median(find_measurements(r, "kernel.compute", {{"precision", "fp32"}, {"vector", "1"}}));
    const auto fp32 = find_measurements(r, "kernel.compute", {{"precision", "fp32"}});
    const auto* best = best_median(fp32);
    if (!scalar || !best) return rule.missing();
    const bool scalar_wins = scalar == best;
    const Measurement* other = scalar;
    if (scalar_wins) {
        std::vector<const Measurement*> vectors;
        for (const auto* m : fp32)
            if (label_of(*m, "vector") != "1") vectors.push_back(m);
        other = best_median(vectors);
        if (!other) return RuleOutcome::none();
    }
    const auto gap = significant_gap(r, *best, *other, compute_vector_ratio);
    if (!gap) return RuleOutcome::none();

    const auto gflops = [](const Measurement& m) { return fmt::format("{:.3g} {}", m.summary.median, m.unit); };
    if (!scalar_wins) {
        const std::string width = label_of(*best, "vector");
        Finding f = rule.comparison(
            Severity::high,
            fmt::format("Scalar arithmetic reaches {:.0f}% of the fp32 peak; float{} reaches it ({} against {})",
                        100 / gap->ratio, width, gflops(*scalar), gflops(*best)),
            *best, fmt::format("the fp32 peak ({})", compute_variant(*best)), *scalar,
            fmt::format("scalar float FMAs, the best chain count ({})", compute_variant(*scalar)), *gap,
            "time saved by a compute-bound kernel written with scalar float arithmetic");
        f.suggestion = fmt::format(
            "Write compute-bound kernels for this device with float{0} arithmetic (each work-item handling {0} "
            "elements): measured here, float{0} reached {1} and scalar float {2}, so the driver does not widen "
            "scalar code to the full vector unit by itself. Check its vectoriser options, and measure again on "
            "other devices.",
            width, gflops(*best), gflops(*scalar));
        return RuleOutcome::found(std::move(f));
    }
    const std::string width = label_of(*other, "vector");
    Finding f = rule.comparison(
        Severity::high,
        fmt::format("Explicit float{} arithmetic reaches {:.0f}% of the fp32 peak; scalar floats reach it ({} against "
                    "{})",
                    width, 100 / gap->ratio, gflops(*other), gflops(*best)),
        *best, fmt::format("the fp32 peak, scalar ({})", compute_variant(*best)), *other,
        fmt::format("the best explicit vector shape ({})", compute_variant(*other)), *gap,
        "time saved by a compute-bound kernel written with explicit vector types");
    f.suggestion = fmt::format(
        "Write compute-bound kernels for this device with scalar float arithmetic and independent accumulators: "
        "measured here, scalar floats reached {0} and float{1} {2}, so the driver vectorises across work-items "
        "itself and explicit vectors get in its way. Measure again on other devices.",
        gflops(*best), width, gflops(*other));
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
    // A driver that caches its own builds (PoCL, NVIDIA) already gives a program's second build
    // on this machine most of that speed: the advice then holds only where its cache is empty.
    const auto* driver = find_measurement(r, "kernel.build.time", {{"path", "driver_cache"}});
    if (driver && significant_gap(r, *driver, *cold, cache_speedup)) {
        f.evidence.push_back(evidence_of(*driver, "the same source built again: the driver's own cache"));
        f.suggestion = fmt::format(
            "This driver caches builds itself: the same source built again took {:.0f} ms. Only a program's first "
            "build on a machine, or in a container or job whose driver cache starts empty, pays the {:.0f} ms; there, "
            "ship or persist binaries (CL_PROGRAM_BINARIES, clCreateProgramWithBinary), or keep the driver's cache "
            "folder between jobs.",
            driver->summary.median, cold->summary.median);
    }
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
          {In::metric("kernel.bandwidth",
                      "the best one-stream variant, its vector=1 twin and, when scalar is best, its best "
                      "vector twin")},
          {{"ratio", layout_ratio}}},
         bandwidth_vector_width},
        {{"kernel.compute.vector_width",
          layer,
          {In::metric("kernel.compute", "precision=fp32, the best, the best vector=1 and the best vector>1")},
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
