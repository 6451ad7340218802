#include "render/html_report.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <set>

#include "render/html_findings.hpp"
#include "render/html_page.hpp"
#include "render/html_roofline.hpp"
#include "render/html_timeline.hpp"
#include "render/svg_chart.hpp"
#include "render/trace_summary_text.hpp"
#include "render/value_format.hpp"

namespace clprobe {

namespace {

using svg::escape;

Labels without(Labels labels, const std::string& key) {
    labels.erase(key);
    return labels;
}

// A size sweep's vertical axis: what the metric measures, in its unit.
std::string metric_axis_title(const std::string& metric, const std::string& unit) {
    if (unit == "GB/s" || unit == "MB/s") return "bandwidth";
    if (unit == "s" || unit == "ms" || unit == "us" || unit == "ns") return "time";
    if (unit == "GFLOP/s") return "throughput";
    return metric.substr(metric.rfind('.') + 1);
}

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
        // Lines that coincide stay apart by their markers and dashes.
        for (std::size_t i = 0; i < series.size(); ++i) {
            series[i].marker = static_cast<svg::Marker>(i % 5);
            series[i].dashed = i % 2 == 1;
        }
        out += svg::line_chart(series, {"transfer size", true, "B"},
                               {metric_axis_title(metric, units[metric]), true, units[metric]});
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
            // Labels every variant shares go to the heading: the rows differ in what is left.
            Labels common = ms.front()->labels;
            for (const auto* m : ms)
                for (auto it = common.begin(); it != common.end();) {
                    auto found = m->labels.find(it->first);
                    it = found == m->labels.end() || found->second != it->second ? common.erase(it) : std::next(it);
                }
            std::vector<svg::Bar> bars;
            for (const auto* m : ms) {
                Labels own = m->labels;
                for (const auto& [k, v] : common)
                    own.erase(k);
                bars.push_back({labels_to_string(own), m->summary.median, m->summary.min, m->summary.max});
            }
            out +=
                fmt::format("<h3><code>{}</code> ({}){}</h3>\n", escape(metric), escape(p.id),
                            common.empty() ? "" : ", all with <code>" + escape(labels_to_string(common)) + "</code>");
            out += svg::bar_chart(bars, ms.front()->unit, "variant", 760);
        }
    }
}

// Pipelines broken into stages (label "stage"): one row per remaining label set, against the step
// time measured with the same labels ("<pipeline>.step_time"), so overlapping stages show as such.
void pipelines(std::string& out, const RunReport& r) {
    std::map<std::string, std::map<std::string, svg::StageRow>> by_metric;
    std::map<std::string, std::string> units;
    for (const auto& p : r.results)
        for (const auto& m : p.measurements) {
            auto it = m.labels.find("stage");
            if (it == m.labels.end()) continue;
            const Labels rest = without(m.labels, "stage");
            auto& row = by_metric[m.metric][labels_to_string(rest)];
            row.stages.push_back({it->second, m.summary.median});
            const std::string suffix = ".stage_time";
            if (row.step == 0 && m.metric.size() > suffix.size() &&
                m.metric.compare(m.metric.size() - suffix.size(), suffix.size(), suffix) == 0) {
                const std::string step = m.metric.substr(0, m.metric.size() - suffix.size()) + ".step_time";
                if (const auto* s = find_measurement(p, step, rest); s && s->unit == m.unit)
                    row.step = s->summary.median;
            }
            units[m.metric] = m.unit;
        }
    if (by_metric.empty()) return;
    out +=
        "<h2>Pipeline time breakdown</h2>\n<p class=\"meta\">Stages that add up to the step are stacked; where "
        "they add up to more than the measured step they ran at the same time (double buffering), and are drawn "
        "overlapping under the step.</p>\n";
    for (auto& [metric, rows_map] : by_metric) {
        std::vector<svg::StageRow> rows;
        for (auto& [name, row] : rows_map) {
            row.name = name.empty() ? metric : name;
            rows.push_back(std::move(row));
        }
        out += fmt::format("<h3><code>{}</code></h3>\n", escape(metric));
        out += svg::stage_chart(rows, units[metric], 760);
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
        std::string rows;
        for (const auto& m : p.measurements)
            rows += fmt::format(
                "<tr><td><code>{}</code>{}</td><td class=\"num\">{}</td><td class=\"num\">{:.1f}%</td>"
                "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
                escape(labelled_metric(m.metric, m.labels)),
                m.note.empty() ? "" : "<br><small>" + escape(m.note) + "</small>",
                escape(units::format(m.summary.median, m.unit)), 100 * m.summary.cv,
                escape(units::format(m.summary.min, m.unit)), escape(units::format(m.summary.max, m.unit)), m.summary.n,
                to_string(m.timer));
        out += html::scroll_table(
            "<tr><th>Metric</th><th>Median</th><th>cv</th><th>min</th><th>max</th><th>n</th><th>Timer</th></tr>", rows);
    }
}

}  // namespace

std::string render_html(const RunReport& r, const RenderOptions&) {
    std::string out = html::page_start("clprobe report");
    header(out, r);
    trust(out, r);
    // A traced program: how it ended and where its wall time went, as the text report says it
    // (the stage breakdown is also drawn with the pipelines below).
    if (const std::string program = render_trace_summary(r); !program.empty())
        out += "<h2>Traced program</h2>\n<pre>" + escape(program.substr(program.find('\n') + 1)) + "</pre>\n";
    out += html::timeline_section(r);
    out += html::findings_section(r);
    out += html::roofline_section(r);
    pipelines(out, r);
    curves(out, r);
    variants(out, r);
    tables(out, r);
    return out + html::page_end();
}

}  // namespace clprobe
