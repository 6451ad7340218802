// The HTML pages' pieces on hand-made inputs: the trace timeline's rows (one per host-thread
// activity, older reports split), its idle gaps classified by what the host did and linked to the
// findings that speak of them; the pipeline chart's broken axis and step remainder; the fleet
// page's node names, dot strips and outliers with their deviation in %.
#include <catch2/catch.hpp>

#include <algorithm>

#include "core/trace_facts.hpp"
#include "render/fleet_text.hpp"
#include "render/html_timeline.hpp"
#include "render/svg_chart.hpp"
#include "render/timeline_view.hpp"

using namespace clprobe;
using Catch::Contains;

namespace {

nlohmann::json span(double a, double b, const char* kind, const char* name) {
    return nlohmann::json::array({a, b, kind, name});
}

// A queue busy 0-1, 2-3 and 4-5 s; the host waits through the first gap and builds through the second.
nlohmann::json planted_timeline(bool old_format) {
    nlohmann::json queue = {
        {"kind", "queue"},
        {"name", "queue 0 (dev)"},
        {"spans", {span(0, 1, "kernel", "k"), span(2, 3, "transfer", "write"), span(4, 5, "kernel", "k")}}};
    nlohmann::json lanes = nlohmann::json::array({queue});
    if (old_format) {
        lanes.push_back({{"kind", "thread"},
                         {"name", "host thread 1"},
                         {"spans",
                          {span(0.9, 1, "enqueue", "clEnqueueNDRangeKernel"), span(1, 2, "wait", "clFinish"),
                           span(3, 4, "build", "clBuildProgram")}}});
    } else {
        lanes.push_back({{"kind", "thread"},
                         {"name", "host thread 1"},
                         {"activity", "build"},
                         {"spans", {span(3, 4, "build", "clBuildProgram")}}});
        lanes.push_back({{"kind", "thread"},
                         {"name", "host thread 1"},
                         {"activity", "enqueue"},
                         {"spans", {span(0.9, 1, "enqueue", "clEnqueueNDRangeKernel")}}});
        lanes.push_back({{"kind", "thread"},
                         {"name", "host thread 1"},
                         {"activity", "wait"},
                         {"spans", {span(1, 2, "wait", "clFinish")}}});
    }
    return {{"wall_seconds", 5.0}, {"lanes", lanes}};
}

RunReport trace_report() {
    RunReport r;
    ProbeResult p;
    p.id = trace_probe_id;
    p.layer = "trace";
    p.attributes["timeline"] = planted_timeline(false);
    p.attributes["perfetto_file"] = "run.perfetto.json";
    r.results.push_back(p);
    Finding f;
    f.id = "trace.sync.wait_after_kernel";
    f.layer = "trace";
    f.evidence.push_back({"app.sync.gap_time", {}, 1.0, "s", ""});
    r.findings.push_back(f);
    return r;
}

}  // namespace

TEST_CASE("timeline: a host thread has one row per activity, older merged lanes are split", "[render][html]") {
    for (bool old_format : {false, true}) {
        const auto rows = html::timeline_rows(planted_timeline(old_format));
        REQUIRE(rows.size() == 4);
        CHECK(rows[0].kind == "queue");
        CHECK(rows[1].activity == "enqueue");
        CHECK(rows[2].activity == "wait");
        CHECK(rows[3].activity == "build");
        for (std::size_t i = 1; i < rows.size(); ++i)
            for (const auto& s : rows[i].spans)
                CHECK(s.kind == rows[i].activity);
    }
}

TEST_CASE("timeline: idle gaps are classified by what the host did and linked to their findings", "[render][html]") {
    const auto rows = html::timeline_rows(planted_timeline(false));
    auto gaps = html::idle_gaps(rows[0], rows, 0, 5, 0.01);
    REQUIRE(gaps.size() == 2);
    std::sort(gaps.begin(), gaps.end(), [](auto& a, auto& b) { return a.start < b.start; });
    CHECK(gaps[0].kind == html::GapKind::host_wait);
    CHECK(gaps[1].kind == html::GapKind::build);
    CHECK(html::idle_gaps(rows[0], rows, 0, 5, 1.5).empty());  // narrower than a pixel: not drawn

    const RunReport r = trace_report();
    REQUIRE(html::findings_about(r, html::GapKind::host_wait).size() == 1);
    CHECK(html::findings_about(r, html::GapKind::build).empty());
    const std::string page = html::timeline_section(r);
    CHECK_THAT(page, Contains(R"(<span data-kind="wait">)"));
    CHECK_THAT(page, Contains(R"(<span data-kind="build">)"));
    CHECK_THAT(page, Contains(R"(<span data-gap="host_wait">)"));
    CHECK_THAT(page, Contains(R"(href="#finding-trace.sync.wait_after_kernel")"));
    CHECK_THAT(page, Contains(R"(<a class="perfetto" href="run.perfetto.json">)"));  // relative: beside the page
}

TEST_CASE("stage chart: a step that dwarfs its stages breaks the axis and shows the rest", "[render][html]") {
    const std::string broken =
        svg::stage_chart({{"variant=serial", {{"upload", 1e-3}, {"compute", 1e-3}, {"download", 1e-3}}, 20e-3},
                          {"variant=overlapped", {}, 13e-3}},
                         "s");
    CHECK_THAT(broken, Contains("axis broken"));
    CHECK_THAT(broken, Contains("+17.0 ms"));
    CHECK_THAT(broken, Contains("step 13.0 ms"));
    CHECK_THAT(broken, Contains(">1.00 ms<"));  // the stages' values printed on their bars
    const std::string plain = svg::stage_chart({{"a", {{"upload", 5e-3}, {"compute", 5e-3}}, 10e-3}}, "s");
    CHECK_THAT(plain, !Contains("axis broken"));
    const std::string overlapping = svg::stage_chart({{"a", {{"upload", 8e-3}, {"compute", 9e-3}}, 10e-3}}, "s");
    CHECK_THAT(overlapping, Contains("they overlap"));
}

TEST_CASE("fleet page: nodes by name, a dot strip per metric, outliers with their deviation", "[render][html]") {
    FleetAnalysis f;
    f.nodes = 3;
    f.device = "gpu: Test GPU";
    FleetMetric m;
    m.metric = "kernel.peak.bandwidth";
    m.unit = "GB/s";
    m.median = 100;
    m.band_half_width = 5;
    m.values = {{"alpha", 100}, {"beta", 101}, {"gamma", 52}};
    MetricOutlier o;
    o.metric = m.metric;
    o.node = "gamma";
    o.value = 52;
    o.relative = -0.48;
    m.outliers.push_back(o);
    f.metrics.push_back(m);
    NodeOutlier n;
    n.node = "gamma";
    n.worse = true;
    n.metrics.push_back(o);
    n.environment.push_back({"device.driver_version", "2.0", "1.0", 2});
    f.outliers.push_back(n);
    const std::string page = render_fleet_html(f);
    for (const char* node : {"alpha", "beta", "gamma"})
        CHECK_THAT(page, Contains(std::string("<b>") + node + "</b>"));
    CHECK_THAT(page, Contains(R"(<svg class="strip")"));
    CHECK_THAT(page, Contains("<b>gamma</b> \u221248.0%"));
    CHECK_THAT(page, Contains("52.0 GB/s"));
    CHECK_THAT(page, Contains("device.driver_version"));
}
