// GLM gradient over X held in reduced storage, fp32 arithmetic: the fused, row-major,
// partial-sum variant of gradient.cl (grad_row_part_v* with fused = 1), with each element of X
// widened to float as it is loaded. The gradient is memory-bound, so halving (or quartering) the
// bytes of X is what makes it faster; every sum stays fp32.
//
// Storages (one kernel per storage and vector width W in 1, 4, 8, 16):
//   fp16: X as IEEE half, read with vload_half / vload_halfN (core OpenCL: no cl_khr_fp16 needed,
//         the values are only loaded and widened, never computed in half).
//   bf16: X as ushort, the top 16 bits of the fp32 value: x = as_float((uint)u << 16).
//   int8: X as char q with a per-column scale s: x_ij = s_j q_ij. The dot product folds the scale
//         into beta (q_i . (s * beta)); the partial sums add r_i q_ij, and reduce_stored multiplies
//         column j by s_j once at the end (s_j is the same for every row).
//
// Host contract (probes/glm/glm_device.cpp): as grad_row_part_v*: global size = groups * local
// size; work-item k takes rows [k * rows_per_item, min(n, (k + 1) * rows_per_item)) and writes
// partial[k * p .. k * p + p). `scale` holds p floats (ones for fp16 and bf16). reduce_stored
// then writes g[j] = scale[j] * sum of the partials / n + lambda beta[j], one work-item per j.

#define VT_1 float
#define VT_4 float4
#define VT_8 float8
#define VT_16 float16

inline float hsum_2(float2 v) {
    return v.x + v.y;
}
inline float hsum_4(float4 v) {
    return hsum_2(v.lo + v.hi);
}
inline float hsum_8(float8 v) {
    return hsum_4(v.lo + v.hi);
}
inline float hsum_16(float16 v) {
    return hsum_8(v.lo + v.hi);
}
#define HSUM_1(v) (v)
#define HSUM_4(v) hsum_4(v)
#define HSUM_8(v) hsum_8(v)
#define HSUM_16(v) hsum_16(v)

// Element type of X per storage, and LOADX_<storage>_<W>(i, ptr): elements [i W, i W + W) as floats.
#define XT_fp16 half
#define XT_bf16 ushort
#define XT_int8 char
#define LOADX_fp16_1(i, ptr) vload_half(i, ptr)
#define LOADX_fp16_4(i, ptr) vload_half4(i, ptr)
#define LOADX_fp16_8(i, ptr) vload_half8(i, ptr)
#define LOADX_fp16_16(i, ptr) vload_half16(i, ptr)
#define LOADX_bf16_1(i, ptr) as_float((uint)(ptr)[i] << 16)
#define LOADX_bf16_4(i, ptr) as_float4(convert_uint4(vload4(i, ptr)) << 16)
#define LOADX_bf16_8(i, ptr) as_float8(convert_uint8(vload8(i, ptr)) << 16)
#define LOADX_bf16_16(i, ptr) as_float16(convert_uint16(vload16(i, ptr)) << 16)
#define LOADX_int8_1(i, ptr) ((float)(ptr)[i])
#define LOADX_int8_4(i, ptr) convert_float4(vload4(i, ptr))
#define LOADX_int8_8(i, ptr) convert_float8(vload8(i, ptr))
#define LOADX_int8_16(i, ptr) convert_float16(vload16(i, ptr))
// Plain float loads (beta, scale, the partial slice).
#define LOADF_1(i, ptr) ((ptr)[i])
#define LOADF_4(i, ptr) vload4(i, ptr)
#define LOADF_8(i, ptr) vload8(i, ptr)
#define LOADF_16(i, ptr) vload16(i, ptr)
#define STOREF_1(v, i, ptr) ((ptr)[i] = (v))
#define STOREF_4(v, i, ptr) vstore4(v, i, ptr)
#define STOREF_8(v, i, ptr) vstore8(v, i, ptr)
#define STOREF_16(v, i, ptr) vstore16(v, i, ptr)
// The coefficient each stored element multiplies in x_i . beta: beta, or s * beta for int8.
#define BETA_fp16(W, i, beta, scale) LOADF_##W(i, beta)
#define BETA_bf16(W, i, beta, scale) LOADF_##W(i, beta)
#define BETA_int8(W, i, beta, scale) (LOADF_##W(i, beta) * LOADF_##W(i, scale))

#define MEAN_OF(T, eta, family) ((family) == 0 ? (T)(1) / ((T)(1) + exp(-(eta))) : exp(eta))

#define DEFINE_STORED_KERNELS(S, W)                                                                                  \
    /* x_i . beta of one row, four accumulators. */                                                                  \
    __attribute__((always_inline)) inline float row_eta_##S##_v##W(__global const XT_##S* row,                      \
                                                                    __global const float* beta,                     \
                                                                    __global const float* scale, uint p) {          \
        const uint vecs = p / W;                                                                                     \
        VT_##W a0 = 0, a1 = 0, a2 = 0, a3 = 0;                                                                       \
        uint v = 0;                                                                                                  \
        for (; v + 4 <= vecs; v += 4) {                                                                              \
            a0 += LOADX_##S##_##W(v, row) * BETA_##S(W, v, beta, scale);                                             \
            a1 += LOADX_##S##_##W(v + 1, row) * BETA_##S(W, v + 1, beta, scale);                                     \
            a2 += LOADX_##S##_##W(v + 2, row) * BETA_##S(W, v + 2, beta, scale);                                     \
            a3 += LOADX_##S##_##W(v + 3, row) * BETA_##S(W, v + 3, beta, scale);                                     \
        }                                                                                                            \
        for (; v < vecs; ++v)                                                                                        \
            a0 += LOADX_##S##_##W(v, row) * BETA_##S(W, v, beta, scale);                                             \
        float eta = HSUM_##W((a0 + a1) + (a2 + a3));                                                                 \
        for (uint j = vecs * W; j < p; ++j)                                                                          \
            eta += LOADX_##S##_1(j, row) * BETA_##S(1, j, beta, scale);                                              \
        return eta;                                                                                                  \
    }                                                                                                                \
    /* acc[0..p) += sum over u < 8 of r[u] x_u (decoded), the rows x_u = x0 + u p. */                              \
    inline void row_axpy8_##S##_v##W(__global float* restrict acc, __global const XT_##S* restrict x0,              \
                                     const float* r, uint p) {                                                       \
        const uint vecs = p / W;                                                                                     \
        __global const XT_##S* x1 = x0 + p;                                                                          \
        __global const XT_##S* x2 = x1 + p;                                                                          \
        __global const XT_##S* x3 = x2 + p;                                                                          \
        __global const XT_##S* x4 = x3 + p;                                                                          \
        __global const XT_##S* x5 = x4 + p;                                                                          \
        __global const XT_##S* x6 = x5 + p;                                                                          \
        __global const XT_##S* x7 = x6 + p;                                                                          \
        for (uint v = 0; v < vecs; ++v)                                                                              \
            STOREF_##W(LOADF_##W(v, acc) +                                                                           \
                           ((r[0] * LOADX_##S##_##W(v, x0) + r[1] * LOADX_##S##_##W(v, x1)) +                        \
                            (r[2] * LOADX_##S##_##W(v, x2) + r[3] * LOADX_##S##_##W(v, x3))) +                       \
                           ((r[4] * LOADX_##S##_##W(v, x4) + r[5] * LOADX_##S##_##W(v, x5)) +                        \
                            (r[6] * LOADX_##S##_##W(v, x6) + r[7] * LOADX_##S##_##W(v, x7))),                        \
                       v, acc);                                                                                      \
        for (uint j = vecs * W; j < p; ++j)                                                                          \
            acc[j] += ((r[0] * LOADX_##S##_1(j, x0) + r[1] * LOADX_##S##_1(j, x1)) +                                 \
                       (r[2] * LOADX_##S##_1(j, x2) + r[3] * LOADX_##S##_1(j, x3))) +                                \
                      ((r[4] * LOADX_##S##_1(j, x4) + r[5] * LOADX_##S##_1(j, x5)) +                                 \
                       (r[6] * LOADX_##S##_1(j, x6) + r[7] * LOADX_##S##_1(j, x7)));                                 \
    }                                                                                                                \
    __kernel void grad_stored_##S##_v##W(__global const XT_##S* restrict x, __global const float* restrict y,       \
                                         __global const float* restrict beta, __global const float* restrict scale, \
                                         __global float* restrict partial, uint n, uint p, uint rows_per_item,      \
                                         uint family) {                                                              \
        __global float* restrict mine = partial + get_global_id(0) * p;                                              \
        for (uint j = 0; j < p; ++j)                                                                                 \
            mine[j] = 0;                                                                                             \
        const ulong first = (ulong)get_global_id(0) * rows_per_item;                                                \
        const ulong last = min((ulong)n, first + rows_per_item);                                                     \
        ulong i = first;                                                                                             \
        /* Eight rows at a time, as grad_row_part: eight dot products, one vector link function, */                 \
        /* one pass over the slice. */                                                                               \
        for (; i + 8 <= last; i += 8) {                                                                              \
            __global const XT_##S* x0 = x + i * p;                                                                   \
            float eta[8], r[8];                                                                                      \
            for (uint u = 0; u < 8; ++u)                                                                             \
                eta[u] = row_eta_##S##_v##W(x0 + u * p, beta, scale, p);                                             \
            vstore8(MEAN_OF(float8, vload8(0, eta), family) - vload8(0, y + i), 0, r);                               \
            row_axpy8_##S##_v##W(mine, x0, r, p);                                                                    \
        }                                                                                                            \
        for (; i < last; ++i) {                                                                                      \
            __global const XT_##S* row = x + i * p;                                                                  \
            const float r = MEAN_OF(float, row_eta_##S##_v##W(row, beta, scale, p), family) - y[i];                 \
            for (uint j = 0; j < p; ++j)                                                                             \
                mine[j] += r * LOADX_##S##_1(j, row);                                                                \
        }                                                                                                            \
    }

#define DEFINE_STORAGE(S)          \
    DEFINE_STORED_KERNELS(S, 1)    \
    DEFINE_STORED_KERNELS(S, 4)    \
    DEFINE_STORED_KERNELS(S, 8)    \
    DEFINE_STORED_KERNELS(S, 16)

DEFINE_STORAGE(fp16)
DEFINE_STORAGE(bf16)
DEFINE_STORAGE(int8)

// Second pass: g[j] = scale[j] * (sum of the work-items' partials) / n + lambda beta[j].
__kernel void reduce_stored(__global const float* restrict partial, __global const float* restrict beta,
                            __global const float* restrict scale, __global float* restrict g, uint groups, uint p,
                            float inv_n, float lambda) {
    const uint j = get_global_id(0);
    if (j >= p) return;
    float s = 0;
    for (uint k = 0; k < groups; ++k)
        s += partial[k * p + j];
    g[j] = scale[j] * s * inv_n + lambda * beta[j];
}
