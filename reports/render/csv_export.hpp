#pragma once
// `clprobe report FILE --format csv`: every measurement as one spreadsheet row (columns in
// docs/report-schema.md, "CSV export").
#include <set>
#include <string>
#include <string_view>

#include "core/report.hpp"
#include "render/render_options.hpp"

namespace clprobe {

// RFC 4180: header row, CRLF line ends; one row per measurement of every probe, in report order.
// Probes without measurements give no row (their status is in the JSON report). No option applies.
std::string render_csv(const RunReport& report, const RenderOptions& options = {});

// One field: quoted (with quotes doubled) when it holds a comma, a quote, CR or LF.
std::string csv_field(std::string_view text);

// The label keys of every measurement in the report, sorted: one column each.
std::set<std::string> label_keys(const RunReport& report);

// A number as the shortest text that reads back as the same double ("0.1", "1e-07", "12345678.5").
std::string csv_number(double value);

}  // namespace clprobe
