// Global-memory bandwidth ceilings: read, write and copy, for every vector width, in two access
// patterns, because the fastest pattern differs by device:
//   interleaved: each work-group owns a contiguous block, and inside it consecutive work-items
//                touch consecutive vectors, which GPUs coalesce into wide transactions (a
//                grid-wide stride would coalesce as well, but scatters CPU devices' accesses);
//   chunked:     each work-item streams its own contiguous chunk, which CPU devices (PoCL runs a
//                work-group per core, one work-item after another) turn into sequential streams
//                the hardware prefetcher follows.
// Read kernels sum with four accumulators so a core is not bound by the latency of the adds;
// the per-item sums are written out so the compiler cannot drop the loads, and the host checks
// their total against the input pattern.
//
// Host contract: buffers hold get_global_size(0) * per_item vectors; per_item is a multiple of 4.
// read_chunked_pair reads the same vectors as read_chunked, in two streams per work-item.

#define DEFINE_BANDWIDTH_KERNELS(T, W)                                                        \
    __kernel void read_interleaved_v##W(__global const T* restrict in, __global T* restrict out, \
                                        uint per_item) {                                     \
        const size_t ls = get_local_size(0);                                                 \
        size_t i = get_group_id(0) * ls * per_item + get_local_id(0);                        \
        T acc0 = (T)(0.0f), acc1 = (T)(0.0f), acc2 = (T)(0.0f), acc3 = (T)(0.0f);            \
        for (uint k = 0; k < per_item; k += 4, i += 4 * ls) {                                \
            acc0 += in[i];                                                                   \
            acc1 += in[i + ls];                                                              \
            acc2 += in[i + 2 * ls];                                                          \
            acc3 += in[i + 3 * ls];                                                          \
        }                                                                                    \
        out[get_global_id(0)] = (acc0 + acc1) + (acc2 + acc3);                               \
    }                                                                                        \
    __kernel void read_chunked_v##W(__global const T* restrict in, __global T* restrict out,    \
                                    uint per_item) {                                         \
        __global const T* p = in + get_global_id(0) * (size_t)per_item;                      \
        T acc0 = (T)(0.0f), acc1 = (T)(0.0f), acc2 = (T)(0.0f), acc3 = (T)(0.0f);            \
        for (uint k = 0; k < per_item; k += 4) {                                             \
            acc0 += p[k];                                                                    \
            acc1 += p[k + 1];                                                                \
            acc2 += p[k + 2];                                                                \
            acc3 += p[k + 3];                                                                \
        }                                                                                    \
        out[get_global_id(0)] = (acc0 + acc1) + (acc2 + acc3);                               \
    }                                                                                        \
    /* Two streams per item: its chunk of the first half and the same chunk of the second.  */ \
    /* Some CPUs read memory faster with two sequential streams per core than with one      */ \
    /* (the prefetchers track several; attention decode reads K and V side by side).        */ \
    __kernel void read_chunked_pair_v##W(__global const T* restrict in, __global T* restrict out, \
                                         uint per_item) {                                     \
        const uint per_stream = per_item / 2;                                                \
        __global const T* p = in + get_global_id(0) * (size_t)per_stream;                    \
        __global const T* q = p + get_global_size(0) * (size_t)per_stream;                   \
        T acc0 = (T)(0.0f), acc1 = (T)(0.0f), acc2 = (T)(0.0f), acc3 = (T)(0.0f);            \
        for (uint k = 0; k < per_stream; k += 2) {                                           \
            acc0 += p[k];                                                                    \
            acc1 += p[k + 1];                                                                \
            acc2 += q[k];                                                                    \
            acc3 += q[k + 1];                                                                \
        }                                                                                    \
        out[get_global_id(0)] = (acc0 + acc1) + (acc2 + acc3);                               \
    }                                                                                        \
    /* Writes ((vector index & 7) + seed): a distinct seed per run exposes stale output. */  \
    __kernel void write_interleaved_v##W(__global T* restrict out, uint per_item, float seed) { \
        const size_t ls = get_local_size(0);                                                 \
        size_t i = get_group_id(0) * ls * per_item + get_local_id(0);                        \
        for (uint k = 0; k < per_item; ++k, i += ls) out[i] = (T)((float)(i & 7) + seed);    \
    }                                                                                        \
    __kernel void write_chunked_v##W(__global T* restrict out, uint per_item, float seed) {     \
        const size_t base = get_global_id(0) * (size_t)per_item;                             \
        for (uint k = 0; k < per_item; ++k) out[base + k] = (T)((float)((base + k) & 7) + seed); \
    }                                                                                        \
    __kernel void copy_interleaved_v##W(__global const T* restrict in, __global T* restrict out, \
                                        uint per_item) {                                     \
        const size_t ls = get_local_size(0);                                                 \
        size_t i = get_group_id(0) * ls * per_item + get_local_id(0);                        \
        for (uint k = 0; k < per_item; ++k, i += ls) out[i] = in[i];                         \
    }                                                                                        \
    __kernel void copy_chunked_v##W(__global const T* restrict in, __global T* restrict out,    \
                                    uint per_item) {                                         \
        const size_t base = get_global_id(0) * (size_t)per_item;                             \
        for (uint k = 0; k < per_item; ++k) out[base + k] = in[base + k];                    \
    }

DEFINE_BANDWIDTH_KERNELS(float, 1)
DEFINE_BANDWIDTH_KERNELS(float2, 2)
DEFINE_BANDWIDTH_KERNELS(float4, 4)
DEFINE_BANDWIDTH_KERNELS(float8, 8)
DEFINE_BANDWIDTH_KERNELS(float16, 16)
