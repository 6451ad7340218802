// One IRLS / Newton pass over a row-major design matrix X (n x p): per work-group partial sums of
// H = X^T W X (W = diag(w_i), w_i = mu_i (1 - mu_i) for the logit link, mu_i for the log link)
// and of X^T (mu - y). The host adds the groups' partials in double, adds the ridge term and
// solves H d = g (a p x p system: far too small to be worth the device).
//
// A work-group takes a contiguous block of rows in tiles of tile_rows rows, copied to local memory
// (xt: tile_rows x pp, zero beyond column p, so every 8-wide block load stays inside a row), with
// w and r of each row (wr: w in [0, tile_rows), r in [tile_rows, 2 tile_rows)). Work-items own
// 8-wide blocks H[j][8 kb .. 8 kb + 7] of the upper triangle (blocks wholly below the diagonal
// are skipped; the host reads entries k >= j only) and gradient entries j: no two items write
// one address. Family: 0 = logit, 1 = log.
//
// Host contract: pp = p rounded up to a multiple of 8; hpartial holds groups * p * pp REALs,
// gpartial groups * p; xt holds tile_rows * pp REALs and wr 2 * tile_rows; group k takes rows
// [k * rows_per_group, min(n, (k + 1) * rows_per_group)).
//
// Build with -D REAL=float (default) or -D REAL=double -D REAL_IS_DOUBLE. With -D REAL=float, X may
// be held in reduced storage (probes/glm/glm_storage.hpp), widened to REAL as the tile is copied:
// -D X_FP16 (half, vload_half), -D X_BF16 (ushort, as_float(u << 16)) or -D X_INT8 (char q: the
// host passes s * beta as beta and scales the sums, H_jk by s_j s_k and g_j by s_j).

#include "glm/real.clh"
#define REAL8 CAT(REAL, 8)

#if defined(X_FP16)
#define XT half
#define LOAD_X(i, ptr) vload_half(i, ptr)
#elif defined(X_BF16)
#define XT ushort
#define LOAD_X(i, ptr) as_float((uint)(ptr)[i] << 16)
#elif defined(X_INT8)
#define XT char
#define LOAD_X(i, ptr) ((REAL)(ptr)[i])
#else
#define XT REAL
#define LOAD_X(i, ptr) ((ptr)[i])
#endif

__kernel void newton_row(__global const XT* restrict x, __global const REAL* restrict y,
                         __global const REAL* restrict beta, __global REAL* restrict hpartial,
                         __global REAL* restrict gpartial, __local REAL* xt, __local REAL* wr, uint n, uint p, uint pp,
                         uint rows_per_group, uint tile_rows, uint family) {
    const uint lid = get_local_id(0), items = get_local_size(0), group = get_group_id(0);
    const uint kblocks = pp / 8, blocks = p * kblocks;
    __global REAL* hp = hpartial + (ulong)group * p * pp;
    __global REAL* gp = gpartial + (ulong)group * p;
    for (uint e = lid; e < blocks; e += items)
        vstore8((REAL8)(0), e, hp);
    for (uint j = lid; j < p; j += items)
        gp[j] = 0;

    const ulong first = (ulong)group * rows_per_group;
    const ulong last = min((ulong)n, first + rows_per_group);
    for (ulong start = first; start < last; start += tile_rows) {
        const uint rows = (uint)min((ulong)tile_rows, last - start);
        for (uint e = lid; e < tile_rows * pp; e += items) {
            const uint t = e / pp, c = e % pp;
            xt[e] = (t < rows && c < p) ? LOAD_X((start + t) * p + c, x) : 0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint t = lid; t < tile_rows; t += items) {
            REAL w = 0, r = 0;
            if (t < rows) {
                REAL eta = 0;
                for (uint c = 0; c < p; ++c)
                    eta += xt[t * pp + c] * beta[c];
                const REAL mu = family == 0 ? (REAL)1 / ((REAL)1 + exp(-eta)) : exp(eta);
                w = family == 0 ? mu * ((REAL)1 - mu) : mu;
                r = mu - y[start + t];
            }
            wr[t] = w;
            wr[tile_rows + t] = r;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint e = lid; e < blocks; e += items) {
            const uint j = e / kblocks, kb = e % kblocks;
            if (kb * 8 + 7 < j) continue;
            // Two accumulators halve the chain of dependent adds.
            REAL8 s0 = 0, s1 = 0;
            uint t = 0;
            for (; t + 2 <= rows; t += 2) {
                s0 += (wr[t] * xt[t * pp + j]) * vload8(kb, xt + t * pp);
                s1 += (wr[t + 1] * xt[(t + 1) * pp + j]) * vload8(kb, xt + (t + 1) * pp);
            }
            if (t < rows) s0 += (wr[t] * xt[t * pp + j]) * vload8(kb, xt + t * pp);
            vstore8(vload8(e, hp) + (s0 + s1), e, hp);
        }
        for (uint j = lid; j < p; j += items) {
            REAL s = 0;
            for (uint t = 0; t < rows; ++t)
                s += wr[tile_rows + t] * xt[t * pp + j];
            gp[j] += s;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
