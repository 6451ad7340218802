#include "rules/trace_rule_support.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "rules/trace_rules.hpp"

namespace clprobe::trace_rule {

RuleCheck over_facts(FactsRule rule) {
    return [rule](const RunReport& r, const RuleSpec& spec) {
        if (!is_trace_report(r)) return RuleOutcome::none();
        const auto facts = trace_facts_of(r);
        if (!facts) return spec.missing();
        return rule(r, *facts, spec);
    };
}

RuleCheck over_facts_and_ceilings(FactsRule rule) {
    return [rule](const RunReport& r, const RuleSpec& spec) {
        if (!is_trace_report(r)) return RuleOutcome::none();
        const auto facts = trace_facts_of(r);
        if (!facts) return spec.missing();
        const bool on_ceiling_device =
            !r.device || facts->devices.empty() ||
            std::any_of(facts->devices.begin(), facts->devices.end(),
                        [&](const TracedDeviceFacts& d) { return d.name == r.device->name; });
        if (!on_ceiling_device)
            return RuleOutcome::missing(
                fmt::format("the program ran on {}, the ceilings are of {}: pass -d to measure the device it uses",
                            facts->devices.front().name, r.device->name));
        return rule(r, *facts, spec);
    };
}

Severity severity_for(double share) {
    return share >= 0.2 ? Severity::high : share >= 0.05 ? Severity::medium : Severity::low;
}

std::string seconds_text(double s) {
    if (s >= 1) return fmt::format("{:.3g} s", s);
    if (s >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
    return fmt::format("{:.3g} us", s * 1e6);
}

Evidence fact(std::string metric, double value, std::string unit, std::string expectation, Labels labels) {
    return {std::move(metric), std::move(labels), value, std::move(unit), std::move(expectation)};
}

Finding wall_share_finding(const RuleSpec& rule, const TraceFacts& f, std::string title, double saved,
                           std::string basis) {
    const double share = f.run.wall_seconds > 0 ? std::clamp(saved / f.run.wall_seconds, 0.0, 1.0) : 0.0;
    Finding finding = rule.finding(severity_for(share), std::move(title));
    finding.estimated_gain = share;
    finding.measured_share = true;  // a share of the traced program's own measured wall time
    finding.gain_basis = fmt::format("{}: {} of the program's measured {} wall time", basis, seconds_text(saved),
                                     seconds_text(f.run.wall_seconds));
    // Every input is this run's own measurement of this program; what remains uncertain is whether
    // the fix recovers all of it.
    finding.confidence = 0.9;
    finding.evidence.push_back(fact("app.wall_time", f.run.wall_seconds, "s", "the program's lifetime"));
    return finding;
}

bool worth_reporting(const TraceFacts& f, double saved) {
    return f.run.wall_seconds > 0 && saved / f.run.wall_seconds >= min_gain;
}

const Measurement* headline(const RunReport& r, std::string_view metric, const Labels& labels) {
    for (const auto* m : find_measurements(r, metric, labels))
        if (m->labels == labels) return m;
    return nullptr;
}

}  // namespace clprobe::trace_rule
