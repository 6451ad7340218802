#include "rules/kernel_rules.hpp"

#include <fmt/core.h>

#include <algorithm>

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

std::vector<const Measurement*> all_of(const RunReport& r, std::string_view metric, const Labels& labels = {}) {
    std::vector<const Measurement*> out;
    for (const auto& p : r.results)
        for (const auto& m : p.measurements) {
            if (m.metric != metric) continue;
            bool match = true;
            for (const auto& [k, v] : labels) {
                auto it = m.labels.find(k);
                match = match && it != m.labels.end() && it->second == v;
            }
            if (match) out.push_back(&m);
        }
    return out;
}

const Measurement* best_of(const std::vector<const Measurement*>& ms) {
    const Measurement* best = nullptr;
    for (const auto* m : ms)
        if (!best || m->summary.median > best->summary.median) best = m;
    return best;
}

std::string fmt_value(double v, const std::string& unit) { return fmt::format("{:.4g} {}", v, unit); }

Finding base(const char* id, Severity sev, std::string title) {
    Finding f;
    f.id = id;
    f.layer = "kernel";
    f.severity = sev;
    f.title = std::move(title);
    return f;
}

RuleOutcome access_pattern(const RunReport& r) {
    const auto* inter = best_of(all_of(r, "kernel.bandwidth", {{"pattern", "interleaved"}}));
    const auto* chunk = best_of(all_of(r, "kernel.bandwidth", {{"pattern", "chunked"}}));
    if (!inter || !chunk) return RuleOutcome::missing("needs kernel.bandwidth for both access patterns");
    const bool chunked_wins = chunk->summary.median > inter->summary.median;
    const Measurement& fast = chunked_wins ? *chunk : *inter;
    const Measurement& slow = chunked_wins ? *inter : *chunk;
    const double ratio = fast.summary.median / slow.summary.median;
    const double conf = comparison_confidence(fast, slow);
    if (ratio < layout_ratio || conf < min_confidence) return RuleOutcome::none();

    Finding f = base("kernel.bandwidth.access_pattern", Severity::medium,
                     fmt::format("The {} access pattern moves {:.1f}x the data of the {} one", fast.labels.at("pattern"),
                                 ratio, slow.labels.at("pattern")));
    f.evidence = {evidence_of(fast, "the best pattern on this device"),
                  evidence_of(slow, fmt::format("reaches {:.0f}% of the best", 100 / ratio))};
    f.suggestion =
        chunked_wins
            ? "Give each work-item a contiguous chunk to stream (for k in 0..n: x[gid*n + k]) instead of a "
              "grid-stride loop (x[gid + k*global_size]); CPU devices run work-items one after another on a "
              "core, so contiguous chunks become sequential streams the prefetcher follows."
            : "Make consecutive work-items touch consecutive addresses (x[gid + k*global_size]) instead of "
              "per-item chunks, so the device can coalesce each group's accesses into wide transactions.";
    f.estimated_gain = 1.0 - 1.0 / ratio;
    f.gain_basis = "time saved by a memory-bound kernel written in the slower pattern";
    f.confidence = conf;
    return RuleOutcome::found(std::move(f));
}

// Vector width effect inside the pattern and access of the best variant, so the comparison
// changes one thing only.
RuleOutcome bandwidth_vector_width(const RunReport& r) {
    const auto* best = best_of(all_of(r, "kernel.bandwidth"));
    if (!best) return RuleOutcome::missing("needs kernel.bandwidth measurements");
    Labels scalar_labels = best->labels;
    scalar_labels["vector"] = "1";
    const auto* scalar = find_measurement(r, "kernel.bandwidth", scalar_labels);
    if (!scalar || scalar == best) return RuleOutcome::none();
    const double ratio = best->summary.median / scalar->summary.median;
    const double conf = comparison_confidence(*best, *scalar);
    if (ratio < layout_ratio || conf < min_confidence) return RuleOutcome::none();

    Finding f = base("kernel.bandwidth.vector_width", Severity::medium,
                     fmt::format("Scalar loads reach {:.0f}% of the bandwidth of {}-wide vectors", 100 / ratio,
                                 best->labels.at("vector")));
    f.evidence = {evidence_of(*best, "the best vector width"), evidence_of(*scalar, "scalar (float) access")};
    f.suggestion = fmt::format(
        "In memory-bound kernels load and store float{0} (vload{0}/vstore{0}, or float{0} pointers) instead of "
        "float; pad arrays to a multiple of {0} elements.",
        best->labels.at("vector"));
    f.estimated_gain = 1.0 - 1.0 / ratio;
    f.gain_basis = "time saved by a memory-bound kernel using scalar loads";
    f.confidence = conf;
    return RuleOutcome::found(std::move(f));
}

RuleOutcome compute_vector_width(const RunReport& r) {
    const auto* scalar = find_measurement(r, "kernel.compute", {{"precision", "fp32"}, {"vector", "1"}});
    const auto* best = best_of(all_of(r, "kernel.compute", {{"precision", "fp32"}}));
    if (!scalar || !best) return RuleOutcome::missing("needs kernel.compute fp32 measurements");
    if (scalar == best) return RuleOutcome::none();
    const double ratio = best->summary.median / scalar->summary.median;
    const double conf = comparison_confidence(*best, *scalar);
    if (ratio < compute_vector_ratio || conf < min_confidence) return RuleOutcome::none();

    Finding f = base("kernel.compute.vector_width", Severity::high,
                     fmt::format("Scalar arithmetic reaches {:.0f}% of the fp32 peak; float{} reaches it",
                                 100 / ratio, best->labels.at("vector")));
    f.evidence = {evidence_of(*best, "the fp32 peak"), evidence_of(*scalar, "scalar float FMAs")};
    f.suggestion = fmt::format(
        "This device does not vectorise across work-items by itself: write compute-bound kernels with float{0} "
        "arithmetic (each work-item handling {0} elements), or check with the driver's vectoriser options.",
        best->labels.at("vector"));
    f.estimated_gain = 1.0 - 1.0 / ratio;
    f.gain_basis = "time saved by a compute-bound kernel written with scalar float arithmetic";
    f.confidence = conf;
    return RuleOutcome::found(std::move(f));
}

RuleOutcome fp64_throughput(const RunReport& r) {
    const auto* fp32 = find_measurement(r, "kernel.peak.fp32");
    const auto* fp64 = find_measurement(r, "kernel.peak.fp64");
    if (!fp32 || !fp64) return RuleOutcome::missing("needs kernel.peak.fp32 and kernel.peak.fp64");
    const double fraction = fp64->summary.median / fp32->summary.median;
    const double conf = comparison_confidence(*fp32, *fp64);
    if (fraction >= fp64_fraction || conf < min_confidence) return RuleOutcome::none();

    Finding f = base("kernel.fp64.throughput", Severity::medium,
                     fmt::format("Double precision runs at 1/{:.0f} of single precision", 1 / fraction));
    f.evidence = {evidence_of(*fp32, "single-precision peak"),
                  evidence_of(*fp64, fmt::format("at least {:.0f}% of fp32 for fp64-heavy work", 100 * fp64_fraction))};
    f.suggestion =
        "Compute in fp32 and keep fp64 for accumulations and the final reductions (mixed precision), or solve "
        "the small p x p systems of IRLS on the host in double.";
    f.estimated_gain = 1.0 - fraction;
    f.gain_basis = "time saved by a compute-bound fp64 kernel moved to fp32";
    f.confidence = conf;
    return RuleOutcome::found(std::move(f));
}

RuleOutcome launch_sync(const RunReport& r) {
    const auto* rt = find_measurement(r, "kernel.launch.latency", {{"kind", "round_trip"}});
    const auto* b2b = find_measurement(r, "kernel.launch.latency", {{"kind", "back_to_back"}});
    if (!rt || !b2b) return RuleOutcome::missing("needs kernel.launch.latency round_trip and back_to_back");
    const double ratio = rt->summary.median / b2b->summary.median;
    const double conf = comparison_confidence(*b2b, *rt);
    if (ratio < sync_ratio || conf < min_confidence) return RuleOutcome::none();

    Finding f = base("kernel.launch.sync_overhead", Severity::low,
                     fmt::format("Waiting after every launch costs {:.1f}x a pipelined launch", ratio));
    f.evidence = {evidence_of(*rt, "launch, then clFinish, per kernel"),
                  evidence_of(*b2b, "launches queued back to back")};
    f.suggestion =
        "Do not call clFinish or a blocking read after each small kernel: enqueue a whole step (or several) and "
        "wait once, using events for dependencies.";
    f.estimated_gain = 1.0 - 1.0 / ratio;
    f.gain_basis = "launch overhead saved by a loop of small kernels that synchronises every launch";
    f.confidence = conf;
    return RuleOutcome::found(std::move(f));
}

RuleOutcome build_cache(const RunReport& r) {
    const auto* cold = find_measurement(r, "kernel.build.time", {{"path", "cold"}});
    const auto* binary = find_measurement(r, "kernel.build.time", {{"path", "binary_cache"}});
    if (!cold || !binary) return RuleOutcome::missing("needs kernel.build.time cold and binary_cache");
    const double ratio = cold->summary.median / binary->summary.median;
    const double conf = comparison_confidence(*binary, *cold);
    if (cold->summary.median < slow_build_ms || ratio < cache_speedup || conf < min_confidence)
        return RuleOutcome::none();

    Finding f = base("kernel.build.cache_binaries", Severity::low,
                     fmt::format("Building from source takes {:.0f} ms; a cached binary loads in {:.0f} ms",
                                 cold->summary.median, binary->summary.median));
    f.evidence = {evidence_of(*cold, "a first build of a moderate kernel"),
                  evidence_of(*binary, "the same program from a binary")};
    f.suggestion =
        "Save program binaries after the first build (clGetProgramInfo CL_PROGRAM_BINARIES) and create later "
        "programs with clCreateProgramWithBinary, keyed by device, driver version, source and options.";
    f.gain_basis = "start-up time per program; no steady-state gain";
    f.confidence = conf;
    return RuleOutcome::found(std::move(f));
}

RuleOutcome host_timer(const RunReport& r) {
    if (!r.device) return RuleOutcome::missing("needs the device context");
    if (r.device->profiling) return RuleOutcome::none();
    Finding f = base("kernel.timer.host_fallback", Severity::medium,
                     "The device cannot profile commands: kernel times come from the host clock");
    f.suggestion =
        "Treat kernel times as upper bounds (they include launch and synchronisation); try another driver or "
        "platform for the device if one exposes queue profiling.";
    f.gain_basis = "measurement trust, not speed";
    f.confidence = 1.0;
    return RuleOutcome::found(std::move(f));
}

}  // namespace

std::vector<Rule> kernel_rules() {
    return {
        {"kernel.timer.host_fallback", "kernel", host_timer},
        {"kernel.bandwidth.access_pattern", "kernel", access_pattern},
        {"kernel.bandwidth.vector_width", "kernel", bandwidth_vector_width},
        {"kernel.compute.vector_width", "kernel", compute_vector_width},
        {"kernel.fp64.throughput", "kernel", fp64_throughput},
        {"kernel.launch.sync_overhead", "kernel", launch_sync},
        {"kernel.build.cache_binaries", "kernel", build_cache},
    };
}

}  // namespace clprobe
