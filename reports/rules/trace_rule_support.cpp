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

std::vector<AppStage> removable_stages(std::string_view rule_id) {
    using S = AppStage;
    struct Entry {
        std::string_view id;
        std::vector<AppStage> stages;
    };
    static const Entry table[] = {
        // A copy's time is its device time, or the host's time inside its call when that is longer
        // (a blocking call: host_wait; a call the device does not see yet: device_idle).
        {"trace.transfer.pageable", {S::transfer, S::host_wait, S::device_idle}},
        {"trace.transfer.small", {S::transfer, S::host_wait, S::device_idle}},
        // Overlap hides the shorter of kernels and transfers behind the other.
        {"trace.overlap.serialised", {S::kernel, S::transfer}},
        {"trace.kernel.below_roof", {S::kernel}},
        {"trace.build.repeated", {S::build}},
        {"trace.build.from_source", {S::build}},
        // The create and release calls run while the device waits or idles; the first touch of a
        // fresh allocation is inside its first command (a fill, write or map).
        {"trace.memory.alloc_in_loop", {S::transfer, S::host_wait, S::device_idle}},
        // Waiting less removes host waits and the device idle that follows them.
        {"trace.sync.wait_after_kernel", {S::host_wait, S::device_idle}},
        {"trace.device.idle_gaps", {S::device_idle}},
    };
    for (const auto& e : table)
        if (e.id == rule_id) return e.stages;
    return {};
}

double removable_seconds(const TraceFacts& f, std::string_view rule_id) {
    double total = 0;
    for (AppStage s : removable_stages(rule_id))
        total += f.stage_seconds(s);
    return total;
}

Finding wall_share_finding(const RuleSpec& rule, const TraceFacts& f, std::string title, double saved,
                           std::string basis) {
    const double bound = removable_seconds(f, rule.id);
    if (saved > bound) {
        std::string stages;
        for (AppStage s : removable_stages(rule.id))
            stages += (stages.empty() ? "" : " + ") + std::string(to_string(s));
        basis += fmt::format(", bounded by the {} stages its fix shortens ({} of {})", stages.empty() ? "no" : stages,
                             seconds_text(bound), seconds_text(saved));
        saved = bound;
    }
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
