// The kernel-driven copy path of transfer.bandwidth (probes/transfer/bandwidth_sweep_probe.cpp):
// a kernel that moves bytes between a host-visible buffer (CL_MEM_ALLOC_HOST_PTR) and a device
// buffer, beside the driver's clEnqueueWrite/ReadBuffer. Drivers often copy with one thread (PoCL)
// or one copy engine, while a kernel runs on every compute unit. Two access patterns, because the
// fastest one depends on the device and the probe tries each kernel:
//   copy_chunked:     each work-item streams its own contiguous chunk of 64-byte vectors (a cache
//                     line): CPU devices that run a work-group's items one after another (PoCL)
//                     turn it into long sequential streams the hardware prefetcher follows;
//   copy_interleaved: each work-group owns a contiguous block, and inside it consecutive work-items
//                     copy consecutive 16-byte vectors, which GPUs coalesce into wide transactions.
// copy_chunked_stream is copy_chunked with streaming (non-temporal) stores where the compiler has
// them (clang's builtin; a plain store elsewhere): a copy larger than the cache gains nothing from
// caching its destination, and a plain store first reads each destination line (a third of the
// traffic), which is why memcpy streams its large copies too. Below the cache size they lose
// (the destination is evicted), so the probe uses them only for large transfers.
// Words are copied as unsigned integers: any bit pattern survives (floats could be canonicalised).
//
// Host contract: src and dst hold `count` vectors of the kernel's type. copy_chunked(_stream): item g
// copies vectors [g * per_item, min((g + 1) * per_item, count)). copy_interleaved: group w covers
// vectors [w * local_size * per_item, (w + 1) * local_size * per_item). Work-items past `count`
// copy nothing, so the global size may be rounded up to a multiple of the local size.

#if defined(__has_builtin)
#if __has_builtin(__builtin_nontemporal_store)
#define STREAM_STORE(value, address) __builtin_nontemporal_store((value), (address))
#endif
#endif
#ifndef STREAM_STORE
#define STREAM_STORE(value, address) (*(address) = (value))
#endif

__kernel void copy_chunked(__global const uint16* restrict src, __global uint16* restrict dst, ulong count,
                           uint per_item) {
    const ulong begin = (ulong)get_global_id(0) * per_item;
    const ulong end = min(begin + per_item, count);
    for (ulong i = begin; i < end; ++i)
        dst[i] = src[i];
}

__kernel void copy_chunked_stream(__global const uint16* restrict src, __global uint16* restrict dst, ulong count,
                                  uint per_item) {
    const ulong begin = (ulong)get_global_id(0) * per_item;
    const ulong end = min(begin + per_item, count);
    for (ulong i = begin; i < end; ++i)
        STREAM_STORE(src[i], &dst[i]);
}

__kernel void copy_interleaved(__global const uint4* restrict src, __global uint4* restrict dst, ulong count,
                               uint per_item) {
    const ulong ls = get_local_size(0);
    ulong i = (ulong)get_group_id(0) * ls * per_item + get_local_id(0);
    for (uint k = 0; k < per_item && i < count; ++k, i += ls)
        dst[i] = src[i];
}
