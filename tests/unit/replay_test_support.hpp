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

// As the engine times them: each variant's samples beside the launch as captured's (its samples
// in turn, cycled), in a first round and a confirmation round that measured the same again.
inline void pair_rounds(replay::ReplayResult& r) {
    if (r.variants.empty()) return;
    const std::vector<double> ref = r.variants[0].samples_ns;
    for (std::size_t i = 1; i < r.variants.size(); ++i) {
        auto& v = r.variants[i];
        const std::vector<double> once = v.samples_ns;
        v.samples_ns.clear();
        v.reference_ns.clear();
        for (int round = 0; round < 2; ++round)
            for (std::size_t k = 0; k < once.size(); ++k) {
                v.samples_ns.push_back(once[k]);
                v.reference_ns.push_back(ref[k % ref.size()]);
            }
        v.first_round = once.size();
        v.summary = summarize(v.samples_ns);
    }
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
