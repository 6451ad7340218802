#!/usr/bin/env python3
"""pyopencl: three kernels of known character, each launched several times on one queue.

Usage: pyopencl_programs.py [LAUNCHES=10] [COPY_MIB=64]

- copy_f4:  memory-bound; copies a COPY_MIB MiB buffer of float4 into another (reads and writes
            COPY_MIB MiB per launch; two 64 MiB buffers do not fit any CPU cache).
- fma_f32:  compute-bound fp32; 8 independent FMA chains of 512 steps per work-item, 1 MiB buffer
            (2 * 8 * 512 = 8192 flops per work-item, 262144 work-items: 2.1 GFLOP per launch).
- int_mix:  integer add/xor/rotate (MD5-like rounds), 64 rounds per work-item, 4 MiB buffer.

Each result is checked on the host (numpy) and the program exits 1 when one is wrong.
stdout: what ran and a checksum of each output, the same every run; stderr: the times.
"""
import sys
import time

import numpy as np
import pyopencl as cl

SOURCE = r"""
__kernel void copy_f4(__global const float4 *src, __global float4 *dst) {
    size_t i = get_global_id(0);
    dst[i] = src[i];
}

__kernel void fma_f32(__global float *data, float a, float b) {
    size_t i = get_global_id(0);
    float x0 = data[i], x1 = x0 + 1.0f, x2 = x0 + 2.0f, x3 = x0 + 3.0f,
          x4 = x0 + 4.0f, x5 = x0 + 5.0f, x6 = x0 + 6.0f, x7 = x0 + 7.0f;
    for (int k = 0; k < 512; ++k) {
        x0 = fma(x0, a, b); x1 = fma(x1, a, b); x2 = fma(x2, a, b); x3 = fma(x3, a, b);
        x4 = fma(x4, a, b); x5 = fma(x5, a, b); x6 = fma(x6, a, b); x7 = fma(x7, a, b);
    }
    data[i] = (((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7))) * 0.125f;
}

__kernel void int_mix(__global uint4 *state) {
    size_t i = get_global_id(0);
    uint4 s = state[i];
    for (uint r = 0; r < 64; ++r) {
        s.x = rotate(s.x + (s.y ^ s.z ^ s.w) + 0x5a827999u + r, 7u) + s.y;
        s.w = rotate(s.w + (s.x ^ s.y ^ s.z) + 0x6ed9eba1u, 12u) + s.x;
        s.z = rotate(s.z + (s.w ^ s.x ^ s.y) + 0x8f1bbcdcu, 17u) + s.w;
        s.y = rotate(s.y + (s.z ^ s.w ^ s.x) + 0xca62c1d6u, 22u) + s.z;
    }
    state[i] = s;
}
"""


def rotl(x, n):
    return ((x << np.uint32(n)) | (x >> np.uint32(32 - n))).astype(np.uint32)


def int_mix_host(s, launches):
    x, y, z, w = (s[:, j].copy() for j in range(4))
    with np.errstate(over="ignore"):
        for _ in range(launches):
            for r in range(64):
                x = rotl(x + (y ^ z ^ w) + np.uint32(0x5a827999) + np.uint32(r), 7) + y
                w = rotl(w + (x ^ y ^ z) + np.uint32(0x6ed9eba1), 12) + x
                z = rotl(z + (w ^ x ^ y) + np.uint32(0x8f1bbcdc), 17) + w
                y = rotl(y + (z ^ w ^ x) + np.uint32(0xca62c1d6), 22) + z
    return np.stack([x, y, z, w], axis=1)


def checksum(a):
    return int(np.bitwise_xor.reduce(a.view(np.uint32).ravel()))


def main():
    launches = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    copy_mib = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    platform = cl.get_platforms()[0]
    device = platform.get_devices()[0]
    ctx = cl.Context([device])
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SOURCE).build()
    mf = cl.mem_flags
    times = {}
    ok = True

    # copy: memory-bound
    n4 = copy_mib * 1024 * 1024 // 16
    src = np.arange(n4 * 4, dtype=np.float32)
    d_src = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=src)
    d_dst = cl.Buffer(ctx, mf.WRITE_ONLY, src.nbytes)
    t = time.monotonic()
    for _ in range(launches):
        prg.copy_f4(queue, (n4,), None, d_src, d_dst)
    queue.finish()
    times["copy_f4"] = time.monotonic() - t
    dst = np.empty_like(src)
    cl.enqueue_copy(queue, dst, d_dst)
    ok &= bool(np.array_equal(dst, src))
    print(f"copy_f4: {launches} launches, {copy_mib} MiB each, checksum {checksum(dst):08x}")

    # fma: compute-bound fp32
    n = 262144
    data = (np.arange(n, dtype=np.float32) % 97) * np.float32(0.01)
    d_data = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=data)
    a, b = np.float32(0.99), np.float32(0.01)
    t = time.monotonic()
    for _ in range(launches):
        prg.fma_f32(queue, (n,), None, d_data, a, b)
    queue.finish()
    times["fma_f32"] = time.monotonic() - t
    out = np.empty_like(data)
    cl.enqueue_copy(queue, out, d_data)
    # x -> a x + b converges to b / (1 - a) = 1 (0.99^512 < 0.006): every output is ~1.02.
    ok &= bool(np.all(np.abs(out - 1.0) < 0.05))
    print(f"fma_f32: {launches} launches, {n} work-items, mean {float(out.mean()):.3f}")

    # int_mix: integer add/xor/rotate
    m = 262144
    state = np.arange(m * 4, dtype=np.uint32).reshape(m, 4)
    d_state = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=state)
    t = time.monotonic()
    for _ in range(launches):
        prg.int_mix(queue, (m,), None, d_state)
    queue.finish()
    times["int_mix"] = time.monotonic() - t
    got = np.empty_like(state)
    cl.enqueue_copy(queue, got, d_state)
    ok &= bool(np.array_equal(got[:64], int_mix_host(state[:64], launches)))
    print(f"int_mix: {launches} launches, {m} work-items, checksum {checksum(got):08x}")

    print("results ok" if ok else "results WRONG")
    print("time: " + ", ".join(f"{k} {v:.3f} s ({v / launches * 1e3:.2f} ms/launch)"
                               for k, v in times.items()), file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
