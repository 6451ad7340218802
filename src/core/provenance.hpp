#pragma once
// Where a report came from: which clprobe build, and which runtime libraries it ran with. Saved in
// every report so two reports' differences can be traced to a rebuild or a library upgrade, not
// only to the hardware (`compare` lists the fields that differ).
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace clprobe {

struct Provenance {
    // The build, fixed when clprobe was compiled.
    std::string clprobe_version;  // project version, e.g. 0.1.0
    std::string git_commit;       // `git describe --always --dirty`; "unknown" outside a git checkout
    std::string build_type;       // CMake build type, e.g. RelWithDebInfo
    std::string compiler;         // e.g. "GNU 12.2.0"
    // Header-only libraries, as compiled in.
    std::string fmt_version, cli11_version, nlohmann_json_version;
    // Shared libraries, as loaded at run time ("unknown" when the library would not say).
    std::string hwloc_version;  // hwloc's API version (hwloc_get_api_version)
    std::string icd_loader;     // OpenCL ICD loader name and version, e.g. "OpenCL ICD Loader 2.3.1"
    std::string openblas;       // openblas_get_config(), or "not built in"

    bool operator==(const Provenance&) const = default;
};

// What this binary knows without loading anything: the build fields and the header-only
// libraries; the runtime fields are "unknown" (src/runtime/provenance_query fills them).
Provenance build_provenance();

// Stable lowercase ids and values, in display order: for `--version`, renderers and `compare`.
std::vector<std::pair<std::string_view, std::string>> provenance_fields(const Provenance& p);

// One line for report headers: "0.1.0 (abc123, RelWithDebInfo, GNU 12.2.0) · hwloc 2.8.0 · ...".
std::string provenance_summary(const Provenance& p);

}  // namespace clprobe
