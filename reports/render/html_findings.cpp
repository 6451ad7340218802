#include "render/html_findings.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "render/finding_size.hpp"
#include "render/svg_chart.hpp"
#include "render/value_format.hpp"
#include "rules/ranking.hpp"

namespace clprobe::html {

namespace {

using svg::escape;

std::string evidence_list(const Finding& f) {
    if (f.evidence.empty()) return {};
    std::string out = "<details><summary>Evidence</summary><ul>";
    for (const auto& e : f.evidence)
        out += fmt::format("<li><code>{}</code> = {}{}</li>", escape(labelled_metric(e.metric, e.labels)),
                           escape(units::format(e.value, e.unit)),
                           e.expectation.empty() ? "" : " (" + escape(e.expectation) + ")");
    return out + "</ul></details>";
}

// One card. size_text is the gain ("12%") or factor ("27x"); fraction fills the bar (0..1).
std::string card(const Finding& f, const std::string& rank, const std::string& size_text, double fraction,
                 const std::string& tie_note) {
    const std::string severity(to_string(f.severity));
    // The id is an anchor: the timeline's legend links the findings that speak of its gaps.
    std::string out =
        fmt::format("<li class=\"finding sev-{}\" id=\"finding-{}\"><div class=\"fhead\">", severity, escape(f.id));
    out += fmt::format("<span class=\"rank\">{}</span>", rank);
    out += fmt::format(
        "<span class=\"gainbar\" title=\"{}\"><span class=\"track\"><span class=\"fill\" style=\"width:{:.0f}%\">"
        "</span></span>{}</span>",
        escape(f.gain_basis), 100 * std::clamp(fraction, 0.0, 1.0), escape(size_text));
    out += fmt::format("<span class=\"sev\">{}</span>", severity);
    out += fmt::format("<span class=\"conf\">confidence {:.2f}{}</span>", f.confidence, f.uncertain ? "?" : "");
    out += fmt::format("<span class=\"ftitle\">{}</span></div>", escape(f.title));
    out += fmt::format("<div class=\"fid\"><code>{}</code> &middot; {} layer</div>", escape(f.id), escape(f.layer));
    if (!tie_note.empty()) out += "<div class=\"tie\">" + tie_note + "</div>";
    out += "<div class=\"fbody\">";
    if (!f.suggestion.empty()) out += "<div><b>Suggestion:</b> " + escape(f.suggestion) + "</div>";
    out += evidence_list(f);
    return out + "</div></li>\n";
}

// The ranked findings, in tie groups as rules/ranking.cpp forms them; a group whose order differs
// from its gains is boxed and every finding ranked above a larger gain says why.
std::string ranked_cards(const std::vector<const Finding*>& ranked) {
    // The groups as rules/ranking.cpp forms them on the gains sorted: each next gain within gain_tie
    // of the one before and within gain_tie_span of the group's first. The reordering happens
    // inside each group, so the groups keep their places and sizes in the rank order.
    std::vector<double> gains;
    for (const auto* f : ranked)
        gains.push_back(f->estimated_gain.value_or(0));
    std::sort(gains.rbegin(), gains.rend());
    std::vector<std::size_t> sizes;
    for (std::size_t a = 0; a < gains.size();) {
        std::size_t b = a + 1;
        while (b < gains.size() && gains[b] >= gains[b - 1] - gain_tie && gains[b] >= gains[a] - gain_tie_span)
            ++b;
        sizes.push_back(b - a);
        a = b;
    }
    std::string out = "<ol class=\"findings\">\n";
    std::size_t i = 0, group = 0;
    while (i < ranked.size()) {
        const std::size_t end = i + sizes[group++];
        bool departs = false;
        for (std::size_t j = i + 1; j < end; ++j)
            departs |= ranked[j]->estimated_gain.value_or(0) > ranked[j - 1]->estimated_gain.value_or(0);
        if (departs)
            out += fmt::format(
                "<li class=\"tiegroup\"><div class=\"tie\">#{}&ndash;#{} are one tie group: their gains lie within "
                "{:.0f} "
                "points of each other, closer than this machine's run-to-run spread, so they are ordered by severity, "
                "then the measured factor, then the gain.</div><ol class=\"findings\">\n",
                ranked[i]->rank, ranked[end - 1]->rank, 100 * gain_tie_span);
        for (std::size_t j = i; j < end; ++j) {
            const Finding& f = *ranked[j];
            const double g = f.estimated_gain.value_or(0);
            std::string note;
            if (j > i && g > ranked[j - 1]->estimated_gain.value_or(0))
                note = fmt::format(
                    "Ranked below #{} ({}) despite a larger gain: same tie group, lower severity or factor.",
                    ranked[j - 1]->rank, escape(finding_size(*ranked[j - 1]).cell()));
            out += card(f, "#" + std::to_string(f.rank), finding_size(f).cell(), g, note);
        }
        if (departs) out += "</ol></li>\n";
        i = end;
    }
    return out + "</ol>\n";
}

}  // namespace

std::string findings_section(const RunReport& r) {
    std::vector<const Finding*> ranked, notes;
    for (const auto& f : r.findings)
        (f.kind == FindingKind::ranked ? ranked : notes).push_back(&f);
    std::string out = fmt::format(
        "<h2>Ranked findings</h2>\n<p class=\"meta\">Gain: a share of a step measured in this run. Ordered by gain; "
        "gains within {:.0f} points of the one before (and {:.0f} of their group's first) are a tie, ordered by "
        "severity, then the measured factor.</p>\n",
        100 * gain_tie, 100 * gain_tie_span);
    out += ranked.empty() ? "<p>None: no finding's gain is a share of a step measured in this run.</p>\n"
                          : ranked_cards(ranked);
    out +=
        "<h2>Device notes</h2>\n<p class=\"meta\">Unranked: traits of this device or machine, with their factor "
        "(how many times worse the measured pattern is).</p>\n";
    if (notes.empty()) return out + "<p>None.</p>\n";
    double largest = 1;
    for (const auto* f : notes)
        largest = std::max(largest, f->factor.value_or(1));
    out += "<ol class=\"findings\">\n";
    for (const auto* f : notes) {
        // Factors span 1.1x..100x: the bar is logarithmic in them.
        const double fraction = f->factor ? std::log(std::max(1.0, *f->factor)) / std::log(std::max(2.0, largest)) : 0;
        out += card(*f, "&ndash;", finding_size(*f).cell(), fraction, "");
    }
    return out + "</ol>\n";
}

}  // namespace clprobe::html
