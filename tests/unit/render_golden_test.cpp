// Each renderer against golden output: a saved report rendered as text (plain and verbose),
// Markdown and HTML must match tests/fixtures/golden/ byte for byte, so any change to what users
// see shows up in review. After an intended change, regenerate with
//   CLPROBE_UPDATE_GOLDEN=1 build/tests/clprobe_unit_tests "[golden]"
// and read the diff before committing it.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/atomic_file.hpp"
#include "json/report_json.hpp"
#include "render/csv_export.hpp"
#include "render/gbench_export.hpp"
#include "render/html_report.hpp"
#include "render/markdown_report.hpp"
#include "render/text_report.hpp"
#include "rules/analysis.hpp"
#include "rules/trust.hpp"

using namespace clprobe;

namespace {

const std::filesystem::path fixtures = CLPROBE_FIXTURES;

// The fixtures predate stored trust notes: they get them as `clprobe report` gives them, from the
// analysis's assess_trust, without re-running the rules (the renderers show the saved findings).
RunReport load(const std::string& name) {
    RunReport r = report_from_json_text(read_file(fixtures / "reports" / name, 16 << 20));
    r.trust_notes = assess_trust(r);
    return r;
}

// The first line where the two differ, for a readable failure.
std::string first_difference(const std::string& expected, const std::string& actual) {
    std::istringstream e(expected), a(actual);
    std::string le, la;
    for (int line = 1;; ++line) {
        const bool more_e = static_cast<bool>(std::getline(e, le));
        const bool more_a = static_cast<bool>(std::getline(a, la));
        if (!more_e && !more_a) return "same lines, different bytes (line endings?)";
        if (le != la || more_e != more_a)
            return "line " + std::to_string(line) + ":\n  expected: " + (more_e ? le : "<end>") +
                   "\n  actual:   " + (more_a ? la : "<end>");
    }
}

void check_golden(const std::string& name, const std::string& actual) {
    const auto path = fixtures / "golden" / name;
    if (std::getenv("CLPROBE_UPDATE_GOLDEN")) {
        write_file_atomically(path, actual);
        WARN("updated " << path.string());
        return;
    }
    REQUIRE(std::filesystem::exists(path));
    const std::string expected = read_file(path, 16 << 20);
    INFO(name << " differs from its golden copy at " << first_difference(expected, actual));
    CHECK(expected == actual);
}

}  // namespace

TEST_CASE("golden: text report of a saved PoCL run", "[golden]") {
    const RunReport r = load("pocl_kernel_quick.json");
    check_golden("pocl_kernel_quick.txt", render_text(r));
    check_golden("pocl_kernel_quick.verbose.txt", render_text(r, {true, false}));
    check_golden("pocl_kernel_quick.color.txt", render_text(r, {false, true}));
}

TEST_CASE("golden: Markdown and HTML of a saved PoCL run", "[golden]") {
    const RunReport r = load("pocl_kernel_quick.json");
    check_golden("pocl_kernel_quick.md", render_markdown(r));
    check_golden("pocl_kernel_quick.html", render_html(r));
}

TEST_CASE("golden: the minimal synthetic report in every format", "[golden]") {
    const RunReport r = load("synthetic_minimal.json");
    check_golden("synthetic_minimal.txt", render_text(r, {true, false}));
    check_golden("synthetic_minimal.md", render_markdown(r, {true}));
    check_golden("synthetic_minimal.html", render_html(r));
}

TEST_CASE("golden: CSV and google-benchmark exports of saved runs", "[golden]") {
    for (const std::string name : {"pocl_kernel_quick", "synthetic_minimal"}) {
        const RunReport r = load(name + ".json");
        check_golden(name + ".csv", render_csv(r));
        check_golden(name + ".gbench.json", render_gbench(r));
    }
}

TEST_CASE("golden: the current rules' verdicts on a saved run", "[golden]") {
    // Re-analysing a saved report is what `clprobe report` does: a rule change shows up here.
    RunReport r = load("pocl_kernel_quick.json");
    analyze(r);
    check_golden("pocl_kernel_quick.findings.json", report_to_json(r).at("findings").dump(2) + "\n");
}
