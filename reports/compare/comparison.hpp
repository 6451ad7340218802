#pragma once
// RunReport x RunReport -> Comparison: which measurements moved beyond their noise, what differs
// in the environment, and which findings appear in one report only. Pure; no OpenCL.
#include <optional>
#include <string>
#include <vector>

#include "core/report.hpp"

namespace clprobe {

enum class Verdict {
    faster,        // B is better: the whole interval of the ratio lies beyond the noise band
    slower,        // B is worse, likewise
    within_noise,  // the interval of the ratio reaches inside the threshold band
    changed,       // a fact (one-sample, not timed) differs
    same,          // a fact is equal
    only_in_a,
    only_in_b,
};
std::string_view to_string(Verdict v);

struct MetricComparison {
    std::string metric;
    Labels labels;
    std::string unit;
    bool higher_is_better = true;
    bool headline = false;  // no labels: the figure a reader looks at first
    bool fact = false;      // TimerKind::none: a count or a setting, compared for equality
    std::optional<double> median_a, median_b;
    double ratio = 1;  // median_b / median_a
    // 95% bootstrap interval of the ratio of medians (resampling each report's samples).
    double ratio_low = 1, ratio_high = 1;
    // Relative change the interval had to clear: max(threshold, cv_a + cv_b, the drift band).
    double band = 0;
    Verdict verdict = Verdict::within_noise;
};

struct EnvironmentDifference {
    std::string field;  // e.g. device.compute_units
    std::string a, b;
};

// How far the machine itself moved, from the reports' drift checks (core/drift_facts.hpp): a
// metric measured in a slow phase of one run and a fast phase of the other can differ by this much
// with nothing changed, so timed metrics' bands widen to it.
struct DriftBand {
    double band = 0;                           // the largest of the figures below that counts
    std::string source;                        // which: "spread_a", "spread_b" or "reference_shift"
    std::optional<double> spread_a, spread_b;  // each run's larger series spread (max / min - 1)
    std::optional<double> reference_shift;     // |median_b / median_a - 1|, the larger series
    // Across two drivers the reference kernels ran through different compilers, so the shift of
    // their medians is the drivers' difference, not the machine's: it is shown, never a band.
    bool shift_is_driver = false;
};

// The band from the two reports' drift blocks; nullopt when neither has two or more checks (then
// the comparison is exactly what it was before drift was measured). `same_driver` false leaves
// the reference shift out of the band (see DriftBand::shift_is_driver).
std::optional<DriftBand> drift_band(const RunReport& a, const RunReport& b, bool same_driver = true);

// The OpenCL implementation each report ran on, when the two differ: platform name and version,
// and the device's driver version. Every difference of the comparison includes the driver's: the
// kernel compiler, the launch path and the transfer path are its code.
struct DriverChange {
    std::string a, b;  // "Portable Computing Language OpenCL 3.0 PoCL 3.1 (driver 3.1)"
};
std::optional<DriverChange> driver_change(const RunReport& a, const RunReport& b);
std::string describe(const DriverChange& change);
// One line for compare's text and JSON: "the runs drifted by up to 25% (reference kernels: ...):
// changes inside it are not called".
std::string describe(const DriftBand& drift);

struct CompareOptions {
    double threshold = 0.05;  // relative change below which nothing is called faster or slower
    int bootstrap_resamples = 2000;
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
    std::optional<DriftBand> drift;      // absent when neither report measured its drift
    std::optional<DriverChange> driver;  // present when the reports ran on different drivers

    int count(Verdict v) const;
    // Headline metrics that came out significantly worse in B: what --fail-on-regression counts.
    std::vector<const MetricComparison*> headline_regressions() const;
};

Comparison compare_reports(const RunReport& a, const RunReport& b, const CompareOptions& options = {});

// The provenance fields that differ, "provenance.<field>" in provenance_fields order (the version
// excepted: it is tool_version's difference). Shared by compare and any other view of several
// reports.
std::vector<EnvironmentDifference> provenance_differences(const Provenance& a, const Provenance& b);

}  // namespace clprobe
