// Arithmetic ceiling: each work-item runs CHAINS independent FMA recurrences a = a*b + c.
// Independent chains hide the FMA latency (4-6 cycles on current cores and GPUs) so the FMA
// pipes stay full; explicit vector types matter on CPU devices, where the compiler does not
// always vectorise across work-items. With |b| < 1 the recurrence converges (to c / (1 - b)),
// so values stay near 1 (no overflow, no denormals) and the host can check the result in
// closed form: a_n = b^n a_0 + c (1 - b^n) / (1 - b).
//
// Build with -D REAL=float (default), -D REAL=double -D REAL_IS_DOUBLE,
// or -D REAL=half -D REAL_IS_HALF.

#ifndef REAL
#define REAL float
#endif

#if defined(REAL_IS_DOUBLE)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#elif defined(REAL_IS_HALF)
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

// The start value of chain j for work-item g: distinct per item and chain, all in [0, 1).
#define START(j) ((REAL)(((get_global_id(0) * 8 + (j)) & 1023) * (1.0f / 1024.0f)))

#define DEFINE_FMA_KERNEL_8(T, W)                                                          \
    __kernel void fma_v##W(__global T* restrict out, REAL b, REAL c, uint iterations) {    \
        T a0 = (T)START(0), a1 = (T)START(1), a2 = (T)START(2), a3 = (T)START(3);          \
        T a4 = (T)START(4), a5 = (T)START(5), a6 = (T)START(6), a7 = (T)START(7);          \
        const T vb = (T)b, vc = (T)c;                                                      \
        for (uint i = 0; i < iterations; ++i) {                                            \
            a0 = fma(a0, vb, vc); a1 = fma(a1, vb, vc); a2 = fma(a2, vb, vc);              \
            a3 = fma(a3, vb, vc); a4 = fma(a4, vb, vc); a5 = fma(a5, vb, vc);              \
            a6 = fma(a6, vb, vc); a7 = fma(a7, vb, vc);                                    \
        }                                                                                  \
        out[get_global_id(0)] = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));         \
    }

// 16-wide vectors with 8 chains need 32 vector registers on AVX2 and spill; 4 chains suffice
// there because each chain already carries 16 lanes.
#define DEFINE_FMA_KERNEL_4(T, W)                                                          \
    __kernel void fma_v##W(__global T* restrict out, REAL b, REAL c, uint iterations) {    \
        T a0 = (T)START(0), a1 = (T)START(1), a2 = (T)START(2), a3 = (T)START(3);          \
        const T vb = (T)b, vc = (T)c;                                                      \
        for (uint i = 0; i < iterations; ++i) {                                            \
            a0 = fma(a0, vb, vc); a1 = fma(a1, vb, vc);                                    \
            a2 = fma(a2, vb, vc); a3 = fma(a3, vb, vc);                                    \
        }                                                                                  \
        out[get_global_id(0)] = (a0 + a1) + (a2 + a3);                                     \
    }

DEFINE_FMA_KERNEL_8(REAL, 1)
DEFINE_FMA_KERNEL_8(CAT(REAL, 2), 2)
DEFINE_FMA_KERNEL_8(CAT(REAL, 4), 4)
DEFINE_FMA_KERNEL_8(CAT(REAL, 8), 8)
DEFINE_FMA_KERNEL_4(CAT(REAL, 16), 16)
