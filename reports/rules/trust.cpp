#include "rules/trust.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "compare/run_passes.hpp"
#include "rules/ceiling_checks.hpp"

namespace clprobe {

namespace {

// Other processes' share of the CPUs above which timings of CPU devices and host work are
// visibly affected; the same line the system layer's contention finding uses.
constexpr double busy_percent = 10;
constexpr double steal_percent = 2;
// A loaded clock below 90% of the maximum means turbo/governor limits shaped the numbers.
constexpr double clock_fraction = 0.9;
// Samples vary by more than this: the median still stands, but small differences do not.
constexpr double noisy_cv = 0.10;
// The drift reference (core/drift_facts.hpp) moved by more than this between its fastest and
// slowest check: figures taken at different times of the run can differ by as much.
constexpr double drift_spread = 0.10;

std::optional<double> median(const RunReport& r, std::string_view metric) {
    const auto* m = find_measurement(r, metric);
    return m ? std::optional<double>(m->summary.median) : std::nullopt;
}

// Warns when the reference moved by more than drift_spread, and says it stayed steady otherwise.
std::optional<TrustNote> drift_note(const MachineDrift& drift) {
    const auto spread = largest_spread(drift);
    if (!spread) return std::nullopt;
    const DriftSeries c = compute_series(drift), m = memory_series(drift);
    if (*spread > drift_spread)
        return TrustNote{"trust.machine_drift", true,
                         fmt::format("The machine's own throughput drifted during the run: a fixed reference "
                                     "varied by {:.0f}% (compute, median {:.4g} GFLOP/s) and {:.0f}% (memory, median "
                                     "{:.4g} GB/s) between the fastest and slowest of {} checks, so figures taken at "
                                     "different times can differ by as much with nothing changed.",
                                     100 * c.spread, c.median, 100 * m.spread, m.median, drift.checks.size())};
    return TrustNote{"trust.machine_steady", false,
                     fmt::format("A fixed reference timed before each device probe stayed within {:.1f}% (compute) "
                                 "and {:.1f}% (memory) over {} checks.",
                                 100 * c.spread, 100 * m.spread, drift.checks.size())};
}

// diagnose --passes N: how far the figures moved between the passes, family by family, as compare
// will hold a change against it. Information: it is the movement any single run hides.
std::optional<TrustNote> passes_note(const RunReport& r) {
    const auto movement = movement_between_passes(r);
    if (!movement) return std::nullopt;
    std::vector<std::pair<double, std::string>> bands;
    for (const auto& [family, f] : movement->families)
        bands.emplace_back(std::expm1(movement->z * f.sigma_log), family);
    std::sort(bands.rbegin(), bands.rend());
    std::string widest;
    for (std::size_t i = 0; i < bands.size() && i < 3; ++i)
        widest += fmt::format("{}{} {:.0f}%", i ? ", " : "", bands[i].second, 100 * bands[i].first);
    return TrustNote{"trust.between_passes", false,
                     fmt::format("{} passes of the probes: between passes a figure moves by up to {:g} sigma of its "
                                 "family's movement, widest {}; compare holds a change against this movement.",
                                 movement->runs, movement->z, widest.empty() ? "none measured" : widest)};
}

}  // namespace

std::vector<TrustNote> assess_trust(const RunReport& r) {
    std::vector<TrustNote> notes;
    if (!r.complete)
        notes.push_back(
            {"trust.interrupted", true, "The run was interrupted: only the probes that finished are reported."});

    if (const auto others = median(r, "system.activity.others_cpu")) {
        if (*others >= busy_percent)
            notes.push_back({"trust.machine_busy", true,
                             fmt::format("The machine was busy: other processes used {:.0f}% of the CPUs clprobe "
                                         "may use during the run, so CPU-bound figures may be low by as much.",
                                         *others)});
        else
            notes.push_back({"trust.machine_quiet", false,
                             fmt::format("Other processes used {:.1f}% of the CPUs during the run.", *others)});
    } else {
        notes.push_back({"trust.activity_unknown", false,
                         "The system layer did not run: clprobe cannot say whether the machine was busy."});
    }
    if (const auto steal = median(r, "system.activity.steal"); steal && *steal >= steal_percent)
        notes.push_back(
            {"trust.steal", true, fmt::format("The hypervisor stole {:.1f}% of the CPU time during the run.", *steal)});
    const auto loaded = median(r, "system.cpu.frequency.loaded"), max = median(r, "system.cpu.frequency.max");
    if (loaded && max && *max > 0 && *loaded < clock_fraction * *max)
        notes.push_back({"trust.clock_limited", true,
                         fmt::format("CPU clocks ran at {:.0f} MHz under load, {:.0f}% of their {:.0f} MHz maximum "
                                     "(governor or thermal limits).",
                                     *loaded, 100 * *loaded / *max, *max)});
    if (r.drift) {
        if (auto note = drift_note(*r.drift)) notes.push_back(std::move(*note));
    }
    if (auto note = passes_note(r)) notes.push_back(std::move(*note));
    // A ceiling below a rate reached on the same hardware makes every fraction of it read high.
    for (const auto& v : ceiling_violations(r))
        notes.push_back({"trust.ceiling_below_rate." + v.ceiling_metric, true, describe(v)});

    int timed = 0, noisy = 0, few = 0, host_timed = 0;
    for (const auto& p : r.results)
        for (const auto& m : p.measurements) {
            if (m.timer == TimerKind::none) continue;
            ++timed;
            noisy += m.summary.cv > noisy_cv;
            few += m.summary.n < 3;
            host_timed += m.timer == TimerKind::host_steady_clock;
        }
    if (noisy)
        notes.push_back({"trust.noisy_samples", noisy * 5 > timed,
                         fmt::format("{} of {} timed measurements vary by more than {:.0f}% between "
                                     "samples (cv): read small differences as noise.",
                                     noisy, timed, 100 * noisy_cv)});
    if (few)
        notes.push_back({"trust.few_samples", false,
                         fmt::format("{} measurements rest on fewer than 3 samples (slow variants cut by the "
                                     "time budget, or cold builds).",
                                     few)});
    if (r.device && !r.device->profiling)
        notes.push_back({"trust.no_profiling", true,
                         "The device cannot profile commands: kernel and transfer times come from the host "
                         "clock and include launch and synchronisation overhead."});
    else if (host_timed)
        notes.push_back({"trust.host_timed", false,
                         fmt::format("{} of {} timed measurements use the host clock by design (latencies, "
                                     "builds, host work); the rest use device timestamps.",
                                     host_timed, timed)});
    if (timed)
        notes.push_back(
            {"trust.warm_up", false, "First launches (JIT compilation, page faults) are excluded by warm-up runs."});
    return notes;
}

}  // namespace clprobe
