// Provenance: the build fields are filled, the report JSON carries it (and still reads reports
// without it), the text header shows it, and compare names the fields that differ.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>

#include "compare/comparison.hpp"
#include "core/atomic_file.hpp"
#include "core/provenance.hpp"
#include "json/comparison_json.hpp"
#include "json/report_json.hpp"
#include "render/comparison_text.hpp"
#include "render/text_report.hpp"

using namespace clprobe;
using nlohmann::json;

namespace {

const std::filesystem::path fixtures = CLPROBE_FIXTURES;

Provenance sample_provenance() {
    Provenance p;
    p.clprobe_version = "0.1.0";
    p.git_commit = "2791b7b0a1c2-dirty";
    p.build_type = "RelWithDebInfo";
    p.compiler = "GNU 12.2.0";
    p.hwloc_version = "2.8.0";
    p.icd_loader = "OpenCL ICD Loader 2.3.1";
    p.openblas = "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64";
    p.fmt_version = "9.1.0";
    p.cli11_version = "2.1.2";
    p.nlohmann_json_version = "3.11.2";
    return p;
}

RunReport report_with(std::optional<Provenance> p) {
    RunReport r;
    r.tool_version = "0.1.0";
    r.created_at = "2026-12-01T09:00:00Z";
    r.host = {"node1", "Debian GNU/Linux 12 (bookworm)", "Linux 6.1.0 x86_64", "Some CPU", 8};
    r.options = {{"mode", "quick"}};
    r.provenance = std::move(p);
    return r;
}

std::set<std::string> keys_of(const json& object) {
    std::set<std::string> out;
    for (const auto& [k, v] : object.items())
        out.insert(k);
    return out;
}

}  // namespace

TEST_CASE("provenance: the build fields come from the build, the runtime ones wait for a query", "[provenance]") {
    const Provenance p = build_provenance();
    CHECK_FALSE(p.clprobe_version.empty());
    CHECK_FALSE(p.git_commit.empty());  // a commit, or "unknown" outside a checkout
    CHECK_FALSE(p.build_type.empty());
    CHECK(p.compiler.find(' ') != std::string::npos);  // id and version
    CHECK(p.fmt_version.find('.') != std::string::npos);
    CHECK(p.hwloc_version == "unknown");
    CHECK(p.icd_loader == "unknown");
    CHECK(p.openblas == "unknown");
    const auto fields = provenance_fields(p);
    REQUIRE(fields.size() == 10);
    CHECK(fields.front().first == "clprobe_version");
}

TEST_CASE("provenance: report JSON writes and reads it, field by field", "[provenance][json]") {
    const RunReport r = report_with(sample_provenance());
    const json j = report_to_json(r);
    REQUIRE(j.contains("provenance"));
    CHECK(j.at("provenance").at("git_commit") == "2791b7b0a1c2-dirty");
    CHECK(j.at("provenance").at("icd_loader") == "OpenCL ICD Loader 2.3.1");
    const RunReport back = report_from_json(j);
    REQUIRE(back.provenance.has_value());
    CHECK(*back.provenance == sample_provenance());
}

TEST_CASE("provenance: the written fields are exactly those docs/report.schema.json requires", "[provenance][json]") {
    const json schema =
        json::parse(read_file(fixtures.parent_path().parent_path() / "docs" / "report.schema.json", 1 << 20));
    const json& spec = schema.at("properties").at("provenance");
    std::set<std::string> required;
    for (const auto& k : spec.at("required"))
        required.insert(k.get<std::string>());
    CHECK(keys_of(report_to_json(report_with(sample_provenance())).at("provenance")) == required);
    CHECK(keys_of(spec.at("properties")) == required);
}

TEST_CASE("provenance: a report without it still loads, and is written back without it", "[provenance][json]") {
    json j = report_to_json(report_with(std::nullopt));
    CHECK_FALSE(j.contains("provenance"));
    CHECK_FALSE(report_from_json(j).provenance.has_value());
    j["provenance"] = nullptr;
    CHECK_FALSE(report_from_json(j).provenance.has_value());
    // The committed fixtures predate provenance.
    const RunReport old = report_from_json_text(read_file(fixtures / "reports" / "synthetic_minimal.json", 1 << 20));
    CHECK_FALSE(old.provenance.has_value());
}

TEST_CASE("provenance: a present but malformed record is rejected, naming the field", "[provenance][json]") {
    json j = report_to_json(report_with(sample_provenance()));
    j["provenance"].erase("openblas");
    CHECK_THROWS_WITH(report_from_json(j), "provenance.openblas: missing");
    j = report_to_json(report_with(sample_provenance()));
    j["provenance"]["git_commit"] = 42;
    CHECK_THROWS_WITH(report_from_json(j), "provenance.git_commit: expected a string");
    j["provenance"] = "0.1.0";
    CHECK_THROWS_WITH(report_from_json(j), "provenance: expected an object");
}

TEST_CASE("provenance: the text report's header names the build when the report has one", "[provenance][render]") {
    const std::string with = render_text(report_with(sample_provenance()));
    CHECK(with.find("build:  clprobe 0.1.0 (2791b7b0a1c2-dirty, RelWithDebInfo, GNU 12.2.0) · hwloc 2.8.0 · OpenCL "
                    "ICD Loader 2.3.1 · OpenBLAS 0.3.21") != std::string::npos);
    CHECK(render_text(report_with(std::nullopt)).find("build:") == std::string::npos);
    Provenance unknown = sample_provenance();
    unknown.icd_loader = "unknown";
    unknown.openblas = "not built in";
    CHECK(provenance_summary(unknown).find("ICD loader unknown · OpenBLAS not built in") != std::string::npos);
}

TEST_CASE("provenance: compare lists the fields that differ, or says none do", "[provenance][compare]") {
    Provenance b = sample_provenance();
    b.git_commit = "0123456789ab";
    b.icd_loader = "Khronos OpenCL ICD Loader 3.0.6";
    const Comparison c = compare_reports(report_with(sample_provenance()), report_with(b));
    CHECK(c.provenance_known);
    REQUIRE(c.provenance.size() == 2);
    CHECK(c.provenance[0].field == "provenance.git_commit");
    CHECK(c.provenance[0].a == "2791b7b0a1c2-dirty");
    CHECK(c.provenance[0].b == "0123456789ab");
    CHECK(c.provenance[1].field == "provenance.icd_loader");
    const std::string text = render_comparison_text(c);
    CHECK(text.find("provenance.icd_loader") != std::string::npos);
    CHECK(text.find("OpenCL ICD Loader 2.3.1 -> Khronos OpenCL ICD Loader 3.0.6") != std::string::npos);
    const json j = comparison_to_json(c);
    REQUIRE(j.at("provenance").size() == 2);
    CHECK(j.at("provenance")[0].at("field") == "provenance.git_commit");

    const Comparison same = compare_reports(report_with(sample_provenance()), report_with(sample_provenance()));
    CHECK(same.provenance_known);
    CHECK(same.provenance.empty());
    const std::string same_text = render_comparison_text(same);
    CHECK(same_text.find("Provenance (build and libraries)\n  no differences") != std::string::npos);
    CHECK(comparison_to_json(same).at("provenance") == json::array());
}

TEST_CASE("provenance: a version change alone is tool_version's difference, not provenance's",
          "[provenance][compare]") {
    Provenance b = sample_provenance();
    b.clprobe_version = "0.2.0";
    CHECK(provenance_differences(sample_provenance(), b).empty());
    b.openblas = "not built in";
    const auto d = provenance_differences(sample_provenance(), b);
    REQUIRE(d.size() == 1);
    CHECK(d[0].field == "provenance.openblas");
    CHECK(d[0].b == "not built in");
}

TEST_CASE("provenance: compare says so when a report predates it", "[provenance][compare]") {
    const Comparison c = compare_reports(report_with(std::nullopt), report_with(sample_provenance()));
    CHECK_FALSE(c.provenance_known);
    CHECK(c.provenance.empty());
    CHECK(render_comparison_text(c).find("unknown: a report predates provenance records") != std::string::npos);
    CHECK(comparison_to_json(c).at("provenance").is_null());
}
