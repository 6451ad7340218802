// Arithmetic ceiling: each work-item runs CHAINS independent FMA recurrences a = a*b + c on
// W-wide vectors (kernel fma_v<W>_c<CHAINS>). Independent chains hide the FMA latency: a core
// with P FMA pipes of latency L cycles needs P x L vector FMAs in flight (2 x 4 = 8 full-width
// registers on AVX-512 cores), and explicit vector types matter on CPU devices, where the compiler
// does not always vectorise across work-items. The probe sweeps both, because the winning shape
// differs by device and precision: too few chains leave pipes idle, too many spill registers.
// With |b| < 1 the recurrence converges (to c / (1 - b)), so values stay near 1 (no overflow, no
// denormals) and the host can check the result in closed form: a_n = b^n a_0 + c (1 - b^n) / (1 - b).
//
// No compiler may fold the work: every chain starts from a value of the work-item id (a driver that
// runs work-items as SIMD lanes, like Intel's CPU runtime, would otherwise compute one result for
// sixteen items), and b, c and the trip count are kernel arguments. The host passes b = c = 1/2:
// a * b is exact in every precision for every value on the way (no product needs correct
// rounding, which some drivers emulate in software for half, at 1/100 of the speed), and no value
// is a denormal.
//
// Half precision (REAL_IS_HALF) adds the same recurrence written as mad(a, b, c) and as plain
// a * b + c (kernels mad_v<W>_c<CHAINS>, mul_add_v<W>_c<CHAINS>) at two shapes: drivers without
// native half arithmetic may emulate a correctly rounded half fma, while mad and a * b + c take
// the fast path. The fp32 and fp64 programs leave them out (every driver measured runs the three
// alike there, and each kernel adds to the build: Intel's CPU runtime compiles every kernel of a
// program at build time).
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

// The start value of chain j for work-item g: in [0, 1), distinct across neighbouring chains.
#define START(j) ((REAL)(((get_global_id(0) * 8 + (j)) & 1023) * (1.0f / 1024.0f)))

// X applied to every chain index below the count; written out so each chain is its own variable
// (a private array would be left to the optimiser to promote to registers).
#define FOR_4(X) X(0) X(1) X(2) X(3)
#define FOR_8(X) FOR_4(X) X(4) X(5) X(6) X(7)
#define FOR_12(X) FOR_8(X) X(8) X(9) X(10) X(11)
#define FOR_16(X) FOR_12(X) X(12) X(13) X(14) X(15)

#define DECLARE(j) vec_t a##j = (vec_t)START(j);
#define STEP(j) a##j = fma(a##j, vb, vc);
#define STEP_MAD(j) a##j = mad(a##j, vb, vc);
#define STEP_MUL_ADD(j) a##j = a##j * vb + vc;
#define ADD(j) sum += a##j;

// The sum is outside the loop, so its order costs nothing; the host adds the same values in double.
#define DEFINE_KERNEL(NAME, STEP_OP, T, W, C)                                                     \
    __kernel void NAME##_v##W##_c##C(__global T* restrict out, REAL b, REAL c, uint iterations) { \
        typedef T vec_t;                                                                          \
        FOR_##C(DECLARE) const vec_t vb = (vec_t)b, vc = (vec_t)c;                                \
        for (uint i = 0; i < iterations; ++i) {                                                   \
            FOR_##C(STEP_OP)                                                                      \
        }                                                                                         \
        vec_t sum = (vec_t)0;                                                                     \
        FOR_##C(ADD) out[get_global_id(0)] = sum;                                                 \
    }
#define DEFINE_FMA_KERNEL(T, W, C) DEFINE_KERNEL(fma, STEP, T, W, C)

// The shapes the probe measures (probes/kernel/compute_probe.cpp lists the same): widths 1 to 16
// at 8 chains, 4 to 16 chains at the widest, and 16 scalar chains (the best case for scalar code).
DEFINE_FMA_KERNEL(REAL, 1, 8)
DEFINE_FMA_KERNEL(REAL, 1, 16)
DEFINE_FMA_KERNEL(CAT(REAL, 2), 2, 8)
DEFINE_FMA_KERNEL(CAT(REAL, 4), 4, 8)
DEFINE_FMA_KERNEL(CAT(REAL, 8), 8, 8)
DEFINE_FMA_KERNEL(CAT(REAL, 16), 16, 4)
DEFINE_FMA_KERNEL(CAT(REAL, 16), 16, 8)
DEFINE_FMA_KERNEL(CAT(REAL, 16), 16, 16)

#if defined(REAL_IS_HALF)
// The other two spellings of the step, at scalar and half8 code with 8 chains (the probe measures
// these against fma at the same shapes; compute_probe.cpp lists the same).
DEFINE_KERNEL(mad, STEP_MAD, REAL, 1, 8)
DEFINE_KERNEL(mad, STEP_MAD, CAT(REAL, 8), 8, 8)
DEFINE_KERNEL(mul_add, STEP_MUL_ADD, REAL, 1, 8)
DEFINE_KERNEL(mul_add, STEP_MUL_ADD, CAT(REAL, 8), 8, 8)
#endif
