// Read bandwidth of each memory level (kernel.memory_levels): every work-group re-reads its own
// slice of the working set `repeats` times, so a working set that fits in a cache level is served
// by that level from the second pass on.
//
// What the re-read must guarantee: the data touched between two reads of the same byte (the reuse
// distance) on one compute unit equals the working set per compute unit, on every kind of device:
//   - PoCL (CPU devices) runs a work-group on one core and its work-items one after another; a
//     repeat loop inside each work-item would re-read only that item's chunk (tiny, always in L1)
//     before moving to the next item. The barrier at the end of each pass splits the kernel there:
//     PoCL then runs pass r for every work-item before pass r + 1, so a core re-reads the whole
//     slice. The host launches one work-group per core, so the slice is the working set per core.
//   - A GPU keeps a compute unit's resident work-groups running side by side; the host launches a
//     few per compute unit (all resident at once), so the slices they re-read together are the
//     working set per compute unit, and the barrier keeps a group's work-items in step.
// Accumulators are declared inside the pass, so the one value live across the barrier is the
// running total (PoCL keeps such values in per-work-item arrays, which would otherwise pollute L1).
// Eight independent accumulators of 16-lane integers keep a core bound by its loads rather than by
// the latency of the adds; integer sums wrap exactly, so the host checks them bit for bit.
//
// Two shapes, because the fastest differs by device (the host keeps the better per size):
//   chunked:     each work-item streams its own contiguous chunk of the slice (CPU devices: one
//                sequential stream the prefetcher follows);
//   interleaved: consecutive work-items read consecutive vectors (GPUs coalesce them).
//
// Host contract: `in` holds get_num_groups(0) slices of get_local_size(0) * per_item vectors;
// per_item is a multiple of UNROLL; `out` holds one vector per work-item. The sum of every lane of
// `out` over all work-items is `repeats` times that lane's sum over `in`, modulo 2^32.

#define UNROLL 8

__kernel void levels_chunked(__global const uint16* in, __global uint16* out, uint per_item, uint repeats) {
    __global const uint16* p = in + get_global_id(0) * (size_t)per_item;
    uint16 total = (uint16)(0);
    for (uint r = 0; r < repeats; ++r) {
        uint16 a0 = (uint16)(0), a1 = (uint16)(0), a2 = (uint16)(0), a3 = (uint16)(0);
        uint16 a4 = (uint16)(0), a5 = (uint16)(0), a6 = (uint16)(0), a7 = (uint16)(0);
        for (uint k = 0; k < per_item; k += UNROLL) {
            a0 += p[k];
            a1 += p[k + 1];
            a2 += p[k + 2];
            a3 += p[k + 3];
            a4 += p[k + 4];
            a5 += p[k + 5];
            a6 += p[k + 6];
            a7 += p[k + 7];
        }
        total += ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    out[get_global_id(0)] = total;
}

__kernel void levels_interleaved(__global const uint16* in, __global uint16* out, uint per_item, uint repeats) {
    const size_t ls = get_local_size(0);
    __global const uint16* p = in + get_group_id(0) * ls * (size_t)per_item + get_local_id(0);
    uint16 total = (uint16)(0);
    for (uint r = 0; r < repeats; ++r) {
        uint16 a0 = (uint16)(0), a1 = (uint16)(0), a2 = (uint16)(0), a3 = (uint16)(0);
        uint16 a4 = (uint16)(0), a5 = (uint16)(0), a6 = (uint16)(0), a7 = (uint16)(0);
        for (size_t i = 0; i < per_item * ls; i += UNROLL * ls) {
            a0 += p[i];
            a1 += p[i + ls];
            a2 += p[i + 2 * ls];
            a3 += p[i + 3 * ls];
            a4 += p[i + 4 * ls];
            a5 += p[i + 5 * ls];
            a6 += p[i + 6 * ls];
            a7 += p[i + 7 * ls];
        }
        total += ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    out[get_global_id(0)] = total;
}
