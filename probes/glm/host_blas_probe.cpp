// glm.host_blas: the same logistic gradient on the host with OpenBLAS (two sgemv calls and the
// link function), so the report can say whether offloading pays at all on this machine.
#include <fmt/core.h>

#include <chrono>
#include <cmath>

#include "common/host_blas.hpp"
#include "common/probe_support.hpp"
#include "core/glm_facts.hpp"
#include "glm/glm_support.hpp"
#include "probe_factories.hpp"

namespace clprobe {

namespace {

using namespace glm;

// g = X^T (mu(X beta) - y) / n + lambda beta, the way a host program would write it.
void blas_gradient(const Dataset& d, const std::vector<float>& beta, std::vector<float>& eta, std::vector<float>& g) {
    const auto n = static_cast<int>(d.n), p = static_cast<int>(d.p);
    host_blas::sgemv(false, n, p, 1.0f, d.x.data(), p, beta.data(), 0.0f, eta.data());
    for (std::uint64_t i = 0; i < d.n; ++i)
        eta[i] = 1.0f / (1.0f + std::exp(-eta[i])) - d.y[i];
    host_blas::sgemv(true, n, p, 1.0f / static_cast<float>(d.n), d.x.data(), p, eta.data(), 0.0f, g.data());
    for (std::uint32_t j = 0; j < d.p; ++j)
        g[j] += static_cast<float>(ridge_lambda) * beta[j];
}

class HostBlasProbe final : public Probe {
  public:
    std::string id() const override { return "glm.host_blas"; }
    std::string layer() const override { return "kernel"; }
    std::string title() const override { return "GLM gradient on the host with OpenBLAS"; }
    std::string workload() const override { return "glm"; }
    bool needs_device() const override { return false; }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        host_blas::require();
        const Shape shape = shape_for(ctx);
        const auto data = shared_dataset(shape.rows, shape.cols, Family::logistic);
        const std::vector<double> beta_d = evaluation_beta(*data);
        const std::vector<float> beta(beta_d.begin(), beta_d.end());
        std::vector<float> eta(data->n), g(data->p);
        blas_gradient(*data, beta, eta, g);
        const std::vector<double> reference = reference_gradient(*data, beta_d, ridge_lambda);
        const double err = verify_gradient("OpenBLAS gradient", {g.begin(), g.end()}, reference, false);

        const SamplerConfig config = sampler_for(ctx.options.mode);
        const SampleSet set = run_samples(
            [&](std::int64_t iters) {
                const auto t0 = std::chrono::steady_clock::now();
                for (std::int64_t k = 0; k < iters; ++k)
                    blas_gradient(*data, beta, eta, g);
                return TimedBatch{std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                                  TimerKind::host_steady_clock};
            },
            config);
        // Two gemv calls read X twice.
        const double bytes = 2.0 * static_cast<double>(data->x.size()) * 4 + 3.0 * static_cast<double>(data->n) * 4;
        const Labels labels{{"library", "openblas"}, {"precision", "fp32"}};
        out.measurements.push_back(
            make_measurement("glm.host_blas.gradient.time", "ms", labels, to_times(set, 1e3), set.timer, false));
        out.measurements.push_back(make_measurement("glm.host_blas.gradient.bandwidth", "GB/s", labels,
                                                    to_rates(set, bytes, 1e-9), set.timer));
        write_glm_run_shape(out, GlmRunShape{data->n, data->p});
        out.attributes["threads"] = host_blas::threads();
        out.attributes["relative_error"] = err;
        out.attributes["sampling"] = sampling_note(config);
        out.attributes["bytes_counted"] = "X twice (two gemv calls), y, eta written and read";
    }
};

}  // namespace

std::unique_ptr<Probe> make_glm_host_blas_probe() {
    return std::make_unique<HostBlasProbe>();
}

}  // namespace clprobe
