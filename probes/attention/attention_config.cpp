#include "attention/attention_config.hpp"

#include <limits>

#include "core/memory_roofs.hpp"

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

std::optional<std::uint32_t> memory_bound_kv_len(const std::vector<std::uint32_t>& lens, std::uint64_t bytes_per_token,
                                                 std::uint64_t last_cache_bytes, std::uint64_t max_alloc_bytes) {
    if (!last_cache_bytes || !bytes_per_token) return std::nullopt;
    const std::uint64_t wanted = memory_level_factor * last_cache_bytes;
    for (std::uint32_t l : lens)
        if (std::uint64_t{l} * bytes_per_token >= wanted) return std::nullopt;
    // Steps of kv_len_step tokens, not doublings (as glm::memory_level_rows): on a 260 MiB L3
    // doubling asked for 2 GiB of K and V where 1.04 GiB is enough, and decode then spent twice
    // the time (fill, host reference and every sample) on a point that was already memory-level.
    const std::uint64_t stepped = memory_level_items(last_cache_bytes, bytes_per_token, kv_len_step);
    // K and V are separate buffers of half the cache each.
    if (stepped > std::numeric_limits<std::uint32_t>::max() || stepped * bytes_per_token / 2 > max_alloc_bytes)
        return std::nullopt;
    return static_cast<std::uint32_t>(stepped);
}

Labels prefill_labels(const AttentionConfig& c, std::uint32_t seq) {
    return {{"seq", std::to_string(seq)},
            {"head_dim", std::to_string(c.head_dim)},
            {"causal", c.causal ? "true" : "false"}};
}

}  // namespace clprobe::attention
