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
        {"trace.kernel.below_compute_roof", {S::kernel}},
        {"trace.build.repeated", {S::build}},
        {"trace.build.from_source", {S::build}},
        // The create and release calls run while the device waits or idles; the first touch of a
        // fresh allocation is inside its first command (a fill, write or map).
        {"trace.memory.alloc_in_loop", {S::transfer, S::host_wait, S::device_idle}},
        // Waiting less removes host waits and the device idle that follows them.
        {"trace.sync.wait_after_kernel", {S::host_wait, S::device_idle}},
        {"trace.device.idle_gaps", {S::device_idle}},
        // Balancing moves device work off the busiest lane: kernels and transfers it ran alone.
        {"trace.job.device_imbalance", {S::kernel, S::transfer}},
        // The launch gaps between kernels are device idle (the host enqueues) or host waits.
        {"trace.kernel.fusion_candidate", {S::device_idle, S::host_wait}},
        {"trace.kernel.no_local_size", {S::kernel}},
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
    std::map<int, double> by_pid;
    for (const auto& p : f.processes)
        if (const auto it = p.pattern_seconds.find(rule.id); it != p.pattern_seconds.end()) by_pid[p.pid] = it->second;
    attribute_to_processes(finding, f, by_pid);
    return finding;
}

std::string process_text(const TraceFacts& f, int pid) {
    for (const auto& p : f.processes)
        if (p.pid == pid && !p.command_line.empty())
            return fmt::format("pid {} ({})", pid,
                               p.command_line.size() > 60 ? p.command_line.substr(0, 57) + "..." : p.command_line);
    return fmt::format("pid {}", pid);
}

void attribute_to_processes(Finding& finding, const TraceFacts& f, const std::map<int, double>& amount_by_pid) {
    if (f.processes.size() < 2) return;
    double total = 0;
    std::vector<std::pair<double, int>> held;  // amount, pid: the largest first
    for (const auto& [pid, amount] : amount_by_pid)
        if (pid != 0 && amount > 0) total += amount, held.emplace_back(amount, pid);
    if (total <= 0) return;
    std::sort(held.begin(), held.end(), std::greater<>());
    const auto evidence = [&](double amount, int pid, std::string what) {
        finding.evidence.push_back(fact("app.process.pattern_share", amount / total, "fraction",
                                        fmt::format("{}: {}", process_text(f, pid), what),
                                        {{"pid", std::to_string(pid)}}));
    };
    if (held.front().first >= one_process_share * total) {
        finding.title += fmt::format(", in {}", process_text(f, held.front().second));
        evidence(held.front().first, held.front().second,
                 held.size() == 1 ? "the only process of the job with this pattern" : "holds nearly all of it");
        return;
    }
    for (std::size_t i = 0; i < held.size() && i < 3; ++i)
        evidence(held[i].first, held[i].second, "its share of this pattern");
}

RuleSpec below_roof_spec(std::string id) {
    return {std::move(id),
            layer,
            {program_facts(), RuleInput::any_metric({"kernel.roof.bandwidth", "kernel.peak.bandwidth"},
                                                    "kernel.memory_levels' roofs or the memory peak")},
            {{"kernel share of the wall time", kernel_share_of_interest, true},
             {"fraction of the roof", below_roof_fraction, true},
             min_gain_threshold()}};
}

KernelLimits kernel_limits_of(const RunReport& r) {
    // The roofs counted work is judged against: their fastest samples (core/memory_roofs.hpp).
    KernelLimits limits{bandwidth_roofs_of(r.results, RoofSample::fastest), compute_roofs_of(r.results), 0.0};
    if (const Measurement* floor = headline(r, launch_floor_metric))
        limits.launch_floor_seconds = std::max(0.0, floor->summary.median * 1e-6);
    return limits;
}

std::string uncounted_reason(const TraceFacts& f, const std::string& kernel) {
    const KernelWorkFacts* w = find_work(f.work, kernel);
    return w && !w->counted ? w->reason : std::string();
}

namespace {

// A counted kernel on the side its binding roof is on: the fraction of that roof and its time at it.
std::optional<KernelBelowRoof> counted_below_roof(const KernelLimits& limits, const KernelFacts& k,
                                                  const KernelWorkFacts& w, RoofSide side) {
    auto placement = place_kernel(w, limits.compute, limits.roofs, k.bytes / static_cast<double>(k.launches));
    if (!placement) return std::nullopt;
    const RoofPart& bound = placement->bound();
    if (is_compute(bound.kind) != (side == RoofSide::compute)) return std::nullopt;
    KernelBelowRoof b;
    b.kernel = &k;
    b.work = &w;
    b.fraction = bound.fraction;
    b.roof = PlacedRoof{std::string(to_string(bound.kind)), bound.roof * 1e-9, bound.metric, RoofBasis::memory};
    // The count stands for the launches of its size alone (like_share of the kernel's time).
    const double share = std::clamp(w.like_share, 0.0, 1.0);
    b.represented_seconds = k.seconds * share;
    const double at_roof = b.represented_seconds * std::min(1.0, bound.fraction);
    const double at_floor = static_cast<double>(k.launches) * share * limits.launch_floor_seconds;
    b.saved = b.represented_seconds - std::max(at_roof, at_floor);
    b.floor_bound = at_floor > at_roof;
    b.placement = std::move(placement);
    return b;
}

// An uncounted kernel by its arguments' sizes: the summed buffers of one launch as its bytes.
std::optional<KernelBelowRoof> estimated_below_roof(const KernelLimits& limits, const KernelFacts& k) {
    if (k.bytes <= 0) return std::nullopt;
    // One launch's buffers decide the memory level, and so the roof it is held against.
    const auto roof =
        limits.roofs.for_working_set(static_cast<std::uint64_t>(k.bytes / static_cast<double>(k.launches)));
    if (!roof || roof->gb_per_s <= 0) return std::nullopt;
    KernelBelowRoof b;
    b.kernel = &k;
    b.roof = *roof;
    b.represented_seconds = k.seconds;
    b.fraction = k.bytes / k.seconds * 1e-9 / roof->gb_per_s;
    const double at_roof = k.bytes / (roof->gb_per_s * 1e9);
    const double at_floor = static_cast<double>(k.launches) * limits.launch_floor_seconds;
    b.saved = k.seconds - std::max(at_roof, at_floor);
    b.floor_bound = at_floor > at_roof;
    return b;
}

}  // namespace

std::optional<KernelBelowRoof> worst_below_roof(const KernelLimits& limits, const TraceFacts& f,
                                                const std::function<bool(const KernelFacts&)>& eligible,
                                                RoofSide side) {
    const double wall = f.run.wall_seconds;
    const double threshold = side == RoofSide::memory ? below_roof_fraction : below_compute_fraction;
    // A counted kernel comes first: an estimate is shown, never ranked, and must not hide one.
    std::optional<KernelBelowRoof> counted, estimated;
    for (const auto& k : f.kernels) {
        if (wall <= 0 || k.seconds < kernel_share_of_interest * wall || k.launches == 0 || !eligible(k)) continue;
        // (A counted kernel must also be that share in the launches its count stands for: below.)
        const KernelWorkFacts* w = find_work(f.work, k.name);
        const bool is_counted = w && w->counted;
        std::optional<KernelBelowRoof> b;
        if (is_counted)
            b = counted_below_roof(limits, k, *w, side);
        else if (side == RoofSide::memory)
            b = estimated_below_roof(limits, k);
        auto& worst = is_counted ? counted : estimated;
        if (b && b->represented_seconds < kernel_share_of_interest * wall) continue;
        if (b && b->fraction < threshold && b->saved > (worst ? worst->saved : 0.0)) worst = std::move(b);
    }
    return counted ? counted : estimated;
}

void add_launch_floor_evidence(Finding& finding, const KernelLimits& limits, const KernelBelowRoof& below) {
    if (limits.launch_floor_seconds <= 0) return;
    finding.evidence.push_back(fact(launch_floor_metric, limits.launch_floor_seconds * 1e6, "us",
                                    below.floor_bound
                                        ? "an empty kernel's device time here: its launches cannot get shorter, "
                                          "which bounds this saving more than the roof does"
                                        : "an empty kernel's device time here: the floor of every launch",
                                    {}));
}

bool mostly_auto_local(const KernelFacts& k) {
    return k.launches > 0 && 2 * k.auto_local_launches >= k.launches;
}

std::map<int, double> processes_among(const std::vector<int>& pids) {
    std::map<int, double> out;
    for (int pid : pids)
        out[pid] = 1;
    return out;
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
