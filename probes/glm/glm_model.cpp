#include "glm/glm_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/memory_roofs.hpp"

namespace clprobe::glm {

namespace {

// SplitMix64 of (seed, index): a counter-based generator, so any element can be produced alone
// and in any order.
std::uint64_t mix(std::uint64_t seed, std::uint64_t index) {
    std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + index + 0x632BE59BD9B4E5F5ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double uniform01(std::uint64_t seed, std::uint64_t index) {
    return static_cast<double>(mix(seed, index) >> 11) * (1.0 / 9007199254740992.0);
}

// Uniform on [-sqrt 3, sqrt 3]: mean 0, variance 1 (scaled features, as a statistician would fit).
float feature(std::uint64_t seed, std::uint64_t index) {
    return static_cast<float>((2.0 * uniform01(seed, index) - 1.0) * 1.7320508075688772);
}

constexpr std::uint64_t response_stream = 0x5bd1e995ull;

std::vector<double> true_beta(std::uint32_t p, Family family) {
    std::vector<double> b(p);
    // The intercept sets the class balance (logit -1 -> ~30% positives) or the mean count (log).
    b[0] = family == Family::logistic ? -1.0 : 0.5;
    // Slopes spread over [-1, 1] / sqrt(p): the linear predictor's spread stays near 1 whatever p.
    for (std::uint32_t j = 1; j < p; ++j)
        b[j] = (static_cast<double>(j % 9) - 4.0) / 4.0 / std::sqrt(static_cast<double>(p));
    return b;
}

float draw_response(Family family, double mu, std::uint64_t seed, std::uint64_t i) {
    const double u = uniform01(seed ^ response_stream, i);
    if (family == Family::logistic) return u < mu ? 1.0f : 0.0f;
    // Poisson by inversion of the CDF: means here stay small (a few units).
    double pk = std::exp(-mu), cdf = pk;
    int k = 0;
    while (u > cdf && k < 1000) {
        ++k;
        pk *= mu / k;
        cdf += pk;
    }
    return static_cast<float>(k);
}

double dot_row(const float* row, const std::vector<double>& beta, std::uint32_t p) {
    double eta = 0;
    for (std::uint32_t j = 0; j < p; ++j)
        eta += static_cast<double>(row[j]) * beta[j];
    return eta;
}

}  // namespace

std::string to_string(Family f) {
    return f == Family::logistic ? "logistic" : "poisson";
}

double mean_of(Family f, double eta) {
    return f == Family::logistic ? 1.0 / (1.0 + std::exp(-eta)) : std::exp(eta);
}

double weight_of(Family f, double mu) {
    return f == Family::logistic ? mu * (1.0 - mu) : mu;
}

Dataset make_dataset(std::uint64_t n, std::uint32_t p, Family family, std::uint64_t seed) {
    if (n == 0 || p == 0) throw std::invalid_argument("glm dataset needs n > 0 and p > 0");
    Dataset d;
    d.n = n;
    d.p = p;
    d.family = family;
    d.beta_true = true_beta(p, family);
    d.x.resize(n * p);
    d.y.resize(n);
    for (std::uint64_t i = 0; i < n; ++i) {
        float* row = d.x.data() + i * p;
        for (std::uint32_t j = 0; j < p; ++j)
            row[j] = (j == 0 && p > 1) ? 1.0f : feature(seed, i * p + j);
        d.y[i] = draw_response(family, mean_of(family, dot_row(row, d.beta_true, p)), seed, i);
    }
    return d;
}

std::vector<float> to_column_major(const Dataset& d, std::uint64_t ld) {
    if (ld < d.n) throw std::invalid_argument("leading dimension below n");
    std::vector<float> out(ld * d.p, 0.0f);
    for (std::uint64_t i = 0; i < d.n; ++i)
        for (std::uint32_t j = 0; j < d.p; ++j)
            out[j * ld + i] = d.x[i * d.p + j];
    return out;
}

std::uint32_t csr_nonzeros_per_row(std::uint32_t p, double density) {
    if (p == 0) return 0;
    return static_cast<std::uint32_t>(std::clamp<double>(std::round(density * p), 1.0, static_cast<double>(p)));
}

CsrMatrix make_csr(std::uint64_t n, std::uint32_t p, double density, std::uint64_t seed) {
    CsrMatrix m;
    m.n = n;
    m.p = p;
    const std::uint32_t per_row = csr_nonzeros_per_row(p, density);
    m.row_ptr.resize(n + 1);
    m.cols.reserve(n * per_row);
    m.vals.reserve(n * per_row);
    for (std::uint64_t i = 0; i < n; ++i) {
        m.row_ptr[i] = static_cast<std::uint32_t>(m.vals.size());
        const auto offset = static_cast<std::uint32_t>(mix(seed, i) % p);
        // Evenly spread columns, rotated by the offset, then sorted (CSR rows are sorted).
        std::vector<std::uint32_t> cols(per_row);
        for (std::uint32_t k = 0; k < per_row; ++k)
            cols[k] = static_cast<std::uint32_t>((offset + static_cast<std::uint64_t>(k) * p / per_row) % p);
        std::sort(cols.begin(), cols.end());
        for (std::uint32_t c : cols) {
            m.cols.push_back(c);
            m.vals.push_back(feature(seed, i * p + c));
        }
    }
    m.row_ptr[n] = static_cast<std::uint32_t>(m.vals.size());
    return m;
}

Dataset densify(const CsrMatrix& m, const Dataset& like) {
    Dataset d;
    d.n = m.n;
    d.p = m.p;
    d.family = like.family;
    d.beta_true = like.beta_true;
    d.y = like.y;
    d.x.assign(m.n * m.p, 0.0f);
    for (std::uint64_t i = 0; i < m.n; ++i)
        for (std::uint32_t k = m.row_ptr[i]; k < m.row_ptr[i + 1]; ++k)
            d.x[i * m.p + m.cols[k]] = m.vals[k];
    return d;
}

std::vector<double> reference_gradient(const Dataset& d, const std::vector<double>& beta, double lambda,
                                       std::uint64_t rows) {
    const std::uint64_t n = rows == 0 ? d.n : std::min(rows, d.n);
    std::vector<double> g(d.p, 0.0);
    for (std::uint64_t i = 0; i < n; ++i) {
        const float* row = d.x.data() + i * d.p;
        const double r = mean_of(d.family, dot_row(row, beta, d.p)) - d.y[i];
        for (std::uint32_t j = 0; j < d.p; ++j)
            g[j] += r * row[j];
    }
    for (std::uint32_t j = 0; j < d.p; ++j)
        g[j] = g[j] / static_cast<double>(n) + lambda * beta[j];
    return g;
}

std::vector<double> reference_gradient(const CsrMatrix& m, const std::vector<float>& y, Family family,
                                       const std::vector<double>& beta, double lambda) {
    std::vector<double> g(m.p, 0.0);
    for (std::uint64_t i = 0; i < m.n; ++i) {
        double eta = 0;
        for (std::uint32_t k = m.row_ptr[i]; k < m.row_ptr[i + 1]; ++k)
            eta += static_cast<double>(m.vals[k]) * beta[m.cols[k]];
        const double r = mean_of(family, eta) - y[i];
        for (std::uint32_t k = m.row_ptr[i]; k < m.row_ptr[i + 1]; ++k)
            g[m.cols[k]] += r * m.vals[k];
    }
    for (std::uint32_t j = 0; j < m.p; ++j)
        g[j] = g[j] / static_cast<double>(m.n) + lambda * beta[j];
    return g;
}

NewtonSums reference_newton_sums(const Dataset& d, const std::vector<double>& beta) {
    const std::uint32_t p = d.p;
    NewtonSums s{std::vector<double>(std::size_t{p} * p, 0.0), std::vector<double>(p, 0.0)};
    std::vector<double> row(p);
    for (std::uint64_t i = 0; i < d.n; ++i) {
        const float* x = d.x.data() + i * p;
        for (std::uint32_t j = 0; j < p; ++j)
            row[j] = x[j];
        const double mu = mean_of(d.family, dot_row(x, beta, p));
        const double w = weight_of(d.family, mu), r = mu - d.y[i];
        for (std::uint32_t j = 0; j < p; ++j) {
            s.g[j] += r * row[j];
            const double wj = w * row[j];
            double* h = s.h.data() + std::size_t{j} * p;
            for (std::uint32_t k = j; k < p; ++k)  // upper triangle; mirrored below
                h[k] += wj * row[k];
        }
    }
    for (std::uint32_t j = 0; j < p; ++j)
        for (std::uint32_t k = 0; k < j; ++k)
            s.h[std::size_t{j} * p + k] = s.h[std::size_t{k} * p + j];
    return s;
}

bool cholesky_solve(std::vector<double> a, std::vector<double>& b, std::uint32_t p) {
    // A = L L^T, L stored in the lower triangle of a.
    for (std::uint32_t j = 0; j < p; ++j) {
        double d = a[std::size_t{j} * p + j];
        for (std::uint32_t k = 0; k < j; ++k)
            d -= a[std::size_t{j} * p + k] * a[std::size_t{j} * p + k];
        if (!(d > 0) || !std::isfinite(d)) return false;
        const double l = std::sqrt(d);
        a[std::size_t{j} * p + j] = l;
        for (std::uint32_t i = j + 1; i < p; ++i) {
            double s = a[std::size_t{i} * p + j];
            for (std::uint32_t k = 0; k < j; ++k)
                s -= a[std::size_t{i} * p + k] * a[std::size_t{j} * p + k];
            a[std::size_t{i} * p + j] = s / l;
        }
    }
    for (std::uint32_t i = 0; i < p; ++i) {  // L z = b
        double s = b[i];
        for (std::uint32_t k = 0; k < i; ++k)
            s -= a[std::size_t{i} * p + k] * b[k];
        b[i] = s / a[std::size_t{i} * p + i];
    }
    for (std::uint32_t i = p; i-- > 0;) {  // L^T x = z
        double s = b[i];
        for (std::uint32_t k = i + 1; k < p; ++k)
            s -= a[std::size_t{k} * p + i] * b[k];
        b[i] = s / a[std::size_t{i} * p + i];
    }
    return true;
}

std::vector<double> newton_delta(const NewtonSums& sums, std::uint64_t n, const std::vector<double>& beta,
                                 double lambda) {
    const auto p = static_cast<std::uint32_t>(beta.size());
    const double inv_n = 1.0 / static_cast<double>(n);
    std::vector<double> h(sums.h.size()), g(p);
    for (std::size_t e = 0; e < h.size(); ++e)
        h[e] = sums.h[e] * inv_n;
    for (std::uint32_t j = 0; j < p; ++j) {
        h[std::size_t{j} * p + j] += lambda;
        g[j] = sums.g[j] * inv_n + lambda * beta[j];
    }
    if (!cholesky_solve(std::move(h), g, p))
        throw std::runtime_error("the Newton system X^T W X / n + lambda I is not positive definite");
    return g;
}

FitResult host_fit(const Dataset& d, const FitSettings& settings) {
    FitResult out;
    out.beta.assign(d.p, 0.0);
    for (out.iterations = 1; out.iterations <= settings.max_iterations; ++out.iterations) {
        const auto delta = newton_delta(reference_newton_sums(d, out.beta), d.n, out.beta, settings.lambda);
        double largest = 0;
        for (std::uint32_t j = 0; j < d.p; ++j) {
            out.beta[j] -= delta[j];
            largest = std::max(largest, std::fabs(delta[j]));
        }
        if (largest <= settings.tolerance) {
            out.converged = true;
            return out;
        }
    }
    out.iterations = settings.max_iterations;
    return out;
}

double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b) {
    double m = 0;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
        m = std::max(m, std::fabs(a[i] - b[i]));
    if (a.size() != b.size()) return INFINITY;
    return m;
}

double relative_error(const std::vector<double>& got, const std::vector<double>& want) {
    double scale = 0;
    for (double w : want)
        scale = std::max(scale, std::fabs(w));
    const double diff = max_abs_difference(got, want);
    if (!std::isfinite(diff)) return INFINITY;
    if (scale == 0) return diff == 0 ? 0 : INFINITY;
    return diff / scale;
}

std::vector<double> evaluation_beta(const Dataset& d) {
    std::vector<double> b = d.beta_true;
    for (double& v : b)
        v *= 0.5;
    return b;
}

Shape default_shape(Mode mode) {
    switch (mode) {
        case Mode::quick:
            return {1ull << 17, 64, 0.05, 1ull << 15};
        case Mode::full:
            return {1ull << 22, 64, 0.05, 1ull << 17};
        case Mode::standard:
            break;
    }
    // 2^18 rows x 64 floats = 64 MiB, the floor: glm::shape_for(ctx) raises the rows until X holds
    // four times the device's last cache (memory_level_rows), so the headline is a memory-level
    // point on the machine at hand (twice a 32 MiB L3 is partly cached, between the L3 and the
    // memory roofs).
    return {1ull << 18, 64, 0.05, 1ull << 16};
}

std::uint64_t memory_level_rows(std::uint64_t floor_rows, std::uint32_t cols, std::uint64_t last_cache_bytes) {
    const std::uint64_t row_bytes = std::uint64_t{cols} * sizeof(float);
    if (!row_bytes || !last_cache_bytes) return floor_rows;
    // Steps of 2^16 rows, not doublings: on a 260 MiB L3 doubling asked for 2 GiB of X where 1.02
    // GiB is enough, and its three copies (fp32 row and column, fp64) then no longer fitted the
    // device memory PoCL advertises, which follows the host's free memory: the rows were cut to a
    // different count in each run (3.3 to 5.7 million) and the runs' times did not compare.
    return std::max(floor_rows, memory_level_items(last_cache_bytes, row_bytes, row_step));
}

}  // namespace clprobe::glm
