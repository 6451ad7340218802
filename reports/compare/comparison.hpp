#pragma once
// RunReport x RunReport -> Comparison: which measurements moved beyond their noise, what differs
// in the environment, and which findings appear in one report only. Pure; no OpenCL.
#include <optional>
#include <string>
#include <vector>

#include "core/report.hpp"

namespace clprobe {

struct BetweenRunNoise;  // compare/between_runs.hpp

enum class Verdict {
    faster,        // B is better: the whole interval of the ratio lies beyond the noise band
    slower,        // B is worse, likewise
    within_noise,  // the interval of the ratio reaches inside the threshold band
    changed,       // a fact (one-sample, not timed) differs
    same,          // a fact is equal
    only_in_a,
    only_in_b,
    // Not judged: other processes or the hypervisor took a share of the CPUs while its probe ran in
    // A or B (ProbeResult::host_load), so the figure measured that load as much as the device.
    disturbed,
};
std::string_view to_string(Verdict v);

// How a pair of timed measurements was compared (docs/report-schema.md, "Machine drift").
enum class Method {
    median,      // the medians, as measured (no drift reference around the probe, or across drivers)
    best_of,     // a ceiling: each run's fastest sample, on the spread of its faster half
    normalised,  // each sample scaled by the FMA reference around its probe (reference_around)
};
std::string_view to_string(Method m);

struct MetricComparison {
    std::string metric;
    Labels labels;
    std::string unit;
    bool higher_is_better = true;
    bool headline = false;  // no labels: the figure a reader looks at first
    bool fact = false;      // TimerKind::none: a count or a setting, compared for equality
    std::optional<double> median_a, median_b;
    Method method = Method::median;
    // What the verdict reads: median_b / median_a (median), best_b / best_a (best_of), or the ratio
    // of the medians after each sample is scaled by its run's reference (normalised).
    double ratio = 1;
    double raw_ratio = 1;  // median_b / median_a as measured, beside the ratio the verdict reads
    // With repeats of A, where the movement between runs judges the figure: the median of A's
    // runs' medians, which the ratio is then taken against (BetweenRunNoise::baseline_median).
    std::optional<double> baseline_median;
    // 95% bootstrap interval of the ratio (resampling each report's samples; best_of: the ratio).
    double ratio_low = 1, ratio_high = 1;
    // Relative change the interval had to clear: max(threshold, cv_a + cv_b), or for best_of
    // max(threshold, gap_a + gap_b), a gap being the median of a run's faster half of samples over
    // the slowest of that half, minus 1.
    // With repeats of A (CompareOptions::between_runs) also the movement of the metric's family
    // between those runs (between_runs_band). The machine's drift never widens it.
    double band = 0;
    // expm1(z sigma) of the family's movement between repeated runs of A; 0 when not measured.
    double between_runs_band = 0;
    // normalised: the reference rate (GFLOP/s or GB/s) timed before the probe in each run.
    std::optional<double> reference_a, reference_b;
    std::string reference_series;  // normalised: "compute" (the FMA reference)
    Verdict verdict = Verdict::within_noise;
    // disturbed: which run's probe, and how busy the host was ("B: kernel.compute.fp32 ran beside
    // 1.4 of 2 CPUs of other work").
    std::string disturbance;
    // With repeats of B (compare --candidate-repeat, compare/confirmation.hpp): the ratio each
    // repeat read, in order, and the verdict B's first run gave when a repeat did not show it (the
    // figure is then within_noise).
    std::vector<double> repeat_ratios;
    std::optional<Verdict> unconfirmed;
};

struct EnvironmentDifference {
    std::string field;  // e.g. device.compute_units
    std::string a, b;
};

// The machine itself, from the reports' drift checks (core/drift_facts.hpp). A shift of the
// reference between the runs is a difference between the machines: reported first, gated on, and
// never a widening of the metrics' bands. Within one run the reference's spread is noise that the
// measurement handles (ceilings by their fastest samples, timed metrics normalised by the check
// before their probe); it is shown, and widens nothing.
struct ReferenceShift {
    std::string series;             // "compute" or "memory"
    std::string unit;               // GFLOP/s, GB/s
    double fast_a = 0, fast_b = 0;  // each run's fastest check
    double ratio = 1;               // fast_b / fast_a
    // max(threshold, gap_a + gap_b): the median of a run's faster half of checks over the slowest
    // of that half, minus 1.
    double band = 0;
    Verdict verdict = Verdict::within_noise;  // slower: the machine of B is slower
    // As MetricComparison's: each repeat of B's ratio, and B's first verdict when not confirmed.
    std::vector<double> repeat_ratios;
    std::optional<Verdict> unconfirmed;
};

struct MachineComparison {
    std::optional<double> spread_a, spread_b;  // each run's larger series spread (max / min - 1)
    std::vector<ReferenceShift> shifts;        // compute, then memory; empty unless both runs have checks
    // Across two drivers the reference kernels ran through different compilers, so their shift is
    // the drivers' difference, not the machine's: shown, never called or gated on.
    bool shift_is_driver = false;
    // The shifts that make B's machine slower beyond their band (none across drivers).
    std::vector<const ReferenceShift*> regressions() const;
};

// nullopt when neither report has a check (then the comparison is exactly what it was before
// drift was measured).
std::optional<MachineComparison> machine_comparison(const RunReport& a, const RunReport& b, double threshold,
                                                    bool same_driver = true);

// The OpenCL implementation each report ran on, when the two differ: platform name and version,
// and the device's driver version. Every difference of the comparison includes the driver's: the
// kernel compiler, the launch path and the transfer path are its code.
struct DriverChange {
    std::string a, b;  // "Portable Computing Language OpenCL 3.0 PoCL 3.1 (driver 3.1)"
};
std::optional<DriverChange> driver_change(const RunReport& a, const RunReport& b);
std::string describe(const DriverChange& change);
// compare's first line about the machine: "this device computes 2.0x slower than in A (reference
// kernel, fastest samples: 233 -> 117 GFLOP/s); reads memory as fast as in A (...)", or, across
// drivers, the shift as the drivers' difference.
std::string describe(const MachineComparison& machine);
// "computes 2.0x slower than in A" for one series.
std::string describe(const ReferenceShift& shift);

// Other work on the host at or above this share of the CPUs clprobe may use, while a probe ran,
// leaves its figures not judged. On a CPU device that is compute and memory bandwidth taken from
// the probe: 2 CPUs of a compiler on a 2-CPU VM halved a ceiling and doubled a kernel's time (0.53x,
// 1.9x between two runs of one build), and at a tenth of the CPUs the loss (if the load and the
// probe overlap entirely) is already twice the default threshold.
inline constexpr double host_busy_share = 0.1;

struct CompareOptions {
    double threshold = 0.05;  // relative change below which nothing is called faster or slower
    int bootstrap_resamples = 2000;
    // Scale timed metrics by the FMA reference around their probe (method normalised). Off by
    // default: on the 2-vCPU VM it made two quiet runs of one build read further apart, not closer
    // (mean |log ratio| 0.196 scaled against 0.109 as measured, over 40 metrics; 0.64 against 0.09
    // where the two references differed by 25% or more), because a 2 ms check between probes does
    // not see the state the probe itself ran in (docs/report-schema.md, "Machine drift").
    bool normalise = false;
    // Measured movement between repeated runs of A (compare --baseline-repeat): each timed
    // metric's band is at least its family's. Not owned; null when A was run once.
    const BetweenRunNoise* between_runs = nullptr;
};

// A workload whose variants moved together: at least family_regression_variants of its variants
// (label sets of one family: the metric id's first two parts, e.g. glm.gradient; a set holding
// another slower one, such as a stage of a slower step, is the same variant) called slower and
// none faster. Judged only against the movement measured between runs of A (--baseline-repeat):
// one figure past its band is what a same-machine run shows now and then (1-2% of figures), two
// variants of one workload slower together and none faster was never seen in 18 same-machine
// comparisons, and caught a GLM kernel planted 1.5-2x slower in all 6 rounds, where its headline,
// the best variant of each run, stayed inside its band in 2 of them. Workloads only (core/
// workloads): a slow phase of the VM moves every kernel.compute ceiling together, and a busy host
// every kind of kernel.launch latency; the machine comparison judges the machine.
inline constexpr std::size_t family_regression_variants = 2;
struct FamilyRegression {
    std::string family;
    std::size_t variants = 0;                     // slower label sets, one per variant
    std::vector<const MetricComparison*> slower;  // every slower figure of them
};

struct Comparison {
    std::string a_label, b_label;  // created_at and device of each report
    double threshold = 0.05;
    std::vector<MetricComparison> metrics;
    std::vector<EnvironmentDifference> environment;
    // The build and runtime libraries (RunReport::provenance) that differ, ids "provenance.<field>".
    // Unknown when either report predates provenance: then nothing can be said, and this is empty.
    std::vector<EnvironmentDifference> provenance;
    bool provenance_known = false;
    std::vector<std::string> explanations;  // differences tied to the environment where evidence allows
    std::vector<Finding> findings_only_in_a, findings_only_in_b;
    // Trust notes (RunReport::trust_notes) whose id appears in one report only: a machine that
    // was busy in one run, a device that could not profile.
    std::vector<TrustNote> trust_notes_only_in_a, trust_notes_only_in_b;
    std::optional<MachineComparison> machine;  // absent when neither report measured its drift
    std::optional<DriverChange> driver;        // present when the reports ran on different drivers
    // How many runs of A measured the movement between runs (1: not measured), and the families
    // whose band it widened, widest first ("glm.gradient", band).
    int baseline_runs = 1;
    // A single run of A held against the movement this machine was known to have from an earlier
    // `diagnose --passes N` (BetweenRunNoise::known_from); empty when none was known or A has runs
    // of its own. baseline_runs stays 1 then; the bands are that movement's.
    std::string movement_known_from;
    std::vector<std::pair<std::string, double>> between_runs_bands;
    double between_runs_z = 0;  // how many sigmas of that movement a band spans (BetweenRunNoise::z)
    // Runs of B's machine and build (1: B alone). With more, a difference is called only when every
    // run shows it (compare/confirmation.hpp).
    int candidate_runs = 1;

    int count(Verdict v) const;
    // Headline metrics that came out significantly worse in B: with machine->regressions(), what
    // --fail-on-regression counts.
    std::vector<const MetricComparison*> headline_regressions() const;
    // Workloads with several variants slower and none faster (FamilyRegression); empty without
    // --baseline-repeat.
    std::vector<FamilyRegression> family_regressions() const;
    // Whether --fail-on-regression fails: a slower machine, a slower headline metric or a slower
    // workload.
    bool regressed() const;
};

Comparison compare_reports(const RunReport& a, const RunReport& b, const CompareOptions& options = {});

// What a ceiling compares: the median of the faster half of its samples (the ceil(n / 2) fastest,
// at least two), and their spread below it, that median over the slowest of the half minus 1.
std::pair<double, double> best_and_gap(std::vector<double> values, bool higher_is_better);

// The provenance fields that differ, "provenance.<field>" in provenance_fields order (the version
// excepted: it is tool_version's difference). Shared by compare and any other view of several
// reports.
std::vector<EnvironmentDifference> provenance_differences(const Provenance& a, const Provenance& b);

}  // namespace clprobe
