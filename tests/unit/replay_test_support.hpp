#pragma once
// What the replay tests share: a replayed variant of known samples and output check.
#include <string>
#include <utility>
#include <vector>

#include "core/stats.hpp"
#include "replay/replay_result.hpp"

namespace clprobe::test {

// A variant whose outputs are not identical carries `errors`, as the engine's output check gives.
inline replay::VariantResult replayed_variant(replay::VariantKind kind, std::string label, std::vector<double> samples,
                                              replay::OutputCheck check = replay::OutputCheck::identical,
                                              replay::OutputErrors errors = {1, 1, 1,
                                                                             "arg 0 (float): 1 elements differ"}) {
    replay::VariantResult v;
    v.kind = kind;
    v.label = std::move(label);
    v.local_size = "1";
    v.samples_ns = samples;
    v.summary = summarize(samples);
    v.check = check;
    if (check != replay::OutputCheck::identical) v.errors = std::move(errors);
    return v;
}

}  // namespace clprobe::test
