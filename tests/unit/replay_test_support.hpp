#pragma once
// What the replay tests share: a replayed variant of known samples and output check.
#include <nlohmann/json.hpp>

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

// capture.json's entry for argument 3, a 4 x 2 CL_RGBA CL_FLOAT 2-D image (16 bytes a pixel, 128
// bytes) read and written by the kernel: what the layer writes for it and what the reader takes.
inline nlohmann::json image_arg_json() {
    return {{"index", 3},
            {"kind", "image"},
            {"size", 128},
            {"flags", 4},
            {"image_type", 0x10F1},
            {"channel_order", 0x10B5},
            {"channel_type", 0x10DE},
            {"element_size", 16},
            {"width", 4},
            {"height", 2},
            {"depth", 1},
            {"array_size", 1},
            {"input", "arg3.in"},
            {"output", "arg3.out"}};
}

}  // namespace clprobe::test
