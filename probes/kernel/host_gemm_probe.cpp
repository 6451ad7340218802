// kernel.host_gemm: the host's own OpenBLAS sgemm and dgemm rate. On a CPU device the OpenCL
// driver and OpenBLAS run on the same cores, so a tuned GEMM is a floor for what those cores can
// compute: a kernel.peak.<precision> below it is not at the hardware's limit (the ceiling check in
// reports/rules/ceiling_checks). OpenBLAS picks its kernels for the CPU it detects; forcing
// OPENBLAS_CORETYPE would measure another core's kernels, so this probe leaves it alone.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "cl/device_session.hpp"
#include "common/host_blas.hpp"
#include "common/probe_support.hpp"
#include "core/clock.hpp"
#include "core/stop_points.hpp"
#include "probe_factories.hpp"

namespace clprobe {

namespace {

// Square sizes: large enough that packing and thread start-up are a small share of a call, small
// enough that three fp64 matrices (384 MiB at 4096) fit any host that runs a CPU device.
constexpr std::int64_t min_order = 1024, max_order = 4096, order_step = 64;
constexpr int checked_entries = 64;

// Values in [-1, 1) from a fixed LCG: reproducible, no special structure for the library to exploit.
template <typename Real>
std::vector<Real> filled_matrix(std::int64_t order, std::uint64_t seed) {
    std::vector<Real> m(static_cast<std::size_t>(order * order));
    std::uint64_t x = seed;
    for (auto& v : m) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        v = static_cast<Real>(static_cast<double>(x >> 11) / 4503599627370496.0 - 1.0);
    }
    return m;
}

template <typename Real>
struct GemmProblem {
    std::int64_t order;
    std::vector<Real> a, b, c;

    explicit GemmProblem(std::int64_t n)
        : order(n), a(filled_matrix<Real>(n, 1)), b(filled_matrix<Real>(n, 2)), c(static_cast<std::size_t>(n * n)) {}

    // C = A B, row-major, no transposes: the plain call a host program makes.
    void multiply() {
        const auto n = static_cast<int>(order);
        if constexpr (std::is_same_v<Real, float>)
            host_blas::sgemm(false, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
        else
            host_blas::dgemm(n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
    }

    double flops() const { return 2.0 * static_cast<double>(order) * static_cast<double>(order) * order; }

    // Entries spread over C recomputed in double. The bound is the classic n*u*sum|a||b| for a dot
    // product of n terms, so rounding never fails it and a wrong result (stride, layout, garbage)
    // misses it by orders of magnitude. Returns the largest error relative to that scale.
    double verify(const char* name) const {
        const double unit_roundoff = std::numeric_limits<Real>::epsilon() / 2;
        const std::size_t n = static_cast<std::size_t>(order);
        double worst = 0;
        for (int e = 0; e < checked_entries; ++e) {
            const std::size_t i = static_cast<std::size_t>(e) * (n - 1) / (checked_entries - 1);
            const std::size_t j = (static_cast<std::size_t>(e) * 7919) % n;
            double exact = 0, scale = 0;
            for (std::size_t k = 0; k < n; ++k) {
                exact += static_cast<double>(a[i * n + k]) * static_cast<double>(b[k * n + j]);
                scale += std::fabs(static_cast<double>(a[i * n + k]) * static_cast<double>(b[k * n + j]));
            }
            const double got = c[i * n + j];
            const double error = std::fabs(got - exact) / scale;
            if (!(error <= static_cast<double>(n) * unit_roundoff))
                throw VerificationError(
                    fmt::format("{} at order {}: C[{}][{}] is {} (expected {})", name, order, i, j, got, exact));
            worst = std::max(worst, error);
        }
        return worst;
    }
};

// The order whose call takes about `seconds`, from one timed call at the smallest order (after a
// first call that starts OpenBLAS's threads): GEMM time grows with the cube of the order.
template <typename Real>
std::int64_t order_for(double seconds) {
    GemmProblem<Real> probe(min_order);
    probe.multiply();
    const auto start = std::chrono::steady_clock::now();
    probe.multiply();
    const double t = std::max(seconds_since(start), 1e-6);
    const auto wanted = static_cast<std::int64_t>(static_cast<double>(min_order) * std::cbrt(seconds / t));
    return std::clamp(wanted / order_step * order_step, min_order, max_order);
}

class HostGemmProbe final : public Probe {
  public:
    std::string id() const override { return "kernel.host_gemm"; }
    std::string layer() const override { return "kernel"; }
    std::string title() const override { return "Host GEMM rate on the device's cores (OpenBLAS)"; }
    // Sizing calls, then two precisions of best-of-2 samples at about the target batch time.
    double expected_seconds(RunMode mode) const override { return 1.5 * mode_time_factor(mode); }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        host_blas::require();
        if (!ctx.device || ctx.device->info().type != "cpu")
            throw ProbeUnsupported("the device is not this host's CPU: a host BLAS rate is no ceiling for it");
        // Samples like the device ceilings (fastest of a few batches), so the two compare like for like.
        const SamplerConfig config = ceiling_sampler_for(ctx.options.mode);
        measure<float>("fp32", config, out);
        measure<double>("fp64", config, out);
        out.attributes["blas"] = host_blas::config();
        out.attributes["blas_core"] = host_blas::core_name();
        out.attributes["blas_threads"] = host_blas::threads();
        out.attributes["sampling"] = sampling_note(config);
        out.attributes["flops_counted"] = "2 n^3 per call (C = A B, n x n, row-major)";
    }

  private:
    template <typename Real>
    void measure(const char* precision, const SamplerConfig& config, ProbeResult& out) const {
        check_stop();
        GemmProblem<Real> problem(order_for<Real>(config.target_seconds));
        const SampleSet set = run_samples(
            [&](std::int64_t calls) {
                const auto start = std::chrono::steady_clock::now();
                for (std::int64_t i = 0; i < calls; ++i)
                    problem.multiply();
                return TimedBatch{seconds_since(start), TimerKind::host_steady_clock};
            },
            config);
        // C holds the last timed call's product: checked before its samples are recorded.
        const char* routine = std::is_same_v<Real, float> ? "sgemm" : "dgemm";
        const double error = problem.verify(routine);
        Measurement m = make_measurement("kernel.host_gemm.gflops", "GFLOP/s", {{"precision", precision}},
                                         to_rates(set, problem.flops(), 1e-9), set.timer);
        m.iterations_per_sample = set.iterations;
        out.measurements.push_back(std::move(m));
        out.attributes[fmt::format("{}_order", routine)] = problem.order;
        out.attributes[fmt::format("{}_relative_error", routine)] = error;
    }
};

}  // namespace

std::unique_ptr<Probe> make_host_gemm_probe() {
    return std::make_unique<HostGemmProbe>();
}

}  // namespace clprobe
