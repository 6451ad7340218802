#include "render/markdown_report.hpp"

#include <fmt/core.h>

#include "render/finding_size.hpp"

namespace clprobe {

namespace {

// Table cells must not break the table: pipes escaped, newlines folded.
std::string cell(std::string_view s) {
    std::string out;
    for (char c : s) {
        if (c == '|')
            out += "\\|";
        else if (c == '\n')
            out += "<br>";
        else
            out += c;
    }
    return out;
}

}  // namespace

namespace {

// One table per kind; `empty` is printed when the kind has no finding ("" prints nothing).
void findings_table(std::string& out, const RunReport& r, FindingKind kind, const char* heading, const char* empty) {
    std::vector<const Finding*> rows;
    for (const auto& f : r.findings)
        if (f.kind == kind) rows.push_back(&f);
    if (rows.empty()) {
        if (*empty) out += std::string(heading) + empty;
        return;
    }
    out += heading;
    const bool ranked = kind == FindingKind::ranked;
    out += fmt::format(
        "| {} | Layer | Finding | Evidence | Suggestion | {} | Confidence |\n|---|---|---|---|---|---|---|\n",
        ranked ? "#" : "Id", ranked ? "Gain" : "Factor");
    for (const Finding* f : rows) {
        std::string evidence;
        for (const auto& e : f->evidence)
            evidence += fmt::format("{}{} = {:.4g} {}", evidence.empty() ? "" : "<br>",
                                    labelled_metric(e.metric, e.labels), e.value, e.unit);
        out += fmt::format("| {} | {} | {} | {} | {} | {} | {:.2f}{} |\n", ranked ? std::to_string(f->rank) : f->id,
                           f->layer, cell(f->title), cell(evidence), cell(f->suggestion), finding_size(*f).cell(),
                           f->confidence, f->uncertain ? " (uncertain)" : "");
    }
    out += "\n";
}

}  // namespace

std::string render_markdown(const RunReport& r, const RenderOptions& o) {
    std::string out = fmt::format("# clprobe report{}\n\n", r.complete ? "" : " (incomplete: interrupted)");
    if (r.device)
        out += fmt::format("- **Device**: {} ({}, {}, driver {}), `-d {}`\n", r.device->name, r.device->type,
                           r.device->platform_name, r.device->driver_version, r.device->selector);
    out += fmt::format("- **Host**: {}, {}, {} logical CPUs, {}\n", r.host.hostname, r.host.cpu_model,
                       r.host.logical_cpus, r.host.os);
    out += fmt::format("- **Run**: {}, clprobe {}, {:.1f} s, options `{}`\n", r.created_at, r.tool_version,
                       r.wall_seconds, r.options.dump());
    if (r.provenance) out += fmt::format("- **Build**: clprobe {}\n", provenance_summary(*r.provenance));
    if (r.drift) out += fmt::format("- **Machine drift during the run**: {}\n", drift_summary(*r.drift));
    out += "\n";

    out += "## Measurement trust\n\n";
    for (const auto& n : r.trust_notes)
        out += fmt::format("- {}{}\n", n.warning ? "**Warning:** " : "", n.text);
    out += "\n";
    findings_table(out, r, FindingKind::ranked,
                   "## Ranked findings\n\nGain: a share of a step measured in this run.\n\n",
                   "None: no finding's gain is a share of a step measured in this run.\n\n");
    findings_table(out, r, FindingKind::note,
                   "## Device notes\n\nUnranked: traits of this device or machine, with their factor.\n\n", "");

    out += "## Probes\n\n| Probe | Status | Reason | Time |\n|---|---|---|---|\n";
    for (const auto& p : r.results)
        out += fmt::format("| {} | {} | {} | {:.1f} s |\n", p.id, to_string(p.status), cell(p.reason), p.wall_seconds);
    out += "\n## Measurements\n\n| Metric | Median | Unit | cv | n | Timer |\n|---|---|---|---|---|---|\n";
    for (const auto& p : r.results)
        for (const auto& m : p.measurements) {
            if (!o.verbose && !m.labels.empty() && p.measurements.size() > 6) continue;
            out += fmt::format("| {} | {:.4g} | {} | {:.1f}% | {} | {} |\n", cell(labelled_metric(m.metric, m.labels)),
                               m.summary.median, m.unit, 100 * m.summary.cv, m.summary.n, to_string(m.timer));
        }
    return out;
}

}  // namespace clprobe
