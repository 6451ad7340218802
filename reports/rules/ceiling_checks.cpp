#include "rules/ceiling_checks.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <string_view>

#include "core/drift_facts.hpp"
#include "core/roofline_facts.hpp"
#include "rules/rule.hpp"

namespace clprobe {

namespace {

constexpr std::string_view compute_precisions[] = {"fp32", "fp64", "fp16", "int32"};

// Host code on the host's cores: OpenBLAS GEMM (kernel.host_gemm) and the workloads' host_blas
// baselines. Those cores are the device only when the device is the CPU.
bool measured_on_host(std::string_view metric) {
    return metric.starts_with("kernel.host_gemm.") || metric.find(".host_blas.") != std::string_view::npos;
}

// A rate that can contradict a ceiling: timed (not derived from other numbers), higher is better,
// in the ceiling's unit, and not one of the variants the ceilings are the best of.
bool achieved_rate(const Measurement& m, const Measurement& ceiling) {
    return m.timer != TimerKind::none && m.higher_is_better && m.unit == ceiling.unit && m.metric != "kernel.compute" &&
           !m.metric.starts_with("kernel.peak.");
}

std::string precision_of(const Measurement& m) {
    const auto it = m.labels.find("precision");
    return it == m.labels.end() ? "fp32" : it->second;  // workloads without the label run fp32
}

// Above by more than the two measurements' noise, so a tie on a noisy machine is no violation.
bool clearly_above(const Measurement& achieved, const Measurement& ceiling) {
    return achieved.summary.median > ceiling.summary.median * (1.0 + relative_noise(achieved, ceiling));
}

// The drift checks around both probes, when the run has them: the series that bounds the ceiling.
CeilingViolation with_drift(const RunReport& r, CeilingViolation v) {
    if (!r.drift) return v;
    const auto ceiling = drift_around(*r.drift, v.ceiling_probe);
    const auto achieved = drift_around(*r.drift, v.achieved_probe);
    if (!ceiling || !achieved) return v;
    const bool memory = v.kind == CeilingKind::bandwidth;
    const double before = memory ? ceiling->memory_gb_per_s : ceiling->compute_gflops;
    const double after = memory ? achieved->memory_gb_per_s : achieved->compute_gflops;
    if (before > 0 && after > 0) v.machine_speedup = after / before;
    return v;
}

std::string number(double v) {
    return v >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v);
}

}  // namespace

std::vector<CeilingViolation> compute_ceiling_violations(const RunReport& r) {
    const bool cpu_device = r.device && r.device->type == "cpu";
    std::vector<CeilingViolation> out;
    for (const std::string_view precision : compute_precisions) {
        const std::string metric = fmt::format("kernel.peak.{}", precision);
        const Measurement* ceiling = find_measurement(r, metric);
        if (!ceiling) continue;
        const Measurement* highest = nullptr;
        std::string highest_probe;
        int above = 0;
        for (const auto& p : r.results)
            for (const auto& m : p.measurements) {
                if (!achieved_rate(m, *ceiling) || precision_of(m) != precision) continue;
                if (measured_on_host(m.metric) && !cpu_device) continue;
                if (!clearly_above(m, *ceiling)) continue;
                ++above;
                if (!highest || m.summary.median > highest->summary.median) {
                    highest = &m;
                    highest_probe = p.id;
                }
            }
        if (!highest) continue;
        CeilingViolation v{CeilingKind::compute,
                           metric,
                           ceiling->summary.median,
                           ceiling->unit,
                           highest->metric,
                           highest->labels,
                           highest->summary.median,
                           measured_on_host(highest->metric) ? AchievedOn::host_cores : AchievedOn::device,
                           above - 1};
        v.ceiling_probe = probe_holding(r, metric, {});
        v.achieved_probe = highest_probe;
        out.push_back(with_drift(r, std::move(v)));
    }
    return out;
}

namespace {

// A point read from a roofline: medians only, so a fixed margin stands for their noise.
constexpr double roof_margin = 0.05;

std::string roof_metric(const RooflinePoint& p) {
    return p.level == "memory" || p.level.empty() ? "kernel.peak.bandwidth"
                                                  : fmt::format("kernel.roof.bandwidth{{level={}}}", p.level);
}

// The probe that measured the roof a point was placed against.
std::string roof_probe(const RunReport& r, const RooflinePoint& p) {
    return p.level == "memory" || p.level.empty() ? probe_holding(r, "kernel.peak.bandwidth", {})
                                                  : probe_holding(r, "kernel.roof.bandwidth", {{"level", p.level}});
}

}  // namespace

std::vector<CeilingViolation> bandwidth_roof_violations(const RunReport& r) {
    std::vector<CeilingViolation> out;
    for (const auto& probe : r.results) {
        if (probe.status != ProbeStatus::ok) continue;
        for (const auto& pt : roofline_points_of(probe)) {
            if (!pt.roof_gb_per_s || pt.gb_per_s() <= *pt.roof_gb_per_s * (1 + roof_margin)) continue;
            const std::string metric = roof_metric(pt);
            auto it = std::find_if(out.begin(), out.end(),
                                   [&](const CeilingViolation& v) { return v.ceiling_metric == metric; });
            if (it == out.end()) {
                it = out.insert(
                    out.end(),
                    CeilingViolation{
                        CeilingKind::bandwidth, metric, *pt.roof_gb_per_s, "GB/s", "", {}, 0, AchievedOn::device, -1});
                it->ceiling_probe = roof_probe(r, pt);
            }
            ++it->other_rates_above;
            if (pt.gb_per_s() > it->achieved_value) {
                it->achieved_probe = probe.id;
                it->achieved_metric = fmt::format("{} point \"{}\"", probe.id, pt.label);
                it->achieved_labels = {{"working_set", std::to_string(pt.working_set_bytes)}};
                it->achieved_value = pt.gb_per_s();
            }
        }
    }
    for (auto& v : out)
        v = with_drift(r, std::move(v));
    return out;
}

std::vector<CeilingViolation> ceiling_violations(const RunReport& r) {
    std::vector<CeilingViolation> out = compute_ceiling_violations(r);
    for (auto& v : bandwidth_roof_violations(r))
        out.push_back(std::move(v));
    return out;
}

bool CeilingViolation::explained_by_drift() const {
    // Each drift check is a median of three launches, repeatable to a few percent between
    // back-to-back checks: a small margin stands for that, and no more, so a speed-up well short of
    // the gap does not excuse it.
    constexpr double drift_margin = 0.02;
    return machine_speedup && ceiling_value > 0 &&
           achieved_value / ceiling_value <= *machine_speedup * (1 + drift_margin);
}

namespace {

// Why the ceiling sits below the rate, as far as the run can tell.
std::string verdict(const CeilingViolation& v) {
    const char* ceiling = v.kind == CeilingKind::bandwidth ? "roof" : "ceiling";
    if (v.explained_by_drift())
        return fmt::format(
            "the machine's own reference ran {:.0f}% faster around {} than around {} (drift checks), which accounts "
            "for the gap: the {} was measured in a slower phase of the machine, so fractions of it read too high.",
            100 * (*v.machine_speedup - 1), v.achieved_probe, v.ceiling_probe, ceiling);
    const std::string moved = v.machine_speedup
                                  ? fmt::format(
                                        " (the machine's own reference moved {:+.0f}% between {} and {}, less than "
                                        "the gap)",
                                        100 * (*v.machine_speedup - 1), v.ceiling_probe, v.achieved_probe)
                                  : std::string();
    if (v.kind == CeilingKind::bandwidth)
        return fmt::format(
            "that roof is wrong (not at the hardware's limit for this level, or the level's capacity is "
            "misjudged{}){}, "
            "so fractions of it read too high.",
            v.machine_speedup ? "" : ", or the machine got faster between the two probes", moved);
    return fmt::format("the ceiling is not at the hardware's limit{}, so fractions of it read too high.", moved);
}

}  // namespace

std::string describe(const CeilingViolation& v) {
    const std::string achieved = labelled_metric(v.achieved_metric, v.achieved_labels);
    const char* where = v.achieved_on == AchievedOn::host_cores ? "on the same cores" : "on the same device";
    const std::string others = v.other_rates_above > 0
                                   ? fmt::format(" ({} more measured {} above it)", v.other_rates_above,
                                                 v.other_rates_above == 1 ? "rate is" : "rates are")
                                   : std::string();
    if (v.kind == CeilingKind::bandwidth) {
        const auto ws = v.achieved_labels.find("working_set");
        const std::string working_set =
            ws == v.achieved_labels.end() ? std::string() : fmt::format(", working set {} bytes", ws->second);
        return fmt::format("{} ({} {}) is below what the {} reached ({} {}{}){}: {}", v.ceiling_metric,
                           number(v.ceiling_value), v.unit, v.achieved_metric, number(v.achieved_value), v.unit,
                           working_set, others, verdict(v));
    }
    return fmt::format("{} ({} {}) is below {} ({} {}) measured {}{}: {}", v.ceiling_metric, number(v.ceiling_value),
                       v.unit, achieved, number(v.achieved_value), v.unit, where, others, verdict(v));
}

}  // namespace clprobe
