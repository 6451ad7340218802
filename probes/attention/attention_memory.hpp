#pragma once
// Device memory of the attention workload (pure, no OpenCL): the bytes each variant's buffers take
// exactly as the probes create them (attention_device.cpp, decode_probe.cpp), and the largest
// prefill shape whose buffers fit a device. "Fits" means every buffer <= the device's largest
// allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE) and their sum <= its global memory
// (CL_DEVICE_GLOBAL_MEM_SIZE), with no safety margin: the driver, other users of the device and
// (on a CPU device) the host need some of it, so these are upper bounds. clprobe's own probes
// size their buffers with a fifth of global memory left free (fit_buffer_bytes).
#include <cstddef>
#include <cstdint>

#include "core/device_footprint.hpp"

namespace clprobe::attention {

using clprobe::Footprint;
using clprobe::MemoryLimits;

enum class PrefillPath { fused, unfused };
struct PrefillShape {
    std::uint32_t batch = 1, heads = 1, seq = 0, head_dim = 0;
};

// fused: Q, K, V, O ([batch, heads, seq, head_dim] floats each) and the head set's starts and
// lens (one uint per sequence-head); unfused: Q, K, V, O and the score matrix
// (batch x heads x seq x seq floats).
Footprint prefill_footprint(const PrefillShape& shape, PrefillPath path);
// The largest seq (shape.seq is ignored) whose prefill on `path` fits at shape's batch, heads and
// head_dim; 0 when not even one token fits.
std::uint32_t max_prefill_seq(PrefillShape shape, PrefillPath path, const MemoryLimits& limits);
// batch x max_prefill_seq: the prompt tokens one prefill can hold.
std::uint64_t max_batch_seq(const PrefillShape& shape, PrefillPath path, const MemoryLimits& limits);

enum class KvPrecision { fp32, fp16, int8 };
const char* to_string(KvPrecision p);

// Floats of one split's partial decode result (RED_STRIDE in kernels/attention/attention.cl:
// output, max, sum).
inline std::size_t decode_partial_floats(std::uint32_t head_dim) {
    return std::size_t{head_dim} + 2;
}
// Work-groups a split decode spreads one sequence-head's cache over: a few per compute unit, each
// at least 256 keys, at least 2.
std::uint32_t decode_splits(std::uint32_t compute_units, std::uint32_t seq_heads, std::uint32_t kv_len);
// One decode step of `seq_heads` queries against caches of kv_len: the query, the output, the
// split partials (sized for `splits`), and K and V in `precision` with their int8 scales (one float
// per KV group; fp32 and fp16 get 4-byte placeholder scale buffers, as the probe creates them).
Footprint decode_footprint(std::uint32_t seq_heads, std::uint32_t kv_len, std::uint32_t head_dim, std::uint32_t splits,
                           KvPrecision precision);

}  // namespace clprobe::attention
