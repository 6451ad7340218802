// attention.decode (fp32, int8) and attention.decode.fp16: one new token per sequence-head against
// a KV cache of length L. Memory-bound, so the rate is GB/s against the bandwidth roof of the
// memory level the cache lives in (kernel.memory_levels; kernel.peak.bandwidth beyond the caches). One
// work-group per head, or the cache split across several groups plus a merge kernel. Lower
// precisions are checked against the fp32 reference with a looser bound and report their error.
#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <optional>

#include "attention/attention_config.hpp"
#include "attention/attention_device.hpp"
#include "attention/attention_math.hpp"
#include "attention/attention_memory.hpp"
#include "attention/attention_report.hpp"
#include "attention/kv_quant.hpp"
#include "cl/device_session.hpp"
#include "common/paired_memory_roof.hpp"
#include "common/probe_support.hpp"
#include "common/roof_placement.hpp"
#include "core/memory_roofs.hpp"
#include "probe_factories.hpp"

namespace clprobe {

namespace {

using namespace attention;

struct PrecisionTraits {
    const char* name;
    const char* kernel;
    double tolerance;  // relative error that still counts as a correct (if approximate) result
};

PrecisionTraits traits_of(KvPrecision p) {
    switch (p) {
        case KvPrecision::fp16:
            return {"fp16", "attn_decode_f16", 1e-2};
        case KvPrecision::int8:
            return {"int8", "attn_decode_i8", 5e-2};
        default:
            return {"fp32", "attn_decode_f32", 1e-4};
    }
}

// The KV cache of one precision on the device.
struct DeviceCache {
    cl::Buffer k, v, kscale, vscale;
    double bytes = 0;  // read per decode step: K, V and their scales
};

DeviceCache make_cache(DeviceSession& s, KvPrecision p, const std::vector<float>& k, const std::vector<float>& v,
                       std::size_t group) {
    DeviceCache c;
    auto buffer_of = [&](const void* data, std::size_t bytes) {
        cl::Buffer b = make_buffer(s.context(), CL_MEM_READ_ONLY, std::max<std::size_t>(bytes, 4));
        if (bytes) s.queue().enqueueWriteBuffer(b, CL_TRUE, 0, bytes, data);
        c.bytes += static_cast<double>(bytes);
        return b;
    };
    if (p == KvPrecision::fp32) {
        c.k = buffer_of(k.data(), k.size() * 4);
        c.v = buffer_of(v.data(), v.size() * 4);
        c.kscale = buffer_of(nullptr, 0);
        c.vscale = buffer_of(nullptr, 0);
    } else if (p == KvPrecision::fp16) {
        const auto kh = to_half(k), vh = to_half(v);
        c.k = buffer_of(kh.data(), kh.size() * 2);
        c.v = buffer_of(vh.data(), vh.size() * 2);
        c.kscale = buffer_of(nullptr, 0);
        c.vscale = buffer_of(nullptr, 0);
    } else {
        const Int8Values kq = quantize_int8(k, group), vq = quantize_int8(v, group);
        c.k = buffer_of(kq.values.data(), kq.values.size());
        c.v = buffer_of(vq.values.data(), vq.values.size());
        c.kscale = buffer_of(kq.scales.data(), kq.scales.size() * 4);
        c.vscale = buffer_of(vq.scales.data(), vq.scales.size() * 4);
    }
    return c;
}

class DecodeProbe final : public Probe {
  public:
    DecodeProbe(std::string id, std::vector<KvPrecision> precisions)
        : id_(std::move(id)), precisions_(std::move(precisions)) {}
    std::string id() const override { return id_; }
    std::string layer() const override { return "kernel"; }
    std::string title() const override {
        return precisions_.front() == KvPrecision::fp16 ? "Attention decode with an fp16 KV cache"
                                                        : "Attention decode against the KV cache (fp32, int8)";
    }
    std::string workload() const override { return "attention"; }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        DeviceSession& s = *ctx.device;
        const AttentionConfig c = config_for(ctx.options);
        const bool fp16 = precisions_.front() == KvPrecision::fp16;
        if (fp16) out.attributes["fp16_advertised"] = s.info().fp16;
        const DecodeSetup setup = prepare(s, c, fp16);
        const SamplerConfig config = sampler_for(ctx.options.mode);
        const std::vector<std::uint32_t> kv_lens = lengths(ctx, c, s.info());
        out.attributes["kv_lens"] = kv_lens;
        // The length added for the memory roof measures fp32 only: the precisions compare at the
        // configured lengths, and a second cache of that size would double the probe's time.
        const std::optional<std::uint32_t> roof_len =
            kv_lens.size() > c.kv_lens.size() ? std::optional(kv_lens.back()) : std::nullopt;
        for (std::uint32_t kv_len : kv_lens) {
            std::vector<KvPrecision> precisions = precisions_;
            if (kv_len == roof_len) std::erase_if(precisions, [](KvPrecision p) { return p != KvPrecision::fp32; });
            if (precisions.empty()) continue;
            // Enough groups to fill the device: a few per compute unit, each at least 256 keys.
            const std::uint32_t splits = decode_splits(s.info().compute_units, setup.bh, kv_len);
            for (KvPrecision pr : precisions)
                add_footprint(out,
                              {{"variant", "decode"},
                               {"precision", to_string(pr)},
                               {"kv_len", std::to_string(kv_len)},
                               {"head_dim", std::to_string(setup.d)}},
                              decode_footprint(setup.bh, kv_len, setup.d, splits, pr));
            const std::uint64_t wanted = std::uint64_t{setup.bh} * kv_len * setup.d * sizeof(float);
            if (fit_buffer_bytes(s.info(), wanted, 4, 1) < wanted) {
                out.attributes["skipped_kv_lens"].push_back(kv_len);
                continue;
            }
            // A cache in memory is held against the memory roof read again beside it.
            const auto placed = bandwidth_roof_for(ctx.earlier, 2 * wanted);
            bool pair_roof = placed && placed->level == "memory";
            if (pair_roof && !PairedMemoryRoof::fits(s.info(), 2 * wanted)) {
                pair_roof = false;
                out.attributes["memory_roof_note"] =
                    fmt::format("L={}: no room for the memory roof's read beside the cache; held against {}", kv_len,
                                placed->metric);
            }
            const Measured m =
                measure_length(s, setup, config, kv_len, splits, precisions, pair_roof ? &ctx.earlier : nullptr);
            for (const Run& r : m.runs)
                record(ctx, out, r, kv_len, setup, m.paired_roof);
            if (m.paired_roof) out.measurements.push_back(*m.paired_roof);
        }
        if (!bandwidth_roof_for(ctx.earlier, 0))
            out.attributes["peak_fraction_missing"] =
                "neither kernel.memory_levels nor kernel.peak.bandwidth was measured earlier in this run";
        out.attributes["work_group_size"] = setup.work_group;
        out.attributes["int8_group"] = setup.group;
        out.attributes["bytes_counted"] = "K and V cache (and int8 scales) plus query and output, per decode step";
        out.attributes["sampling"] = sampling_note(config);
    }

  private:
    // What every KV length shares: the program, the query, the output and the merge kernel.
    struct DecodeSetup {
        const cl::Program* program = nullptr;
        std::uint32_t d = 0, bh = 0;  // head dimension, sequence-heads
        std::size_t group = 0, work_group = 1;
        std::vector<float> query;
        cl::Buffer qbuf, obuf;
        cl::Kernel merge;
    };

    // One timed variant of one KV length, with its verified error.
    struct Run {
        KvPrecision precision;
        std::uint32_t splits;
        double bytes, error;
        SampleSet set;
    };

    // One KV length's runs, and the memory roof read beside them when the cache lives in memory.
    struct Measured {
        std::vector<Run> runs;
        std::optional<Measurement> paired_roof;
    };

    static DecodeSetup prepare(DeviceSession& s, const AttentionConfig& c, bool fp16) {
        const DeviceInfo& info = s.info();
        DecodeSetup u;
        u.d = c.head_dim;
        u.bh = c.batch * c.heads;
        u.group = kv_group_for(u.d);
        u.program = fp16 ? &fp16_program(s, u.d) : &attention_program(s, u.d);
        u.work_group = std::bit_floor(std::clamp<std::uint64_t>(info.max_work_group_size, 1, 64));
        if (info.local_mem_bytes && decode_local_bytes(u.work_group, u.d) > info.local_mem_bytes)
            throw ProbeUnsupported("the decode merge does not fit local memory");
        u.query = random_values(std::size_t{u.bh} * u.d, 11);
        u.qbuf = make_buffer(s.context(), CL_MEM_READ_ONLY, u.query.size() * 4);
        s.queue().enqueueWriteBuffer(u.qbuf, CL_TRUE, 0, u.query.size() * 4, u.query.data());
        u.obuf = make_buffer(s.context(), CL_MEM_READ_WRITE, u.query.size() * 4);
        // The merge is precision-independent and lives in the fp32 program.
        u.merge = cl::Kernel(attention_program(s, u.d), "attn_decode_merge");
        return u;
    }

    // Every precision at one KV length, with one work-group per head and split: each checked
    // against the double-precision reference, then all sampled interleaved (with the memory roof's
    // read when `earlier` is given: PairedMemoryRoof).
    static Measured measure_length(DeviceSession& s, const DecodeSetup& u, const SamplerConfig& config,
                                   std::uint32_t kv_len, std::uint32_t splits,
                                   const std::vector<KvPrecision>& precisions,
                                   const std::vector<ProbeResult>* earlier) {
        cl::CommandQueue& q = s.queue();
        const std::size_t elems = std::size_t{u.bh} * kv_len * u.d;
        const std::vector<float> k = random_values(elems, 12 + kv_len), v = random_values(elems, 13 + kv_len);
        std::vector<double> want(std::size_t{u.bh} * u.d);
        for (std::uint32_t h = 0; h < u.bh; ++h)
            reference_row(&u.query[std::size_t{h} * u.d], &k[std::size_t{h} * kv_len * u.d],
                          &v[std::size_t{h} * kv_len * u.d], kv_len, u.d, 1.0 / std::sqrt(double(u.d)),
                          &want[std::size_t{h} * u.d]);
        cl::Buffer part =
            make_buffer(s.context(), CL_MEM_READ_WRITE, std::size_t{u.bh} * splits * decode_partial_floats(u.d) * 4);
        InterleavedSampler sampler(config);
        std::vector<Run> runs;
        for (KvPrecision pr : precisions) {
            const PrecisionTraits tr = traits_of(pr);
            const DeviceCache cache = make_cache(s, pr, k, v, u.group);
            DecodeLaunch launch{cl::Kernel(*u.program, tr.kernel),
                                u.merge,
                                u.qbuf,
                                cache.k,
                                cache.v,
                                cache.kscale,
                                cache.vscale,
                                u.obuf,
                                part,
                                kv_len,
                                u.d,
                                u.bh,
                                u.work_group,
                                static_cast<float>(1.0 / std::sqrt(double(u.d)))};
            for (std::uint32_t n : {1u, splits}) {
                q.enqueueFillBuffer(u.obuf, 0.0f, 0, u.query.size() * 4);
                const std::string label = fmt::format("attention decode {} x{}", tr.name, n);
                sampler.add([&s, launch, n, label](std::int64_t iters) mutable {
                    return time_steps(
                        s.queue(), s.profiling(), iters,
                        [&](std::vector<cl::Event>& ev) { enqueue_decode(s.queue(), launch, n, ev); }, label);
                });
                const double bytes = cache.bytes + 2.0 * u.query.size() * 4;
                runs.push_back({pr, n, bytes, check(q, u.obuf, want, u.d, tr, n), {}});
            }
        }
        std::optional<PairedMemoryRoof> roof;
        if (earlier && !runs.empty())
            roof.emplace(s, sampler, static_cast<std::uint64_t>(runs.front().bytes), *earlier);
        std::vector<SampleSet> sets = sampler.run();
        Measured m;
        for (std::size_t i = 0; i < runs.size(); ++i)
            runs[i].set = std::move(sets[i]);
        m.runs = std::move(runs);
        if (roof)
            m.paired_roof = roof->measurement("attention.decode.memory_roof", {{"kv_len", std::to_string(kv_len)}},
                                              sets[roof->index()]);
        return m;
    }

    // The run's time, bandwidth, error and its place against the roof of the level its working
    // set (cache, query and output) lives in.
    static void record(const ProbeContext& ctx, ProbeResult& out, const Run& r, std::uint32_t kv_len,
                       const DecodeSetup& u, const std::optional<Measurement>& paired_roof) {
        const char* precision = traits_of(r.precision).name;
        Labels labels{{"precision", precision},
                      {"split", r.splits == 1 ? "single" : "split"},
                      {"splits", std::to_string(r.splits)},
                      {"kv_len", std::to_string(kv_len)},
                      {"head_dim", std::to_string(u.d)}};
        out.measurements.push_back(time_measurement("attention.decode.time", labels, r.set));
        Measurement bw =
            make_measurement("attention.decode.bandwidth", "GB/s", labels, to_rates(r.set, r.bytes, 1e-9), r.set.timer);
        bw.iterations_per_sample = r.set.iterations;
        auto roof = bandwidth_roof_for(ctx.earlier, static_cast<std::uint64_t>(r.bytes));
        if (paired_roof) roof = raised_roof(roof, *paired_roof);
        if (roof) out.measurements.push_back(fraction_of_roof("attention.decode.peak_fraction", labels, bw, *roof));
        const double flops = 4.0 * u.bh * kv_len * u.d;
        add_roofline_point(
            out, placed_point(fmt::format("decode {} {} L={}", precision, labels["split"], kv_len), flops / r.bytes,
                              bw.summary.median * flops / r.bytes, static_cast<std::uint64_t>(r.bytes), roof));
        out.measurements.push_back(std::move(bw));
        out.measurements.push_back(derived("attention.decode.error", "relative", labels, r.error, false));
    }

    // The configured lengths, plus one whose cache is four times the last-level cache when none is
    // (unless the user chose the length): "decode at X% of memory bandwidth" must mean memory.
    static std::vector<std::uint32_t> lengths(const ProbeContext& ctx, const AttentionConfig& c,
                                              const DeviceInfo& info) {
        std::vector<std::uint32_t> lens = c.kv_lens;
        if (ctx.options.attention.kv_len) return lens;
        std::uint64_t last_cache = info.global_mem_cache_bytes;
        if (const auto facts = memory_roof_facts_of(ctx.earlier); facts && !facts->caches.empty())
            last_cache = facts->caches.back().bytes;
        const std::uint64_t per_token = std::uint64_t{c.batch} * c.heads * c.head_dim * 2 * sizeof(float);
        if (const auto len = memory_bound_kv_len(lens, per_token, last_cache, info.max_alloc_bytes))
            lens.push_back(*len);
        return lens;
    }

    // Compares every head's output with the fp32-input reference; returns the worst error.
    static double check(cl::CommandQueue& q, const cl::Buffer& o, const std::vector<double>& want, std::uint32_t d,
                        const PrecisionTraits& tr, std::uint32_t splits) {
        std::vector<float> got(want.size());
        q.enqueueReadBuffer(o, CL_TRUE, 0, got.size() * 4, got.data());
        double worst = 0;
        for (std::size_t h = 0; h < want.size() / d; ++h) {
            const double err = row_error(&got[h * d], &want[h * d], d);
            if (!(err <= tr.tolerance))
                throw VerificationError(
                    fmt::format("decode {} with {} split(s): head {} has relative error {:.3g} "
                                "(limit {:.0e})",
                                tr.name, splits, h, err, tr.tolerance));
            worst = std::max(worst, err);
        }
        return worst;
    }

    std::string id_;
    std::vector<KvPrecision> precisions_;
};

}  // namespace

std::unique_ptr<Probe> make_attention_decode_probe() {
    return std::make_unique<DecodeProbe>("attention.decode",
                                         std::vector<KvPrecision>{KvPrecision::fp32, KvPrecision::int8});
}

std::unique_ptr<Probe> make_attention_decode_fp16_probe() {
    return std::make_unique<DecodeProbe>("attention.decode.fp16", std::vector<KvPrecision>{KvPrecision::fp16});
}

}  // namespace clprobe
