#include "rules/replay_findings.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "rules/kernel_roof_rules.hpp"
#include "rules/replay_verdict.hpp"
#include "rules/trace_rule_support.hpp"

namespace clprobe::replay {

bool rankable(const VariantResult& v) {
    return v.kind != VariantKind::as_captured && v.failure.empty() && v.summary &&
           (v.check == OutputCheck::identical || v.check == OutputCheck::within_tolerance);
}

std::optional<double> time_ratio(const VariantResult& reference, const VariantResult& v) {
    if (!reference.summary || !v.summary || reference.summary->median <= 0) return std::nullopt;
    return v.summary->median / reference.summary->median;
}

std::optional<double> wall_share(const KernelTotals& totals, double ratio, std::optional<double> wall_ns) {
    if (!wall_ns || *wall_ns <= 0 || totals.device_ns <= 0) return std::nullopt;
    const double saved = totals.device_ns * (1 - ratio);
    return std::clamp(saved / *wall_ns, 0.0, 1.0);
}

namespace {

const char* finding_id(VariantKind k) {
    return k == VariantKind::local_size      ? local_size_finding
           : k == VariantKind::build_options ? build_options_finding
                                             : placement_finding;
}

std::string what_changed(const ReplayResult& r, const VariantResult& v) {
    const std::string& captured = r.variants[0].local_size;
    switch (v.kind) {
        case VariantKind::local_size:
            return fmt::format("local size {} instead of {}", v.label,
                               captured == "NULL" ? std::string("the driver's choice (NULL)") : captured);
        case VariantKind::build_options:
            return fmt::format("built with {}", v.label);
        case VariantKind::placement:
            return fmt::format("buffers {}", v.label);
        case VariantKind::as_captured:
            break;
    }
    return v.label;
}

std::string check_text(const VariantResult& v, double tolerance) {
    if (v.check == OutputCheck::identical) return "outputs identical";
    const auto& e = *v.errors;
    return fmt::format("outputs within tolerance {:g} (max abs error {:.3g}, max rel error {:.3g})", tolerance,
                       e.max_abs, e.max_rel);
}

std::string suggestion(const VariantResult& v) {
    switch (v.kind) {
        case VariantKind::local_size:
            return fmt::format("Pass local_work_size {{{}}} to clEnqueueNDRangeKernel for this kernel",
                               fmt::format("{}", v.label == "NULL (driver's choice)" ? "NULL" : v.label));
        case VariantKind::build_options:
            return fmt::format("Add {} to the options of clBuildProgram (outputs checked against the captured ones)",
                               v.label);
        case VariantKind::placement:
            return fmt::format("Create the kernel's buffers {}", v.label);
        case VariantKind::as_captured:
            break;
    }
    return {};
}

// The variant of `kind` a finding is about: the fastest the verdicts ranked, else the fastest
// that looked faster (shown with why it was not ranked); none when nothing of that kind did.
std::optional<std::pair<const VariantResult*, VariantVerdict>> chosen_variant(const ReplayResult& r, VariantKind kind) {
    std::optional<std::pair<const VariantResult*, VariantVerdict>> ranked, shown;
    for (const auto& v : r.variants) {
        if (v.kind != kind || !rankable(v)) continue;
        VariantVerdict verdict = judge_variant(r, v);
        const auto stated = verdict.stated();
        if (!stated) continue;
        auto& slot = verdict.ranked ? ranked : shown;
        if (!slot || stated->estimate > slot->second.stated()->estimate) slot.emplace(&v, std::move(verdict));
    }
    if (ranked) return ranked;
    if (shown && shown->second.stated()->estimate >= min_replay_speedup) return shown;
    return std::nullopt;
}

std::optional<Finding> kind_finding(const ReplayResult& r, VariantKind kind, const KernelTotals& totals,
                                    std::optional<double> wall_ns) {
    const auto chosen = chosen_variant(r, kind);
    if (!chosen) return std::nullopt;
    const VariantResult& best = *chosen->first;
    const VariantVerdict& verdict = chosen->second;
    const SpeedupInterval speedup = *verdict.stated();
    const VariantResult& ref = r.variants[0];
    const auto share = wall_share(totals, 1 / speedup.estimate, wall_ns);
    if (!share || *share < trace_rule::min_gain) return std::nullopt;
    Finding f;
    f.id = finding_id(kind);
    f.layer = trace_rule::layer;
    f.severity = trace_rule::severity_for(*share);
    f.title = fmt::format(
        "`{}`: {} \u2192 {}, {}, ~{:.0f}% of the wall time", r.kernel, what_changed(r, best), interval_text(speedup),
        best.check == OutputCheck::identical ? "outputs identical" : "outputs within tolerance", *share * 100);
    f.evidence.push_back(
        trace_rule::fact("replay.variant.time", best.summary->median * 1e-6, "ms",
                         fmt::format("median of {} launches, {}", best.summary->n, check_text(best, r.tolerance)),
                         {{"variant", best.label}, {"kernel", r.kernel}}));
    f.evidence.push_back(trace_rule::fact(
        "replay.as_captured.time", ref.summary->median * 1e-6, "ms",
        fmt::format("median of {} launches as captured ({})", ref.summary->n, r.reliability), {{"kernel", r.kernel}}));
    f.evidence.push_back(trace_rule::fact(
        "replay.speedup", speedup.estimate, "x",
        fmt::format("median of as captured / variant over {} pairs timed side by side, 95% interval {:.2f}-{:.2f}; {}",
                    speedup.samples, speedup.low, speedup.high, verdict.why),
        {{"variant", best.label}}));
    f.evidence.push_back(trace_rule::fact("trace.kernel.device_time", totals.device_ns * 1e-9, "s",
                                          fmt::format("{} traced launches", totals.launches), {{"kernel", r.kernel}}));
    f.suggestion = suggestion(best);
    f.estimated_gain = *share;
    f.gain_basis = fmt::format(
        "the kernel's traced device time x (1 - 1/{:.3g}) of the program's wall time, from a replay on this device",
        speedup.estimate);
    f.measured_share = true;
    // The interval says how sure: the share of resamples at or above the smallest gain ranked.
    f.confidence = speedup.share_at_least;
    if (!verdict.ranked) f.not_ranked = verdict.why;
    f.kind = verdict.ranked ? FindingKind::ranked : FindingKind::note;
    return f;
}

}  // namespace

std::vector<Finding> replay_findings(const std::vector<ReplayResult>& results, const ReplayContext& context) {
    std::vector<Finding> out;
    for (const auto& r : results) {
        if (r.status != ReplayStatus::replayed || !r.reliable || r.variants.empty()) continue;
        const auto totals = context.kernels.find(r.kernel);
        if (totals == context.kernels.end()) continue;
        if (r.build_ms * 1e6 > totals->second.device_ns) {
            Finding note;
            note.id = binary_cache_finding;
            note.layer = trace_rule::layer;
            note.severity = Severity::low;
            note.title = fmt::format(
                "`{}`: building its program took {:.3g} ms here, more than the kernel's {:.3g} ms of "
                "traced device time",
                r.kernel, r.build_ms, totals->second.device_ns * 1e-6);
            note.evidence.push_back(trace_rule::fact("replay.build.time", r.build_ms, "ms",
                                                     "host time of the replay's build with the captured options",
                                                     {{"kernel", r.kernel}}));
            note.evidence.push_back(trace_rule::fact("trace.kernel.device_time", totals->second.device_ns * 1e-9, "s",
                                                     fmt::format("{} traced launches", totals->second.launches),
                                                     {{"kernel", r.kernel}}));
            note.suggestion =
                "Cache the built program: clGetProgramInfo(CL_PROGRAM_BINARIES) once, then "
                "clCreateProgramWithBinary + clBuildProgram on later runs";
            note.kind = FindingKind::note;
            out.push_back(std::move(note));
        }
        const std::size_t first_of_kernel = out.size();
        for (VariantKind kind : {VariantKind::local_size, VariantKind::build_options, VariantKind::placement})
            if (auto f = kind_finding(r, kind, totals->second, context.wall_ns)) out.push_back(std::move(*f));
        // Each change was measured alone and each saves from the same device time, so their gains
        // do not add up: the kernel's largest stays ranked, the others are notes beside it.
        auto eligible = [](const Finding& f) { return f.measured_share && f.not_ranked.empty(); };
        auto best = out.end();
        for (auto it = out.begin() + static_cast<std::ptrdiff_t>(first_of_kernel); it != out.end(); ++it)
            if (eligible(*it) && (best == out.end() || *it->estimated_gain > *best->estimated_gain)) best = it;
        for (auto it = out.begin() + static_cast<std::ptrdiff_t>(first_of_kernel); it != out.end(); ++it)
            if (eligible(*it) && it != best) {
                it->measured_share = false;
                it->kind = FindingKind::note;
                it->gain_basis +=
                    fmt::format("; not ranked beside {} (the same kernel time, measured apart)", best->id);
            }
    }
    return out;
}

namespace {

// The trace heuristics a replay can measure, with the kind of variant that tests each.
struct Heuristic {
    const char* finding;
    VariantKind kind;
    const char* what;
};
constexpr Heuristic heuristics[] = {{"trace.kernel.no_local_size", VariantKind::local_size, "local sizes"}};

std::string kernel_of(const Finding& f) {
    for (const auto& e : f.evidence)
        if (const auto it = e.labels.find("kernel"); it != e.labels.end()) return it->second;
    return {};
}

const ReplayResult* replay_of(const std::vector<ReplayResult>& results, const std::string& kernel) {
    for (const auto& r : results)
        if (r.kernel == kernel && r.status == ReplayStatus::replayed && !r.variants.empty() && r.variants[0].summary)
            return &r;
    return nullptr;
}

// Confirmed when a variant of the kind is ranked by its verdict; disproved when every variant of
// the kind ran with its outputs held and the upper bound of each one's interval is below the
// smallest gain ranked; else the measurement cannot tell and the heuristic stands as it was.
void judge(Finding& f, const ReplayResult& r, const Heuristic& h, std::vector<std::string>& disproved) {
    const VariantResult* best = nullptr;
    std::optional<VariantVerdict> best_verdict;
    double highest = 0;
    std::string labels;
    for (const auto& v : r.variants) {
        if (v.kind != h.kind || !rankable(v)) continue;
        VariantVerdict verdict = judge_variant(r, v);
        const auto stated = verdict.stated();
        if (!stated) continue;
        highest = std::max(highest, stated->high);
        labels += (labels.empty() ? "" : ", ") + v.label;
        const bool better =
            !best_verdict || (verdict.ranked && !best_verdict->ranked) ||
            (verdict.ranked == best_verdict->ranked && stated->estimate > best_verdict->stated()->estimate);
        if (better) {
            best = &v;
            best_verdict = std::move(verdict);
        }
    }
    if (!best) return;  // nothing of that kind ran with its outputs held: not measured
    const SpeedupInterval speedup = *best_verdict->stated();
    f.evidence.push_back(trace_rule::fact(
        "replay.speedup", speedup.estimate, "x",
        fmt::format("the fastest of {} measured by replaying the captured launch "
                    "({}), 95% interval {:.2f}-{:.2f}; as captured {}; {}",
                    h.what, best->label, speedup.low, speedup.high, r.variants[0].local_size, best_verdict->why),
        {{"kernel", r.kernel}, {"variant", best->label}}));
    if (best_verdict->ranked) {
        f.factor = speedup.estimate;
        f.title += fmt::format(" (measured: {} {} gives {})", h.what, best->label, interval_text(speedup));
        return;
    }
    if (highest >= min_replay_speedup) {
        f.title += " (measured: inconclusive)";
        return;
    }
    f.title += " (measured: no gain)";
    f.not_ranked = fmt::format(
        "measured: no gain: a replay of the captured launch ran {} {}, none at {}x or more at the upper bound of "
        "its interval (best {})",
        h.what, labels, min_replay_speedup, interval_text(speedup));
    disproved.push_back(r.kernel);
}

}  // namespace

void judge_heuristics(std::vector<Finding>& findings, const std::vector<ReplayResult>& results) {
    std::vector<std::string> disproved;  // kernels whose local size the replay cleared
    for (auto& f : findings)
        for (const auto& h : heuristics)
            if (f.id == h.finding)
                if (const ReplayResult* r = replay_of(results, kernel_of(f))) judge(f, *r, h, disproved);
    // The roof finding that waited on the local size now stands: the measurement says the cause is elsewhere.
    for (auto& f : findings)
        if (f.not_ranked == trace_rule::pending_local_size &&
            std::find(disproved.begin(), disproved.end(), kernel_of(f)) != disproved.end()) {
            f.not_ranked.clear();
            f.title += " (its local size measured: no gain)";
            // classify_findings made its gain a factor while it waited: the gain again, to be ranked.
            if (!f.estimated_gain && f.factor && *f.factor > 1) {
                f.estimated_gain = 1 - 1 / *f.factor;
                f.factor.reset();
                if (const auto at = f.gain_basis.find("factor from: "); at != std::string::npos)
                    f.gain_basis = f.gain_basis.substr(at + 13);
            }
        }
}

}  // namespace clprobe::replay
