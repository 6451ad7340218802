// The drift reference (src/runtime/drift_monitor.cpp): two short fixed kernels timed before each
// device probe, so a run records how the machine's throughput moved while it measured. They are
// not ceilings: the same fixed work every time is what makes the timings comparable across the
// run and across runs.

// Compute-bound: eight independent FMA chains on float8 per work-item (enough chains to hide the
// FMA latency on CPU devices and GPUs alike). Chain j, lane l of work-item g starts at
// a_0 = ((64 g + 8 j + l) mod 1024) / 1024 and follows a = a * b + c. The host passes b = 1 and
// c = 2^-k with n c <= 1 for n iterations, so a_n = a_0 + n c exactly, and checks each lane's sum
// over the chains item by item: the result depends on the start and on every step at any n. The
// start depends on the work-item id and b, c and the trip count are arguments, so no compiler can
// fold the loop or compute one result for many items (a driver that runs work-items as SIMD lanes,
// like Intel's CPU runtime, did exactly that with constant starts). Every value lies in [0, 2): no
// denormals.
#define DRIFT_START(j) (lane + (float8)((float)((get_global_id(0) * 64 + (j) * 8) & 1023) * (1.0f / 1024)))
__kernel void drift_fma(__global float8* restrict out, float b, float c, uint iterations) {
    const float8 vb = (float8)(b), vc = (float8)(c);
    // Lane l adds l / 1024: a vector literal, not a swizzle (kernels/README.md).
    const float8 lane = (float8)(0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f) * (1.0f / 1024);
    float8 a0 = DRIFT_START(0), a1 = DRIFT_START(1), a2 = DRIFT_START(2), a3 = DRIFT_START(3);
    float8 a4 = DRIFT_START(4), a5 = DRIFT_START(5), a6 = DRIFT_START(6), a7 = DRIFT_START(7);
    for (uint i = 0; i < iterations; ++i) {
        a0 = fma(a0, vb, vc);
        a1 = fma(a1, vb, vc);
        a2 = fma(a2, vb, vc);
        a3 = fma(a3, vb, vc);
        a4 = fma(a4, vb, vc);
        a5 = fma(a5, vb, vc);
        a6 = fma(a6, vb, vc);
        a7 = fma(a7, vb, vc);
    }
    // The vector goes out whole (each lane holds one sum over the chains) and the host checks every
    // lane: adding lanes here would need swizzles, on which Oclgrind's uninitialised-value checker
    // crashes (kernels/README.md).
    out[get_global_id(0)] = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
}

// The memory buffer's contents: element i holds i, so the host knows every sum in closed form.
__kernel void drift_fill(__global uint* restrict data) {
    data[get_global_id(0)] = (uint)get_global_id(0);
}

// Memory-bound: one read of the whole buffer, summed in 32-bit integers (they wrap exactly, so
// the host adds every item's lanes and checks the total bit for bit). Access patterns as in
// peak/bandwidth.cl: chunked (each item streams its own contiguous chunk: PoCL, which runs a
// work-group's items one after another on a core, turns it into a stream the prefetcher follows)
// and interleaved (consecutive items read consecutive vectors: GPUs coalesce it). A driver that
// runs work-items as SIMD lanes, like Intel's CPU runtime, turns 16-byte chunked loads into
// gathers; whole 64-byte vectors (a cache line per load) stream there. Which kernel streams best is
// the driver's business, so the monitor times all three at set-up and keeps the fastest
// (src/runtime/drift_monitor.cpp).
// Host contract: the buffer holds get_global_size(0) * per_item vectors of the kernel's type
// (uint4 for drift_read_chunked, uint16 for the others); per_item is a multiple of 4.
#define DEFINE_DRIFT_READ_CHUNKED(NAME, T)                                              \
    __kernel void NAME(__global const T* restrict in, __global T* restrict out, uint per_item) { \
        __global const T* p = in + get_global_id(0) * (size_t)per_item;                   \
        T acc0 = (T)(0), acc1 = (T)(0), acc2 = (T)(0), acc3 = (T)(0);                     \
        for (uint k = 0; k < per_item; k += 4) {                                          \
            acc0 += p[k];                                                                 \
            acc1 += p[k + 1];                                                             \
            acc2 += p[k + 2];                                                             \
            acc3 += p[k + 3];                                                             \
        }                                                                                 \
        out[get_global_id(0)] = (acc0 + acc1) + (acc2 + acc3);                            \
    }
DEFINE_DRIFT_READ_CHUNKED(drift_read_chunked, uint4)
DEFINE_DRIFT_READ_CHUNKED(drift_read_chunked_wide, uint16)

__kernel void drift_read_interleaved(__global const uint16* restrict in, __global uint16* restrict out, uint per_item) {
    const size_t ls = get_local_size(0);
    size_t i = get_group_id(0) * ls * per_item + get_local_id(0);
    uint16 acc0 = (uint16)(0), acc1 = (uint16)(0), acc2 = (uint16)(0), acc3 = (uint16)(0);
    for (uint k = 0; k < per_item; k += 4, i += 4 * ls) {
        acc0 += in[i];
        acc1 += in[i + ls];
        acc2 += in[i + 2 * ls];
        acc3 += in[i + 3 * ls];
    }
    out[get_global_id(0)] = (acc0 + acc1) + (acc2 + acc3);
}
