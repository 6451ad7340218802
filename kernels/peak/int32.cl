// Integer ceiling (kernel.compute.int32, kernel.peak.int32): each work-item runs CHAINS independent
// recurrences on W-wide vectors of 32-bit unsigned integers, one of four mixes of the operations
// hashing and bit-manipulation kernels spend their time on (kernel <mix>_v<W>_c<CHAINS>). The peak
// is the fastest mix: which integer work a device runs fastest differs (a CPU's 32-bit multiply is
// slow and on one port; AVX-512 runs any boolean function of three inputs as one instruction).
//
// mul (mul_v<W>_c<C>), one word a per chain, b and c the kernel arguments; 8 operations a trip:
//
//     f = (a & b) | (a ^ c)                   and, xor, or       (a selection, like MD5's F)
//     a = (rotate((a + f) * b, 7) ^ c) + b    add, mul, rotate, xor, add
//
// md5 (md5_v<W>_c<C>), four words a, b, c, d per chain: four MD5 steps with round 1's function
// F(x, y, z) = (x & y) | (~x & z) and rotations, the words' roles turning as in MD5, the message
// word m = b and the constant k = c; no multiply. 9 operations a step, 36 a trip:
//
//     a = b + rotate(a + ((b & c) | (~b & d)) + m + k, 7)   and, not, and, or, add, add, add, rotate, add
//     d = a + rotate(d + F(a, b, c) + m + k, 12), c = d + rotate(c + F(d, a, b) + m + k, 17),
//     b = c + rotate(b + F(c, d, a) + m + k, 22)
//
// md5xor (md5xor_v<W>_c<C>): the same steps and values with F written d ^ (b & (c ^ d)), as OpenSSL
// and hashcat write it: xor, and, xor, 8 operations a step, 32 a trip. Compilers fuse the two
// spellings differently: LLVM turns RFC 1321's `|` of disjoint terms into an add and loses the
// three-input logic instruction AVX-512 has for either. m + k is loop-invariant; a compiler adds it
// once, before the loop, as it does for hashcat's message words and constants, and it is counted
// as written, as theirs is.
//
// arx (arx_v<W>_c<C>), four words per chain: one ChaCha quarter round, add, xor and rotate only
// (b and c unused); 12 operations a trip:
//
//     a += b; d ^= a; d = rotate(d, 16); c += d; b ^= c; b = rotate(b, 12);
//     a += b; d ^= a; d = rotate(d, 8);  c += d; b ^= c; b = rotate(b, 7);
//
// Operations are counted as written here, each and, or, xor, not, add, mul and rotate as 1, as an
// FMA counts 2 FLOPs: a device may fuse some (a GPU's integer multiply-add, AVX-512's three-input
// logic instruction, x86's and-not) or split others (a rotate is two shifts and an or without a
// rotate instruction), and the peak is what the fastest mix runs at. Shapes, chains and their
// reasons are those of compute.cl's FMA kernels.
//
// No compiler may fold the work: every word of every chain and lane starts from a value of the
// work-item id, the chain and the lane (a driver that runs work-items as SIMD lanes must compute
// each), and b, c and the trip count are kernel arguments. uint arithmetic wraps modulo 2^32, so
// the host runs the identical recurrences (probes/kernel/int_mix.hpp) and checks every lane bit for
// bit.

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

// Each lane's index, as a vector of the kernel's width.
#define LANES_1 0u
#define LANES_2 (uint2)(0u, 1u)
#define LANES_4 (uint4)(0u, 1u, 2u, 3u)
#define LANES_8 (uint8)(0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u)
#define LANES_16 (uint16)(0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u, 10u, 11u, 12u, 13u, 14u, 15u)

// The start value of chain j, lane l, work-item g: g * 0x9E3779B9 + j * 0x7F4A7C15 + l * 0x3C6EF372
// (mod 2^32; int_mix.hpp's start_value computes the same).
#define START(j) ((vec_t)((uint)get_global_id(0) * 0x9E3779B9u + 0x7F4A7C15u * (j)) + lanes * 0x3C6EF372u)

// X applied to every chain index below the count; written out so each chain is its own variable.
#define FOR_4(X) X(0) X(1) X(2) X(3)
#define FOR_8(X) FOR_4(X) X(4) X(5) X(6) X(7)
#define FOR_12(X) FOR_8(X) X(8) X(9) X(10) X(11)
#define FOR_16(X) FOR_12(X) X(12) X(13) X(14) X(15)

// mul: one word per chain.
#define mul_SETUP const vec_t vr = (vec_t)7u;
#define mul_DECLARE(j) vec_t a##j = START(j);
#define mul_TRIP(j)                                     \
    {                                                   \
        const vec_t f = (a##j & vb) | (a##j ^ vc);      \
        a##j = (rotate((a##j + f) * vb, vr) ^ vc) + vb; \
    }
#define mul_ADD(j) sum += a##j;

// md5 and arx: four words per chain, a the start value and b, c, d that plus MD5's initial words
// B, C and D (int_mix.hpp's start_words).
#define DECLARE_WORDS(j) \
    vec_t a##j = START(j), b##j = a##j + 0xEFCDAB89u, c##j = a##j + 0x98BADCFEu, d##j = a##j + 0x10325476u;
#define ADD_WORDS(j) sum += (a##j + b##j) + (c##j + d##j);

// MD5's round 1 function F(x, y, z) = x ? y : z, as RFC 1321 writes it (md5) and as OpenSSL and
// hashcat do (md5xor): the same values, but compilers fuse them differently.
#define F_OR(x, y, z) ((x & y) | (~x & z))
#define F_XOR(x, y, z) (z ^ (x & (y ^ z)))
// One MD5 step, the message word m = b and the constant k = c: w = x + rotate(w + F + m + k, s).
#define MD5_STEP(F, w, x, y, z, s) w = x + rotate(w + F(x, y, z) + vb + vc, (vec_t)(s));
#define MD5_TRIP(F, j)                       \
    MD5_STEP(F, a##j, b##j, c##j, d##j, 7u)  \
    MD5_STEP(F, d##j, a##j, b##j, c##j, 12u) \
    MD5_STEP(F, c##j, d##j, a##j, b##j, 17u) \
    MD5_STEP(F, b##j, c##j, d##j, a##j, 22u)

#define md5_SETUP
#define md5_DECLARE DECLARE_WORDS
#define md5_TRIP(j) MD5_TRIP(F_OR, j)
#define md5_ADD ADD_WORDS

#define md5xor_SETUP
#define md5xor_DECLARE DECLARE_WORDS
#define md5xor_TRIP(j) MD5_TRIP(F_XOR, j)
#define md5xor_ADD ADD_WORDS

#define arx_SETUP
#define arx_DECLARE DECLARE_WORDS
#define arx_TRIP(j)                         \
    a##j += b##j;                           \
    d##j = rotate(d##j ^ a##j, (vec_t)16u); \
    c##j += d##j;                           \
    b##j = rotate(b##j ^ c##j, (vec_t)12u); \
    a##j += b##j;                           \
    d##j = rotate(d##j ^ a##j, (vec_t)8u);  \
    c##j += d##j;                           \
    b##j = rotate(b##j ^ c##j, (vec_t)7u);
#define arx_ADD ADD_WORDS

// The sum (mod 2^32) is outside the loop; the host adds the same words and lanes in the same
// wraparound.
#define DEFINE_KERNEL(MIX, T, W, C)                                                              \
    __kernel void MIX##_v##W##_c##C(__global T* restrict out, uint b, uint c, uint iterations) { \
        typedef T vec_t;                                                                         \
        const vec_t lanes = LANES_##W;                                                           \
        FOR_##C(MIX##_DECLARE) MIX##_SETUP const vec_t vb = (vec_t)b, vc = (vec_t)c;             \
        for (uint i = 0; i < iterations; ++i) {                                                  \
            FOR_##C(MIX##_TRIP)                                                                  \
        }                                                                                        \
        vec_t sum = (vec_t)0u;                                                                   \
        FOR_##C(MIX##_ADD) out[get_global_id(0)] = sum;                                          \
    }

// The shapes the probe measures (probes/kernel/int_compute_probe.cpp lists the same): widths 1 to
// 16 at 8 chains, 4 to 16 chains at the widest, and 16 scalar chains.
#define DEFINE_SHAPES(MIX)            \
    DEFINE_KERNEL(MIX, uint, 1, 8)    \
    DEFINE_KERNEL(MIX, uint, 1, 16)   \
    DEFINE_KERNEL(MIX, uint2, 2, 8)   \
    DEFINE_KERNEL(MIX, uint4, 4, 8)   \
    DEFINE_KERNEL(MIX, uint8, 8, 8)   \
    DEFINE_KERNEL(MIX, uint16, 16, 4) \
    DEFINE_KERNEL(MIX, uint16, 16, 8) \
    DEFINE_KERNEL(MIX, uint16, 16, 16)

DEFINE_SHAPES(mul)
DEFINE_SHAPES(md5)
DEFINE_SHAPES(md5xor)
DEFINE_SHAPES(arx)
