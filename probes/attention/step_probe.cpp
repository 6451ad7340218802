// attention.step: one serving step built from measured stages — upload the prompt batch's Q, K
// and V, prefill it, generate decode_steps tokens against the prompt's KV cache, download the
// outputs — as the baseline a user writes first (unfused prefill, one work-group per head in
// decode) and as tuned (fused prefill, the decode layout that was faster in attention.decode).
// This is attention.pipeline, whose stages the ranking turns findings' gains into shares of.
#include <fmt/core.h>

#include <chrono>
#include <cmath>
#include <iterator>

#include "attention/attention_config.hpp"
#include "attention/attention_device.hpp"
#include "attention/attention_math.hpp"
#include "attention/attention_report.hpp"
#include "cl/device_session.hpp"
#include "common/probe_support.hpp"
#include "common/step_energy.hpp"
#include "core/clock.hpp"
#include "core/pipeline_stages.hpp"
#include "probe_factories.hpp"

namespace clprobe {

namespace {

using namespace attention;

constexpr double fp32_tolerance = 1e-4;

// The step's stages, in order (attention.pipeline's stage labels, which gain targets name).
constexpr const auto& step_stages = attention_pipeline_stages;

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

struct StepVariant {
    const char* name;
    bool fused;
    std::uint32_t decode_splits;
};

// Everything one step touches on the device: the prompt batch, both prefill paths, the decode
// launch against the prompt's K and V as the cache (kv_len = seq), and the host outputs.
class StepWorkload {
  public:
    StepWorkload(DeviceSession& s, const AttentionConfig& c)
        : q_(s.queue()),
          c_(c),
          p_(uniform_problem(c.batch, c.heads, c.seq, c.head_dim, c.causal, 31)),
          fused_(s, c.head_dim) {
        const DeviceInfo& info = s.info();
        const std::uint32_t d = c.head_dim, bh = p_.heads();
        const double score_bytes = static_cast<double>(bh) * c.seq * c.seq * sizeof(float);
        if (fit_buffer_bytes(info, static_cast<std::uint64_t>(score_bytes), 5, 1) < score_bytes)
            throw ProbeUnsupported(
                fmt::format("the baseline's score matrix ({}) does not fit the device", format_bytes(score_bytes)));
        tiles_ = fused_tiles(info, d, false, fused_.has_row_block());
        if (tiles_.empty()) throw ProbeUnsupported("no fused tile fits the device's local memory");
        t_ = upload(s, p_);
        std::vector<std::uint32_t> all(bh);
        for (std::uint32_t h = 0; h < bh; ++h)
            all[h] = h;
        heads_ = make_head_set(s, p_, all, 0);
        unfused_ = make_unfused(s, p_);
        query_ = random_values(std::size_t{bh} * d, 32);
        splits_ = decode_splits(info.compute_units, bh, c.seq);
        const cl::Program& program = attention_program(s, d);
        cl::Buffer dummy = make_buffer(s.context(), CL_MEM_READ_ONLY, 4);
        decode_ = {
            cl::Kernel(program, "attn_decode_f32"),
            cl::Kernel(program, "attn_decode_merge"),
            make_buffer(s.context(), CL_MEM_READ_ONLY, query_.size() * 4),
            t_.k,
            t_.v,
            dummy,
            dummy,
            make_buffer(s.context(), CL_MEM_READ_WRITE, query_.size() * 4),
            make_buffer(s.context(), CL_MEM_READ_WRITE, std::size_t{bh} * splits_ * decode_partial_floats(d) * 4),
            c.seq,
            d,
            bh,
            std::min<std::uint64_t>(64, std::max<std::uint64_t>(1, info.max_work_group_size)),
            static_cast<float>(p_.scale())};
        host_out_.resize(p_.q.size());
        host_dec_.resize(query_.size());
    }

    std::uint32_t decode_splits_available() const { return splits_; }
    std::string tile_label() const { return tiles_.front().label(); }

    // One stage of one variant, as the commands it enqueues (pageable host memory for the
    // transfers, as a first version has it).
    void enqueue(const StepVariant& v, Stage stage, std::vector<cl::Event>& ev) {
        switch (stage) {
            case Stage::upload:
                write(t_.q, p_.q, ev);
                write(t_.k, p_.k, ev);
                write(t_.v, p_.v, ev);
                write(decode_.query, query_, ev);
                break;
            case Stage::prefill:
                if (v.fused)
                    ev.push_back(enqueue_fused(q_, fused_, t_, heads_, p_, tiles_.front()));
                else
                    enqueue_unfused(q_, unfused_, t_, p_, ev);
                break;
            case Stage::decode:
                for (std::uint32_t k = 0; k < c_.decode_steps; ++k)
                    enqueue_decode(q_, decode_, v.decode_splits, ev);
                break;
            case Stage::download:
                read(t_.o, host_out_, ev);
                read(decode_.out, host_dec_, ev);
                break;
            default:  // not a stage of attention.pipeline
                break;
        }
    }

    void enqueue_step(const StepVariant& v, std::vector<cl::Event>& ev) {
        for (Stage stage : step_stages)
            enqueue(v, stage, ev);
    }

    void clear_outputs() {
        q_.enqueueFillBuffer(t_.o, 0.0f, 0, host_out_.size() * 4);
        q_.enqueueFillBuffer(decode_.out, 0.0f, 0, host_dec_.size() * 4);
    }

    // After a step downloaded v's outputs: both checked against the reference before time counts.
    void verify(const StepVariant& v) const {
        check_prefill(host_out_, p_, c_.verify_rows, fp32_tolerance, fmt::format("{} step prefill", v.name));
        const std::size_t d = p_.head_dim;
        std::vector<double> want(d);
        for (std::uint32_t h = 0; h < p_.heads(); ++h) {
            const std::size_t base = std::size_t{p_.starts[h]} * d;
            reference_row(&query_[h * d], &p_.k[base], &p_.v[base], p_.lens[h], d, p_.scale(), want.data());
            const double err = row_error(&host_dec_[h * d], want.data(), d);
            if (!(err <= fp32_tolerance))
                throw VerificationError(
                    fmt::format("{} step decode: head {} has relative error {:.3g}", v.name, h, err));
        }
    }

  private:
    void write(cl::Buffer& b, const std::vector<float>& from, std::vector<cl::Event>& ev) {
        cl::Event e;
        q_.enqueueWriteBuffer(b, CL_FALSE, 0, from.size() * 4, from.data(), nullptr, &e);
        ev.push_back(e);
    }
    void read(cl::Buffer& b, std::vector<float>& to, std::vector<cl::Event>& ev) {
        cl::Event e;
        q_.enqueueReadBuffer(b, CL_FALSE, 0, to.size() * 4, to.data(), nullptr, &e);
        ev.push_back(e);
    }

    cl::CommandQueue& q_;
    AttentionConfig c_;
    PrefillProblem p_;
    FusedKernels fused_;
    std::vector<FusedTile> tiles_;
    DeviceTensors t_;
    HeadSet heads_;
    UnfusedKernels unfused_;
    std::vector<float> query_;
    std::uint32_t splits_ = 1;
    DecodeLaunch decode_;
    std::vector<float> host_out_, host_dec_;
};

class StepProbe final : public Probe {
  public:
    std::string id() const override { return "attention.step"; }
    std::string layer() const override { return "kernel"; }
    std::string title() const override { return "Attention serving step (prefill, then decode), stage by stage"; }
    std::string workload() const override { return "attention"; }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        DeviceSession& s = *ctx.device;
        const AttentionConfig c = config_for(ctx.options);
        StepWorkload w(s, c);
        const StepVariant variants[] = {{"baseline", false, 1},
                                        {"tuned", true, split_decode_faster(ctx) ? w.decode_splits_available() : 1}};
        const SamplerConfig config = sampler_for(ctx.options.mode);
        const bool quick = ctx.options.mode == RunMode::quick;
        InterleavedSampler sampler(config);
        for (const StepVariant& v : variants) {
            w.clear_outputs();
            add_variant(sampler, s, w, v, quick);
            s.queue().finish();
            w.verify(v);  // the last batch downloaded this variant's outputs
        }
        record(out, variants, sampler.run(), quick);
        // Energy per step and per 1,000 tokens (each sequence's prompt and generated tokens) where
        // the machine has sensors, after the timed samples so they are untouched.
        StepEnergy energy(ctx.options.mode);
        const WorkPerStep tokens{"attention.pipeline.energy_per_1k_tokens",
                                 static_cast<double>(c.batch) * (c.seq + c.decode_steps), 1000};
        if (energy.available())
            for (const StepVariant& v : variants)
                energy.measure(
                    out, pipeline_ids::attention, {{"variant", v.name}},
                    [&] {
                        std::vector<cl::Event> events;
                        w.enqueue_step(v, events);
                        s.queue().finish();
                    },
                    tokens);
        energy.record_attributes(out);
        out.attributes["tokens_per_step"] = tokens.units;
        out.attributes["variants"] = {
            {"baseline", "unfused prefill, decode with one work-group per head, pageable transfers"},
            {"tuned", fmt::format("fused prefill (tile {}), decode with {} work-group(s) per head", w.tile_label(),
                                  variants[1].decode_splits)}};
        out.attributes["decode_steps"] = c.decode_steps;
        out.attributes["shape"] = {
            {"batch", c.batch}, {"heads", c.heads}, {"seq", c.seq}, {"head_dim", c.head_dim}, {"causal", c.causal}};
        out.attributes["sampling"] = sampling_note(config);
    }

  private:
    // Each stage timed on its own, then the whole step end to end (host clock: it includes the
    // gaps between stages); --quick records the sum of the stage medians instead, to stay within
    // its time budget, and runs one plain step so the outputs can be checked.
    static void add_variant(InterleavedSampler& sampler, DeviceSession& s, StepWorkload& w, const StepVariant& v,
                            bool quick) {
        cl::CommandQueue& q = s.queue();
        for (Stage stage : step_stages)
            sampler.add([&, v, stage](std::int64_t n) {
                return time_steps(
                    q, s.profiling(), n, [&, v, stage](std::vector<cl::Event>& ev) { w.enqueue(v, stage, ev); },
                    fmt::format("attention step {} {}", v.name, stage_name(stage)));
            });
        std::vector<cl::Event> ignored;
        if (quick) {
            w.enqueue_step(v, ignored);
            return;
        }
        sampler.add([&, v](std::int64_t n) {
            const auto start = std::chrono::steady_clock::now();
            std::vector<cl::Event> events;
            for (std::int64_t i = 0; i < n; ++i) {
                w.enqueue_step(v, events);
                q.finish();
                events.clear();
            }
            return TimedBatch{seconds_since(start), TimerKind::host_steady_clock};
        });
    }

    static void record(ProbeResult& out, const StepVariant (&variants)[2], const std::vector<SampleSet>& sets,
                       bool quick) {
        std::size_t i = 0;
        for (const StepVariant& v : variants) {
            double stage_sum = 0;
            for (Stage stage : step_stages) {
                const Labels labels{{"variant", v.name}, {"stage", stage_name(stage)}};
                Measurement m =
                    time_measurement(fmt::format("{}.stage_time", pipeline_ids::attention), labels, sets[i++]);
                stage_sum += m.summary.median;
                out.measurements.push_back(m);
                m.metric = "attention.step.time";
                out.measurements.push_back(std::move(m));
            }
            if (quick) {
                Measurement step =
                    derived("attention.pipeline.step_time", "s", {{"variant", v.name}}, stage_sum, false);
                step.note = "sum of the stage medians (--quick)";
                out.measurements.push_back(std::move(step));
            } else {
                out.measurements.push_back(
                    time_measurement("attention.pipeline.step_time", {{"variant", v.name}}, sets[i++]));
            }
        }
    }
};

}  // namespace

std::unique_ptr<Probe> make_attention_step_probe() {
    return std::make_unique<StepProbe>();
}

}  // namespace clprobe
