#pragma once
// Reads the trace layer's record file (format: src/layer/trace_format.hpp) into a ProgramTrace.
// Tolerant by design: the file of a program that crashed or was killed ends mid-record, and a
// damaged line must cost that line, not the trace.
#include <istream>
#include <optional>
#include <string>

#include "trace/program_trace.hpp"

namespace clprobe {

// Parses records from `in`. An input without a header line gives an empty trace (format_version 0).
ProgramTrace read_program_trace(std::istream& in);

// Reads the file at `path`; nullopt when it cannot be opened (the layer never created it).
std::optional<ProgramTrace> read_program_trace_file(const std::string& path);

}  // namespace clprobe
