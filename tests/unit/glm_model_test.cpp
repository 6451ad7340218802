// The GLM host model: deterministic data, the reference gradient against finite differences of
// the loss, the Cholesky solve and the host fit recovering the true beta; the device memory of one
// set of gradient data and the most rows that fit.
#include <catch2/catch.hpp>

#include <cmath>

#include "glm/glm_memory.hpp"
#include "glm/glm_model.hpp"

using namespace clprobe::glm;

namespace {

// The penalised mean negative log-likelihood whose gradient reference_gradient computes.
double loss(const Dataset& d, const std::vector<double>& beta, double lambda) {
    double l = 0;
    for (std::uint64_t i = 0; i < d.n; ++i) {
        double eta = 0;
        for (std::uint32_t j = 0; j < d.p; ++j)
            eta += d.x[i * d.p + j] * beta[j];
        l += d.family == Family::logistic ? std::log1p(std::exp(eta)) - d.y[i] * eta : std::exp(eta) - d.y[i] * eta;
    }
    double ridge = 0;
    for (double b : beta)
        ridge += b * b;
    return l / static_cast<double>(d.n) + lambda / 2 * ridge;
}

}  // namespace

TEST_CASE("glm datasets are deterministic and realistic", "[glm]") {
    const Dataset a = make_dataset(2000, 5, Family::logistic, 7), b = make_dataset(2000, 5, Family::logistic, 7);
    CHECK(a.x == b.x);
    CHECK(a.y == b.y);
    double positives = 0;
    for (float y : a.y)
        positives += y;
    CHECK(positives / 2000 > 0.15);  // a realistic class balance, not all one class
    CHECK(positives / 2000 < 0.5);
    CHECK(a.x[0] == 1.0f);  // intercept column
    const Dataset one = make_dataset(10, 1, Family::poisson, 7);
    CHECK(one.x.size() == 10);
}

TEST_CASE("the reference gradient is the derivative of the loss", "[glm]") {
    for (Family family : {Family::logistic, Family::poisson}) {
        const Dataset d = make_dataset(300, 4, family, 3);
        const auto beta = evaluation_beta(d);
        const auto g = reference_gradient(d, beta, 0.01);
        for (std::uint32_t j = 0; j < d.p; ++j) {
            auto up = beta, down = beta;
            up[j] += 1e-6;
            down[j] -= 1e-6;
            CHECK(g[j] == Approx((loss(d, up, 0.01) - loss(d, down, 0.01)) / 2e-6).margin(1e-6));
        }
    }
}

TEST_CASE("CSR matrices hold the requested density and the same gradient as their dense copy", "[glm]") {
    const Dataset d = make_dataset(100, 20, Family::logistic, 5);
    const CsrMatrix m = make_csr(100, 20, 0.25, 5);
    CHECK(m.nnz() == 100 * 5);
    const Dataset dense = densify(m, d);
    const auto beta = evaluation_beta(d);
    const auto a = reference_gradient(m, d.y, Family::logistic, beta, 0.0);
    const auto b = reference_gradient(dense, beta, 0.0);
    CHECK(relative_error(a, b) < 1e-12);
}

TEST_CASE("cholesky_solve solves SPD systems and rejects indefinite ones", "[glm]") {
    std::vector<double> a{4, 2, 2, 3}, b{2, 1};
    REQUIRE(cholesky_solve(a, b, 2));
    CHECK(4 * b[0] + 2 * b[1] == Approx(2));
    CHECK(2 * b[0] + 3 * b[1] == Approx(1));
    std::vector<double> bad{1, 2, 2, 1}, c{1, 1};
    CHECK_FALSE(cholesky_solve(bad, c, 2));
}

TEST_CASE("the host fit recovers the true beta and zeroes the gradient", "[glm]") {
    for (Family family : {Family::logistic, Family::poisson}) {
        const Dataset d = make_dataset(20000, 3, family, 11);
        FitSettings s;
        const FitResult f = host_fit(d, s);
        REQUIRE(f.converged);
        CHECK(f.iterations < 15);
        CHECK(max_abs_difference(f.beta, d.beta_true) < 0.1);
        const auto g = reference_gradient(d, f.beta, s.lambda);
        for (double v : g)
            CHECK(std::fabs(v) < 1e-8);
    }
}

TEST_CASE("default shapes grow with the mode", "[glm]") {
    CHECK(default_shape(Mode::quick).rows < default_shape(Mode::standard).rows);
    CHECK(default_shape(Mode::standard).rows < default_shape(Mode::full).rows);
    CHECK(default_shape(Mode::quick).cols == 64);
}

TEST_CASE("memory-level GLM rows: four times the last cache in steps of 2^16 rows, never below the floor", "[glm]") {
    const std::uint64_t mib = 1024 * 1024, floor = std::uint64_t{1} << 18;
    // 32 MiB L3, 64 fp32 columns (256 B a row): exactly 2^19 rows hold 128 MiB.
    CHECK(memory_level_rows(floor, 64, 32 * mib) == (std::uint64_t{1} << 19));
    // This VM's 260 MiB L3: 4,259,840 rows (1,040 MiB of X), not the 2^23 rows (2 GiB) doubling gave.
    const std::uint64_t rows = memory_level_rows(floor, 64, 260 * mib);
    CHECK(rows == 4259840);
    CHECK(rows % row_step == 0);
    CHECK(rows * 256 >= 4 * 260 * mib);
    CHECK((rows - row_step) * 256 < 4 * 260 * mib);  // the fewest such steps
    // One byte more cache needs one step more.
    CHECK(memory_level_rows(floor, 64, 32 * mib + 1) == (std::uint64_t{1} << 19) + row_step);
    // A small cache, no cache known, or a floor above the need: the floor.
    CHECK(memory_level_rows(floor, 64, 1 * mib) == floor);
    CHECK(memory_level_rows(floor, 64, 0) == floor);
    CHECK(memory_level_rows(std::uint64_t{1} << 22, 64, 32 * mib) == (std::uint64_t{1} << 22));
    // Wider rows need fewer of them.
    CHECK(memory_level_rows(floor, 256, 260 * mib) == 1114112);
}

TEST_CASE("glm data footprint: X, y and the gradient's work buffers per layout, format and precision",
          "[glm][memory]") {
    DataShape s{1000, 13, Layout::row, Format::dense, false, 0.3, 64};
    const std::uint64_t work =
        13 * 4 + 1008 * 4 + 64 * 256 * 13 * 4 + 13 * 4;  // beta, r (n rounded to 16), partials, g
    Footprint f = data_footprint(s);
    CHECK(f.total == 1000 * 13 * 4 + 1000 * 4 + work);
    CHECK(f.largest == 64 * 256 * 13 * 4);  // at 1000 rows the partial gradients outweigh X
    s.layout = Layout::col;                 // every column padded to 1008 rows
    CHECK(data_footprint(s).total == 1008 * 13 * 4 + 1008 * 4 + work);
    s.layout = Layout::row;
    s.fp64 = true;
    CHECK(data_footprint(s).total == 2 * (1000 * 13 * 4 + 1000 * 4 + work));
    s.fp64 = false;
    s.format = Format::csr;  // 4 non-zeros per row: values, y, row pointers, columns; r has n rows
    const CsrMatrix m = make_csr(1000, 13, 0.3, 7);
    CHECK(m.nnz() == 1000ull * csr_nonzeros_per_row(13, 0.3));
    CHECK(data_footprint(s).total ==
          m.nnz() * 4 + 1000 * 4 + m.row_ptr.size() * 4 + m.cols.size() * 4 + work - 1008 * 4 + 1000 * 4);
    CHECK(csr_nonzeros_per_row(64, 0.0) == 1);
    CHECK(csr_nonzeros_per_row(64, 2.0) == 64);
}

TEST_CASE("glm max rows: the binding limit, exactly at the boundary", "[glm][memory]") {
    const MemoryLimits limits{64ull << 20, 16ull << 20};  // 64 MiB global, 16 MiB per buffer
    DataShape s{0, 64, Layout::row, Format::dense, false, 0.05, 64};
    // X (256 bytes a row) reaches the allocation limit at 2^16 rows.
    CHECK(max_rows(s, limits) == 65536);
    for (Format format : {Format::dense, Format::csr}) {
        s.format = format;
        s.rows = max_rows(s, limits);
        CHECK(data_footprint(s).fits(limits));
        ++s.rows;
        CHECK_FALSE(data_footprint(s).fits(limits));
    }
    s.format = Format::csr;
    s.rows = 0;
    CHECK(max_rows(s, limits) > 65536);     // 3 of 64 values a row: far more rows fit
    CHECK(max_rows(s, {1024, 1024}) == 0);  // not even the partial gradients fit
}
