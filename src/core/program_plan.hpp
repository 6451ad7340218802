#pragma once
// The kernel programs a run will build, as (file, options) pairs, and how a few builder processes
// share them. Building them ahead, before the first device probe, fills the driver's own cache
// (and clprobe's binary cache where the driver has none) so the probes' builds become loads; see
// docs/architecture.md, "Building kernels ahead".
#include <string>
#include <vector>

namespace clprobe {

struct ProgramNeed {
    std::string file;     // relative to the kernel folder: "peak/compute.cl"
    std::string options;  // exactly as the probe passes them: the caches key on the text
    bool operator==(const ProgramNeed&) const = default;
};

// First occurrence of each pair, in order.
std::vector<ProgramNeed> unique_programs(const std::vector<ProgramNeed>& needs);

// `workers` shares (fewer when there are fewer programs, none when there are none), dealt round
// robin in plan order so each worker gets early and late programs alike.
std::vector<std::vector<ProgramNeed>> share_programs(const std::vector<ProgramNeed>& programs, unsigned workers);

// One command-line argument per program for the builder process, and back. Options may hold
// spaces; a file name never holds a newline, so "file\noptions" is unambiguous. Throws
// std::invalid_argument on an argument without the separator.
std::string program_argument(const ProgramNeed& need);
ProgramNeed parse_program_argument(const std::string& argument);

}  // namespace clprobe
