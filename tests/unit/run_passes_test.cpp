// One report of several passes (diagnose --passes N): the passes survive the JSON both ways and
// are refused when out of order or of another device; compare reads them as repeats; a known
// movement sets a single-pass comparison's bands; the JUnit file fails exactly where the gate does.
#include <catch2/catch.hpp>

#include <cmath>

#include "compare/between_runs.hpp"
#include "compare/comparison.hpp"
#include "compare/run_passes.hpp"
#include "compare_test_support.hpp"
#include "json/comparison_json.hpp"
#include "json/report_json.hpp"
#include "render/comparison_junit.hpp"
#include "render/comparison_text.hpp"

using namespace clprobe;
using clprobe::test::metric;
using clprobe::test::tight;

namespace {

// A GLM gradient with two variants and an FMA ceiling, each a tight sample set.
std::vector<ProbeResult> results(double glm_ms, double peak_gflops) {
    ProbeResult glm;
    glm.id = "glm.gradient";
    glm.layer = "kernel";
    for (const char* layout : {"row", "col"})
        glm.measurements.push_back(make_measurement("glm.gradient.time", "ms", {{"layout", layout}}, tight(glm_ms),
                                                    TimerKind::device_profiling, false));
    ProbeResult peak;
    peak.id = "kernel.compute.fp32";
    peak.layer = "kernel";
    peak.measurements.push_back(
        make_measurement("kernel.peak.fp32", "GFLOP/s", {}, tight(peak_gflops), TimerKind::device_profiling));
    return {glm, peak};
}

RunReport report_of(std::vector<double> glm_ms_per_pass, double peak = 200) {
    RunReport r;
    r.created_at = "2026-12-07T00:00:00Z";
    r.options = {{"mode", "quick"}};
    r.device = DeviceInfo{};
    r.device->name = "cpu-test";
    r.results = results(glm_ms_per_pass[0], peak);
    for (std::size_t i = 1; i < glm_ms_per_pass.size(); ++i) {
        RunPass p;
        p.number = static_cast<int>(i) + 1;
        p.device = "cpu-test";
        p.started_at = "2026-12-07T00:01:00Z";
        p.wall_seconds = 12.5;
        p.results = results(glm_ms_per_pass[i], peak);
        r.passes.push_back(std::move(p));
    }
    return r;
}

}  // namespace

TEST_CASE("passes: written and read back whole, and a single pass keeps its shape", "[passes][json]") {
    const RunReport r = report_of({10, 11, 12});
    const nlohmann::json j = report_to_json(r);
    REQUIRE(j.at("passes").size() == 2);
    CHECK(j.at("passes")[1].at("pass") == 3);
    const RunReport back = report_from_json(j);
    REQUIRE(back.passes.size() == 2);
    CHECK(back.passes[0].number == 2);
    CHECK(back.passes[0].device == "cpu-test");
    CHECK(back.passes[0].wall_seconds == 12.5);
    CHECK(back.passes[1].results.at(0).measurements.at(0).summary.median == Approx(12));
    CHECK_FALSE(report_to_json(report_of({10})).contains("passes"));
}

TEST_CASE("passes: a pass out of order is refused by the reader", "[passes][json]") {
    nlohmann::json j = report_to_json(report_of({10, 11, 12}));
    j["passes"][1]["pass"] = 2;  // two pass 2s: a hand-merged file
    CHECK_THROWS_AS(report_from_json(j), ReportFormatError);
    j["passes"][1]["pass"] = 3;
    CHECK_NOTHROW(report_from_json(j));
}

TEST_CASE("passes: each further pass is a report of the same header, and a foreign one is named", "[passes][compare]") {
    RunReport r = report_of({10, 11});
    const auto further = further_pass_reports(r);
    REQUIRE(further.size() == 1);
    CHECK(further[0].device->name == "cpu-test");
    CHECK(further[0].options == r.options);
    CHECK(find_measurement(further[0], "glm.gradient.time")->summary.median == Approx(11));
    CHECK_FALSE(foreign_pass(r));
    r.passes[0].device = "another-gpu";
    const auto problem = foreign_pass(r);
    REQUIRE(problem);
    CHECK(problem->find("pass 2 ran on another-gpu, not on its device cpu-test") != std::string::npos);
}

TEST_CASE("passes: their movement is measured, and a single pass has none", "[passes][compare]") {
    CHECK_FALSE(movement_between_passes(report_of({10})));
    const auto moved = movement_between_passes(report_of({10, 12}));
    REQUIRE(moved);
    CHECK(moved->runs == 2);
    REQUIRE(moved->families.count("glm.gradient"));
    CHECK(moved->families.at("glm.gradient").sigma_log == Approx(std::log(1.2)).epsilon(0.01));
}

TEST_CASE("passes: a single-pass A held against a known movement says so and still calls beyond it",
          "[passes][compare]") {
    const RunReport a = report_of({10}), b_same = report_of({11.5}), b_slow = report_of({20});
    // The movement of three earlier single runs, as the movement cache measures it: A is its own
    // baseline, so the runs' medians are dropped.
    const RunReport r1 = report_of({10}), r2 = report_of({12}), r3 = report_of({11});
    const BetweenRunNoise known = with_known_movement(std::nullopt, measure_between_runs({&r1, &r2, &r3}, 0.05),
                                                      "3 earlier runs of this device and options");
    CHECK(known.runs == 1);
    CHECK(known.medians.empty());

    // Alone, 15% slower with tight samples is called; inside the known movement it is not.
    CHECK(metric(compare_reports(a, b_same), "glm.gradient.time").verdict == Verdict::slower);
    CompareOptions o;
    o.between_runs = &known;
    const Comparison same = compare_reports(a, b_same, o);
    CHECK(metric(same, "glm.gradient.time").verdict == Verdict::within_noise);
    CHECK(same.baseline_runs == 1);
    CHECK(same.movement_known_from == known.known_from);
    CHECK(render_comparison_text(same, {}).find("A is a single pass; each band is at least 3 times the movement") !=
          std::string::npos);
    CHECK(comparison_to_json(same).at("movement_known_from") == known.known_from);

    // Twice as slow is beyond any of it: called, and both variants make a workload regression.
    const Comparison slow = compare_reports(a, b_slow, o);
    CHECK(metric(slow, "glm.gradient.time").verdict == Verdict::slower);
    REQUIRE(slow.family_regressions().size() == 1);
    CHECK(slow.regressed());
}

TEST_CASE("passes: a comparison with nothing known says it cannot separate the machine's movement",
          "[passes][compare]") {
    const Comparison c = compare_reports(report_of({10}), report_of({10.2}));
    CHECK(comparison_to_json(c).at("movement_known_from").is_null());
    CHECK(render_comparison_text(c, {}).find("These verdicts cannot separate a change from the machine's own "
                                             "movement between runs") != std::string::npos);
}

TEST_CASE("junit: XML special characters and control characters are escaped", "[junit]") {
    CHECK(xml_escape("a<b & \"c\" 'd'>") == "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
    CHECK(xml_escape(std::string("x\x01y\tz\n", 6)) == "x?y\tz\n");
}

TEST_CASE("junit: a test case per headline and workload, failed exactly where the gate fails", "[junit]") {
    const RunReport a = report_of({10, 10.3, 9.9});
    const auto noise = movement_between_passes(a);
    CompareOptions o;
    o.between_runs = &*noise;
    const auto count = [](const std::string& xml, const std::string& what) {
        std::ptrdiff_t n = 0;
        for (auto pos = xml.find(what); pos != std::string::npos; pos = xml.find(what, pos + 1))
            ++n;
        return n;
    };
    const Comparison same = compare_reports(a, report_of({10.1}), o);
    REQUIRE_FALSE(same.regressed());
    const std::string pass = render_comparison_junit(same, {"a.json", "b.json"});
    CHECK(count(pass, "<testcase ") == 2);  // kernel.peak.fp32 (headline), glm.gradient (workload)
    CHECK(count(pass, "<failure") == 0);
    CHECK(pass.find("failures=\"0\"") != std::string::npos);
    CHECK(pass.find("classname=\"clprobe.workload\" name=\"glm.gradient\"") != std::string::npos);

    const Comparison slow = compare_reports(a, report_of({20}), o);
    REQUIRE(slow.regressed());
    const std::string fail = render_comparison_junit(slow, {"a.json", "b&.json"});
    CHECK(count(fail, "<failure") == 1);
    CHECK(fail.find("failures=\"1\"") != std::string::npos);
    CHECK(fail.find("message=\"glm.gradient: 2 variants slower, none faster\"") != std::string::npos);
    CHECK(fail.find("b&amp;.json") != std::string::npos);
    // Well formed as far as a regex can tell: every test case closed, one suite.
    CHECK(count(fail, "<testcase ") == count(fail, "</testcase>"));
    CHECK(count(fail, "<testsuite ") == 1);
}

TEST_CASE("gate: a share of a roof called slower fails nothing; the rate it divides does", "[passes][compare]") {
    // Two GLM variants whose roofline fractions halved because B's roof doubled, their rates as A's.
    const auto with_fraction = [](double fraction, double gbps) {
        RunReport r = report_of({10, 10.1});
        for (auto* results : {&r.results, &r.passes[0].results}) {
            results->at(0).measurements.push_back(make_measurement("glm.gradient.best.roofline_fraction", "fraction",
                                                                   {}, tight(fraction), TimerKind::device_profiling));
            for (const char* layout : {"row", "col"}) {
                results->at(0).measurements.push_back(make_measurement("glm.gradient.roofline_fraction", "fraction",
                                                                       {{"layout", layout}}, tight(fraction),
                                                                       TimerKind::device_profiling));
                results->at(0).measurements.push_back(make_measurement(
                    "glm.gradient.bandwidth", "GB/s", {{"layout", layout}}, tight(gbps), TimerKind::device_profiling));
            }
        }
        return r;
    };
    const RunReport a = with_fraction(0.5, 20);
    const auto noise = movement_between_passes(a);
    CompareOptions o;
    o.between_runs = &*noise;
    const Comparison roof_moved = compare_reports(a, with_fraction(0.25, 20), o);
    CHECK(metric(roof_moved, "glm.gradient.roofline_fraction").verdict == Verdict::slower);  // shown as measured
    CHECK(metric(roof_moved, "glm.gradient.best.roofline_fraction").verdict == Verdict::slower);
    CHECK(roof_moved.headline_regressions().empty());
    CHECK(roof_moved.family_regressions().empty());
    CHECK_FALSE(roof_moved.regressed());
    // The JUnit file agrees with the gate: nothing failed.
    CHECK(render_comparison_junit(roof_moved, {"a", "b"}).find("<failure") == std::string::npos);
    // The bandwidth itself halved: that is the workload, and it fails.
    const Comparison slower = compare_reports(a, with_fraction(0.25, 10), o);
    REQUIRE(slower.family_regressions().size() == 1);
    CHECK(slower.regressed());
}

TEST_CASE("passes: every band is at least the known movement of earlier runs", "[passes][compare]") {
    // A's two passes barely moved (1%); earlier separate runs moved 20%. B is 15% slower.
    const RunReport a = report_of({10, 10.1}), b = report_of({11.5, 11.5});
    const RunReport r1 = report_of({10}), r2 = report_of({12}), r3 = report_of({11});
    const auto passes = movement_between_passes(a);
    CompareOptions o;
    o.between_runs = &*passes;
    CHECK(metric(compare_reports(a, b, o), "glm.gradient.time").verdict == Verdict::slower);
    const BetweenRunNoise both =
        with_known_movement(passes, measure_between_runs({&r1, &r2, &r3}, 0.05), "3 earlier runs");
    CHECK(both.runs == 2);
    CHECK(*both.band_for("glm.gradient.time", {{"layout", "row"}}) >
          *passes->band_for("glm.gradient.time", {{"layout", "row"}}));
    o.between_runs = &both;
    const Comparison c = compare_reports(a, b, o);
    CHECK(metric(c, "glm.gradient.time").verdict == Verdict::within_noise);
    CHECK(c.baseline_runs == 2);
    CHECK(render_comparison_text(c, {}).find("2 runs of A (its passes and repeats), and 3 earlier runs") !=
          std::string::npos);
}
