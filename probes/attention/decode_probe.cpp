// attention.decode (fp32, int8) and attention.decode.fp16: one new token per sequence-head against
// a KV cache of length L. Memory-bound, so the rate is GB/s against the bandwidth roof of the
// memory level the cache lives in (kernel.memory_levels; kernel.peak.bandwidth beyond the caches). One
// work-group per head, or the cache split across several groups plus a merge kernel. Lower
// precisions are checked against the fp32 reference with a looser bound and report their error.
#include <fmt/core.h>

#include <algorithm>
#include <optional>

#include "attention/attention_config.hpp"
#include "attention/attention_device.hpp"
#include "attention/attention_math.hpp"
#include "attention/attention_memory.hpp"
#include "attention/attention_probes.hpp"
#include "attention/attention_report.hpp"
#include "attention/kv_quant.hpp"
#include "cl/device_session.hpp"
#include "common/probe_support.hpp"
#include "common/roof_placement.hpp"
#include "core/memory_roofs.hpp"

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

std::size_t pow2_at_most(std::size_t n) {
    std::size_t p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
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
        const DeviceInfo& info = s.info();
        cl::CommandQueue& q = s.queue();
        const AttentionConfig c = config_for(ctx.options);
        const std::uint32_t d = c.head_dim, bh = c.batch * c.heads;
        const std::size_t group = kv_group_for(d);
        const bool fp16 = precisions_.front() == KvPrecision::fp16;
        const cl::Program& program = fp16 ? fp16_program(s, d) : attention_program(s, d);
        if (fp16) out.attributes["fp16_advertised"] = info.fp16;

        const std::size_t wg = pow2_at_most(std::clamp<std::uint64_t>(info.max_work_group_size, 1, 64));
        const std::size_t local_bytes = decode_local_bytes(wg, d);
        if (info.local_mem_bytes && local_bytes > info.local_mem_bytes)
            throw ProbeUnsupported("the decode merge does not fit local memory");
        const std::vector<float> query = random_values(std::size_t{bh} * d, 11);
        cl::Buffer qbuf = make_buffer(s.context(), CL_MEM_READ_ONLY, query.size() * 4);
        q.enqueueWriteBuffer(qbuf, CL_TRUE, 0, query.size() * 4, query.data());
        cl::Buffer obuf = make_buffer(s.context(), CL_MEM_READ_WRITE, query.size() * 4);
        // The merge is precision-independent and lives in the fp32 program.
        cl::Kernel merge_kernel(attention_program(s, d), "attn_decode_merge");

        const SamplerConfig config = sampler_for(ctx.options.mode);
        const bool any_roof = bandwidth_roof_for(ctx.earlier, 0).has_value();
        const std::vector<std::uint32_t> kv_lens = lengths(ctx, c, info);
        out.attributes["kv_lens"] = kv_lens;
        // The length added for the memory roof measures fp32 only: the precisions compare at the
        // configured lengths, and a second cache of that size would double the probe's time.
        const std::optional<std::uint32_t> roof_len =
            kv_lens.size() > c.kv_lens.size() ? std::optional(kv_lens.back()) : std::nullopt;
        for (std::uint32_t kv_len : kv_lens) {
            std::vector<KvPrecision> precisions = precisions_;
            if (kv_len == roof_len) std::erase_if(precisions, [](KvPrecision p) { return p != KvPrecision::fp32; });
            if (precisions.empty()) continue;
            const std::size_t elems = std::size_t{bh} * kv_len * d;
            const std::uint64_t wanted = elems * sizeof(float);
            // Enough groups to fill the device: a few per compute unit, each at least 256 keys.
            const std::uint32_t splits = decode_splits(info.compute_units, bh, kv_len);
            for (KvPrecision pr : precisions)
                add_footprint(out,
                              {{"variant", "decode"},
                               {"precision", to_string(pr)},
                               {"kv_len", std::to_string(kv_len)},
                               {"head_dim", std::to_string(d)}},
                              decode_footprint(bh, kv_len, d, splits, pr));
            if (fit_buffer_bytes(info, wanted, 4, 1) < wanted) {
                out.attributes["skipped_kv_lens"].push_back(kv_len);
                continue;
            }
            const std::vector<float> k = random_values(elems, 12 + kv_len), v = random_values(elems, 13 + kv_len);
            std::vector<double> want(std::size_t{bh} * d);
            for (std::uint32_t h = 0; h < bh; ++h)
                reference_row(&query[std::size_t{h} * d], &k[std::size_t{h} * kv_len * d],
                              &v[std::size_t{h} * kv_len * d], kv_len, d, 1.0 / std::sqrt(double(d)),
                              &want[std::size_t{h} * d]);

            cl::Buffer part =
                make_buffer(s.context(), CL_MEM_READ_WRITE, std::size_t{bh} * splits * decode_partial_floats(d) * 4);

            InterleavedSampler sampler(config);
            struct Run {
                KvPrecision precision;
                std::uint32_t splits;
                double bytes, error;
            };
            std::vector<Run> runs;
            std::vector<DeviceCache> caches;
            caches.reserve(precisions.size());
            for (KvPrecision pr : precisions) {
                const PrecisionTraits tr = traits_of(pr);
                caches.push_back(make_cache(s, pr, k, v, group));
                const DeviceCache& cache = caches.back();
                cl::Kernel kernel(program, tr.kernel);
                for (std::uint32_t n : {1u, splits}) {
                    const cl_uint chunk = (kv_len + n - 1) / n;
                    auto enqueue = [&, kernel, n, chunk](std::vector<cl::Event>& ev) mutable {
                        kernel.setArg(0, qbuf);
                        kernel.setArg(1, cache.k);
                        kernel.setArg(2, cache.v);
                        kernel.setArg(3, cache.kscale);
                        kernel.setArg(4, cache.vscale);
                        kernel.setArg(5, obuf);
                        kernel.setArg(6, part);
                        kernel.setArg(7, static_cast<cl_uint>(kv_len));
                        kernel.setArg(8, chunk);
                        kernel.setArg(9, static_cast<cl_float>(1.0 / std::sqrt(double(d))));
                        kernel.setArg(10, cl::Local(local_bytes));
                        cl::Event e;
                        q.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(wg * n, bh), cl::NDRange(wg, 1),
                                               nullptr, &e);
                        ev.push_back(e);
                        if (n > 1) {
                            merge_kernel.setArg(0, part);
                            merge_kernel.setArg(1, obuf);
                            merge_kernel.setArg(2, static_cast<cl_uint>(n));
                            q.enqueueNDRangeKernel(merge_kernel, cl::NullRange, cl::NDRange(d, bh), cl::NullRange,
                                                   nullptr, &e);
                            ev.push_back(e);
                        }
                    };
                    q.enqueueFillBuffer(obuf, 0.0f, 0, query.size() * 4);
                    const std::string label = fmt::format("attention decode {} x{}", tr.name, n);
                    sampler.add([&, enqueue, label](std::int64_t iters) {
                        return time_steps(q, s.profiling(), iters, enqueue, label);
                    });
                    runs.push_back({pr, n, cache.bytes + 2.0 * query.size() * 4, check(q, obuf, want, d, tr, n)});
                }
            }
            const std::vector<SampleSet> sets = sampler.run();
            for (std::size_t i = 0; i < sets.size(); ++i) {
                const Run& r = runs[i];
                const char* precision = traits_of(r.precision).name;
                Labels labels{{"precision", precision},
                              {"split", r.splits == 1 ? "single" : "split"},
                              {"splits", std::to_string(r.splits)},
                              {"kv_len", std::to_string(kv_len)},
                              {"head_dim", std::to_string(d)}};
                out.measurements.push_back(time_measurement("attention.decode.time", labels, sets[i]));
                Measurement bw = make_measurement("attention.decode.bandwidth", "GB/s", labels,
                                                  to_rates(sets[i], r.bytes, 1e-9), sets[i].timer);
                bw.iterations_per_sample = sets[i].iterations;
                // The cache, query and output are the whole working set: it decides the level.
                const auto roof = bandwidth_roof_for(ctx.earlier, static_cast<std::uint64_t>(r.bytes));
                if (roof)
                    out.measurements.push_back(fraction_of_roof("attention.decode.peak_fraction", labels, bw, *roof));
                const double flops = 4.0 * bh * kv_len * d;
                add_roofline_point(
                    out,
                    placed_point(fmt::format("decode {} {} L={}", precision, labels["split"], kv_len), flops / r.bytes,
                                 bw.summary.median * flops / r.bytes, static_cast<std::uint64_t>(r.bytes), roof));
                out.measurements.push_back(std::move(bw));
                out.measurements.push_back(derived("attention.decode.error", "relative", labels, r.error, false));
            }
        }
        if (!any_roof)
            out.attributes["peak_fraction_missing"] =
                "neither kernel.memory_levels nor kernel.peak.bandwidth was measured earlier in this run";
        out.attributes["work_group_size"] = wg;
        out.attributes["int8_group"] = group;
        out.attributes["bytes_counted"] = "K and V cache (and int8 scales) plus query and output, per decode step";
        out.attributes["sampling"] = sampling_note(config);
    }

  private:
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
    static double check(cl::CommandQueue& q, cl::Buffer& o, const std::vector<double>& want, std::uint32_t d,
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
