// The drift reference (src/runtime/drift_monitor.cpp): two short fixed kernels timed before each
// device probe, so a run records how the machine's throughput moved while it measured. They are
// not ceilings: the same fixed work every time is what makes the timings comparable across the
// run and across runs.

// Compute-bound: eight independent FMA chains on float8 per work-item (enough chains to hide the
// FMA latency on CPU devices and GPUs alike). Chain j starts at (j + 1) / 16 and follows
// a = a * b + c; with c = 1 - b it tends to 1, so a_n = 1 - (1 - a_0) b^n and the host checks each
// lane's sum over the chains in closed form. b and c are arguments so the compiler cannot fold the loop.
__kernel void drift_fma(__global float8* restrict out, float b, float c, uint iterations) {
    const float8 vb = (float8)(b), vc = (float8)(c);
    float8 a0 = (float8)(1.0f / 16), a1 = (float8)(2.0f / 16), a2 = (float8)(3.0f / 16), a3 = (float8)(4.0f / 16);
    float8 a4 = (float8)(5.0f / 16), a5 = (float8)(6.0f / 16), a6 = (float8)(7.0f / 16), a7 = (float8)(8.0f / 16);
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
// the host adds every item's lanes and checks the total bit for bit). Two access patterns, as in peak/bandwidth.cl: chunked
// (each item streams its own contiguous chunk: CPU devices' prefetchers follow it) and interleaved
// (consecutive items read consecutive vectors: GPUs coalesce it).
// Host contract: the buffer holds get_global_size(0) * per_item uint4; per_item is a multiple of 4.
__kernel void drift_read_chunked(__global const uint4* restrict in, __global uint4* restrict out, uint per_item) {
    __global const uint4* p = in + get_global_id(0) * (size_t)per_item;
    uint4 acc0 = (uint4)(0), acc1 = (uint4)(0), acc2 = (uint4)(0), acc3 = (uint4)(0);
    for (uint k = 0; k < per_item; k += 4) {
        acc0 += p[k];
        acc1 += p[k + 1];
        acc2 += p[k + 2];
        acc3 += p[k + 3];
    }
    out[get_global_id(0)] = (acc0 + acc1) + (acc2 + acc3);
}

__kernel void drift_read_interleaved(__global const uint4* restrict in, __global uint4* restrict out, uint per_item) {
    const size_t ls = get_local_size(0);
    size_t i = get_group_id(0) * ls * per_item + get_local_id(0);
    uint4 acc0 = (uint4)(0), acc1 = (uint4)(0), acc2 = (uint4)(0), acc3 = (uint4)(0);
    for (uint k = 0; k < per_item; k += 4, i += 4 * ls) {
        acc0 += in[i];
        acc1 += in[i + ls];
        acc2 += in[i + 2 * ls];
        acc3 += in[i + 3 * ls];
    }
    out[get_global_id(0)] = (acc0 + acc1) + (acc2 + acc3);
}
