// GLM gradient on a sparse design matrix in CSR form (row_ptr, cols, vals): the same
// g = X^T (mu - y) / n + lambda beta as glm/gradient.cl, reading only the non-zeros. Each
// work-item streams a contiguous chunk of rows (the layout CPU devices prefer; CSR rows are
// contiguous in memory) and scatters r_i x_ij into its own slice of `partial` (p REALs, cache
// resident), so no two work-items ever write the same address and no barrier is needed;
// glm/gradient.cl's reduce_partials adds the work-items' slices (second pass).
// Family: 0 = logit link, 1 = log link.
//
// Host contract: work-item k takes rows [k * rows_per_item, min(n, (k + 1) * rows_per_item));
// partial holds global size * p REALs; row_ptr has n + 1 entries and cols < p.
//
// Build with -D REAL=float (default) or -D REAL=double -D REAL_IS_DOUBLE.

#include "glm/real.clh"

__kernel void grad_csr_part(__global const uint* restrict row_ptr, __global const uint* restrict cols,
                            __global const REAL* restrict vals, __global const REAL* restrict y,
                            __global const REAL* restrict beta, __global REAL* restrict partial, uint n, uint p,
                            uint rows_per_item, uint family) {
    __global REAL* restrict mine = partial + get_global_id(0) * p;
    for (uint j = 0; j < p; ++j)
        mine[j] = 0;
    const ulong first = (ulong)get_global_id(0) * rows_per_item;
    const ulong last = min((ulong)n, first + rows_per_item);
    for (ulong i = first; i < last; ++i) {
        const uint begin = row_ptr[i], end = row_ptr[i + 1];
        // Two accumulators: rows are short (density x p non-zeros), so more would rarely fill.
        REAL a0 = 0, a1 = 0;
        uint k = begin;
        for (; k + 2 <= end; k += 2) {
            a0 += vals[k] * beta[cols[k]];
            a1 += vals[k + 1] * beta[cols[k + 1]];
        }
        if (k < end) a0 += vals[k] * beta[cols[k]];
        const REAL eta = a0 + a1;
        const REAL mu = family == 0 ? (REAL)1 / ((REAL)1 + exp(-eta)) : exp(eta);
        const REAL r = mu - y[i];
        for (k = begin; k < end; ++k)
            mine[cols[k]] += r * vals[k];
    }
}
