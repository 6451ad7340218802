#include "core/probe_selection.hpp"

#include <algorithm>

namespace clprobe {

bool probe_pattern_matches(const std::string& pattern, const std::string& id) {
    if (pattern == id) return true;
    return !pattern.empty() && pattern.back() == '.' && id.size() > pattern.size() && id.starts_with(pattern);
}

namespace {

bool any_matches(const std::vector<std::string>& patterns, const std::string& id) {
    return std::any_of(patterns.begin(), patterns.end(),
                       [&](const std::string& p) { return probe_pattern_matches(p, id); });
}

}  // namespace

bool ProbeSelection::selects(const std::string& id) const {
    return (only.empty() || any_matches(only, id)) && !any_matches(skip, id);
}

std::optional<std::string> probe_selection_problem(const ProbeSelection& selection,
                                                   const std::vector<std::string>& known_ids) {
    for (const auto& [option, patterns] : {std::pair{"--probes", &selection.only}, {"--skip", &selection.skip}})
        for (const auto& pattern : *patterns) {
            const bool known = std::any_of(known_ids.begin(), known_ids.end(),
                                           [&](const std::string& id) { return probe_pattern_matches(pattern, id); });
            if (!known)
                return std::string(option) + ": no probe is named '" + pattern +
                       "' (an id, or a prefix ending in '.'; clprobe list --probes lists them)";
        }
    return std::nullopt;
}

}  // namespace clprobe
