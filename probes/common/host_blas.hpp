#pragma once
// The host BLAS the host_* probes time, behind one seam: OpenBLAS is optional at build time
// (CLPROBE_HAVE_OPENBLAS), and only host_blas.cpp knows whether it is there. Row-major only,
// the layout every caller uses.
#include <string>

namespace clprobe::host_blas {

// Throws ProbeUnsupported("built without OpenBLAS") in a build without it; a probe calls this
// first, so none of the calls below runs in such a build.
void require();

// C = alpha A op(B) + beta C, A m x k, C m x n; op(B) is B (k x n) or B^T (B n x k).
void sgemm(bool transpose_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
           float beta, float* c, int ldc);
void dgemm(int m, int n, int k, double alpha, const double* a, int lda, const double* b, int ldb, double beta,
           double* c, int ldc);
// y = alpha op(A) x + beta y, A m x n (row-major); op(A) is A or A^T.
void sgemv(bool transpose_a, int m, int n, float alpha, const float* a, int lda, const float* x, float beta, float* y);

std::string config();     // openblas_get_config()
std::string core_name();  // the core type OpenBLAS detected
int threads();

}  // namespace clprobe::host_blas
