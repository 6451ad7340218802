// GLM gradient on a dense design matrix X (n x p): eta = X beta, mu = g^-1(eta), r = mu - y,
// g = X^T r / n + lambda beta. Link functions (family, a run-time argument so both families share
// one program): 0 = logit (mu = 1 / (1 + e^-eta)), 1 = log (mu = e^eta).
//
// The variants the glm.gradient probe measures, one dimension at a time:
//   layout row: X row-major; each work-item streams a contiguous chunk of rows. CPU devices (PoCL
//               runs a work-group's items one after another on a core) turn that into one
//               sequential stream per core that the prefetcher follows.
//   layout col: X column-major with leading dimension ld; consecutive work-items take
//               consecutive rows, so GPUs coalesce every column's loads.
//   fused:      one pass computes r_i and adds r_i x_i while the row is still in cache (X read once);
//   two passes: residual_* writes r, then grad_* with fused = 0 reads it back (X read twice, as two
//               gemv calls do).
//   reduction local:  partial sums, then reduce_partials adds them (a second, tiny pass). Row
//               layout: each work-item sums its rows into its own slice of `partial` (no barrier,
//               no local memory: on CPU devices the slice stays in L1, and PoCL runs barrier-free
//               kernels as plain loops); it takes rows eight at a time, so the link function
//               runs as one vector exp and the slice is read and written once per eight rows
//               (a scalar exp per row and a slice pass per row or four cost PoCL a third of
//               its bandwidth at p = 64). Column layout: each work-group sums a tile in local memory.
//   reduction atomic: every row adds r_i x_ij straight into g with a global atomic (a
//               compare-and-swap loop: OpenCL 1.2 has no floating-point atomic add).
//   vector width W: the row layout loads W consecutive columns at a time; the col layout gives each
//               work-item W consecutive rows.
// Dot products use four accumulators, so a core is not bound by the latency of dependent adds.
//
// Host contract:
//   row kernels: global size = groups * local size; work-item k takes rows
//                [k * rows_per_item, min(n, (k + 1) * rows_per_item)); grad_row_part writes
//                partial[k * p .. k * p + p) (partial holds global size * p REALs).
//   col kernels: ld is a multiple of 16 (so no W-row vector straddles the end); rows n..ld-1 of X and y
//                are zero (they add r * 0 = 0 to g). grad_col_local: `rt` holds local size * W REALs,
//                `acc` holds p REALs; group k takes tiles [k * tiles_per_group, ...) of local size * W
//                rows. residual_col and grad_col_atomic: one work-item per W rows (global >= ld / W).
//   col: partial holds groups * p REALs; g holds p REALs (zeroed before the atomic kernels).
//
// Build with -D REAL=float (default) or -D REAL=double -D REAL_IS_DOUBLE.

#include "glm/real.clh"

// Per vector width: the type, loads and stores (vloadN only needs element alignment), and the
// horizontal sum.
#define VT_1 REAL
#define VT_2 CAT(REAL, 2)
#define VT_4 CAT(REAL, 4)
#define VT_8 CAT(REAL, 8)
#define VT_16 CAT(REAL, 16)
#define LOAD_1(i, ptr) ((ptr)[i])
#define LOAD_2(i, ptr) vload2(i, ptr)
#define LOAD_4(i, ptr) vload4(i, ptr)
#define LOAD_8(i, ptr) vload8(i, ptr)
#define LOAD_16(i, ptr) vload16(i, ptr)
#define STORE_1(v, i, ptr) ((ptr)[i] = (v))
#define STORE_2(v, i, ptr) vstore2(v, i, ptr)
#define STORE_4(v, i, ptr) vstore4(v, i, ptr)
#define STORE_8(v, i, ptr) vstore8(v, i, ptr)
#define STORE_16(v, i, ptr) vstore16(v, i, ptr)
// Horizontal sums halve the vector (.lo + .hi) down to a scalar: a short tree of shuffles. A
// loop over a private copy compiles to a chain of dependent scalar adds through the stack, which
// cost more than the row's FMAs. (The GLM kernels run under Oclgrind's memory and race checks
// only: its 21.10 uninitialised-value checker crashes on swizzles, see kernel_hygiene.cpp.)
inline REAL hsum_2(VT_2 v) {
    return v.x + v.y;
}
inline REAL hsum_4(VT_4 v) {
    return hsum_2(v.lo + v.hi);
}
inline REAL hsum_8(VT_8 v) {
    return hsum_4(v.lo + v.hi);
}
inline REAL hsum_16(VT_16 v) {
    return hsum_8(v.lo + v.hi);
}
#define HSUM_1(v) (v)
#define HSUM_2(v) hsum_2(v)
#define HSUM_4(v) hsum_4(v)
#define HSUM_8(v) hsum_8(v)
#define HSUM_16(v) hsum_16(v)

#if defined(REAL_IS_DOUBLE)
#if defined(cl_khr_int64_base_atomics)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define HAVE_ATOMIC_REAL 1
#else
#define HAVE_ATOMIC_REAL 0
#endif
typedef ulong real_bits;
#define ATOMIC_READ(addr) atom_add(addr, 0UL)
#define ATOMIC_CAS(addr, expected, desired) atom_cmpxchg(addr, expected, desired)
#define AS_REAL(u) as_double(u)
#define AS_BITS(v) as_ulong(v)
#else
#define HAVE_ATOMIC_REAL 1
typedef uint real_bits;
#define ATOMIC_READ(addr) atomic_add(addr, 0u)
#define ATOMIC_CAS(addr, expected, desired) atomic_cmpxchg(addr, expected, desired)
#define AS_REAL(u) as_float(u)
#define AS_BITS(v) as_uint(v)
#endif

#if HAVE_ATOMIC_REAL
// *addr += v. The first read is atomic too, so race checkers see only atomic accesses.
inline void atomic_add_real(__global REAL* addr, REAL v) {
    volatile __global real_bits* bits = (volatile __global real_bits*)addr;
    real_bits seen = ATOMIC_READ(bits), expected;
    do {
        expected = seen;
        seen = ATOMIC_CAS(bits, expected, AS_BITS(AS_REAL(expected) + v));
    } while (seen != expected);
}
#endif

// The inverse link mu = g^-1(eta), for eta of type T (REAL or a vector of them). family 0:
// logit, 1: log.
#define MEAN_OF(T, eta, family) ((family) == 0 ? (T)(1) / ((T)(1) + exp(-(eta))) : exp(eta))

#define DEFINE_GLM_KERNELS(W)                                                                                     \
    /* x_i . beta of one row-major row. */                                                                        \
    /* Always inlined (a call per row costs as much as its FMAs); without restrict, whose scopes */              \
    /* Oclgrind cannot interpret once inlined.                                                    */              \
    __attribute__((always_inline)) inline REAL row_eta_v##W(__global const REAL* row, __global const REAL* beta,  \
                                                            uint p) {                                             \
        const uint vecs = p / W;                                                                                   \
        VT_##W a0 = 0, a1 = 0, a2 = 0, a3 = 0;                                                                     \
        uint v = 0;                                                                                                \
        for (; v + 4 <= vecs; v += 4) {                                                                            \
            a0 += LOAD_##W(v, row) * LOAD_##W(v, beta);                                                            \
            a1 += LOAD_##W(v + 1, row) * LOAD_##W(v + 1, beta);                                                    \
            a2 += LOAD_##W(v + 2, row) * LOAD_##W(v + 2, beta);                                                    \
            a3 += LOAD_##W(v + 3, row) * LOAD_##W(v + 3, beta);                                                    \
        }                                                                                                          \
        for (; v < vecs; ++v)                                                                                      \
            a0 += LOAD_##W(v, row) * LOAD_##W(v, beta);                                                            \
        REAL eta = HSUM_##W((a0 + a1) + (a2 + a3));                                                                \
        for (uint j = vecs * W; j < p; ++j)                                                                        \
            eta += row[j] * beta[j];                                                                               \
        return eta;                                                                                                \
    }                                                                                                              \
    /* Residual of one row-major row: mu(x_i . beta) - y_i. */                                                    \
    inline REAL row_residual_v##W(__global const REAL* restrict row, __global const REAL* restrict beta,          \
                                  REAL yi, uint p, uint family) {                                                 \
        const REAL eta = row_eta_v##W(row, beta, p);                                                              \
        return MEAN_OF(REAL, eta, family) - yi;                                                                   \
    }                                                                                                              \
    /* Residuals of W consecutive rows i0.. of column-major X. */                                                  \
    inline VT_##W col_residual_v##W(__global const REAL* restrict x, __global const REAL* restrict y,             \
                                    __global const REAL* restrict beta, ulong ld, ulong i0, uint p, uint family) { \
        VT_##W a0 = 0, a1 = 0, a2 = 0, a3 = 0;                                                                     \
        __global const REAL* col = x + i0;                                                                         \
        uint j = 0;                                                                                                \
        for (; j + 4 <= p; j += 4, col += 4 * ld) {                                                                \
            a0 += LOAD_##W(0, col) * beta[j];                                                                      \
            a1 += LOAD_##W(0, col + ld) * beta[j + 1];                                                             \
            a2 += LOAD_##W(0, col + 2 * ld) * beta[j + 2];                                                         \
            a3 += LOAD_##W(0, col + 3 * ld) * beta[j + 3];                                                         \
        }                                                                                                          \
        for (; j < p; ++j, col += ld)                                                                              \
            a0 += LOAD_##W(0, col) * beta[j];                                                                      \
        const VT_##W eta = (a0 + a1) + (a2 + a3);                                                                  \
        return MEAN_OF(VT_##W, eta, family) - LOAD_##W(0, y + i0);                                                 \
    }                                                                                                              \
    /* sum over k < rows of r[k] * col[k]; rows is a multiple of W. */                                             \
    inline REAL tile_dot_v##W(__local const REAL* r, __global const REAL* restrict col, uint rows) {              \
        const uint vecs = rows / W;                                                                                \
        VT_##W a0 = 0, a1 = 0, a2 = 0, a3 = 0;                                                                     \
        uint v = 0;                                                                                                \
        for (; v + 4 <= vecs; v += 4) {                                                                            \
            a0 += LOAD_##W(v, r) * LOAD_##W(v, col);                                                               \
            a1 += LOAD_##W(v + 1, r) * LOAD_##W(v + 1, col);                                                       \
            a2 += LOAD_##W(v + 2, r) * LOAD_##W(v + 2, col);                                                       \
            a3 += LOAD_##W(v + 3, r) * LOAD_##W(v + 3, col);                                                       \
        }                                                                                                          \
        for (; v < vecs; ++v)                                                                                      \
            a0 += LOAD_##W(v, r) * LOAD_##W(v, col);                                                               \
        return HSUM_##W((a0 + a1) + (a2 + a3));                                                                    \
    }                                                                                                              \
    __kernel void residual_row_v##W(__global const REAL* restrict x, __global const REAL* restrict y,             \
                                    __global const REAL* restrict beta, __global REAL* restrict r, uint n, uint p, \
                                    uint rows_per_item, uint family) {                                             \
        const ulong first = (ulong)get_global_id(0) * rows_per_item;                                              \
        const ulong last = min((ulong)n, first + rows_per_item);                                                   \
        for (ulong i = first; i < last; ++i)                                                                       \
            r[i] = row_residual_v##W(x + i * p, beta, y[i], p, family);                                            \
    }                                                                                                              \
    /* acc[0..p) += r * row[0..p), acc in global memory (a work-item's own partial slice). */                   \
    inline void row_axpy_global_v##W(__global REAL* restrict acc, __global const REAL* restrict row, REAL r,      \
                                     uint p) {                                                                     \
        const uint vecs = p / W;                                                                                   \
        for (uint v = 0; v < vecs; ++v)                                                                            \
            STORE_##W(LOAD_##W(v, acc) + r * LOAD_##W(v, row), v, acc);                                            \
        for (uint j = vecs * W; j < p; ++j)                                                                        \
            acc[j] += r * row[j];                                                                                  \
    }                                                                                                              \
    /* acc[0..p) += sum over u < 8 of r[u] x_u, the rows x_u = x0 + u p: eight rows per pass over acc, */      \
    /* so the partial slice is loaded and stored once per eight rows instead of once per row.           */      \
    inline void row_axpy8_global_v##W(__global REAL* restrict acc, __global const REAL* restrict x0,              \
                                      const REAL* r, uint p) {                                                     \
        const uint vecs = p / W;                                                                                   \
        __global const REAL* x1 = x0 + p;                                                                          \
        __global const REAL* x2 = x1 + p;                                                                          \
        __global const REAL* x3 = x2 + p;                                                                          \
        __global const REAL* x4 = x3 + p;                                                                          \
        __global const REAL* x5 = x4 + p;                                                                          \
        __global const REAL* x6 = x5 + p;                                                                          \
        __global const REAL* x7 = x6 + p;                                                                          \
        for (uint v = 0; v < vecs; ++v)                                                                            \
            STORE_##W(LOAD_##W(v, acc) + ((r[0] * LOAD_##W(v, x0) + r[1] * LOAD_##W(v, x1)) +                      \
                                          (r[2] * LOAD_##W(v, x2) + r[3] * LOAD_##W(v, x3))) +                     \
                          ((r[4] * LOAD_##W(v, x4) + r[5] * LOAD_##W(v, x5)) +                                     \
                           (r[6] * LOAD_##W(v, x6) + r[7] * LOAD_##W(v, x7))),                                     \
                      v, acc);                                                                                     \
        for (uint j = vecs * W; j < p; ++j)                                                                        \
            acc[j] += ((r[0] * x0[j] + r[1] * x1[j]) + (r[2] * x2[j] + r[3] * x3[j])) +                            \
                      ((r[4] * x4[j] + r[5] * x5[j]) + (r[6] * x6[j] + r[7] * x7[j]));                             \
    }                                                                                                              \
    __kernel void grad_row_part_v##W(__global const REAL* restrict x, __global const REAL* restrict y,            \
                                     __global const REAL* restrict beta, __global const REAL* restrict r_in,       \
                                     __global REAL* restrict partial, uint n, uint p, uint rows_per_item,          \
                                     uint family, uint fused) {                                                    \
        __global REAL* restrict mine = partial + get_global_id(0) * p;                                             \
        for (uint j = 0; j < p; ++j)                                                                               \
            mine[j] = 0;                                                                                           \
        const ulong first = (ulong)get_global_id(0) * rows_per_item;                                              \
        const ulong last = min((ulong)n, first + rows_per_item);                                                   \
        ulong i = first;                                                                                           \
        /* Eight rows at a time: their eight dot products, then one vector link function (a */                    \
        /* scalar exp per row costs as much as the row's FMAs), then one pass over the slice. */                  \
        for (; i + 8 <= last; i += 8) {                                                                            \
            __global const REAL* x0 = x + i * p;                                                                   \
            REAL r[8];                                                                                             \
            if (fused) {                                                                                           \
                REAL eta[8];                                                                                       \
                for (uint u = 0; u < 8; ++u)                                                                       \
                    eta[u] = row_eta_v##W(x0 + u * p, beta, p);                                                    \
                STORE_8(MEAN_OF(VT_8, LOAD_8(0, eta), family) - LOAD_8(0, y + i), 0, r);                                 \
            } else {                                                                                               \
                STORE_8(LOAD_8(0, r_in + i), 0, r);                                                                \
            }                                                                                                      \
            row_axpy8_global_v##W(mine, x0, r, p);                                                                 \
        }                                                                                                          \
        for (; i < last; ++i) {                                                                                    \
            __global const REAL* row = x + i * p;                                                                  \
            const REAL r = fused ? row_residual_v##W(row, beta, y[i], p, family) : r_in[i];                        \
            row_axpy_global_v##W(mine, row, r, p);                                                                 \
        }                                                                                                          \
    }                                                                                                              \
    __kernel void grad_row_atomic_v##W(__global const REAL* restrict x, __global const REAL* restrict y,          \
                                       __global const REAL* restrict beta, __global REAL* g, uint n, uint p,       \
                                       uint rows_per_item, uint family) {                                          \
        const ulong first = (ulong)get_global_id(0) * rows_per_item;                                              \
        const ulong last = min((ulong)n, first + rows_per_item);                                                   \
        for (ulong i = first; i < last; ++i) {                                                                     \
            __global const REAL* row = x + i * p;                                                                  \
            const REAL r = row_residual_v##W(row, beta, y[i], p, family);                                          \
            for (uint j = 0; j < p; ++j)                                                                           \
                atomic_add_real(g + j, r * row[j]);                                                                \
        }                                                                                                          \
    }                                                                                                              \
    __kernel void residual_col_v##W(__global const REAL* restrict x, __global const REAL* restrict y,             \
                                    __global const REAL* restrict beta, __global REAL* restrict r, uint ld, uint p, \
                                    uint family) {                                                                 \
        const ulong i0 = (ulong)get_global_id(0) * W;                                                             \
        if (i0 < ld) STORE_##W(col_residual_v##W(x, y, beta, ld, i0, p, family), 0, r + i0);                       \
    }                                                                                                              \
    __kernel void grad_col_local_v##W(__global const REAL* restrict x, __global const REAL* restrict y,           \
                                      __global const REAL* restrict beta, __global const REAL* restrict r_in,      \
                                      __global REAL* restrict partial, __local REAL* rt, __local REAL* acc,        \
                                      uint ld, uint p, uint tiles_per_group, uint family, uint fused) {            \
        const uint lid = get_local_id(0), items = get_local_size(0), tile_rows = items * W;                       \
        for (uint j = lid; j < p; j += items)                                                                      \
            acc[j] = 0;                                                                                            \
        const ulong start = (ulong)get_group_id(0) * tiles_per_group * tile_rows;                                 \
        const uint tiles =                                                                                         \
            start >= ld ? 0 : (uint)min((ulong)tiles_per_group, (ld - start + tile_rows - 1) / tile_rows);         \
        for (uint t = 0; t < tiles; ++t) {                                                                         \
            const ulong base = start + (ulong)t * tile_rows;                                                       \
            const ulong i0 = base + (ulong)lid * W;                                                                \
            VT_##W r = 0;                                                                                          \
            if (i0 < ld) r = fused ? col_residual_v##W(x, y, beta, ld, i0, p, family) : LOAD_##W(0, r_in + i0);    \
            STORE_##W(r, lid, rt);                                                                                 \
            barrier(CLK_LOCAL_MEM_FENCE);                                                                          \
            const uint rows = (uint)min((ulong)tile_rows, ld - base);                                              \
            for (uint j = lid; j < p; j += items)                                                                  \
                acc[j] += tile_dot_v##W(rt, x + (ulong)j * ld + base, rows);                                        \
            barrier(CLK_LOCAL_MEM_FENCE);                                                                          \
        }                                                                                                          \
        for (uint j = lid; j < p; j += items)                                                                      \
            partial[get_group_id(0) * p + j] = acc[j];                                                             \
    }                                                                                                              \
    __kernel void grad_col_atomic_v##W(__global const REAL* restrict x, __global const REAL* restrict y,          \
                                       __global const REAL* restrict beta, __global REAL* g, uint ld, uint p,      \
                                       uint family) {                                                              \
        const ulong i0 = (ulong)get_global_id(0) * W;                                                             \
        if (i0 >= ld) return;                                                                                      \
        const VT_##W r = col_residual_v##W(x, y, beta, ld, i0, p, family);                                         \
        for (uint j = 0; j < p; ++j)                                                                               \
            atomic_add_real(g + j, HSUM_##W(r * LOAD_##W(0, x + (ulong)j * ld + i0)));                                \
    }

#if !HAVE_ATOMIC_REAL
// Without 64-bit atomics the atomic kernels of the double-precision program compile but add nothing;
// the host runs atomic variants in single precision only.
#define atomic_add_real(addr, v) ((void)0)
#endif

DEFINE_GLM_KERNELS(1)
DEFINE_GLM_KERNELS(2)
DEFINE_GLM_KERNELS(4)
DEFINE_GLM_KERNELS(8)
DEFINE_GLM_KERNELS(16)

// Second pass of the local reduction: g[j] = sum of the groups' partials / n + lambda beta[j].
__kernel void reduce_partials(__global const REAL* restrict partial, __global const REAL* restrict beta,
                              __global REAL* restrict g, uint groups, uint p, REAL inv_n, REAL lambda) {
    const uint j = get_global_id(0);
    if (j >= p) return;
    REAL s = 0;
    for (uint k = 0; k < groups; ++k)
        s += partial[k * p + j];
    g[j] = s * inv_n + lambda * beta[j];
}

// Last step of the atomic reduction: g holds X^T r.
__kernel void finalize_atomic(__global REAL* restrict g, __global const REAL* restrict beta, uint p, REAL inv_n,
                              REAL lambda) {
    const uint j = get_global_id(0);
    if (j < p) g[j] = g[j] * inv_n + lambda * beta[j];
}

__kernel void zero_vector(__global REAL* restrict v, uint count) {
    const uint i = get_global_id(0);
    if (i < count) v[i] = 0;
}
