// attention.prefill: the whole prompt at once, unfused (three kernels, the score matrix through
// global memory) against the fused tiled kernel over a sweep of tiles. Each variant is checked
// against the double-precision reference before its time counts.
#include <fmt/core.h>

#include <optional>

#include "attention/attention_config.hpp"
#include "attention/attention_device.hpp"
#include "attention/attention_memory.hpp"
#include "attention/attention_report.hpp"
#include "cl/device_session.hpp"
#include "common/probe_support.hpp"
#include "common/roof_placement.hpp"
#include "core/attention_facts.hpp"
#include "probe_factories.hpp"

namespace clprobe {

namespace {

using namespace attention;

// fp32 results against the double reference: the bound every fp32 variant must meet (fp32
// accumulation over a row stays well inside it; a wrong index or mask does not).
constexpr double fp32_tolerance = 1e-4;

struct Variant {
    std::string name;  // unfused, fused
    std::string tile;  // "none" for unfused
    double bytes = 0;  // global-memory traffic per run, for the roofline
    double error = 0;  // verified relative error against the reference
};

// The device memory of each path at this shape (what the probe allocates for it), and the
// largest batch x seq each path fits at this batch, heads and head_dim.
void record_memory(ProbeResult& out, const AttentionConfig& c, const DeviceInfo& info) {
    const PrefillShape shape{c.batch, c.heads, c.seq, c.head_dim};
    const auto limits = memory_limits(info);
    for (PrefillPath path : {PrefillPath::unfused, PrefillPath::fused}) {
        const std::string name = path == PrefillPath::fused ? "fused" : "unfused";
        Labels labels = prefill_labels(c, c.seq);
        labels["variant"] = name;
        labels["batch"] = std::to_string(c.batch);
        labels["heads"] = std::to_string(c.heads);
        add_footprint(out, labels, prefill_footprint(shape, path));
        if (!limits) continue;
        const std::uint32_t seq = max_prefill_seq(shape, path, *limits);
        Measurement m = derived(
            "attention.memory.max_batch_seq", "tokens",
            {{"path", name}, {"batch", labels["batch"]}, {"heads", labels["heads"]}, {"head_dim", labels["head_dim"]}},
            static_cast<double>(std::uint64_t{c.batch} * seq), true);
        m.note = fmt::format(
            "batch {} x seq {}: every buffer within the largest allocation, their sum within "
            "global memory, no margin",
            c.batch, seq);
        out.measurements.push_back(std::move(m));
    }
    if (!limits)
        out.attributes["memory_limits_missing"] = "the device reports no global memory size or allocation limit";
}

class PrefillProbe final : public Probe {
  public:
    std::string id() const override { return "attention.prefill"; }
    std::string layer() const override { return "kernel"; }
    std::string title() const override { return "Attention prefill: unfused vs fused tiled kernel"; }
    std::string workload() const override { return "attention"; }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        DeviceSession& s = *ctx.device;
        const AttentionConfig c = config_for(ctx.options);
        record_memory(out, c, s.info());
        // Checked before the inputs are generated: a shape too large for the device may be too
        // large for the host as well.
        const std::uint64_t tensor_bytes =
            prefill_footprint({c.batch, c.heads, c.seq, c.head_dim}, PrefillPath::fused).largest;
        if (fit_buffer_bytes(s.info(), tensor_bytes, 4, 1) < tensor_bytes) {
            const std::string why =
                fmt::format("Q, K, V and O of {} each do not fit the device", format_bytes(tensor_bytes));
            record_prefill_shape_skipped(out, why);
            throw ProbeUnsupported(why);
        }
        attention_program(s, c.head_dim);  // checks head_dim, and builds, before anything is uploaded
        const PrefillProblem p = uniform_problem(c.batch, c.heads, c.seq, c.head_dim, c.causal, 1);
        DeviceTensors t = upload(s, p);
        std::vector<std::uint32_t> all(p.heads());
        for (std::uint32_t h = 0; h < p.heads(); ++h)
            all[h] = h;
        const HeadSet heads = make_head_set(s, p, all, 0);

        cl::CommandQueue& q = s.queue();
        const SamplerConfig config = sampler_for(ctx.options.mode);
        InterleavedSampler sampler(config);
        std::vector<Variant> variants;

        // The baseline first: unfused, when its score matrix fits the device.
        const double score_bytes = static_cast<double>(p.heads()) * c.seq * c.seq * sizeof(float);
        std::optional<UnfusedKernels> unfused;
        if (fit_buffer_bytes(s.info(), static_cast<std::uint64_t>(score_bytes), 5, 1) >= score_bytes) {
            unfused = make_unfused(s, p);
            sampler.add([&](std::int64_t n) {
                return time_steps(
                    q, s.profiling(), n, [&](auto& ev) { enqueue_unfused(q, *unfused, t, p, ev); },
                    "attention unfused");
            });
            variants.push_back({"unfused", "none", 4.0 * tensor_bytes + score_matrix_traffic(p),
                                verify_prefill(q, t.o, p, c.verify_rows, fp32_tolerance, "unfused prefill")});
        } else {
            record_prefill_unfused_skipped(
                out, fmt::format("its score matrix ({}) does not fit the device", format_bytes(score_bytes)));
        }

        FusedKernels fused(s, c.head_dim);
        if (!fused.has_row_block()) out.attributes["row_block_unavailable"] = fused.row_block_unavailable;
        for (const FusedTile& tile : fused_tiles(s.info(), c.head_dim, c.tile_sweep, fused.has_row_block())) {
            // Clear the output so a kernel that writes nothing cannot pass on the previous result.
            q.enqueueFillBuffer(t.o, 0.0f, 0, tensor_bytes);
            sampler.add([&, tile](std::int64_t n) {
                return time_commands(
                    q, s.profiling(), n, [&] { return enqueue_fused(q, fused, t, heads, p, tile); },
                    "attention fused " + tile.label());
            });
            variants.push_back(
                {"fused", tile.label(), 4.0 * tensor_bytes,
                 verify_prefill(q, t.o, p, c.verify_rows, fp32_tolerance, "fused prefill, tile " + tile.label())});
        }
        if (variants.empty()) throw ProbeUnsupported("no fused tile fits the device's local memory");

        const bool peak = record_variants(ctx, out, c, p.flops(), variants, sampler.run());
        if (unfused) {
            Labels labels = prefill_labels(c, c.seq);
            labels["variant"] = "unfused";
            out.measurements.push_back(
                derived("attention.prefill.score_bytes", "bytes", labels, score_matrix_traffic(p), false));
            out.attributes["score_matrix_bytes"] = score_bytes;
        }
        if (!peak) out.attributes["peak_fraction_missing"] = "kernel.peak.fp32 was not measured earlier in this run";
        out.attributes["shape"] = {
            {"batch", c.batch}, {"heads", c.heads}, {"seq", c.seq}, {"head_dim", c.head_dim}, {"causal", c.causal}};
        out.attributes["flops_counted"] = "4 * head_dim per query-key pair (QK^T and PV multiply-adds)";
        out.attributes["sampling"] = sampling_note(config);
    }

  private:
    // Time, rate, error and roofline point of each variant; the fraction of the fp32 peak when
    // kernel.peak.fp32 ran earlier (returns whether it did).
    static bool record_variants(const ProbeContext& ctx, ProbeResult& out, const AttentionConfig& c, double flops,
                                const std::vector<Variant>& variants, const std::vector<SampleSet>& sets) {
        const std::optional<double> peak = earlier_median(ctx, "kernel.peak.fp32");
        for (std::size_t i = 0; i < sets.size(); ++i) {
            const Variant& v = variants[i];
            Labels labels = prefill_labels(c, c.seq);
            labels["variant"] = v.name;
            labels["tile"] = v.tile;
            out.measurements.push_back(time_measurement("attention.prefill.time", labels, sets[i]));
            Measurement rate = make_measurement("attention.prefill.gflops", "GFLOP/s", labels,
                                                to_rates(sets[i], flops, 1e-9), sets[i].timer);
            rate.iterations_per_sample = sets[i].iterations;
            if (peak)
                out.measurements.push_back(fraction_of_peak("attention.prefill.peak_fraction", labels, rate, *peak));
            const auto working_set = static_cast<std::uint64_t>(v.bytes);
            add_roofline_point(
                out, placed_point(fmt::format("attention {} {}", v.name, v.tile), flops / v.bytes, rate.summary.median,
                                  working_set, bandwidth_roof_for(ctx.earlier, working_set)));
            out.measurements.push_back(std::move(rate));
            out.measurements.push_back(derived("attention.prefill.error", "relative", labels, v.error, false));
        }
        return peak.has_value();
    }
};

}  // namespace

std::unique_ptr<Probe> make_attention_prefill_probe() {
    return std::make_unique<PrefillProbe>();
}

}  // namespace clprobe
