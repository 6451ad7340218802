#include "render/html_report.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <set>

#include "render/html_findings.hpp"
#include "render/html_page.hpp"
#include "render/html_roofline.hpp"
#include "render/html_timeline.hpp"
#include "render/html_trace_summary.hpp"
#include "render/svg_chart.hpp"
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
    if (unit == "GFLOP/s" || unit == "GIOP/s") return "throughput";
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
// time measured with the same labels ("<pipeline>.step_time"), so overlapping stages show as such;
// variants with a step time and no stages (an overlapped copy pipeline) are rows of their own.
struct PipelineChart {
    std::string probe;
    std::map<std::string, svg::StageRow> rows;
    std::string unit;
};

std::string step_metric_of(const std::string& stage_metric) {
    const std::string suffix = ".stage_time";
    if (stage_metric.size() <= suffix.size() ||
        stage_metric.compare(stage_metric.size() - suffix.size(), suffix.size(), suffix) != 0)
        return {};
    return stage_metric.substr(0, stage_metric.size() - suffix.size()) + ".step_time";
}

std::map<std::string, PipelineChart> pipeline_charts(const RunReport& r) {
    std::map<std::string, PipelineChart> charts;
    for (const auto& p : r.results)
        for (const auto& m : p.measurements) {
            auto it = m.labels.find("stage");
            if (it == m.labels.end()) continue;
            const Labels rest = without(m.labels, "stage");
            auto& chart = charts[m.metric];
            chart.probe = p.id;
            chart.unit = m.unit;
            auto& row = chart.rows[labels_to_string(rest)];
            row.stages.push_back({it->second, m.summary.median});
            const std::string step = step_metric_of(m.metric);
            if (row.step == 0 && !step.empty())
                if (const auto* s = find_measurement(p, step, rest); s && s->unit == m.unit)
                    row.step = s->summary.median;
        }
    for (auto& [metric, chart] : charts) {
        const std::string step = step_metric_of(metric);
        for (const auto& p : r.results)
            if (p.id == chart.probe && !step.empty())
                for (const auto& m : p.measurements)
                    if (m.metric == step && m.unit == chart.unit && !chart.rows.count(labels_to_string(m.labels)))
                        chart.rows[labels_to_string(m.labels)].step = m.summary.median;
    }
    return charts;
}

// Two metrics of one probe holding the same stage times (attention.step.time repeats
// attention.pipeline.stage_time for older readers) draw one chart; the other is named under it.
bool same_rows(const PipelineChart& a, const PipelineChart& b) {
    if (a.probe != b.probe || a.unit != b.unit || a.rows.size() != b.rows.size()) return false;
    for (auto ia = a.rows.begin(), ib = b.rows.begin(); ia != a.rows.end(); ++ia, ++ib) {
        if (ia->first != ib->first || ia->second.stages.size() != ib->second.stages.size()) return false;
        for (std::size_t i = 0; i < ia->second.stages.size(); ++i)
            if (ia->second.stages[i].label != ib->second.stages[i].label ||
                ia->second.stages[i].value != ib->second.stages[i].value)
                return false;
    }
    return true;
}

void pipelines(std::string& out, const RunReport& r) {
    auto charts = pipeline_charts(r);
    if (charts.empty()) return;
    out +=
        "<h2>Pipeline time breakdown</h2>\n<p class=\"meta\">Stages that add up to the step are stacked; where "
        "they add up to more than the measured step they ran at the same time (double buffering), and are drawn "
        "overlapping under the step; where the step took longer than its timed stages, the rest is a dashed "
        "segment of its own.</p>\n";
    // Step-time metrics whose charts carry the stage metric that drew them ("<pipeline>.step_time").
    std::vector<std::string> drawn;
    for (auto& [metric, chart] : charts) {
        // A named reference, not the structured binding: clang 14 (the sanitizer build) cannot
        // capture a binding in a lambda.
        const auto& this_chart = chart;
        const auto twin = std::find_if(drawn.begin(), drawn.end(),
                                       [&](const std::string& d) { return same_rows(charts.at(d), this_chart); });
        if (twin != drawn.end()) {
            out += fmt::format(
                "<p class=\"meta\"><code>{}</code> holds the same stage times as <code>{}</code>, "
                "drawn above.</p>\n",
                escape(metric), escape(*twin));
            continue;
        }
        drawn.push_back(metric);
        std::vector<svg::StageRow> rows;
        for (const auto& [name, row] : chart.rows) {
            rows.push_back(row);  // a copy: later charts compare with this one's rows
            rows.back().name = name.empty() ? metric : name;
        }
        out += fmt::format("<h3><code>{}</code> ({})</h3>\n", escape(metric), escape(chart.probe));
        // What the probe counts in each stage: which variants' stages overlap and which are the rest.
        for (const auto& p : r.results)
            if (p.id == chart.probe && p.attributes.contains("stages") && p.attributes["stages"].is_string())
                out += fmt::format("<p class=\"meta\">{}</p>\n", escape(p.attributes["stages"].get<std::string>()));
        out += svg::stage_chart(rows, chart.unit, 760);
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
    // A traced program: how it ended and where its wall time went (its stages are also drawn
    // with the pipelines below), then its timeline.
    out += html::trace_summary_section(r);
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
