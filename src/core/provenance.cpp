#include "core/provenance.hpp"

#include <fmt/core.h>

#include <cctype>

#include <CLI/Version.hpp>
#include <nlohmann/json.hpp>

#include "core/build_info.hpp"
#include "core/git_commit.hpp"
#include "core/version.hpp"

namespace clprobe {

Provenance build_provenance() {
    Provenance p;
    p.clprobe_version = tool_version;
    p.git_commit = git_commit;
    p.build_type = build_type;
    p.compiler = compiler_id;
    p.fmt_version = fmt::format("{}.{}.{}", FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100);
    p.cli11_version = CLI11_VERSION;
    p.nlohmann_json_version =
        fmt::format("{}.{}.{}", NLOHMANN_JSON_VERSION_MAJOR, NLOHMANN_JSON_VERSION_MINOR, NLOHMANN_JSON_VERSION_PATCH);
    p.hwloc_version = p.icd_loader = p.openblas = "unknown";
    return p;
}

std::vector<std::pair<std::string_view, std::string>> provenance_fields(const Provenance& p) {
    return {{"clprobe_version", p.clprobe_version},
            {"git_commit", p.git_commit},
            {"build_type", p.build_type},
            {"compiler", p.compiler},
            {"hwloc_version", p.hwloc_version},
            {"icd_loader", p.icd_loader},
            {"openblas", p.openblas},
            {"fmt_version", p.fmt_version},
            {"cli11_version", p.cli11_version},
            {"nlohmann_json_version", p.nlohmann_json_version}};
}

namespace {

// "OpenBLAS 0.3.21 ..." and "OpenCL ICD Loader 2.3.1" already name themselves; "unknown" does not.
std::string named(std::string_view name, const std::string& value) {
    auto lower = [](std::string_view text) {
        std::string out(text);
        for (char& ch : out)
            ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        return out;
    };
    return lower(value).find(lower(name)) != std::string::npos ? value : fmt::format("{} {}", name, value);
}

}  // namespace

std::string provenance_summary(const Provenance& p) {
    return fmt::format("{} ({}, {}, {}) · hwloc {} · {} · {}", p.clprobe_version, p.git_commit, p.build_type,
                       p.compiler, p.hwloc_version, named("ICD loader", p.icd_loader), named("OpenBLAS", p.openblas));
}

}  // namespace clprobe
