// The format table every command renders through: each row renders what its renderer renders,
// names are unique, and the --help text lists every name.
#include <catch2/catch.hpp>

#include <set>

#include "json/fleet_json.hpp"
#include "json/report_json.hpp"
#include "render/csv_export.hpp"
#include "render/finding_size.hpp"
#include "render/fleet_formats.hpp"
#include "render/fleet_text.hpp"
#include "render/markdown_report.hpp"
#include "render/report_formats.hpp"
#include "render/text_report.hpp"

using namespace clprobe;

namespace {

RunReport small_report() {
    RunReport r;
    r.tool_version = "0.1.0";
    ProbeResult p;
    p.id = "kernel.bandwidth";
    p.layer = "kernel";
    for (int v : {1, 2, 4, 8, 16, 32, 64})
        p.measurements.push_back(make_measurement("kernel.bandwidth", "GB/s", {{"vector", std::to_string(v)}},
                                                  {10.0 + v, 11.0 + v}, TimerKind::device_profiling));
    r.results.push_back(p);
    r.trust_notes = {{"trust.steal", true, "The hypervisor stole 4.0% of the CPU time during the run."}};
    return r;
}

}  // namespace

TEST_CASE("report formats: one row per name, text first, each rendering as its renderer", "[formats]") {
    const auto names = report_format_names();
    CHECK(names == std::vector<std::string>{"text", "md", "json", "html", "csv", "gbench"});
    CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());
    const RunReport r = small_report();
    const RenderOptions verbose{true, false};
    CHECK(report_format("text").render(r, verbose) == render_text(r, verbose));
    CHECK(report_format("md").render(r, verbose) == render_markdown(r, verbose));
    CHECK(report_format("json").render(r, {}) == report_to_json_text(r));
    CHECK(report_format("csv").render(r, {}) == render_csv(r));
    // The options reach the renderer: verbose Markdown lists the variants, plain does not.
    CHECK(report_format("md").render(r, verbose) != report_format("md").render(r, {}));
    CHECK_THROWS_AS(report_format("pdf"), std::out_of_range);
}

TEST_CASE("report formats: the help text names every format", "[formats]") {
    const std::string help = report_formats_help();
    for (const auto& name : report_format_names())
        CHECK_THAT(help, Catch::Contains(name + " ("));
    CHECK_THAT(help, Catch::Contains(", csv (") && Catch::Contains(" or gbench ("));
}

TEST_CASE("renderers show the stored trust notes, never their own", "[formats][trust]") {
    RunReport r = small_report();
    CHECK_THAT(render_text(r), Catch::Contains("The hypervisor stole 4.0%"));
    CHECK_THAT(render_markdown(r), Catch::Contains("**Warning:** The hypervisor stole 4.0%"));
    CHECK_THAT(report_format("html").render(r, {}), Catch::Contains("<div class=\"warn\">The hypervisor stole 4.0%"));
    r.trust_notes.clear();
    // A report with no device and no system layer would get notes from assess_trust: none appear.
    CHECK(render_text(r, {true, false}).find("system layer did not run") == std::string::npos);
}

TEST_CASE("finding size: a ranked gain, a note's factor, or nothing", "[formats]") {
    Finding f;
    f.kind = FindingKind::ranked;
    f.estimated_gain = 0.123;
    f.factor = 27;
    CHECK(finding_size(f).kind == FindingSize::Kind::gain);
    CHECK(finding_size(f).value == "12%");
    f.kind = FindingKind::note;  // a note never shows a gain
    CHECK(finding_size(f).kind == FindingSize::Kind::factor);
    CHECK(finding_size(f).value == "27x");
    f.factor.reset();
    CHECK(finding_size(f).kind == FindingSize::Kind::none);
    CHECK(finding_size(f).cell() == "n/a");
}

TEST_CASE("fleet formats: text first, each rendering as its renderer, unknown names refused", "[formats][fleet]") {
    const auto& table = fleet_formats();
    CHECK(table.names() == std::vector<std::string>{"text", "md", "json", "html"});
    FleetAnalysis f;
    f.nodes = 2;
    const RenderOptions verbose{true, false};
    CHECK(table.find("text").render(f, verbose) == render_fleet_text(f, verbose));
    CHECK(table.find("md").render(f, verbose) == render_fleet_markdown(f, verbose));
    CHECK(table.find("html").render(f, {}) == render_fleet_html(f, {}));
    CHECK(table.find("json").render(f, {}) == fleet_to_json(f).dump(2) + "\n");
    CHECK(table.find("md").render(f, {}) != table.find("text").render(f, {}));
    CHECK_THROWS_AS(table.find("csv"), std::out_of_range);
    for (const auto& name : table.names())
        CHECK_THAT(table.help(), Catch::Contains(name + " ("));
}
