#pragma once
// RunReport <-> JSON. The writer is total; the reader is strict: anything that is not a report
// this version understands is rejected with one message naming the field, never half-loaded.
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/report.hpp"

namespace clprobe {

class ReportFormatError : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

nlohmann::json report_to_json(const RunReport& report);
// One entry of `results`: how an isolated probe's child sends its result to the parent.
nlohmann::json probe_result_to_json(const ProbeResult& result);
ProbeResult probe_result_from_json(const nlohmann::json& j);  // throws ReportFormatError("result.<field>: ...")
nlohmann::json device_info_to_json(const DeviceInfo& device);
// One finding as the report's findings[] holds it (also the replay's findings).
nlohmann::json finding_to_json(const Finding& finding);
nlohmann::json provenance_to_json(const Provenance& provenance);
// [{id, warning, text}]: the report's `trust_notes`, and compare's notes in one report only.
nlohmann::json trust_notes_to_json(const std::vector<TrustNote>& notes);
std::string report_to_json_text(const RunReport& report);  // pretty, with a trailing newline

// Throws ReportFormatError("<field path>: <problem>").
RunReport report_from_json(const nlohmann::json& j);
RunReport report_from_json_text(std::string_view text);

// Largest report file `clprobe report`/`compare` will read; real reports are well under 10 MiB.
inline constexpr std::size_t max_report_bytes = 256u << 20;

}  // namespace clprobe
