#include "render/html_report.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/memory_roofs.hpp"
#include "core/roofline_facts.hpp"
#include "render/finding_size.hpp"
#include "render/svg_chart.hpp"
#include "render/trace_summary_text.hpp"

namespace clprobe {

namespace {

using svg::escape;

Labels without(Labels labels, const std::string& key) {
    labels.erase(key);
    return labels;
}

constexpr const char* style = R"(
body{font-family:system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#222;line-height:1.4}
h1{font-size:22px;margin-bottom:4px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}
h3{font-size:15px;margin-bottom:4px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}td,th{border:1px solid #ddd;padding:3px 7px;vertical-align:top;overflow-wrap:break-word}
th{background:#f4f4f4;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}
.ok{color:#1a7f37}.error{color:#c62828}.unsupported,.skipped{color:#a66a00}.meta{color:#555;font-size:13px}
.warn{background:#fff4e5;border-left:4px solid #e69f00;padding:6px 10px;margin:4px 0}
.good{background:#eef8f0;border-left:4px solid #1a7f37;padding:6px 10px;margin:4px 0}
code{background:#f4f4f4;padding:0 3px;overflow-wrap:anywhere}
)";

void header(std::string& out, const RunReport& r) {
    out += fmt::format("<h1>clprobe report{}</h1>\n", r.complete ? "" : " (incomplete: the run was interrupted)");
    out += "<p class=\"meta\">";
    if (r.device)
        out += fmt::format("Device <b>{}</b> ({}, {}, driver {}), <code>-d {}</code><br>", escape(r.device->name),
                           escape(r.device->type), escape(r.device->platform_name), escape(r.device->driver_version),
                           escape(r.device->selector));
    out += fmt::format("Host {} &middot; {} &middot; {} logical CPUs &middot; {}<br>", escape(r.host.hostname),
                       escape(r.host.cpu_model), r.host.logical_cpus, escape(r.host.os));
    out += fmt::format("Run {} &middot; clprobe {} &middot; {:.1f} s &middot; options <code>{}</code>",
                       escape(r.created_at), escape(r.tool_version), r.wall_seconds, escape(r.options.dump()));
    if (r.provenance) out += fmt::format("<br>Build clprobe {}", escape(provenance_summary(*r.provenance)));
    if (r.drift) out += fmt::format("<br>Machine drift during the run: {}", escape(drift_summary(*r.drift)));
    out += "</p>\n";
}

// How far to trust the numbers (stored by the analysis, rules/trust.cpp): warnings first, then
// what supports them.
void trust(std::string& out, const RunReport& r) {
    const auto& notes = r.trust_notes;
    out += "<h2>Measurement trust</h2>\n";
    bool any_warning = false;
    for (const auto& n : notes)
        if (n.warning) {
            out += fmt::format("<div class=\"warn\">{}</div>\n", escape(n.text));
            any_warning = true;
        }
    if (!any_warning) out += "<div class=\"good\">Nothing in this run lowers trust in its numbers.</div>\n";
    for (const auto& n : notes)
        if (!n.warning) out += fmt::format("<p class=\"meta\">{}</p>\n", escape(n.text));
}

// One table per kind: the ranked findings with their gain, the device notes with their factor.
void findings_table(std::string& out, const RunReport& r, FindingKind kind) {
    const bool ranked = kind == FindingKind::ranked;
    out += ranked ? "<h2>Ranked findings</h2>\n<p class=\"meta\">Gain: a share of a step measured in this run.</p>\n"
                  : "<h2>Device notes</h2>\n<p class=\"meta\">Unranked: traits of this device or machine, with their "
                    "factor.</p>\n";
    std::string rows;
    for (const auto& f : r.findings) {
        if (f.kind != kind) continue;
        std::string evidence;
        for (const auto& e : f.evidence)
            evidence += fmt::format("{}<code>{}</code> = {:.4g} {}{}", evidence.empty() ? "" : "<br>",
                                    escape(labelled_metric(e.metric, e.labels)), e.value, escape(e.unit),
                                    e.expectation.empty() ? "" : " (" + escape(e.expectation) + ")");
        rows += fmt::format(
            "<tr><td>{}</td><td>{}</td><td><b>{}</b><br><code>{}</code></td><td>{}</td><td>{}</td><td class=\"num\">{}"
            "</td><td class=\"num\">{:.2f}{}</td></tr>\n",
            ranked ? std::to_string(f.rank) : "&ndash;", escape(f.layer), escape(f.title), escape(f.id), evidence,
            escape(f.suggestion), finding_size(f).cell(), f.confidence, f.uncertain ? " (uncertain)" : "");
    }
    if (rows.empty()) {
        out +=
            ranked ? "<p>None: no finding's gain is a share of a step measured in this run.</p>\n" : "<p>None.</p>\n";
        return;
    }
    out += fmt::format(
        "<table><tr><th>#</th><th>Layer</th><th>Finding</th><th>Evidence</th><th>Suggestion</th><th>{}</th>"
        "<th>Confidence</th></tr>\n{}</table>\n",
        ranked ? "Gain" : "Factor", rows);
}

void findings(std::string& out, const RunReport& r) {
    findings_table(out, r, FindingKind::ranked);
    findings_table(out, r, FindingKind::note);
}

// The hierarchical roofline: this run's own compute ceilings, a bandwidth roof per memory level
// (kernel.memory_levels) beside the memory roof (kernel.peak.bandwidth), and every point a
// workload probe placed, labelled with the level its working set lives in (core/roofline_facts.hpp).
void roofline(std::string& out, const RunReport& r) {
    const auto* bw = find_measurement(r, "kernel.peak.bandwidth");
    const auto* fp32 = find_measurement(r, "kernel.peak.fp32");
    if (!bw || !fp32) return;
    const auto* fp64 = find_measurement(r, "kernel.peak.fp64");
    std::vector<svg::Series> series;
    auto roof = [&](double compute, double bandwidth, const std::string& name, bool dashed) {
        svg::Series s{name, {}, dashed, false, true};
        for (double ai = 1.0 / 16; ai <= 256; ai *= 1.25)
            s.points.push_back({ai, std::min(compute, ai * bandwidth)});
        series.push_back(std::move(s));
    };
    roof(fp32->summary.median, bw->summary.median, "fp32 roof (memory)", false);
    if (fp64) roof(fp64->summary.median, bw->summary.median, "fp64 roof (memory)", true);
    std::string levels;
    if (const auto facts = memory_roof_facts_of(r.results))
        for (const auto& level : facts->roofs) {
            if (level.level == "memory") continue;  // kernel.peak.bandwidth draws it
            roof(fp32->summary.median, level.gb_per_s, fmt::format("fp32 roof ({})", level.level), true);
            levels += fmt::format(", {} {:.4g} GB/s", level.level, level.gb_per_s);
        }
    for (const auto& p : r.results)
        for (const auto& pt : roofline_points_of(p)) {
            const std::string name =
                (pt.label.empty() ? p.id : pt.label) + (pt.level.empty() ? "" : " [" + pt.level + "]");
            series.push_back({name, {{pt.intensity, pt.gflops}}, false, true, false});
        }
    out += fmt::format(
        "<h2>Roofline</h2>\n<p class=\"meta\">Ceilings measured in this run: memory roof = "
        "<code>kernel.peak.bandwidth</code> ({:.4g} GB/s) x arithmetic intensity{}; compute roofs = "
        "<code>kernel.peak.fp32</code> ({:.4g} GFLOP/s){}. Points are workload variants, each held against the roof "
        "of the memory level its working set lives in (in brackets).</p>\n",
        bw->summary.median, levels.empty() ? "" : "; cache roofs (<code>kernel.roof.bandwidth</code>)" + levels,
        fp32->summary.median,
        fp64 ? fmt::format(" and <code>kernel.peak.fp64</code> ({:.4g} GFLOP/s)", fp64->summary.median) : "");
    out += svg::line_chart(series, {"arithmetic intensity (FLOP/byte)", true}, {"GFLOP/s", true}, 760, 380);
}

// Metrics swept over a "size" label (transfer curves): one series per remaining label set.
void curves(std::string& out, const RunReport& r) {
    std::map<std::string, std::map<std::string, svg::Series>> by_metric;
    std::map<std::string, std::string> units;
    for (const auto& p : r.results)
        for (const auto& m : p.measurements) {
            auto it = m.labels.find("size");
            if (it == m.labels.end()) continue;
            double size = 0;
            try {
                size = std::stod(it->second);
            } catch (const std::exception&) {
                continue;
            }
            const std::string series_name = labels_to_string(without(m.labels, "size"));
            auto& s = by_metric[m.metric][series_name];
            s.name = series_name.empty() ? m.metric : series_name;
            s.points.push_back({size, m.summary.median});
            units[m.metric] = m.unit;
        }
    if (by_metric.empty()) return;
    out += "<h2>Size sweeps</h2>\n";
    for (auto& [metric, series_map] : by_metric) {
        std::vector<svg::Series> series;
        for (auto& [name, s] : series_map) {
            std::sort(s.points.begin(), s.points.end(), [](auto& a, auto& b) { return a.x < b.x; });
            series.push_back(std::move(s));
        }
        out += fmt::format("<h3><code>{}</code></h3>\n", escape(metric));
        out += svg::line_chart(series, {"size (bytes)", true}, {units[metric], true});
    }
}

// Variants of one metric within a probe (vector widths, patterns, precisions): bars with the
// samples' range as whiskers.
void variants(std::string& out, const RunReport& r) {
    bool any = false;
    for (const auto& p : r.results) {
        std::map<std::string, std::vector<const Measurement*>> by_metric;
        for (const auto& m : p.measurements)
            if (!m.labels.empty() && !m.labels.count("size") && !m.labels.count("stage"))
                by_metric[m.metric].push_back(&m);
        for (const auto& [metric, ms] : by_metric) {
            if (ms.size() < 4) continue;
            if (!any) out += "<h2>Variants</h2>\n";
            any = true;
            std::vector<svg::Bar> bars;
            for (const auto* m : ms)
                bars.push_back({labels_to_string(m->labels), m->summary.median, m->summary.min, m->summary.max});
            out += fmt::format("<h3><code>{}</code> ({})</h3>\n", escape(metric), escape(p.id));
            out += svg::bar_chart(bars, ms.front()->unit, 760);
        }
    }
}

// Pipelines broken into stages (label "stage"): one stacked bar per remaining label set.
void pipelines(std::string& out, const RunReport& r) {
    std::map<std::string, std::map<std::string, std::vector<svg::Segment>>> by_metric;
    std::map<std::string, std::string> units;
    for (const auto& p : r.results)
        for (const auto& m : p.measurements) {
            auto it = m.labels.find("stage");
            if (it == m.labels.end()) continue;
            by_metric[m.metric][labels_to_string(without(m.labels, "stage"))].push_back({it->second, m.summary.median});
            units[m.metric] = m.unit;
        }
    if (by_metric.empty()) return;
    out += "<h2>Pipeline time breakdown</h2>\n";
    for (const auto& [metric, rows_map] : by_metric) {
        std::vector<std::pair<std::string, std::vector<svg::Segment>>> rows(rows_map.begin(), rows_map.end());
        for (auto& row : rows)
            if (row.first.empty()) row.first = metric;
        out += fmt::format("<h3><code>{}</code></h3>\n", escape(metric));
        out += svg::stacked_bars(rows, units[metric], 760);
    }
}

void tables(std::string& out, const RunReport& r) {
    out += "<h2>Probes</h2>\n";
    for (const auto& p : r.results) {
        const std::string status(to_string(p.status));
        // A lost probe reads as a failure, in the error colour.
        const bool lost = p.status == ProbeStatus::crashed || p.status == ProbeStatus::timed_out;
        out += fmt::format("<h3><code>{}</code> &ndash; {} <span class=\"{}\">{}</span> ({:.1f} s)</h3>\n",
                           escape(p.id), escape(p.title), lost ? "error" : status, status, p.wall_seconds);
        if (!p.reason.empty()) out += fmt::format("<p>{}</p>\n", escape(p.reason));
        if (p.measurements.empty()) continue;
        out +=
            "<table><tr><th>Metric</th><th>Median</th><th>Unit</th><th>cv</th><th>min</th><th>max</th><th>n</th>"
            "<th>Timer</th></tr>\n";
        for (const auto& m : p.measurements)
            out += fmt::format(
                "<tr><td><code>{}</code>{}</td><td class=\"num\">{:.4g}</td><td>{}</td><td class=\"num\">{:.1f}%</td>"
                "<td class=\"num\">{:.4g}</td><td class=\"num\">{:.4g}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
                escape(labelled_metric(m.metric, m.labels)),
                m.note.empty() ? "" : "<br><small>" + escape(m.note) + "</small>", m.summary.median, escape(m.unit),
                100 * m.summary.cv, m.summary.min, m.summary.max, m.summary.n, to_string(m.timer));
        out += "</table>\n";
    }
}

}  // namespace

std::string render_html(const RunReport& r, const RenderOptions&) {
    std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>clprobe report</title>";
    out += fmt::format("<style>{}</style></head><body>\n", style);
    header(out, r);
    trust(out, r);
    // A traced program: how it ended and where its wall time went, as the text report says it
    // (the stage breakdown is also drawn with the pipelines below).
    if (const std::string program = render_trace_summary(r); !program.empty())
        out += "<h2>Traced program</h2>\n<pre>" + escape(program.substr(program.find('\n') + 1)) + "</pre>\n";
    findings(out, r);
    roofline(out, r);
    pipelines(out, r);
    curves(out, r);
    variants(out, r);
    tables(out, r);
    out += "</body></html>\n";
    return out;
}

}  // namespace clprobe
