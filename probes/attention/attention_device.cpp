#include "attention/attention_device.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "attention/attention_math.hpp"
#include "attention/kv_quant.hpp"
#include "cl/cl_error.hpp"
#include "cl/command_trace.hpp"
#include "cl/device_session.hpp"
#include "cl/kernel_args.hpp"
#include "common/probe_support.hpp"
#include "core/stop_points.hpp"
#include "runtime/probe.hpp"

namespace clprobe::attention {

namespace {
constexpr const char* kernel_file = "attention/attention.cl";

std::size_t round_up(std::size_t n, std::size_t to) {
    return (n + to - 1) / to * to;
}
}  // namespace

std::string program_options(std::uint32_t head_dim) {
    return fmt::format("-D HEAD_DIM={} -D KV_GROUP={}", head_dim, kv_group_for(head_dim));
}

const cl::Program& attention_program(DeviceSession& s, std::uint32_t head_dim) {
    if (head_dim == 0 || head_dim % 8 != 0)
        throw ProbeUnsupported(fmt::format("head_dim {} is not a multiple of 8 (the kernels use float8)", head_dim));
    return s.kernels().program(kernel_file, program_options(head_dim)).program;
}

const cl::Program& fp16_program(DeviceSession& s, std::uint32_t head_dim) {
    try {
        return s.kernels().program(kernel_file, program_options(head_dim) + " -D ATTN_FP16").program;
    } catch (const ClError& e) {
        throw ProbeUnsupported(fmt::format(
            "{} a kernel using half8 with cl_khr_fp16 enabled does not build ({})",
            s.info().fp16 ? "cl_khr_fp16 is advertised but" : "cl_khr_fp16 is not advertised and", e.what()));
    }
}

const cl::Program& row_block_program(DeviceSession& s, std::uint32_t head_dim) {
    attention_program(s, head_dim);  // the same head_dim checks, and the main program first
    try {
        return s.kernels().program(kernel_file, program_options(head_dim) + " -D ATTN_ROW_BLOCK").program;
    } catch (const ClError& e) {
        throw ProbeUnsupported(fmt::format("the row-block fused kernel does not build ({})", e.what()));
    }
}

std::uint32_t PrefillProblem::longest() const {
    return lens.empty() ? 0 : *std::max_element(lens.begin(), lens.end());
}

double PrefillProblem::flops() const {
    double f = 0;
    for (auto len : lens)
        f += prefill_flops(len, head_dim, causal);
    return f;
}

double PrefillProblem::scale() const {
    return 1.0 / std::sqrt(static_cast<double>(head_dim));
}

namespace {
void fill_values(PrefillProblem& p, std::uint64_t seed) {
    const std::size_t n = p.rows * p.head_dim;
    p.q = random_values(n, seed);
    p.k = random_values(n, seed + 1);
    p.v = random_values(n, seed + 2);
}
}  // namespace

PrefillProblem uniform_problem(std::uint32_t batch, std::uint32_t heads, std::uint32_t seq, std::uint32_t head_dim,
                               bool causal, std::uint64_t seed) {
    PrefillProblem p;
    p.head_dim = head_dim;
    p.causal = causal;
    for (std::uint32_t bh = 0; bh < batch * heads; ++bh) {
        p.starts.push_back(bh * seq);
        p.lens.push_back(seq);
    }
    p.rows = std::size_t{batch} * heads * seq;
    fill_values(p, seed);
    return p;
}

PrefillProblem packed_problem(const std::vector<std::uint32_t>& lengths, std::uint32_t heads, std::uint32_t head_dim,
                              bool causal, std::uint64_t seed, std::uint32_t block_rows) {
    PrefillProblem p;
    p.head_dim = head_dim;
    p.causal = causal;
    for (auto len : lengths)
        for (std::uint32_t h = 0; h < heads; ++h) {
            p.starts.push_back(static_cast<std::uint32_t>(p.rows));
            p.lens.push_back(len);
            p.rows += std::max(len, block_rows);
        }
    fill_values(p, seed);
    return p;
}

DeviceTensors upload(DeviceSession& s, const PrefillProblem& p) {
    const std::size_t bytes = p.q.size() * sizeof(float);
    DeviceTensors t;
    t.q = make_buffer(s.context(), CL_MEM_READ_ONLY, bytes);
    t.k = make_buffer(s.context(), CL_MEM_READ_ONLY, bytes);
    t.v = make_buffer(s.context(), CL_MEM_READ_ONLY, bytes);
    t.o = make_buffer(s.context(), CL_MEM_READ_WRITE, bytes);
    // Each write blocking: a blocking write promises only its own host pointer, not that earlier
    // non-blocking writes on the queue have read theirs (the problem may be freed after return).
    s.queue().enqueueWriteBuffer(t.q, CL_TRUE, 0, bytes, p.q.data());
    s.queue().enqueueWriteBuffer(t.k, CL_TRUE, 0, bytes, p.k.data());
    s.queue().enqueueWriteBuffer(t.v, CL_TRUE, 0, bytes, p.v.data());
    return t;
}

HeadSet make_head_set(DeviceSession& s, const PrefillProblem& p, const std::vector<std::uint32_t>& members,
                      std::uint32_t pad_to) {
    HeadSet h;
    std::vector<std::uint32_t> starts, lens;
    for (auto m : members) {
        starts.push_back(p.starts.at(m));
        lens.push_back(p.lens.at(m));
        h.extent = std::max({h.extent, p.lens[m], pad_to});
    }
    h.count = static_cast<std::uint32_t>(members.size());
    h.pad_to = pad_to;
    const std::size_t bytes = std::max<std::size_t>(1, members.size()) * sizeof(std::uint32_t);
    h.starts = make_buffer(s.context(), CL_MEM_READ_ONLY, bytes);
    h.lens = make_buffer(s.context(), CL_MEM_READ_ONLY, bytes);
    if (!members.empty()) {
        // Both blocking: `starts` and `lens` are freed on return, and a later blocking write does
        // not make a driver copy an earlier non-blocking one first (Intel's CPU runtime copied
        // `starts` from freed memory when the first write was non-blocking).
        s.queue().enqueueWriteBuffer(h.starts, CL_TRUE, 0, bytes, starts.data());
        s.queue().enqueueWriteBuffer(h.lens, CL_TRUE, 0, bytes, lens.data());
    }
    return h;
}

namespace {
constexpr std::uint32_t rows_per_block = 16;  // ROW_BLOCK in kernels/attention/attention.cl
}

std::string FusedTile::label() const {
    return rows_per_item == 1 ? fmt::format("{}x{}", rows, keys) : fmt::format("{}x{}/{}", rows, keys, rows_per_item);
}

std::vector<FusedTile> fused_tiles(const DeviceInfo& info, std::uint32_t head_dim, bool sweep, bool row_block_builds) {
    // Larger tiles reuse each staged K/V tile for more query rows and rescale the running output
    // less often. One row per work-item: 64 rows by 128 keys was the fastest of these on PoCL,
    // and the shape GPUs want (many work-items, little private memory). Row blocks: each
    // work-item holds 16 rows (about 24 KiB of private arrays at head_dim 128), 2.2-2.8x faster
    // than one row per work-item on PoCL at seq 2048, head_dim 64. Keys per tile: a multiple of 8,
    // at most 128 (MAX_TILE_K in the kernel).
    const bool cpu = info.type == "cpu";
    const std::vector<FusedTile> per_row{{64, 128}, {64, 64}, {32, 64}, {16, 32}, {8, 16}, {4, 8}};
    const std::vector<FusedTile> blocked{{64, 128, rows_per_block},
                                         {64, 64, rows_per_block},
                                         {32, 64, rows_per_block},
                                         {16, 32, rows_per_block},
                                         {16, 8, rows_per_block}};
    // The sweep keeps to three work-group sizes: a CPU driver compiles a kernel once per size.
    const std::vector<FusedTile> swept{
        {64, 64}, {64, 128}, {64, 64, rows_per_block}, {64, 128, rows_per_block}, {128, 128, rows_per_block}};
    auto fits = [&](const FusedTile& t) {
        const std::uint64_t local = 2ull * t.keys * head_dim * sizeof(float);
        return (row_block_builds || t.rows_per_item == 1) && (!info.local_mem_bytes || local <= info.local_mem_bytes) &&
               (!info.max_work_group_size || t.rows / t.rows_per_item <= info.max_work_group_size);
    };
    std::vector<FusedTile> out;
    if (sweep)
        for (const auto& t : swept)
            if (fits(t)) out.push_back(t);
    if (out.empty())
        for (const auto& t : cpu&& row_block_builds ? blocked : per_row)
            if (fits(t)) {
                out.push_back(t);
                break;
            }
    return out;
}

FusedKernels::FusedKernels(DeviceSession& s, std::uint32_t head_dim)
    : per_row(attention_program(s, head_dim), "attn_fused") {
    try {
        row_block = cl::Kernel(row_block_program(s, head_dim), "attn_fused_rows");
    } catch (const ProbeUnsupported& e) {
        row_block_unavailable = e.what();
    }
}

cl::Kernel& FusedKernels::for_tile(const FusedTile& tile) {
    if (tile.rows_per_item != 1 && !has_row_block())
        throw ProbeUnsupported("tile " + tile.label() + ": " + row_block_unavailable);
    return tile.rows_per_item == 1 ? per_row : row_block;
}

cl::Event enqueue_fused(cl::CommandQueue& q, FusedKernels& kernels, const DeviceTensors& t, const HeadSet& heads,
                        const PrefillProblem& p, FusedTile tile) {
    const std::size_t stage_bytes = std::size_t{tile.keys} * p.head_dim * sizeof(float);
    cl::Kernel& k = kernels.for_tile(tile);
    set_args(k, t.q, t.k, t.v, t.o, heads.starts, heads.lens, static_cast<cl_uint>(heads.pad_to),
             static_cast<cl_float>(p.scale()), static_cast<cl_uint>(p.causal), cl::Local(stage_bytes),
             cl::Local(stage_bytes), static_cast<cl_uint>(tile.keys));
    const std::size_t items = tile.rows / tile.rows_per_item;
    cl::Event e;
    q.enqueueNDRangeKernel(k, cl::NullRange,
                           cl::NDRange(round_up(heads.extent, tile.rows) / tile.rows_per_item, heads.count),
                           cl::NDRange(items, 1), nullptr, &e);
    return e;
}

UnfusedKernels make_unfused(DeviceSession& s, const PrefillProblem& p) {
    const cl::Program& program = attention_program(s, p.head_dim);
    UnfusedKernels u{
        cl::Kernel(program, "attn_scores"), cl::Kernel(program, "attn_softmax"), cl::Kernel(program, "attn_pv"), {}};
    const std::size_t seq = p.longest();
    u.s = make_buffer(s.context(), CL_MEM_READ_WRITE, std::size_t{p.heads()} * seq * seq * sizeof(float));
    return u;
}

double score_matrix_traffic(const PrefillProblem& p) {
    const double seq = p.longest();
    return 4.0 * p.heads() * seq * seq * sizeof(float);
}

void enqueue_unfused(cl::CommandQueue& q, UnfusedKernels& u, const DeviceTensors& t, const PrefillProblem& p,
                     std::vector<cl::Event>& events) {
    const cl_uint seq = p.longest();
    const cl_uint bh = p.heads();
    set_args(u.scores, t.q, t.k, u.s, seq, static_cast<cl_float>(p.scale()), static_cast<cl_uint>(p.causal));
    set_args(u.softmax, u.s, seq, seq * bh);
    set_args(u.pv, u.s, t.v, t.o, seq);
    cl::Event e1, e2, e3;
    // Global sizes only (the driver picks the groups), as a first version usually does.
    q.enqueueNDRangeKernel(u.scores, cl::NullRange, cl::NDRange(seq, seq, bh), cl::NullRange, nullptr, &e1);
    q.enqueueNDRangeKernel(u.softmax, cl::NullRange, cl::NDRange(std::size_t{seq} * bh), cl::NullRange, nullptr, &e2);
    q.enqueueNDRangeKernel(u.pv, cl::NullRange, cl::NDRange(p.head_dim, seq, bh), cl::NullRange, nullptr, &e3);
    events.push_back(e1);
    events.push_back(e2);
    events.push_back(e3);
}

void enqueue_decode(cl::CommandQueue& q, DecodeLaunch& l, std::uint32_t splits, std::vector<cl::Event>& events) {
    cl::Kernel& k = l.decode;
    set_args(k, l.query, l.k, l.v, l.kscale, l.vscale, l.out, l.partial, static_cast<cl_uint>(l.kv_len),
             static_cast<cl_uint>((l.kv_len + splits - 1) / splits),  // keys per work-group
             static_cast<cl_float>(l.scale), cl::Local(decode_local_bytes(l.work_group, l.head_dim)));
    cl::Event e;
    q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(l.work_group * splits, l.heads), cl::NDRange(l.work_group, 1),
                           nullptr, &e);
    events.push_back(e);
    if (splits == 1) return;
    set_args(l.merge, l.partial, l.out, static_cast<cl_uint>(splits));
    q.enqueueNDRangeKernel(l.merge, cl::NullRange, cl::NDRange(l.head_dim, l.heads), cl::NullRange, nullptr, &e);
    events.push_back(e);
}

TimedBatch time_steps(cl::CommandQueue& q, bool profiling, std::int64_t iterations,
                      const std::function<void(std::vector<cl::Event>&)>& enqueue, std::string_view label) {
    std::vector<cl::Event> events;
    const auto start = std::chrono::steady_clock::now();
    for (std::int64_t i = 0; i < iterations; ++i) {
        if (i % 16 == 0) check_stop();
        enqueue(events);
        if (!profiling) events.clear();
    }
    cl_check(clFinish(q()), "clFinish");
    const double host = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!profiling) return {host, TimerKind::host_steady_clock};
    double device = 0;
    for (const auto& e : events) {
        device += command_seconds(e);
        CommandTrace::instance().record(e, label);
    }
    if (device <= 0) return {host, TimerKind::host_steady_clock};
    return {device, TimerKind::device_profiling};
}

double verify_prefill(cl::CommandQueue& q, const cl::Buffer& o, const PrefillProblem& p, std::uint32_t max_rows,
                      double tolerance, const std::string& what) {
    std::vector<float> out(p.q.size());
    q.enqueueReadBuffer(o, CL_TRUE, 0, out.size() * sizeof(float), out.data());
    return check_prefill(out, p, max_rows, tolerance, what);
}

double check_prefill(const std::vector<float>& out, const PrefillProblem& p, std::uint32_t max_rows, double tolerance,
                     const std::string& what) {
    const std::size_t d = p.head_dim;
    std::vector<double> want(d);
    double worst = 0;
    for (std::uint32_t h = 0; h < p.heads(); ++h) {
        check_stop();
        const std::size_t base = std::size_t{p.starts[h]} * d;
        for (std::uint32_t i : rows_to_check(p.lens[h], max_rows)) {
            reference_row(&p.q[base + i * d], &p.k[base], &p.v[base], visible_keys(i, p.lens[h], p.causal), d,
                          p.scale(), want.data());
            const double err = row_error(&out[base + i * d], want.data(), d);
            if (!(err <= tolerance))
                throw VerificationError(
                    fmt::format("{}: sequence-head {} row {} has relative error {:.3g} (limit {:.0e})", what, h, i, err,
                                tolerance));
            worst = std::max(worst, err);
        }
    }
    return worst;
}

}  // namespace clprobe::attention
