#include "attention/attention_config.hpp"

namespace clprobe::attention {

AttentionConfig config_for(const RunOptions& options) {
    AttentionConfig c;
    switch (options.mode) {
        case RunMode::quick:
            c.seq = 192;
            c.requests = 4;
            c.kv_lens = {2048};
            c.tile_sweep = false;
            c.verify_rows = 16;
            c.decode_steps = 4;
            break;
        case RunMode::full:
            c.seq = 2048;
            c.kv_lens = {512, 1024, 2048, 4096, 8192, 16384};
            c.verify_rows = 64;
            c.requests = 16;
            c.decode_steps = 16;
            break;
        default:
            c.seq = 512;
            c.kv_lens = {512, 4096};
            break;
    }
    const auto& a = options.attention;
    if (a.batch) c.batch = a.batch;
    if (a.heads) c.heads = a.heads;
    if (a.seq) c.seq = a.seq;
    if (a.head_dim) c.head_dim = a.head_dim;
    if (a.kv_len) c.kv_lens = {a.kv_len};
    c.causal = a.causal;
    return c;
}

Labels prefill_labels(const AttentionConfig& c, std::uint32_t seq) {
    return {{"seq", std::to_string(seq)},
            {"head_dim", std::to_string(c.head_dim)},
            {"causal", c.causal ? "true" : "false"}};
}

}  // namespace clprobe::attention
