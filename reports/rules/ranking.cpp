#include "rules/ranking.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <iterator>

namespace clprobe {

namespace {

// Inside a tie band: severity, then the measured factor (a 66x gap stays ahead of a 4x one from
// run to run, where gains a few points apart swap), then the gain itself (findings without a
// factor, such as a traced program's shares of its wall time), then id.
bool severity_factor_id(const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    const double fa = a.factor.value_or(0), fb = b.factor.value_or(0);
    if (fa != fb) return fa > fb;
    const double ga = a.estimated_gain.value_or(0), gb = b.estimated_gain.value_or(0);
    if (ga != gb) return ga > gb;
    return a.id < b.id;
}

bool note_order(const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    const double fa = a.factor.value_or(0), fb = b.factor.value_or(0);
    if (fa != fb) return fa > fb;
    return a.id < b.id;
}

// Sorts [first, last) of ranked findings by gain, then reorders each tie group by severity, factor
// and id. A group grows while the next gain is within gain_tie of the one before it and within
// gain_tie_span of the group's largest: three findings at 76%, 71% and 65% are one group in every
// run, where a group anchored at its largest alone split them as 76/71 | 65 in one run and kept
// them together (78/71/69) in the next.
void order_ranked(std::vector<Finding>::iterator first, std::vector<Finding>::iterator last) {
    std::sort(first, last, [](const Finding& a, const Finding& b) {
        if (*a.estimated_gain != *b.estimated_gain) return *a.estimated_gain > *b.estimated_gain;
        return severity_factor_id(a, b);
    });
    while (first != last) {
        const double top = *first->estimated_gain;
        auto end = std::next(first);
        while (end != last && *end->estimated_gain >= *std::prev(end)->estimated_gain - gain_tie &&
               *end->estimated_gain >= top - gain_tie_span)
            ++end;
        std::sort(first, end, severity_factor_id);
        first = end;
    }
}

std::string why_not_ranked(const Finding& f) {
    if (!f.not_ranked.empty()) return "not ranked: " + f.not_ranked;
    if (f.uncertain)
        return "not ranked: the trigger lies inside the noise of its inputs (their samples' spread, and the machine's "
               "drift when two probes measured them)";
    if (f.target && f.target->pipeline_share)
        return "not ranked: its share is of the transfer layer's stand-in step, not of a workload measured here";
    return "not ranked: no step measured in this run shows this pattern";
}

}  // namespace

void classify_findings(std::vector<Finding>& findings) {
    for (auto& f : findings) {
        const bool ranked = f.measured_share && f.estimated_gain && !f.uncertain && f.not_ranked.empty();
        f.kind = ranked ? FindingKind::ranked : FindingKind::note;
        if (ranked || !f.estimated_gain) continue;
        if (!f.factor && *f.estimated_gain < 1) f.factor = 1.0 / (1.0 - *f.estimated_gain);
        f.gain_basis = why_not_ranked(f) + (f.gain_basis.empty() ? "" : "; factor from: " + f.gain_basis);
        f.estimated_gain.reset();
    }
}

void rank_findings(std::vector<Finding>& findings) {
    // A ranked finding without a gain (a hand-edited report) cannot be ordered by it: a note.
    for (auto& f : findings)
        if (f.kind == FindingKind::ranked && !f.estimated_gain) f.kind = FindingKind::note;
    const auto notes = std::stable_partition(findings.begin(), findings.end(),
                                             [](const Finding& f) { return f.kind == FindingKind::ranked; });
    order_ranked(findings.begin(), notes);
    std::sort(notes, findings.end(), note_order);
    for (std::size_t i = 0; i < findings.size(); ++i)
        findings[i].rank = findings[i].kind == FindingKind::ranked ? static_cast<int>(i + 1) : 0;
}

}  // namespace clprobe
