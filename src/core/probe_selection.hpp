#pragma once
// --probes and --skip: which probes of the registry run. A pattern is an exact probe id
// (kernel.bandwidth) or a prefix ending in a dot (attention.), so a group is named without
// globbing and a typo is caught instead of silently selecting nothing. Pure: the CLI checks the
// patterns against the registry's ids, the runner asks per probe.
#include <optional>
#include <string>
#include <vector>

namespace clprobe {

struct ProbeSelection {
    std::vector<std::string> only;  // --probes; empty: every probe the layers and workloads select
    std::vector<std::string> skip;  // --skip

    bool empty() const { return only.empty() && skip.empty(); }
    // Whether probe `id` runs: it matches a pattern of `only` (or `only` is empty) and none of `skip`.
    bool selects(const std::string& id) const;
};

// Whether `pattern` names `id`: equal, or a prefix of it ending in '.'.
bool probe_pattern_matches(const std::string& pattern, const std::string& id);

// The first pattern of `selection` that names none of `known_ids`, as a one-line error
// ("--skip: no probe is named 'kernel.foo' (clprobe list --probes)"); nullopt when all name one.
std::optional<std::string> probe_selection_problem(const ProbeSelection& selection,
                                                   const std::vector<std::string>& known_ids);

}  // namespace clprobe
