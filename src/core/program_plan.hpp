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

// Probes worth running once in a builder, warm-up only (probes/program_needs says which): their
// first launches compile more code than their program builds did. Probes that build the same
// programs form one group, so one builder compiles them once.
struct WarmUpGroup {
    std::vector<std::string> probe_ids;
    std::vector<ProgramNeed> programs;  // what the group's probes build
};

// What one builder process does: build `programs` in order, then run `warm_ups` in order.
struct BuilderShare {
    std::vector<ProgramNeed> programs;
    std::vector<std::string> warm_ups;
    bool operator==(const BuilderShare&) const = default;
};

// At most `workers` shares (none empty; none at all for 0 workers). A group goes whole to one
// builder with its programs (a program two groups build goes with the first); every other program
// goes alone. Weights: a program 1, a group 1 per program it builds and 4 per probe it warms up
// (on PoCL 3.1, 2 CPUs: a program builds in about 0.9 s, a workload's warm-up compiles for 4-7 s).
// Heaviest first, each to the least loaded builder (the lowest index on a tie), so programs alone
// are dealt round robin in plan order.
std::vector<BuilderShare> plan_builders(const std::vector<ProgramNeed>& programs,
                                        const std::vector<WarmUpGroup>& groups, unsigned workers);

// One command-line argument per program for the builder process, and back. Options may hold
// spaces; a file name never holds a newline, so "file\noptions" is unambiguous. Throws
// std::invalid_argument on an argument without the separator.
std::string program_argument(const ProgramNeed& need);
ProgramNeed parse_program_argument(const std::string& argument);

}  // namespace clprobe
