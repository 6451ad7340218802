#pragma once
// The attention workload's shapes for a run: the user's --attn-* options where given, else the
// mode's defaults, sized by the unfused baseline (its score matrix grows with seq^2) so --quick
// stays within seconds, while --full probes long prompts and contexts.
#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/probe.hpp"

namespace clprobe::attention {

struct AttentionConfig {
    std::uint32_t batch = 1, heads = 8, seq = 1024, head_dim = 64;
    bool causal = false;
    std::vector<std::uint32_t> kv_lens;  // decode cache lengths
    bool tile_sweep = true;              // fused prefill: several tiles, or the default one
    std::uint32_t verify_rows = 32;      // rows per sequence-head checked against the reference
    std::uint32_t requests = 8;          // batching: requests per batch
    std::uint32_t decode_steps = 8;      // serving step: tokens generated after the prefill
};

AttentionConfig config_for(const RunOptions& options);

// The shortest KV length, a multiple of `kv_len_step`, whose fp32 cache (K and V, `bytes_per_token`
// per token over all sequence-heads) is at least four times the last-level cache, so decode at that
// length reads memory, not cache. nullopt when the cache size is unknown, when `lens` already holds such a
// length, or when one K (or V) buffer of that length would exceed `max_alloc_bytes`.
inline constexpr std::uint64_t kv_len_step = 4096;
std::optional<std::uint32_t> memory_bound_kv_len(const std::vector<std::uint32_t>& lens, std::uint64_t bytes_per_token,
                                                 std::uint64_t last_cache_bytes, std::uint64_t max_alloc_bytes);

// Labels every prefill measurement carries.
Labels prefill_labels(const AttentionConfig& c, std::uint32_t seq);

}  // namespace clprobe::attention
