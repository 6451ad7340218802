#pragma once
// Running the attention kernels (kernels/attention/attention.cl) on the device: problems in the
// starts/lens layout, the fused and unfused prefill launches, the decode launch, and checking
// outputs against the double-precision reference. Shared by the attention probes and their tests.
#include <cstdint>
#include <string>
#include <vector>

#include "attention/attention_memory.hpp"
#include "cl/cl_api.hpp"
#include "cl/command_timing.hpp"
#include "core/device_info.hpp"

namespace clprobe {
class DeviceSession;
}

namespace clprobe::attention {

// Build options of the attention program for one head dimension.
std::string program_options(std::uint32_t head_dim);
// The fp32 program (prefill, fp32 and int8 decode). Head dimensions must be multiples of 8.
const cl::Program& attention_program(DeviceSession& s, std::uint32_t head_dim);
// The fp16 decode program; throws ProbeUnsupported with the reason when half8 does not build.
const cl::Program& fp16_program(DeviceSession& s, std::uint32_t head_dim);
// The program holding only attn_fused_rows; throws ProbeUnsupported with the reason when it does
// not build.
const cl::Program& row_block_program(DeviceSession& s, std::uint32_t head_dim);

// Self-attention inputs of several sequence-heads, each a block of rows of head_dim floats:
// sequence-head h starts at row starts[h] and has lens[h] tokens. Q, K, V share the layout.
struct PrefillProblem {
    std::uint32_t head_dim = 0;
    bool causal = false;
    std::vector<std::uint32_t> starts, lens;
    std::size_t rows = 0;
    std::vector<float> q, k, v;

    std::uint32_t heads() const { return static_cast<std::uint32_t>(lens.size()); }
    std::uint32_t longest() const;
    double flops() const;  // useful flops (no padding)
    double scale() const;  // 1 / sqrt(head_dim)
};

// [batch, heads, seq, head_dim], the layout models keep.
PrefillProblem uniform_problem(std::uint32_t batch, std::uint32_t heads, std::uint32_t seq, std::uint32_t head_dim,
                               bool causal, std::uint64_t seed);
// Requests of different lengths: request b holds `heads` blocks of lengths[b] rows, back to back
// (packed), or each block given block_rows >= lengths[b] rows (a padded batch's layout).
PrefillProblem packed_problem(const std::vector<std::uint32_t>& lengths, std::uint32_t heads, std::uint32_t head_dim,
                              bool causal, std::uint64_t seed, std::uint32_t block_rows = 0);

// The problem's tensors on the device; o receives the output.
struct DeviceTensors {
    cl::Buffer q, k, v, o;
};
DeviceTensors upload(DeviceSession& s, const PrefillProblem& p);

// Which sequence-heads one fused launch covers, and how far it computes (pad_to > len: padding).
struct HeadSet {
    cl::Buffer starts, lens;
    std::uint32_t count = 0;
    std::uint32_t extent = 0;  // rows the launch spans: max(longest member, pad_to)
    std::uint32_t pad_to = 0;
};
HeadSet make_head_set(DeviceSession& s, const PrefillProblem& p, const std::vector<std::uint32_t>& members,
                      std::uint32_t pad_to);

// Fused kernel tile: query rows per work-group, keys staged per step, and query rows per
// work-item: 1 runs attn_fused (one row per work-item, the GPU shape), ROW_BLOCK (16) runs
// attn_fused_rows (rows as vector lanes, register-blocked: the CPU shape).
struct FusedTile {
    std::uint32_t rows = 0, keys = 0, rows_per_item = 1;
    std::string label() const;  // "32x64", "64x128/16" for row blocks
};
// Tiles whose K and V stages fit the device's local memory and whose group fits its work-group
// limit: the sweep's (both kernels; row blocks only when that kernel builds), or (sweep false, or
// none of them fits) the one preferred tile that fits, of the kernel shaped for the device's type.
std::vector<FusedTile> fused_tiles(const DeviceInfo& info, std::uint32_t head_dim, bool sweep, bool row_block_builds);

// Both fused kernels for one head dimension. The row-block kernel is a program of its own; when
// it does not build, row_block_unavailable says why and its tiles are left out.
struct FusedKernels {
    FusedKernels(DeviceSession& s, std::uint32_t head_dim);
    cl::Kernel per_row, row_block;
    std::string row_block_unavailable;
    bool has_row_block() const { return row_block_unavailable.empty(); }
    cl::Kernel& for_tile(const FusedTile& tile);
};

cl::Event enqueue_fused(cl::CommandQueue& q, FusedKernels& k, const DeviceTensors& t, const HeadSet& heads,
                        const PrefillProblem& p, FusedTile tile);

// Decode kernels: local memory of one work-group (LOCAL_STRIDE floats per work-item), as
// kernels/attention/attention.cl lays it out (a split's partial result: decode_partial_floats).
inline std::size_t decode_local_bytes(std::size_t work_group, std::uint32_t head_dim) {
    return work_group * (head_dim + 3) * sizeof(float);
}

// One decode launch: each sequence-head's query against its KV cache, in `splits` work-groups
// per head; with more than one, attn_decode_merge folds the partial results (in `partial`) into
// `out`. The decode and step probes both enqueue it, so the kernel's argument order lives here.
struct DecodeLaunch {
    cl::Kernel decode, merge;
    cl::Buffer query, k, v, kscale, vscale, out, partial;
    std::uint32_t kv_len = 0, head_dim = 0, heads = 0;
    std::size_t work_group = 1;
    float scale = 0;  // 1 / sqrt(head_dim)
};
void enqueue_decode(cl::CommandQueue& q, DecodeLaunch& launch, std::uint32_t splits, std::vector<cl::Event>& events);

// The unfused path on a uniform problem: scores to global memory, softmax, PV.
struct UnfusedKernels {
    cl::Kernel scores, softmax, pv;
    cl::Buffer s;  // heads * seq * seq floats
};
UnfusedKernels make_unfused(DeviceSession& s, const PrefillProblem& p);
// Bytes the score matrix costs in global memory traffic (written by scores, read and written by
// softmax, read by PV).
double score_matrix_traffic(const PrefillProblem& p);
void enqueue_unfused(cl::CommandQueue& q, UnfusedKernels& u, const DeviceTensors& t, const PrefillProblem& p,
                     std::vector<cl::Event>& events);

// Commands of one step enqueued by `enqueue` (several per iteration), timed like time_commands.
TimedBatch time_steps(cl::CommandQueue& q, bool profiling, std::int64_t iterations,
                      const std::function<void(std::vector<cl::Event>&)>& enqueue, std::string_view label);

// Reads o back and compares up to max_rows rows per sequence-head with the reference; returns
// the largest error (attention_math row_error) and throws VerificationError above tolerance.
double verify_prefill(cl::CommandQueue& q, const cl::Buffer& o, const PrefillProblem& p, std::uint32_t max_rows,
                      double tolerance, const std::string& what);
// The same check on an output already on the host.
double check_prefill(const std::vector<float>& out, const PrefillProblem& p, std::uint32_t max_rows, double tolerance,
                     const std::string& what);

}  // namespace clprobe::attention
