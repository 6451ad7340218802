#include "rules/ceiling_checks.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <string_view>

#include "core/roofline_facts.hpp"
#include "rules/rule.hpp"

namespace clprobe {

namespace {

constexpr std::string_view compute_precisions[] = {"fp32", "fp64", "fp16"};

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
        int above = 0;
        for (const auto& p : r.results)
            for (const auto& m : p.measurements) {
                if (!achieved_rate(m, *ceiling) || precision_of(m) != precision) continue;
                if (measured_on_host(m.metric) && !cpu_device) continue;
                if (!clearly_above(m, *ceiling)) continue;
                ++above;
                if (!highest || m.summary.median > highest->summary.median) highest = &m;
            }
        if (!highest) continue;
        out.push_back({CeilingKind::compute, metric, ceiling->summary.median, ceiling->unit, highest->metric,
                       highest->labels, highest->summary.median,
                       measured_on_host(highest->metric) ? AchievedOn::host_cores : AchievedOn::device, above - 1});
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
            }
            ++it->other_rates_above;
            if (pt.gb_per_s() > it->achieved_value) {
                it->achieved_metric = fmt::format("{} point \"{}\"", probe.id, pt.label);
                it->achieved_labels = {{"working_set", std::to_string(pt.working_set_bytes)}};
                it->achieved_value = pt.gb_per_s();
            }
        }
    }
    return out;
}

std::vector<CeilingViolation> ceiling_violations(const RunReport& r) {
    std::vector<CeilingViolation> out = compute_ceiling_violations(r);
    for (auto& v : bandwidth_roof_violations(r))
        out.push_back(std::move(v));
    return out;
}

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
        return fmt::format(
            "{} ({} {}) is below what the {} reached ({} {}{}){}: that roof is wrong (not at the hardware's limit "
            "for this level, or the level's capacity is misjudged, or the machine got faster between the two "
            "probes), so fractions of it read too high.",
            v.ceiling_metric, number(v.ceiling_value), v.unit, v.achieved_metric, number(v.achieved_value), v.unit,
            working_set, others);
    }
    return fmt::format(
        "{} ({} {}) is below {} ({} {}) measured {}{}: the ceiling is not at the hardware's limit, so fractions of "
        "it read too high.",
        v.ceiling_metric, number(v.ceiling_value), v.unit, achieved, number(v.achieved_value), v.unit, where, others);
}

}  // namespace clprobe
