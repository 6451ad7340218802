// attention.host_blas: the same prefill as attention.prefill on the host, with OpenBLAS GEMMs
// (S = QK^T, O = PV) and a host softmax, so the report can say whether offloading pays at this
// size. Host clock; checked against the double-precision reference like the device variants.
#include <fmt/core.h>

#include <chrono>
#include <cmath>
#include <limits>

#include "attention/attention_config.hpp"
#include "attention/attention_device.hpp"
#include "attention/attention_math.hpp"
#include "attention/attention_report.hpp"
#include "common/host_blas.hpp"
#include "common/probe_support.hpp"
#include "core/stop_points.hpp"
#include "probe_factories.hpp"

namespace clprobe {

namespace {

using namespace attention;

void softmax_rows(float* s, std::size_t seq, bool causal) {
    for (std::size_t i = 0; i < seq; ++i) {
        float* row = s + i * seq;
        const std::size_t keys = visible_keys(i, seq, causal);
        float m = -std::numeric_limits<float>::infinity();
        for (std::size_t j = 0; j < keys; ++j)
            m = std::max(m, row[j]);
        float sum = 0;
        for (std::size_t j = 0; j < keys; ++j) {
            row[j] = std::exp(row[j] - m);
            sum += row[j];
        }
        const float inv = 1.0f / sum;
        for (std::size_t j = 0; j < keys; ++j)
            row[j] *= inv;
        for (std::size_t j = keys; j < seq; ++j)
            row[j] = 0.0f;
    }
}

// One prefill of every sequence-head: GEMM, softmax, GEMM per head, as a host library user would.
void host_prefill(const PrefillProblem& p, std::vector<float>& scores, std::vector<float>& out) {
    const int seq = static_cast<int>(p.longest()), d = static_cast<int>(p.head_dim);
    for (std::uint32_t h = 0; h < p.heads(); ++h) {
        check_stop();
        const std::size_t base = std::size_t{p.starts[h]} * p.head_dim;
        host_blas::sgemm(true, seq, seq, d, static_cast<float>(p.scale()), &p.q[base], d, &p.k[base], d, 0.0f,
                         scores.data(), seq);
        softmax_rows(scores.data(), static_cast<std::size_t>(seq), p.causal);
        host_blas::sgemm(false, seq, d, seq, 1.0f, scores.data(), seq, &p.v[base], d, 0.0f, &out[base], d);
    }
}

class HostBlasProbe final : public Probe {
  public:
    std::string id() const override { return "attention.host_blas"; }
    std::string layer() const override { return "kernel"; }
    std::string title() const override { return "Attention prefill on the host (OpenBLAS)"; }
    std::string workload() const override { return "attention"; }
    bool needs_device() const override { return false; }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        host_blas::require();
        const AttentionConfig c = config_for(ctx.options);
        const PrefillProblem p = uniform_problem(c.batch, c.heads, c.seq, c.head_dim, c.causal, 1);
        std::vector<float> scores(std::size_t{c.seq} * c.seq), result(p.q.size());
        const SamplerConfig config = sampler_for(ctx.options.mode);
        const SampleSet set = run_samples(
            [&](std::int64_t n) {
                const auto start = std::chrono::steady_clock::now();
                for (std::int64_t i = 0; i < n; ++i)
                    host_prefill(p, scores, result);
                return TimedBatch{std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                                  TimerKind::host_steady_clock};
            },
            config);
        // The last batch's output, checked before the samples are recorded.
        const double error = check_prefill(result, p, c.verify_rows, 1e-4, "host BLAS prefill");

        Labels labels = prefill_labels(c, c.seq);
        labels["variant"] = "host_blas";
        out.measurements.push_back(time_measurement("attention.host_blas.prefill.time", labels, set));
        Measurement rate = make_measurement("attention.host_blas.prefill.gflops", "GFLOP/s", labels,
                                            to_rates(set, p.flops(), 1e-9), set.timer);
        rate.iterations_per_sample = set.iterations;
        out.measurements.push_back(std::move(rate));
        out.measurements.push_back(derived("attention.host_blas.prefill.error", "relative", labels, error, false));
        out.attributes["blas"] = host_blas::config();
        out.attributes["blas_threads"] = host_blas::threads();
        out.attributes["sampling"] = sampling_note(config);
    }
};

}  // namespace

std::unique_ptr<Probe> make_attention_host_blas_probe() {
    return std::make_unique<HostBlasProbe>();
}

}  // namespace clprobe
