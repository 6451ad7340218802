// The only file that includes cblas.h. Without OpenBLAS (CLPROBE_OPENBLAS=OFF, or not found) the
// calls are never reached: every caller runs require() first, which reports the probe unsupported.
#include "common/host_blas.hpp"

#include "runtime/probe.hpp"

#ifdef CLPROBE_HAVE_OPENBLAS
#include <cblas.h>
#else
#include <stdexcept>
#endif

namespace clprobe::host_blas {

#ifdef CLPROBE_HAVE_OPENBLAS

void require() {}

void sgemm(bool transpose_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
           float beta, float* c, int ldc) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, transpose_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb,
                beta, c, ldc);
}

void dgemm(int m, int n, int k, double alpha, const double* a, int lda, const double* b, int ldb, double beta,
           double* c, int ldc) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void sgemv(bool transpose_a, int m, int n, float alpha, const float* a, int lda, const float* x, float beta, float* y) {
    cblas_sgemv(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans, m, n, alpha, a, lda, x, 1, beta, y, 1);
}

std::string config() {
    return openblas_get_config();
}

std::string core_name() {
    return openblas_get_corename();
}

int threads() {
    return openblas_get_num_threads();
}

#else

namespace {
[[noreturn]] void absent() {
    throw std::logic_error("host BLAS called in a build without OpenBLAS (a probe skipped host_blas::require)");
}
}  // namespace

void require() {
    throw ProbeUnsupported("built without OpenBLAS");
}

void sgemm(bool, int, int, int, float, const float*, int, const float*, int, float, float*, int) {
    absent();
}

void dgemm(int, int, int, double, const double*, int, const double*, int, double, double*, int) {
    absent();
}

void sgemv(bool, int, int, float, const float*, int, const float*, float, float*) {
    absent();
}

std::string config() {
    absent();
}

std::string core_name() {
    absent();
}

int threads() {
    absent();
}

#endif

}  // namespace clprobe::host_blas
