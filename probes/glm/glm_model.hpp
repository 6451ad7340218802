#pragma once
// The GLM workload's host side, pure C++ (no OpenCL, no BLAS) so unit tests use it directly:
// deterministic data with a known true beta, the double-precision reference gradient and Newton
// sums every device result is checked against, the p x p solve, the host fit, and the default
// problem shapes per mode.
#include <cstdint>
#include <string>
#include <vector>

namespace clprobe::glm {

enum class Family { logistic, poisson };  // links: logit, log
std::string to_string(Family f);

// Row-major design matrix X (n x p, float as the device reads it) and response y. Column 0 is the
// intercept (all ones) when p > 1; the other features are uniform with unit variance, and the
// true beta gives a realistic class balance (about 30% positives for the logistic family).
struct Dataset {
    std::uint64_t n = 0;
    std::uint32_t p = 0;
    Family family = Family::logistic;
    std::vector<float> x;
    std::vector<float> y;
    std::vector<double> beta_true;
};

// Every value is a function of (seed, index) alone: two runs, or a run and a test, see the same data.
Dataset make_dataset(std::uint64_t n, std::uint32_t p, Family family, std::uint64_t seed);

// X in column-major order with leading dimension ld >= n; rows n..ld-1 are zero.
std::vector<float> to_column_major(const Dataset& d, std::uint64_t ld);

// Sparse X in CSR form: each row holds max(1, round(density * p)) non-zeros at evenly spread
// columns (a per-row random offset), values as in the dense generator.
struct CsrMatrix {
    std::uint64_t n = 0;
    std::uint32_t p = 0;
    std::vector<std::uint32_t> row_ptr;  // n + 1 entries
    std::vector<std::uint32_t> cols;
    std::vector<float> vals;
    std::uint64_t nnz() const { return vals.size(); }
};
CsrMatrix make_csr(std::uint64_t n, std::uint32_t p, double density, std::uint64_t seed);
// Non-zeros in every row of make_csr's matrix: max(1, round(density * p)), at most p.
std::uint32_t csr_nonzeros_per_row(std::uint32_t p, double density);
// The dense copy of a CSR matrix (for the reference), with the same y as `like`.
Dataset densify(const CsrMatrix& m, const Dataset& like);

// mu = g^-1(eta) and the IRLS weight dmu/deta for the family's canonical link.
double mean_of(Family f, double eta);
double weight_of(Family f, double mu);

// g = X^T (mu - y) / n + lambda beta, in double over the float data; over the first `rows` rows
// only when rows is not 0 (n is then rows).
std::vector<double> reference_gradient(const Dataset& d, const std::vector<double>& beta, double lambda,
                                       std::uint64_t rows = 0);
std::vector<double> reference_gradient(const CsrMatrix& m, const std::vector<float>& y, Family family,
                                       const std::vector<double>& beta, double lambda);

// Unnormalised Newton sums over the rows: H = X^T W X (full p x p, row-major) and g = X^T (mu - y).
struct NewtonSums {
    std::vector<double> h;
    std::vector<double> g;
};
NewtonSums reference_newton_sums(const Dataset& d, const std::vector<double>& beta);

// The Newton step from the sums: solves (H/n + lambda I) delta = g/n + lambda beta; beta - delta is
// the next iterate. Throws std::runtime_error when the system is not positive definite.
std::vector<double> newton_delta(const NewtonSums& sums, std::uint64_t n, const std::vector<double>& beta,
                                 double lambda);

// Solves A x = b for a symmetric positive definite A (p x p, row-major) by Cholesky; false when A
// is not positive definite. b is overwritten with x.
bool cholesky_solve(std::vector<double> a, std::vector<double>& b, std::uint32_t p);

struct FitResult {
    std::vector<double> beta;
    int iterations = 0;
    bool converged = false;
};
// Newton iterations from beta = 0 until max |delta| <= tolerance (or max_iterations).
struct FitSettings {
    double lambda = 1e-4;
    double tolerance = 1e-7;
    int max_iterations = 30;
};
FitResult host_fit(const Dataset& d, const FitSettings& settings);

// max |got - want| / max |want| (norm-wise, so entries near zero do not inflate it); 0 when both are 0.
double relative_error(const std::vector<double>& got, const std::vector<double>& want);
double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b);

// The point the gradient is evaluated at: half the true beta, far enough from the optimum that the
// gradient is large against rounding.
std::vector<double> evaluation_beta(const Dataset& d);

// Default shapes per mode (0 in the options means these).
struct Shape {
    std::uint64_t rows = 0;
    std::uint32_t cols = 0;
    double density = 0;
    std::uint64_t batch = 0;
};
enum class Mode { quick, standard, full };
Shape default_shape(Mode mode);
// The fewest rows, a multiple of `row_step` and at least `floor_rows`, whose fp32 X (`cols` floats
// a row) holds at least four times `last_cache_bytes`: a clear memory-level working set with no
// more data than that needs. 0 rows of cache: `floor_rows`.
inline constexpr std::uint64_t row_step = std::uint64_t{1} << 16;
std::uint64_t memory_level_rows(std::uint64_t floor_rows, std::uint32_t cols, std::uint64_t last_cache_bytes);

}  // namespace clprobe::glm
