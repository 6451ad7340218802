#include "attention/attention_memory.hpp"

#include <algorithm>
#include <initializer_list>
#include <limits>

#include "attention/kv_quant.hpp"

namespace clprobe::attention {

namespace {}  // namespace

Footprint prefill_footprint(const PrefillShape& s, PrefillPath path) {
    // upload(): Q, K, V, O of rows x head_dim floats, rows = batch x heads x seq.
    const std::uint64_t seq_heads = std::uint64_t{s.batch} * s.heads;
    const std::uint64_t tensor = saturating_product({seq_heads, s.seq, s.head_dim, sizeof(float)});
    Footprint f;
    for (int i = 0; i < 4; ++i)
        f.add(tensor);
    if (path == PrefillPath::fused) {
        // make_head_set(): starts and lens, one uint each per member (at least one).
        const std::uint64_t head_set = std::max<std::uint64_t>(1, seq_heads) * sizeof(std::uint32_t);
        f.add(head_set);
        f.add(head_set);
    } else {
        // make_unfused(): the score matrix, heads x seq x seq floats.
        f.add(saturating_product({seq_heads, s.seq, s.seq, sizeof(float)}));
    }
    return f;
}

std::uint32_t max_prefill_seq(PrefillShape shape, PrefillPath path, const MemoryLimits& limits) {
    // The footprint grows with seq, so bisect for the last seq in [1, 2^32) that fits.
    std::uint64_t lo = 0, hi = std::numeric_limits<std::uint32_t>::max();
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo + 1) / 2;
        shape.seq = static_cast<std::uint32_t>(mid);
        if (prefill_footprint(shape, path).fits(limits))
            lo = mid;
        else
            hi = mid - 1;
    }
    return static_cast<std::uint32_t>(lo);  // 0 when not even seq 1 fits
}

std::uint64_t max_batch_seq(const PrefillShape& shape, PrefillPath path, const MemoryLimits& limits) {
    return std::uint64_t{shape.batch} * max_prefill_seq(shape, path, limits);
}

const char* to_string(KvPrecision p) {
    switch (p) {
        case KvPrecision::fp16:
            return "fp16";
        case KvPrecision::int8:
            return "int8";
        default:
            return "fp32";
    }
}

std::uint32_t decode_splits(std::uint32_t compute_units, std::uint32_t seq_heads, std::uint32_t kv_len) {
    const std::uint32_t bh = std::max<std::uint32_t>(1, seq_heads);
    return std::clamp<std::uint32_t>((4 * std::max<std::uint32_t>(1, compute_units) + bh - 1) / bh, 2,
                                     std::max(2u, kv_len / 256));
}

Footprint decode_footprint(std::uint32_t seq_heads, std::uint32_t kv_len, std::uint32_t head_dim, std::uint32_t splits,
                           KvPrecision precision) {
    Footprint f;
    const std::uint64_t query = saturating_product({seq_heads, head_dim, sizeof(float)});
    f.add(query);  // the new tokens' queries
    f.add(query);  // their outputs
    f.add(saturating_product({seq_heads, splits, decode_partial_floats(head_dim), sizeof(float)}));
    // make_cache(): every cache buffer is at least 4 bytes (the unused scales of fp32 and fp16).
    const std::uint64_t values = saturating_product({seq_heads, kv_len, head_dim});
    const std::uint64_t value_bytes = precision == KvPrecision::fp32 ? 4 : precision == KvPrecision::fp16 ? 2 : 1;
    const std::uint64_t scales = precision == KvPrecision::int8 ? values / kv_group_for(head_dim) * sizeof(float) : 0;
    for (int kv = 0; kv < 2; ++kv) {
        f.add(std::max<std::uint64_t>(saturating_product({values, value_bytes}), 4));
        f.add(std::max<std::uint64_t>(scales, 4));
    }
    return f;
}

}  // namespace clprobe::attention
