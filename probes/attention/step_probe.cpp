// attention.step: one serving step built from measured stages — upload the prompt batch's Q, K
// and V, prefill it, generate decode_steps tokens against the prompt's KV cache, download the
// outputs — as the baseline a user writes first (unfused prefill, one work-group per head in
// decode) and as tuned (fused prefill, the decode layout that was faster in attention.decode).
// This is attention.pipeline, whose stages the ranking turns findings' gains into shares of.
#include <fmt/core.h>

#include <chrono>
#include <cmath>

#include "attention/attention_config.hpp"
#include "attention/attention_device.hpp"
#include "attention/attention_math.hpp"
#include "attention/attention_probes.hpp"
#include "attention/attention_report.hpp"
#include "cl/device_session.hpp"
#include "common/probe_support.hpp"

namespace clprobe {

namespace {

using namespace attention;

constexpr double fp32_tolerance = 1e-4;
constexpr const char* stages[] = {"upload", "prefill", "decode", "download"};

// Whether attention.decode found the split layout faster for fp32 (the tuned step uses it then).
bool split_decode_faster(const ProbeContext& ctx) {
    for (const auto& r : ctx.earlier) {
        if (r.id != "attention.decode" || r.status != ProbeStatus::ok) continue;
        const auto* single = find_measurement(r, "attention.decode.time", {{"precision", "fp32"}, {"split", "single"}});
        const auto* split = find_measurement(r, "attention.decode.time", {{"precision", "fp32"}, {"split", "split"}});
        if (single && split) return split->summary.median < single->summary.median;
    }
    return true;  // not measured: the layout that fills a device
}

class StepProbe final : public Probe {
  public:
    std::string id() const override { return "attention.step"; }
    std::string layer() const override { return "kernel"; }
    std::string title() const override { return "Attention serving step (prefill, then decode), stage by stage"; }
    std::string workload() const override { return "attention"; }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        DeviceSession& s = *ctx.device;
        const DeviceInfo& info = s.info();
        cl::CommandQueue& q = s.queue();
        const AttentionConfig c = config_for(ctx.options);
        const PrefillProblem p = uniform_problem(c.batch, c.heads, c.seq, c.head_dim, c.causal, 31);
        const std::uint32_t d = c.head_dim, bh = p.heads();
        const std::size_t tensor_bytes = p.q.size() * sizeof(float);
        const double score_bytes = static_cast<double>(bh) * c.seq * c.seq * sizeof(float);
        if (fit_buffer_bytes(info, static_cast<std::uint64_t>(score_bytes), 5, 1) < score_bytes)
            throw ProbeUnsupported(
                fmt::format("the baseline's score matrix ({}) does not fit the device", format_bytes(score_bytes)));
        const cl::Program& program = attention_program(s, d);
        FusedKernels fused(s, d);
        const auto tiles = fused_tiles(info, d, false, fused.has_row_block());
        if (tiles.empty()) throw ProbeUnsupported("no fused tile fits the device's local memory");

        DeviceTensors t = upload(s, p);
        std::vector<std::uint32_t> all(bh);
        for (std::uint32_t h = 0; h < bh; ++h)
            all[h] = h;
        const HeadSet heads = make_head_set(s, p, all, 0);
        UnfusedKernels unfused = make_unfused(s, p);
        cl::Kernel decode(program, "attn_decode_f32"), merge(program, "attn_decode_merge");

        // Decode: the new token's query against the prompt's K and V as the cache (kv_len = seq).
        const std::vector<float> query = random_values(std::size_t{bh} * d, 32);
        cl::Buffer qdec = make_buffer(s.context(), CL_MEM_READ_ONLY, query.size() * 4);
        cl::Buffer odec = make_buffer(s.context(), CL_MEM_READ_WRITE, query.size() * 4);
        const std::size_t wg = std::min<std::uint64_t>(64, std::max<std::uint64_t>(1, info.max_work_group_size));
        const std::uint32_t splits = decode_splits(info.compute_units, bh, c.seq);
        cl::Buffer part =
            make_buffer(s.context(), CL_MEM_READ_WRITE, std::size_t{bh} * splits * decode_partial_floats(d) * 4);
        cl::Buffer dummy = make_buffer(s.context(), CL_MEM_READ_ONLY, 4);
        std::vector<float> host_out(p.q.size()), host_dec(query.size());

        auto enqueue_decode = [&](std::uint32_t n, std::vector<cl::Event>& ev) {
            decode.setArg(0, qdec);
            decode.setArg(1, t.k);
            decode.setArg(2, t.v);
            decode.setArg(3, dummy);
            decode.setArg(4, dummy);
            decode.setArg(5, odec);
            decode.setArg(6, part);
            decode.setArg(7, static_cast<cl_uint>(c.seq));
            decode.setArg(8, static_cast<cl_uint>((c.seq + n - 1) / n));
            decode.setArg(9, static_cast<cl_float>(p.scale()));
            decode.setArg(10, cl::Local(decode_local_bytes(wg, d)));
            cl::Event e;
            q.enqueueNDRangeKernel(decode, cl::NullRange, cl::NDRange(wg * n, bh), cl::NDRange(wg, 1), nullptr, &e);
            ev.push_back(e);
            if (n > 1) {
                merge.setArg(0, part);
                merge.setArg(1, odec);
                merge.setArg(2, static_cast<cl_uint>(n));
                q.enqueueNDRangeKernel(merge, cl::NullRange, cl::NDRange(d, bh), cl::NullRange, nullptr, &e);
                ev.push_back(e);
            }
        };
        struct Variant {
            const char* name;
            bool fused;
            std::uint32_t decode_splits;
        };
        const Variant variants[] = {{"baseline", false, 1}, {"tuned", true, split_decode_faster(ctx) ? splits : 1}};

        // Each stage of each variant, as the commands it enqueues (pageable host memory for the
        // transfers, as a first version has it).
        auto stage_commands = [&](const Variant& v, int stage) {
            return [&, v, stage](std::vector<cl::Event>& ev) {
                cl::Event e;
                switch (stage) {
                    case 0:
                        for (auto* pair : {&t.q, &t.k, &t.v}) {
                            const float* src = pair == &t.q ? p.q.data() : pair == &t.k ? p.k.data() : p.v.data();
                            q.enqueueWriteBuffer(*pair, CL_FALSE, 0, tensor_bytes, src, nullptr, &e);
                            ev.push_back(e);
                        }
                        q.enqueueWriteBuffer(qdec, CL_FALSE, 0, query.size() * 4, query.data(), nullptr, &e);
                        ev.push_back(e);
                        break;
                    case 1:
                        if (v.fused)
                            ev.push_back(enqueue_fused(q, fused, t, heads, p, tiles.front()));
                        else
                            enqueue_unfused(q, unfused, t, p, ev);
                        break;
                    case 2:
                        for (std::uint32_t k = 0; k < c.decode_steps; ++k)
                            enqueue_decode(v.decode_splits, ev);
                        break;
                    default:
                        q.enqueueReadBuffer(t.o, CL_FALSE, 0, tensor_bytes, host_out.data(), nullptr, &e);
                        ev.push_back(e);
                        q.enqueueReadBuffer(odec, CL_FALSE, 0, query.size() * 4, host_dec.data(), nullptr, &e);
                        ev.push_back(e);
                        break;
                }
            };
        };

        const SamplerConfig config = sampler_for(ctx.options.mode);
        const bool quick = ctx.options.mode == RunMode::quick;
        std::vector<cl::Event> events_unused;
        InterleavedSampler sampler(config);
        for (const Variant& v : variants) {
            q.enqueueFillBuffer(t.o, 0.0f, 0, tensor_bytes);
            q.enqueueFillBuffer(odec, 0.0f, 0, query.size() * 4);
            for (int stage = 0; stage < 4; ++stage) {
                auto commands = stage_commands(v, stage);
                sampler.add([&, commands, v, stage](std::int64_t n) {
                    return time_steps(q, s.profiling(), n, commands,
                                      fmt::format("attention step {} {}", v.name, stages[stage]));
                });
            }
            // The whole step end to end (host clock: it includes the gaps between stages); --quick
            // records the sum of the stage medians instead, to stay within its time budget.
            if (!quick)
                sampler.add([&, v](std::int64_t n) {
                    const auto start = std::chrono::steady_clock::now();
                    std::vector<cl::Event> ignored;
                    for (std::int64_t i = 0; i < n; ++i) {
                        for (int stage = 0; stage < 4; ++stage)
                            stage_commands(v, stage)(ignored);
                        q.finish();
                        ignored.clear();
                    }
                    return TimedBatch{std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                                      TimerKind::host_steady_clock};
                });
            else
                for (int stage = 0; stage < 4; ++stage)
                    stage_commands(v, stage)(events_unused);
            q.finish();
            // The last batch downloaded this variant's outputs: check them before any time counts.
            check_prefill(host_out, p, c.verify_rows, fp32_tolerance, fmt::format("{} step prefill", v.name));
            check_decode(host_dec, p, query, fmt::format("{} step decode", v.name));
        }
        const std::vector<SampleSet> sets = sampler.run();
        std::size_t i = 0;
        for (const Variant& v : variants) {
            double stage_sum = 0;
            for (const char* stage : stages) {
                const Labels labels{{"variant", v.name}, {"stage", stage}};
                Measurement m = time_measurement("attention.pipeline.stage_time", labels, sets[i]);
                stage_sum += m.summary.median;
                out.measurements.push_back(m);
                m.metric = "attention.step.time";
                out.measurements.push_back(std::move(m));
                ++i;
            }
            if (quick) {
                Measurement step =
                    derived("attention.pipeline.step_time", "s", {{"variant", v.name}}, stage_sum, false);
                step.note = "sum of the stage medians (--quick)";
                out.measurements.push_back(std::move(step));
            } else {
                out.measurements.push_back(
                    time_measurement("attention.pipeline.step_time", {{"variant", v.name}}, sets[i]));
                ++i;
            }
        }
        out.attributes["variants"] = {
            {"baseline", "unfused prefill, decode with one work-group per head, pageable transfers"},
            {"tuned", fmt::format("fused prefill (tile {}), decode with {} work-group(s) per head",
                                  tiles.front().label(), variants[1].decode_splits)}};
        out.attributes["decode_steps"] = c.decode_steps;
        out.attributes["shape"] = {
            {"batch", c.batch}, {"heads", c.heads}, {"seq", c.seq}, {"head_dim", d}, {"causal", c.causal}};
        out.attributes["sampling"] = sampling_note(config);
    }

  private:
    static void check_decode(const std::vector<float>& got, const PrefillProblem& p, const std::vector<float>& query,
                             const std::string& what) {
        const std::size_t d = p.head_dim;
        std::vector<double> want(d);
        for (std::uint32_t h = 0; h < p.heads(); ++h) {
            const std::size_t base = std::size_t{p.starts[h]} * d;
            reference_row(&query[h * d], &p.k[base], &p.v[base], p.lens[h], d, p.scale(), want.data());
            const double err = row_error(&got[h * d], want.data(), d);
            if (!(err <= fp32_tolerance))
                throw VerificationError(fmt::format("{}: head {} has relative error {:.3g}", what, h, err));
        }
    }
};

}  // namespace

std::unique_ptr<Probe> make_attention_step_probe() {
    return std::make_unique<StepProbe>();
}

}  // namespace clprobe
