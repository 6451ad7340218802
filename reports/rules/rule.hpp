#pragma once
// A rule reads a RunReport and either produces a finding, stays silent (nothing wrong), or says
// why it could not be evaluated (an input is missing). Rules are pure: no OpenCL, no I/O.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/report.hpp"

namespace clprobe {

struct RuleOutcome {
    std::optional<Finding> finding;
    std::optional<std::string> not_evaluated;  // why the rule could not run
    // Further findings of the same rule, one per subject (each crashed probe): rare, so the common
    // case keeps its one optional finding.
    std::vector<Finding> also;

    static RuleOutcome none() { return {}; }
    static RuleOutcome found(Finding f) { return {std::move(f), std::nullopt, {}}; }
    static RuleOutcome missing(std::string why) { return {std::nullopt, std::move(why), {}}; }
};

struct Gap;

// One input a rule reads, declared with the rule so that the "needs ..." message of a rule that
// cannot run, the check before it runs and the docs test all come from the same line.
struct RuleInput {
    enum class Kind {
        metric,  // a measurement's metric id (any probe may hold it)
        facts,   // a probe's typed facts (core/*_facts.hpp), named by the probe id
        device,  // the report's device context
    };
    Kind kind = Kind::metric;
    // Metric or probe ids; with several, any one of them is enough (alternatives).
    std::vector<std::string> names;
    // In words, which variants (labels) the rule compares, e.g. "kind=round_trip and back_to_back".
    std::string variants;

    static RuleInput metric(std::string id, std::string variants = {});
    static RuleInput any_metric(std::vector<std::string> ids, std::string variants = {});
    static RuleInput facts(std::string probe_id);
    static RuleInput device();
    // "kernel.launch.latency (kind=round_trip and back_to_back)", "the device context".
    std::string text() const;
};

// A value a rule compares against. The rule's code reads the same constant it is declared from,
// and the docs test checks that the rule's section of docs/findings.md states it.
struct RuleThreshold {
    std::string name;  // what it bounds, e.g. "ratio"
    double value = 0;
    bool percent = false;      // a fraction the docs state in percent (0.05 -> "5%")
    std::string text() const;  // "1.25", "500", "5%"
};

// What a rule declares once: the id and layer of its finding, what it reads and the thresholds it
// applies. Findings, the "needs ..." message and the docs check are all derived from it.
struct RuleSpec {
    std::string id;  // the finding id it produces
    std::string layer;
    std::vector<RuleInput> inputs;
    std::vector<RuleThreshold> thresholds;

    // A finding with this rule's id and layer; rules fill in evidence, suggestion and gain.
    Finding finding(Severity severity, std::string title) const;
    // A comparison finding: the two measurements as evidence (in this order), gain and confidence
    // from their gap.
    Finding comparison(Severity severity, std::string title, const Measurement& first, std::string first_expectation,
                       const Measurement& second, std::string second_expectation, const Gap& gap,
                       std::string gain_basis) const;
    // "needs A and B": every declared input, for a rule whose inputs are not all there.
    std::string needs() const;
    RuleOutcome missing() const { return RuleOutcome::missing(needs()); }
    // The first declared input of kind metric or device that the report lacks entirely, if any:
    // the rule is then not evaluated at all.
    const RuleInput* absent_input(const RunReport& report) const;
};

using RuleCheck = std::function<RuleOutcome(const RunReport&, const RuleSpec&)>;

struct Rule : RuleSpec {
    RuleCheck check;

    Rule(RuleSpec spec, RuleCheck rule_check) : RuleSpec(std::move(spec)), check(std::move(rule_check)) {}
    // The declared metric and device inputs first (not evaluated, with needs(), when one is absent),
    // then the rule's own check.
    RuleOutcome evaluate(const RunReport& report) const;
};

// The relative spread of one measurement's samples that a comparison of medians weighs: the robust
// spread (core/stats' robust_cv) of three or more samples, else the summary's cv. A VM that flips
// between two throughput states puts a sample now and then in the other state; that sample can
// double the standard deviation while it barely moves the median, and a 2x gap between two
// medians must not drown in it.
double sample_noise(const Measurement& m);
// The two measurements' noise together (the sum of their sample_noise, at least 1%), and how sure
// the gap between their medians is: core/stats' comparison_confidence with that noise, or its
// separation_confidence when the two sample sets do not overlap, whichever is larger.
double relative_noise(const Measurement& a, const Measurement& b);
double comparison_confidence(const Measurement& better, const Measurement& worse);

// The id of the probe holding a measurement of this metric and labels, "" when none does. By
// metric and labels rather than address, so that a rule's rescaled copy is found too.
std::string probe_holding(const RunReport& r, const std::string& metric, const Labels& labels);

// How far the machine's drift alone could move the ratio of two measurements: 0 when one probe
// took both (its variants are sampled interleaved, so both saw the same machine states) or the
// run has no drift checks; else the largest spread of the run's drift checks (core/drift_facts),
// since two probes run seconds apart, possibly in different states.
double drift_noise(const RunReport& r, const Measurement& a, const Measurement& b);

// A comparison is a finding only when it is at least this confident: below, the measured gap
// could be noise and the report must not claim it.
inline constexpr double min_confidence = 0.5;

Evidence evidence_of(const Measurement& m, std::string expectation = {});

// A measured gap between the better and the worse of two measurements of one quantity: ratio is
// better over worse in the direction that counts (a rate's quotient, a time's inverse quotient).
struct Gap {
    double ratio = 1;
    double confidence = 0;
    // The ratio clears min_ratio only by less than the two measurements' noise (their samples'
    // spread, plus the machine's drift when two probes took them): another run could fall on the
    // other side, so the finding is marked uncertain and not ranked.
    bool uncertain = false;
    double gain() const { return 1.0 - 1.0 / ratio; }  // share of the worse one's time saved
};

// The gap when it is at least min_ratio and clears the samples' noise (confidence >=
// min_confidence); uncertain when ratio / (1 + relative_noise + drift_noise) falls below min_ratio.
std::optional<Gap> significant_gap(const RunReport& r, const Measurement& better, const Measurement& worse,
                                   double min_ratio);

// A label's value, or "?" when a (hand-edited) report lacks it: rules never throw on input.
std::string label_of(const Measurement& m, const std::string& key);

}  // namespace clprobe
