// The ranks page (render_ranks_html, render/rank_text.hpp) in the fleet page's style: the ranks'
// figures as a table with each rank's wall time as a bar split into its stages, the slow rank's
// finding as a card, and its parts against the other ranks' median.
#include <fmt/core.h>

#include <algorithm>

#include "render/html_page.hpp"
#include "render/rank_text.hpp"
#include "render/svg_chart.hpp"
#include "render/value_format.hpp"

namespace clprobe {

namespace {

using svg::escape;

std::string s(double seconds) {
    return escape(units::format(seconds, "s"));
}

// The rank's wall time as one bar, its stages in the report pages' stage colours, on a scale
// shared by every rank so that the bars compare.
std::string stage_bar(const RankFigures& f, double longest) {
    constexpr int width = 240, height = 14;
    if (longest <= 0) return {};
    struct Part {
        const char* name;
        double seconds;
        const char* colour;
    };
    const Part parts[] = {{"kernel", f.kernel_seconds, "#0072B2"},
                          {"transfer", f.transfer_seconds, "#E69F00"},
                          {"build", f.build_seconds, "#CC79A7"},
                          {"host wait", f.host_wait_seconds, "#D55E00"},
                          {"device idle", f.device_idle_seconds, "#bbbbbb"},
                          {"host only", f.host_only_seconds, "#e5e5e5"}};
    std::string out = fmt::format(
        R"(<svg class="strip" width="{0}" height="{1}" viewBox="0 0 {0} {1}" role="img" aria-label="rank {2} stages">)",
        width, height, escape(f.rank));
    double x = 0;
    for (const auto& p : parts) {
        const double w = p.seconds / longest * width;
        if (w <= 0) continue;
        out +=
            fmt::format(R"(<rect x="{:.1f}" y="0" width="{:.1f}" height="{}" fill="{}"><title>{}: {}</title></rect>)",
                        x, w, height, p.colour, p.name, s(p.seconds));
        x += w;
    }
    return out + "</svg>";
}

std::string ranks_table(const RankAnalysis& a) {
    double longest = 0;
    for (const auto& f : a.ranks)
        longest = std::max(longest, f.wall_seconds);
    const std::string slow = a.slowest && a.slowest->slow ? a.slowest->rank : "";
    std::string rows;
    auto row = [&](const RankFigures& f, bool median) {
        rows += fmt::format(
            "<tr{}><td><b>{}</b></td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td>"
            "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
            "<td class=\"num\">{}</td></tr>\n",
            !median && f.rank == slow ? " class=\"worse\"" : "", escape(f.rank), escape(f.host), s(f.wall_seconds),
            median ? std::string() : stage_bar(f, longest), s(f.device_busy_seconds), s(f.kernel_seconds),
            s(f.transfer_seconds), s(f.host_wait_seconds), s(f.device_idle_seconds), f.opencl_commands);
    };
    for (const auto& f : a.ranks)
        row(f, false);
    row(a.median, true);
    return html::scroll_table(
        "<tr><th>rank</th><th>host</th><th>wall</th><th>stages</th><th>device busy</th><th>kernel</th>"
        "<th>transfer</th><th>host wait</th><th>device idle</th><th>OpenCL commands</th></tr>",
        rows);
}

std::string parts_table(const SlowRank& r) {
    std::string rows;
    auto row = [&](const std::string& name, const RankCause& c, bool counted) {
        rows += fmt::format(
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num{}\">{}</td>"
            "<td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
            name, s(c.seconds), s(c.reference_seconds), c.excess_seconds() > 0 ? " worse" : "", s(c.excess_seconds()),
            counted ? fmt::format("{:.6g}", c.count) : "", counted ? fmt::format("{:.6g}", c.reference_count) : "");
    };
    for (const auto& c : r.stages)
        row("stage " + escape(c.name), c, false);
    for (const auto& c : r.causes)
        row(c.kind == "host_wait" ? std::string("host waits") : escape(c.kind) + " <code>" + escape(c.name) + "</code>",
            c, true);
    return html::scroll_table(fmt::format("<tr><th>part</th><th>rank {}</th><th>other ranks (median)</th>"
                                          "<th>excess</th><th>count</th><th>other ranks</th></tr>",
                                          escape(r.rank)),
                              rows);
}

}  // namespace

std::string render_ranks_html(const RankAnalysis& a, const RenderOptions&) {
    std::string out = html::page_start("clprobe fleet: ranks");
    out += fmt::format("<h1>{} rank{} of a traced job</h1>\n<p class=\"meta\">{}{}</p>\n", a.ranks.size(),
                       a.ranks.size() == 1 ? "" : "s",
                       a.size ? fmt::format("The launcher announced {} rank(s)", *a.size) : "Ranks from trace reports",
                       a.unpaired.empty() ? "" : fmt::format(" &middot; {} report(s) not paired", a.unpaired.size()));
    if (!a.missing_ranks.empty()) {
        std::string missing;
        for (const auto& m : a.missing_ranks)
            missing += (missing.empty() ? "" : ", ") + escape(m);
        out += fmt::format("<p class=\"meta worse\">No report of rank(s) {}.</p>\n", missing);
    }
    out +=
        "<h2>Ranks</h2>\n<p class=\"meta\">Each rank's wall time split into its stages (kernel blue, transfer "
        "orange, build pink, host wait red, device idle grey, host only light grey), on one scale.</p>\n";
    out += ranks_table(a);
    out += "<h2>Slowest rank</h2>\n";
    for (const auto& f : a.findings) {
        out += fmt::format(
            "<div class=\"finding sev-high\"><div class=\"ftitle\">{}</div><div class=\"fid\"><code>{}</code> "
            "&middot; <code>{}</code></div><ul>",
            escape(f.title), escape(f.id), escape(f.source));
        for (const auto& e : f.evidence)
            out += "<li>" + escape(e) + "</li>";
        out += "</ul></div>\n";
    }
    if (a.slowest) {
        const SlowRank& r = *a.slowest;
        if (!r.slow)
            out += fmt::format(
                "<p class=\"meta\">No rank is slow: rank {} ran longest, {} against {} for the median of the others, "
                "within the threshold of {}.</p>\n",
                escape(r.rank), s(r.value), s(r.reference), s(r.threshold));
        out += fmt::format("<h3>Rank {} against the median of the other ranks</h3>\n", escape(r.rank));
        out += parts_table(r);
    }
    if (!a.unpaired.empty()) {
        out += "<h2>Not paired</h2><ul>\n";
        for (const auto& u : a.unpaired)
            out += fmt::format("<li><code>{}</code>: {}</li>\n", escape(u.source), escape(u.reason));
        out += "</ul>\n";
    }
    return out + html::page_end();
}

}  // namespace clprobe
