// attention.batching: a batch of prompts whose lengths are skewed as real traffic is, prefilled
// three ways with the fused kernel: padded to the longest, grouped into length buckets (each
// padded to its own longest), and packed (variable length, no padding). Reports prompt tokens per
// second and the fraction of the computed query-key pairs that is padding.
#include <fmt/core.h>

#include <numeric>

#include "attention/attention_config.hpp"
#include "attention/attention_device.hpp"
#include "attention/attention_report.hpp"
#include "attention/request_lengths.hpp"
#include "cl/device_session.hpp"
#include "common/probe_support.hpp"
#include "probe_factories.hpp"

namespace clprobe {

namespace {

using namespace attention;

constexpr double fp32_tolerance = 1e-4;
// Four buckets: enough to cut most padding of a log-uniform mix, few enough launches to fill a device.
constexpr std::size_t bucket_count = 4;

// Sequence-heads of request r are r*heads .. r*heads + heads - 1 in both layouts.
std::vector<std::uint32_t> heads_of_requests(const std::vector<std::size_t>& requests, std::uint32_t heads) {
    std::vector<std::uint32_t> members;
    for (std::size_t r : requests)
        for (std::uint32_t h = 0; h < heads; ++h)
            members.push_back(static_cast<std::uint32_t>(r * heads + h));
    return members;
}

class BatchingProbe final : public Probe {
  public:
    std::string id() const override { return "attention.batching"; }
    std::string layer() const override { return "kernel"; }
    std::string title() const override { return "Attention batching: padded, bucketed, packed"; }
    std::string workload() const override { return "attention"; }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        DeviceSession& s = *ctx.device;
        cl::CommandQueue& q = s.queue();
        const AttentionConfig c = config_for(ctx.options);
        const std::vector<std::uint32_t> lengths = skewed_lengths(c.requests, c.seq, 7);
        const std::uint32_t longest = *std::max_element(lengths.begin(), lengths.end());
        const PrefillProblem padded = packed_problem(lengths, c.heads, c.head_dim, c.causal, 21, longest);
        const PrefillProblem packed = packed_problem(lengths, c.heads, c.head_dim, c.causal, 22);
        const std::uint64_t bytes = padded.q.size() * sizeof(float);
        if (fit_buffer_bytes(s.info(), bytes, 8, 1) < bytes)
            throw ProbeUnsupported(fmt::format("the padded batch ({} per tensor) does not fit", format_bytes(bytes)));
        FusedKernels fused(s, c.head_dim);
        const auto tiles = fused_tiles(s.info(), c.head_dim, false, fused.has_row_block());
        if (tiles.empty()) throw ProbeUnsupported("no fused tile fits the device's local memory");
        const FusedTile tile = tiles.front();
        const DeviceTensors tpad = upload(s, padded), tpack = upload(s, packed);

        auto heads_of = [&](const std::vector<std::size_t>& requests) { return heads_of_requests(requests, c.heads); };
        std::vector<std::size_t> everyone(lengths.size());
        std::iota(everyone.begin(), everyone.end(), std::size_t{0});
        const auto buckets = length_buckets(lengths, bucket_count);

        struct Strategy {
            const char* name;
            const PrefillProblem* problem;
            const DeviceTensors* tensors;
            std::vector<HeadSet> launches;
            std::vector<std::uint32_t> extents;
        };
        std::vector<Strategy> strategies;
        strategies.push_back({"padded",
                              &padded,
                              &tpad,
                              {make_head_set(s, padded, heads_of(everyone), longest)},
                              std::vector<std::uint32_t>(lengths.size(), longest)});
        Strategy bucketed{"bucketed", &padded, &tpad, {}, extents_of(lengths, buckets)};
        for (const auto& b : buckets)
            bucketed.launches.push_back(make_head_set(s, padded, heads_of(b.members), b.extent));
        strategies.push_back(std::move(bucketed));
        strategies.push_back({"packed", &packed, &tpack, {make_head_set(s, packed, heads_of(everyone), 0)}, lengths});

        const SamplerConfig config = sampler_for(ctx.options.mode);
        InterleavedSampler sampler(config);
        for (auto& st : strategies) {
            q.enqueueFillBuffer(st.tensors->o, 0.0f, 0, st.problem->q.size() * sizeof(float));
            sampler.add([&](std::int64_t n) {
                return time_steps(
                    q, s.profiling(), n,
                    [&](std::vector<cl::Event>& ev) {
                        for (const auto& launch : st.launches)
                            ev.push_back(enqueue_fused(q, fused, *st.tensors, launch, *st.problem, tile));
                    },
                    std::string("attention batching ") + st.name);
            });
            verify_prefill(q, st.tensors->o, *st.problem, c.verify_rows, fp32_tolerance,
                           std::string(st.name) + " batch");
        }
        const std::vector<SampleSet> sets = sampler.run();
        const double tokens = std::accumulate(lengths.begin(), lengths.end(), 0.0);
        for (std::size_t i = 0; i < sets.size(); ++i) {
            Labels labels = prefill_labels(c, longest);
            labels["strategy"] = strategies[i].name;
            labels["tile"] = tile.label();
            Measurement tput = make_measurement("attention.batching.throughput", "tokens/s", labels,
                                                to_rates(sets[i], tokens, 1.0), sets[i].timer);
            tput.iterations_per_sample = sets[i].iterations;
            out.measurements.push_back(std::move(tput));
            out.measurements.push_back(time_measurement("attention.batching.time", labels, sets[i]));
            out.measurements.push_back(derived("attention.batching.padding_fraction", "fraction", labels,
                                               padding_fraction(lengths, strategies[i].extents, c.causal), false));
        }
        out.attributes["lengths"] = lengths;
        out.attributes["buckets"] = buckets.size();
        out.attributes["length_distribution"] = "log-uniform between 16 tokens and the longest prompt";
        out.attributes["sampling"] = sampling_note(config);
    }
};

}  // namespace

std::unique_ptr<Probe> make_attention_batching_probe() {
    return std::make_unique<BatchingProbe>();
}

}  // namespace clprobe
