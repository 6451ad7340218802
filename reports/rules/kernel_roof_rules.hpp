#pragma once
// A traced kernel held against the roof that binds it (docs/findings.md, Trace layer):
// trace.kernel.below_roof for a kernel whose bytes bind it (or whose work was not counted: then an
// estimate from its arguments' sizes, shown but never ranked), trace.kernel.below_compute_roof for
// one whose floating-point or integer operations bind it. The roof, the fraction and the saving of
// a counted kernel come from its counted work (core/kernel_roofs), and so does the advice.
#include <optional>
#include <string>
#include <string_view>

#include "core/trace_facts.hpp"
#include "rules/rule.hpp"

namespace clprobe::trace_rule {

// Why a roof finding about a kernel launched without a local size waits: trace.kernel.no_local_size
// names that kernel first; a replay that measures its local sizes at no gain ranks this one instead.
inline constexpr const char* pending_local_size =
    "its kernel is launched without a local size, which trace.kernel.no_local_size names first; ranked when a "
    "replay finds no gain in its local sizes (--replay N)";

RuleOutcome kernel_below_roof(const RunReport& r, const TraceFacts& f, const RuleSpec& rule);
RuleOutcome kernel_below_compute_roof(const RunReport& r, const TraceFacts& f, const RuleSpec& rule);
RuleSpec below_compute_roof_spec();

// The lever a library ships for its own kernels, named by the kernel ("XgemmDirectTN" is
// CLBlast's: its tuner), or nullopt for a kernel no known library owns.
std::optional<std::string> library_tuning_advice(std::string_view kernel);

}  // namespace clprobe::trace_rule
