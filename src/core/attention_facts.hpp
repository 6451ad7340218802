#pragma once
// Why attention.prefill left part of its work out, as plain data: the probe records each skip with
// one call and the attention memory rules read them back with one, so a finding can say that the
// run skipped what does not fit. Stored as the probe's attributes "shape_skipped" and
// "unfused_skipped" (a sentence each), as in earlier reports.
#include <optional>
#include <string>

namespace clprobe {

struct ProbeResult;
struct RunReport;

struct PrefillSkipFacts {
    std::optional<std::string> shape;    // the whole probe: Q, K, V and O of the shape do not fit
    std::optional<std::string> unfused;  // the unfused baseline: its score matrix does not fit
};

void record_prefill_shape_skipped(ProbeResult& out, const std::string& why);
void record_prefill_unfused_skipped(ProbeResult& out, const std::string& why);

// Empty when the report holds no attention.prefill result or it skipped nothing.
PrefillSkipFacts prefill_skips_of(const RunReport& report);

}  // namespace clprobe
