#pragma once
// Rules over a traced program (`clprobe trace`): they read the program's facts (core/trace_facts)
// and this machine's measured ceilings, and state every gain as the share of the program's own
// measured wall time the fix would save.
#include <optional>
#include <vector>

#include "core/trace_facts.hpp"
#include "rules/rule.hpp"

namespace clprobe {

std::vector<Rule> trace_rules();

// Whether the report is about a traced program, whose ranking is about that program: the device
// layers' own rules (written for clprobe's built-in pipelines) then stay silent.
bool is_trace_report(const RunReport& report);

}  // namespace clprobe
