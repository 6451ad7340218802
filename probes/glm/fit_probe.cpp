// glm.fit: IRLS / Newton fits of logistic and Poisson regression. Each pass accumulates
// H = X^T W X and X^T (mu - y) on the device (kernels/glm/newton.cl); the host adds the groups in
// double and solves the p x p system. The fitted beta must match a host fit in double precision.
// The fit is repeated once with X held in each reduced storage (fp16, bf16, int8; fp32 sums), whose
// beta must stay within glm::fit_tolerance of the same host fit on the full-precision X.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "cl/device_session.hpp"
#include "common/probe_support.hpp"
#include "core/glm_facts.hpp"
#include "core/stop_points.hpp"
#include "glm/glm_device.hpp"
#include "glm/glm_storage.hpp"
#include "glm/glm_support.hpp"
#include "probe_factories.hpp"

namespace clprobe {

namespace {

using namespace glm;

// The host reference fit costs n p^2 per iteration in double: fits use at most this many rows.
std::uint64_t fit_rows_cap(RunMode mode) {
    return mode == RunMode::quick ? (1u << 13) : mode == RunMode::full ? (1u << 18) : (1u << 14);
}

// fp32 sums bound how far Newton can refine beta; the host fit goes on to 1e-7.
constexpr double device_tolerance = 1e-5;
constexpr double beta_tolerance = 1e-3;  // |beta_device - beta_host|, elementwise

struct DeviceFit {
    std::vector<double> beta;
    int iterations = 0;
    bool converged = false;
    double error = 0;  // max |beta - beta_host|, once checked
};

DeviceFit device_fit(NewtonPass& pass, std::uint64_t n, std::uint32_t p, const FitSettings& settings) {
    DeviceFit f;
    f.beta.assign(p, 0.0);
    for (f.iterations = 1; f.iterations <= settings.max_iterations; ++f.iterations) {
        pass.set_beta(f.beta);
        pass.enqueue();
        const auto delta = newton_delta(pass.read_sums(), n, f.beta, settings.lambda);
        double largest = 0;
        for (std::uint32_t j = 0; j < p; ++j) {
            f.beta[j] -= delta[j];
            largest = std::max(largest, std::fabs(delta[j]));
        }
        if (largest <= device_tolerance) {
            f.converged = true;
            return f;
        }
        check_stop();
    }
    f.iterations = settings.max_iterations;
    return f;
}

class FitProbe final : public Probe {
  public:
    std::string id() const override { return "glm.fit"; }
    std::string layer() const override { return "kernel"; }
    std::string title() const override { return "GLM fits by IRLS / Newton (device sums, host solve)"; }
    std::string workload() const override { return "glm"; }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        const Shape shape = shape_for(ctx);
        const GlmRunShape ran{std::min(shape.rows, fit_rows_cap(ctx.options.mode)), shape.cols};
        SamplerConfig config = sampler_for(ctx.options.mode);
        // Whole fits are long batches already: a few samples each.
        config.samples = std::min(config.samples, 3);
        config.budget_seconds = ctx.options.mode == RunMode::quick ? 0.2 : ctx.options.mode == RunMode::full ? 3 : 0.6;
        FitSettings settings;
        settings.lambda = ridge_lambda;
        nlohmann::json fits = nlohmann::json::array();
        for (Family family : {Family::logistic, Family::poisson})
            fits.push_back(fit_family(*ctx.device, family, ran, config, settings, out));
        write_glm_run_shape(out, ran);
        out.attributes["fits"] = fits;
        out.attributes["sampling"] = sampling_note(config);
        out.attributes["convergence"] =
            fmt::format("max |delta beta| <= {:.0e} on the device (fp32 sums), 1e-7 on the host", device_tolerance);
    }

  private:
    // Relative errors of one Newton pass's sums against the double reference.
    struct SumErrors {
        double h = 0, g = 0;
    };

    // One pass at the start point, checked against the double sums before it is timed.
    static SumErrors verify_pass(NewtonPass& pass, const Dataset& d, Family family) {
        const std::vector<double> start = evaluation_beta(d);
        pass.set_beta(start);
        pass.enqueue();
        const NewtonSums got = pass.read_sums(), want = reference_newton_sums(d, start);
        const SumErrors e{relative_error(got.h, want.h), relative_error(got.g, want.g)};
        if (!(e.h <= tolerance(false)) || !(e.g <= tolerance(false)))
            throw VerificationError(
                fmt::format("{} Newton sums differ from the double reference: H by {:.3g}, "
                            "gradient by {:.3g} (relative)",
                            to_string(family), e.h, e.g));
        return e;
    }

    static void record_passes(ProbeResult& out, DeviceSession& s, NewtonPass& pass, const GlmRunShape& ran,
                              const Labels& labels, const SamplerConfig& config) {
        const SampleSet passes = run_samples(
            [&](std::int64_t iters) {
                return time_commands(
                    s.queue(), s.profiling(), iters, [&] { return pass.enqueue(); }, "glm.newton_row");
            },
            config);
        const double n = static_cast<double>(ran.rows), p = ran.cols;
        const double pass_flops = 2.0 * n * p * (p + 1) / 2.0 + 4.0 * n * p;
        out.measurements.push_back(
            make_measurement("glm.newton.time", "ms", labels, to_times(passes, 1e3), passes.timer, false));
        out.measurements.push_back(
            make_measurement("glm.newton.gflops", "GFLOP/s", labels, to_rates(passes, pass_flops, 1e-9), passes.timer));
    }

    // Whole fits from beta = 0 (device passes, reads and host solves), on the host clock; the last
    // fit must match the host's.
    static DeviceFit record_fits(ProbeResult& out, NewtonPass& pass, const GlmRunShape& ran, const Labels& labels,
                                 const SamplerConfig& config, const FitSettings& settings, const FitResult& host) {
        DeviceFit fit;
        const SampleSet fit_times = run_samples(
            [&](std::int64_t iters) {
                const auto t0 = std::chrono::steady_clock::now();
                for (std::int64_t k = 0; k < iters; ++k)
                    fit = device_fit(pass, ran.rows, ran.cols, settings);
                return TimedBatch{std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                                  TimerKind::host_steady_clock};
            },
            config);
        const double beta_err = max_abs_difference(fit.beta, host.beta);
        if (!fit.converged || !(beta_err <= beta_tolerance))
            throw VerificationError(fmt::format(
                "{} fit: device beta differs from the host fit by {:.3g} after {} "
                "iterations (allowed {:.0e}{})",
                labels.at("family"), beta_err, fit.iterations, beta_tolerance, fit.converged ? "" : ", not converged"));
        out.measurements.push_back(
            make_measurement("glm.fit.time", "ms", labels, to_times(fit_times, 1e3), fit_times.timer, false));
        out.measurements.push_back(make_measurement("glm.fit.iterations", "count", labels,
                                                    {static_cast<double>(fit.iterations)}, TimerKind::none, false));
        // The error can be exactly 0 in a lucky case; keep it positive for log-scale renderers.
        Measurement err =
            make_measurement("glm.fit.error", "abs", labels, {std::max(beta_err, 1e-300)}, TimerKind::none, false);
        err.note = "max |beta_device - beta_host_double|";
        out.measurements.push_back(err);
        fit.error = beta_err;
        return fit;
    }

    // One family: host reference fit, a checked pass, timed passes, timed whole fits.
    static nlohmann::json fit_family(DeviceSession& s, Family family, const GlmRunShape& ran,
                                     const SamplerConfig& config, const FitSettings& settings, ProbeResult& out) {
        const Dataset d = make_dataset(ran.rows, ran.cols, family, data_seed + 1);
        const FitResult host = host_fit(d, settings);
        if (!host.converged)
            throw ProbeUnsupported(fmt::format("the host {} fit did not converge in {} iterations", to_string(family),
                                               settings.max_iterations));
        check_stop();
        DeviceData data = upload_dense(s, d, Layout::row, false, std::vector<double>(ran.cols, 0.0), 1);
        NewtonPass pass(s, data, family);
        const Labels labels{{"family", to_string(family)}, {"precision", "fp32"}};
        const SumErrors sums = verify_pass(pass, d, family);
        record_passes(out, s, pass, ran, labels, config);
        const DeviceFit fit = record_fits(out, pass, ran, labels, config, settings, host);
        nlohmann::json stored = nlohmann::json::array();
        for (const Storage storage : reduced_storages)
            stored.push_back(stored_fit(out, s, d, family, storage, ran, settings, host));
        return {{"family", to_string(family)},
                {"device_iterations", fit.iterations},
                {"host_iterations", host.iterations},
                {"beta_error", fit.error},
                {"newton_h_error", sums.h},
                {"newton_g_error", sums.g},
                {"storage", stored}};
    }

    // One fit with X in reduced storage (not timed): its Newton pass checked against the double
    // sums over the decoded X, then its beta against the host fit on the full-precision X.
    static nlohmann::json stored_fit(ProbeResult& out, DeviceSession& s, const Dataset& d, Family family,
                                     Storage storage, const GlmRunShape& ran, const FitSettings& settings,
                                     const FitResult& host) {
        check_stop();
        const std::string name = to_string(storage);
        const StoredMatrix x = encode(d, storage);
        DeviceData data = upload_stored(s, d, x, std::vector<double>(ran.cols, 0.0), 1);
        NewtonPass pass(s, data, family);
        const SumErrors sums = verify_pass(pass, decoded(d, x), family);
        const DeviceFit fit = device_fit(pass, ran.rows, ran.cols, settings);
        const double beta_err = max_abs_difference(fit.beta, host.beta);
        if (!fit.converged || !(beta_err <= fit_tolerance(storage)))
            throw VerificationError(fmt::format(
                "{} fit on {} X: beta differs from the host fit on fp32 X by {:.3g} after {} iterations (allowed "
                "{:.0e}{})",
                to_string(family), name, beta_err, fit.iterations, fit_tolerance(storage),
                fit.converged ? "" : ", not converged"));
        const Labels labels{{"family", to_string(family)}, {"precision", name}, {"storage", name}};
        out.measurements.push_back(make_measurement("glm.fit.iterations", "count", labels,
                                                    {static_cast<double>(fit.iterations)}, TimerKind::none, false));
        Measurement err =
            make_measurement("glm.fit.error", "abs", labels, {std::max(beta_err, 1e-300)}, TimerKind::none, false);
        err.note = fmt::format(
            "max |beta_device - beta_host_double| with X stored in {}, against the host fit on "
            "fp32 X (allowed {:.0e})",
            name, fit_tolerance(storage));
        out.measurements.push_back(std::move(err));
        return {{"storage", name},          {"device_iterations", fit.iterations},
                {"beta_error", beta_err},   {"beta_tolerance", fit_tolerance(storage)},
                {"newton_h_error", sums.h}, {"newton_g_error", sums.g}};
    }
};

}  // namespace

std::unique_ptr<Probe> make_glm_fit_probe() {
    return std::make_unique<FitProbe>();
}

}  // namespace clprobe
