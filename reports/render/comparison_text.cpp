#include "render/comparison_text.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "compare/confirmation.hpp"

namespace clprobe {

namespace {

std::string value(const std::optional<double>& v) {
    return v ? fmt::format("{:.4g}", *v) : "-";
}

std::string paint(bool color, const char* code, std::string_view s) {
    return color ? fmt::format("\x1b[{}m{}\x1b[0m", code, s) : std::string(s);
}

// Part of the environment: a rebuild or a library upgrade can explain a difference as well as the
// hardware can.
void render_provenance(std::string& out, const Comparison& c, bool color) {
    out += "\n" + paint(color, "1", "Provenance (build and libraries)") + "\n";
    if (!c.provenance_known)
        out += "  unknown: a report predates provenance records\n";
    else if (c.provenance.empty())
        out += "  no differences\n";
    for (const auto& e : c.provenance)
        out += fmt::format("  {:<40} {} -> {}\n", e.field, e.a, e.b);
}

// Conditions of one run only (a busy machine, a device that could not profile) explain
// differences as much as the environment does; warnings are marked "!".
void render_trust_notes(std::string& out, const Comparison& c, bool color) {
    if (c.trust_notes_only_in_a.empty() && c.trust_notes_only_in_b.empty()) return;
    out += "\n" + paint(color, "1", "Trust notes in one report only") + "\n";
    for (const auto& [side, notes] :
         {std::pair{"A", &c.trust_notes_only_in_a}, std::pair{"B", &c.trust_notes_only_in_b}})
        for (const auto& n : *notes)
            out += fmt::format("  {} only: {}{} ({})\n", side, n.warning ? paint(color, "33", "! ") : "", n.text, n.id);
}

std::string row(const MetricComparison& m, bool color) {
    std::string verdict(to_string(m.verdict));
    if (m.verdict == Verdict::slower) verdict = paint(color, "31", verdict);
    if (m.verdict == Verdict::faster) verdict = paint(color, "32", verdict);
    std::string ratio = "-";
    if (m.median_a && m.median_b)
        ratio = m.fact ? fmt::format("x{:.3g}", m.ratio)
                       : fmt::format("x{:.3f} [{:.3f}, {:.3f}]", m.ratio, m.ratio_low, m.ratio_high);
    // How the ratio was read, and the medians' own ratio beside it when that differs.
    std::string how;
    if (m.method == Method::best_of) how = fmt::format("  (faster half of the samples; medians x{:.3f})", m.raw_ratio);
    if (m.method == Method::normalised)
        how = fmt::format("  (scaled by the {} reference; raw x{:.3f})", m.reference_series, m.raw_ratio);
    // With repeats of A the ratio is B against the median of A's runs, not the A column alone.
    if (m.baseline_median)
        how += fmt::format("  (against the median of A's runs, {}; B / A alone x{:.3f})", value(m.baseline_median),
                           m.median_a && *m.median_a > 0 && m.median_b ? *m.median_b / *m.median_a : m.raw_ratio);
    return fmt::format("  {:<60} {:>10} {:>10} {:<8} {:<26} {}{}\n", labelled_metric(m.metric, m.labels),
                       value(m.median_a), value(m.median_b), m.unit, ratio, verdict, how);
}

// The metrics not judged because other work shared the host with their probe: one line per probe
// and run, so a reader sees which probes to rerun on a quieter machine.
std::string disturbed_summary(const Comparison& c) {
    std::vector<std::string> why;
    int n = 0;
    for (const auto& m : c.metrics) {
        if (m.verdict != Verdict::disturbed) continue;
        ++n;
        if (std::find(why.begin(), why.end(), m.disturbance) == why.end()) why.push_back(m.disturbance);
    }
    if (n == 0) return {};
    std::string out = fmt::format(
        "{} metrics not judged: other work took {:.0f}% or more of the CPUs while their probe ran "
        "(rerun on a quieter machine to judge them)\n",
        n, 100 * host_busy_share);
    for (const auto& w : why)
        out += fmt::format("  {}\n", w);
    return out;
}

}  // namespace

// How far A's own figures moved between its runs, when passes or repeats measured it, or as an
// earlier multi-pass run of the device measured it; otherwise that one run of A cannot show it
// (not said across drivers, where the driver difference is the comparison).
std::string between_runs_summary(const Comparison& c) {
    std::string widest;
    for (size_t i = 0; i < c.between_runs_bands.size() && i < 4; ++i)
        widest += fmt::format("{}{} {:.0f}%", i ? ", " : "", c.between_runs_bands[i].first,
                              100 * c.between_runs_bands[i].second);
    if (widest.empty()) widest = "none";
    if (c.baseline_runs > 1)
        return fmt::format(
            "Between runs: {} runs of A (its passes and repeats){} measured how far each family of figures moves from "
            "run to run; a band is at least {:g} times that movement (widest: {})\n",
            c.baseline_runs, c.movement_known_from.empty() ? "" : ", and " + c.movement_known_from, c.between_runs_z,
            widest);
    if (!c.movement_known_from.empty())
        return fmt::format(
            "Between runs: A is a single pass; each band is at least {:g} times the movement this machine's figures "
            "were measured to have between runs by {} (widest: {}). Run diagnose --passes 2 on each side to measure "
            "it in the runs compared\n",
            c.between_runs_z, c.movement_known_from, widest);
    if (c.driver) return {};
    return "Between runs: not measured (A is a single pass, and no earlier diagnose --passes N of this device is "
           "known). These verdicts cannot separate a change from the machine's own movement between runs; run "
           "diagnose --passes 2 on each side (or pass --baseline-repeat)\n";
}

namespace {

// With repeats of B: how many runs of B a difference had to show in, and what the first run alone
// would have called.
std::string candidate_runs_summary(const Comparison& c) {
    if (c.candidate_runs < 2) return {};
    const auto withdrawn = unconfirmed_metrics(c);
    std::string names;
    for (std::size_t i = 0; i < withdrawn.size() && i < 4; ++i)
        names += fmt::format("{}{} x{:.3f}", i ? ", " : "", withdrawn[i]->metric, withdrawn[i]->ratio);
    std::size_t shifts = 0;
    if (c.machine)
        for (const auto& s : c.machine->shifts)
            shifts += s.unconfirmed ? 1 : 0;
    return fmt::format(
        "Repeats of B: {} runs of B; a difference is called only when every run shows it. Not confirmed, so not "
        "called: {} figure(s){}{}\n",
        c.candidate_runs, withdrawn.size(), names.empty() ? "" : " (" + names + (withdrawn.size() > 4 ? ", ...)" : ")"),
        shifts ? fmt::format(" and {} shift(s) of the machine's reference", shifts) : "");
}

}  // namespace

std::string render_comparison_text(const Comparison& c, const RenderOptions& options) {
    const bool verbose = options.verbose, color = options.color;
    std::string out;
    out += fmt::format("A: {}\nB: {}\n", c.a_label, c.b_label);
    // First, because it changes how every line below reads.
    if (c.driver) out += paint(color, "1", describe(*c.driver)) + "\n";
    // Then the machine: a slower device is the first difference, and every metric reads after it.
    if (c.machine) {
        const bool slower = !c.machine->regressions().empty();
        out += (slower ? paint(color, "1;31", describe(*c.machine)) : describe(*c.machine)) + "\n";
    }
    out += fmt::format(
        "{} metrics paired: {} slower, {} faster, {} within noise (a verdict needs the 95% bootstrap interval of the "
        "ratio beyond max({:.0f}%, cv A + cv B); ceilings compare the faster half of their samples, timed metrics "
        "their medians, scaled by the drift reference around their probe with --normalise); facts: {} changed, {} "
        "same; {} only in A, {} only in "
        "B\n",
        c.metrics.size(), c.count(Verdict::slower), c.count(Verdict::faster), c.count(Verdict::within_noise),
        100 * c.threshold, c.count(Verdict::changed), c.count(Verdict::same), c.count(Verdict::only_in_a),
        c.count(Verdict::only_in_b));
    out += disturbed_summary(c) + "\n";
    out += between_runs_summary(c);
    out += candidate_runs_summary(c);
    for (const auto& f : c.family_regressions())
        out += paint(color, "1;31",
                     fmt::format("Workload slower: {} variants of {} slower beyond the movement between runs of A, "
                                 "none faster ({} figures)",
                                 f.variants, f.family, f.slower.size())) +
               "\n";

    const std::string header = fmt::format("  {:<60} {:>10} {:>10} {:<8} {:<26} {}\n", "metric", "A", "B", "unit",
                                           "B/A [95% interval]", "verdict");
    out += paint(color, "1", "Differences") + "\n" + header;
    int shown = 0;
    for (const auto& m : c.metrics)
        if (m.verdict == Verdict::slower || m.verdict == Verdict::faster || m.verdict == Verdict::changed) {
            out += row(m, color);
            ++shown;
        }
    if (!shown) out += "  none beyond the noise\n";

    out += "\n" + paint(color, "1", "Environment") + "\n";
    if (c.environment.empty()) out += "  no differences\n";
    for (const auto& e : c.environment)
        out += fmt::format("  {:<40} {} -> {}\n", e.field, e.a, e.b);
    for (const auto& e : c.explanations)
        out += fmt::format("  => {}\n", e);
    render_provenance(out, c, color);

    if (!c.findings_only_in_a.empty() || !c.findings_only_in_b.empty()) {
        out += "\n" + paint(color, "1", "Findings in one report only") + "\n";
        for (const auto& f : c.findings_only_in_a)
            out += fmt::format("  A only: {} ({})\n", f.title, f.id);
        for (const auto& f : c.findings_only_in_b)
            out += fmt::format("  B only: {} ({})\n", f.title, f.id);
    }
    render_trust_notes(out, c, color);
    if (verbose) {
        out += "\n" + paint(color, "1", "All metrics") + "\n" + header;
        for (const auto& m : c.metrics)
            out += row(m, color);
    }
    return out;
}

}  // namespace clprobe
