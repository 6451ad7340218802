// Runs every embedded kernel once on tiny shapes, for Oclgrind's checks (memory errors, data races,
// uninitialised reads): `oclgrind --check-api --data-races --uninitialized --log LOG
// clprobe_kernel_hygiene`, then LOG must be empty. The shapes keep each kernel's host contract
// (divisibility, sizes) exactly as the probes do, only much smaller, so Oclgrind's simulation
// stays fast. When you add a kernel, add a run here too.
#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cl/cl_error.hpp"
#include "cl/device_catalog.hpp"
#include "cl/device_query.hpp"
#include "cl/device_session.hpp"
#include "cl/kernel_args.hpp"
#include "cl/kernel_sources.hpp"
#include "glm/glm_device.hpp"
#include "kernel/int_mix.hpp"
#include "runtime/probe.hpp"

using namespace clprobe;

namespace {

void run(DeviceSession& s, cl::Kernel& k, std::size_t global, std::size_t local) {
    s.queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(global), cl::NDRange(local));
    s.queue().finish();
}

void bandwidth_kernels(DeviceSession& s) {
    constexpr std::size_t local = 4, groups = 2, items = local * groups;
    constexpr cl_uint per_item = 4;  // the read kernels unroll by 4
    const std::size_t max_floats = items * per_item * 16;
    std::vector<float> init(max_floats);
    for (std::size_t i = 0; i < init.size(); ++i)
        init[i] = static_cast<float>(i & 7);
    cl::Buffer a(s.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, max_floats * sizeof(float), init.data());
    cl::Buffer b(s.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, max_floats * sizeof(float), init.data());
    cl::Buffer sums(s.context(), CL_MEM_READ_WRITE, items * 16 * sizeof(float));
    for (const char* pattern : {"interleaved", "chunked"})
        for (int w : {1, 2, 4, 8, 16}) {
            cl::Kernel read = s.kernels().kernel("peak/bandwidth.cl", fmt::format("read_{}_v{}", pattern, w).c_str());
            read.setArg(0, a);
            read.setArg(1, sums);
            read.setArg(2, per_item);
            run(s, read, items, local);
            cl::Kernel write = s.kernels().kernel("peak/bandwidth.cl", fmt::format("write_{}_v{}", pattern, w).c_str());
            write.setArg(0, b);
            write.setArg(1, per_item);
            write.setArg(2, 1.0f);
            run(s, write, items, local);
            cl::Kernel copy = s.kernels().kernel("peak/bandwidth.cl", fmt::format("copy_{}_v{}", pattern, w).c_str());
            copy.setArg(0, a);
            copy.setArg(1, b);
            copy.setArg(2, per_item);
            run(s, copy, items, local);
        }
}

// kernel.memory_levels: both shapes, two passes, as the probe cuts its slices (per_item a
// multiple of the kernels' unroll by 8).
void memory_levels_kernels(DeviceSession& s) {
    constexpr std::size_t local = 4, groups = 2, items = local * groups;
    constexpr cl_uint per_item = 8, repeats = 2;
    std::vector<cl_uint> init(items * per_item * 16);
    for (std::size_t i = 0; i < init.size(); ++i)
        init[i] = static_cast<cl_uint>(i);
    cl::Buffer in(s.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, init.size() * sizeof(cl_uint), init.data());
    cl::Buffer out(s.context(), CL_MEM_WRITE_ONLY, items * 16 * sizeof(cl_uint));
    for (const char* name : {"levels_chunked", "levels_interleaved"}) {
        cl::Kernel k = s.kernels().kernel("peak/memory_levels.cl", name);
        k.setArg(0, in);
        k.setArg(1, out);
        k.setArg(2, per_item);
        k.setArg(3, repeats);
        run(s, k, items, local);
    }
}

void compute_kernels(DeviceSession& s, const char* options, std::size_t element_bytes) {
    constexpr std::size_t local = 4, items = 8;
    cl::Buffer out(s.context(), CL_MEM_WRITE_ONLY, items * 16 * element_bytes);
    // Every fma_v<W>_c<CHAINS> shape the file defines, as the program lists them, so a shape added
    // there is checked here too.
    const std::string names =
        s.kernels().program("peak/compute.cl", options).program.getInfo<CL_PROGRAM_KERNEL_NAMES>();
    for (std::size_t begin = 0; begin < names.size();) {
        const std::size_t end = std::min(names.find(';', begin), names.size());
        cl::Kernel k = s.kernels().kernel("peak/compute.cl", names.substr(begin, end - begin).c_str(), options);
        begin = end + 1;
        k.setArg(0, out);
        // The probe's coefficients (b = c = 1/2: exact products, no denormals).
        if (element_bytes == 8) {
            k.setArg(1, 0.5);
            k.setArg(2, 0.5);
        } else {
            k.setArg(1, 0.5f);
            k.setArg(2, 0.5f);
        }
        k.setArg(3, cl_uint{3});
        run(s, k, items, local);
    }
}

// kernel.compute.int32's integer mix: every <mix>_v<W>_c<CHAINS> shape the file defines, with the
// probe's arguments.
void int_compute_kernels(DeviceSession& s) {
    constexpr std::size_t local = 4, items = 8;
    cl::Buffer out(s.context(), CL_MEM_WRITE_ONLY, items * 16 * sizeof(cl_uint));
    const std::string names = s.kernels().program("peak/int32.cl").program.getInfo<CL_PROGRAM_KERNEL_NAMES>();
    for (std::size_t begin = 0; begin < names.size();) {
        const std::size_t end = std::min(names.find(';', begin), names.size());
        cl::Kernel k = s.kernels().kernel("peak/int32.cl", names.substr(begin, end - begin).c_str());
        begin = end + 1;
        set_args(k, out, cl_uint{int_mix::coef_b}, cl_uint{int_mix::coef_c}, cl_uint{3});
        run(s, k, items, local);
    }
}

// The attention kernels at head_dim 8 (one float8), 11 tokens (not a whole number of 4-row or
// 8-key tiles), two sequence-heads; decode over 13 cached keys, one group per head and split in 2.
void attention_kernels(DeviceSession& s) {
    constexpr cl_uint d = 8, seq = 11, bh = 2, kv = 13, tq = 4, tk = 8, wg = 4, splits = 2;
    const std::string options = "-D HEAD_DIM=8 -D KV_GROUP=8";
    auto filled = [&](std::size_t n, float v) {
        std::vector<float> x(n);
        for (std::size_t i = 0; i < n; ++i)
            x[i] = v * static_cast<float>((i % 7) + 1) / 7.0f;
        return cl::Buffer(s.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof(float), x.data());
    };
    const std::size_t n = std::size_t{bh} * seq * d;
    cl::Buffer q = filled(n, 0.5f), k = filled(n, -0.25f), v = filled(n, 1.0f), o = filled(n, 0.0f);
    cl::Buffer scores = filled(std::size_t{bh} * seq * seq, 0.0f);
    const float scale = 0.35f;
    for (cl_uint causal : {0u, 1u}) {
        cl::Kernel sc = s.kernels().kernel("attention/attention.cl", "attn_scores", options);
        sc.setArg(0, q), sc.setArg(1, k), sc.setArg(2, scores), sc.setArg(3, seq), sc.setArg(4, scale);
        sc.setArg(5, causal);
        s.queue().enqueueNDRangeKernel(sc, cl::NullRange, cl::NDRange(seq, seq, bh), cl::NullRange);
        cl::Kernel sm = s.kernels().kernel("attention/attention.cl", "attn_softmax", options);
        sm.setArg(0, scores), sm.setArg(1, seq), sm.setArg(2, seq * bh);
        run(s, sm, seq * bh, 1);
        cl::Kernel pv = s.kernels().kernel("attention/attention.cl", "attn_pv", options);
        pv.setArg(0, scores), pv.setArg(1, v), pv.setArg(2, o), pv.setArg(3, seq);
        s.queue().enqueueNDRangeKernel(pv, cl::NullRange, cl::NDRange(d, seq, bh), cl::NullRange);
        s.queue().finish();

        const std::vector<cl_uint> starts_h{0, seq}, lens_h{seq, seq - 4};
        const std::size_t index_bytes = 2 * sizeof(cl_uint);
        cl::Buffer starts(s.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, index_bytes,
                          const_cast<cl_uint*>(starts_h.data()));
        cl::Buffer lens(s.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, index_bytes,
                        const_cast<cl_uint*>(lens_h.data()));
        cl::Kernel f = s.kernels().kernel("attention/attention.cl", "attn_fused", options);
        f.setArg(0, q), f.setArg(1, k), f.setArg(2, v), f.setArg(3, o), f.setArg(4, starts), f.setArg(5, lens);
        f.setArg(6, seq), f.setArg(7, scale), f.setArg(8, causal), f.setArg(9, cl::Local(tk * d * 4));
        f.setArg(10, cl::Local(tk * d * 4)), f.setArg(11, tk);
        s.queue().enqueueNDRangeKernel(f, cl::NullRange, cl::NDRange(12, bh), cl::NDRange(tq, 1));
        s.queue().finish();
        // The row-block kernel: two work-items of 16 rows share each staged tile.
        cl::Kernel fr = s.kernels().kernel("attention/attention.cl", "attn_fused_rows", options + " -D ATTN_ROW_BLOCK");
        fr.setArg(0, q), fr.setArg(1, k), fr.setArg(2, v), fr.setArg(3, o), fr.setArg(4, starts), fr.setArg(5, lens);
        fr.setArg(6, seq), fr.setArg(7, scale), fr.setArg(8, causal), fr.setArg(9, cl::Local(tk * d * 4));
        fr.setArg(10, cl::Local(tk * d * 4)), fr.setArg(11, tk);
        s.queue().enqueueNDRangeKernel(fr, cl::NullRange, cl::NDRange(2, bh), cl::NDRange(2, 1));
        s.queue().finish();
    }

    const std::size_t cache = std::size_t{bh} * kv * d;
    cl::Buffer kc = filled(cache, 0.5f), vc = filled(cache, -1.0f), scales = filled(cache / 8, 0.01f);
    std::vector<cl_char> i8(cache);
    for (std::size_t i = 0; i < cache; ++i)
        i8[i] = static_cast<cl_char>(static_cast<int>(i % 255) - 127);
    cl::Buffer kq(s.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, cache, i8.data());
    cl::Buffer vq(s.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, cache, i8.data());
    cl::Buffer qd = filled(std::size_t{bh} * d, 0.3f), od = filled(std::size_t{bh} * d, 0.0f);
    cl::Buffer part = filled(std::size_t{bh} * splits * (d + 2), 0.0f);
    for (const char* name : {"attn_decode_f32", "attn_decode_i8"})
        for (cl_uint n : {1u, splits}) {
            const bool int8 = std::string(name) == "attn_decode_i8";
            cl::Kernel dk = s.kernels().kernel("attention/attention.cl", name, options);
            dk.setArg(0, qd), dk.setArg(1, int8 ? kq : kc), dk.setArg(2, int8 ? vq : vc), dk.setArg(3, scales);
            dk.setArg(4, scales), dk.setArg(5, od), dk.setArg(6, part), dk.setArg(7, kv);
            dk.setArg(8, (kv + n - 1) / n);
            dk.setArg(9, scale), dk.setArg(10, cl::Local(wg * (d + 3) * 4));  // LOCAL_STRIDE floats per item
            s.queue().enqueueNDRangeKernel(dk, cl::NullRange, cl::NDRange(wg * n, bh), cl::NDRange(wg, 1));
            if (n > 1) {
                cl::Kernel m = s.kernels().kernel("attention/attention.cl", "attn_decode_merge", options);
                m.setArg(0, part), m.setArg(1, od), m.setArg(2, n);
                s.queue().enqueueNDRangeKernel(m, cl::NullRange, cl::NDRange(d, bh), cl::NullRange);
            }
            s.queue().finish();
        }
}

// The transfer layer's kernels: the overlap kernel on 8 elements, a few rounds, and both copy kernels.
void transfer_kernels(DeviceSession& s) {
    constexpr std::size_t n = 8;
    std::vector<float> init(n, 1.0f);
    cl::Buffer in(s.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof(float), init.data());
    cl::Buffer out(s.context(), CL_MEM_READ_WRITE, n * sizeof(float));
    cl::Kernel k = s.kernels().kernel("transfer/overlap.cl", "chain");
    k.setArg(0, in), k.setArg(1, out), k.setArg(2, cl_uint{3}), k.setArg(3, 1.0f), k.setArg(4, 0.5f);
    run(s, k, n, 4);
    // The copy kernels with work-items past the end, as the probe's rounded-up sizes have them:
    // chunked, 5 vectors of 64 bytes in chunks of 2 over 3 items; interleaved, 13 vectors of 16
    // bytes, 2 per item in 2 groups of 4.
    std::vector<cl_uint> words(5 * 16, 7u);
    cl::Buffer src(s.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, words.size() * 4, words.data());
    cl::Buffer dst(s.context(), CL_MEM_READ_WRITE, words.size() * 4);
    for (const char* name : {"copy_chunked", "copy_chunked_stream"}) {
        cl::Kernel chunked = s.kernels().kernel("transfer/copy.cl", name);
        chunked.setArg(0, src), chunked.setArg(1, dst), chunked.setArg(2, cl_ulong{5}), chunked.setArg(3, cl_uint{2});
        run(s, chunked, 3, 1);
    }
    cl::Kernel interleaved = s.kernels().kernel("transfer/copy.cl", "copy_interleaved");
    interleaved.setArg(0, src), interleaved.setArg(1, dst), interleaved.setArg(2, cl_ulong{13});
    interleaved.setArg(3, cl_uint{2});
    run(s, interleaved, 8, 4);
}

// The GLM kernels through the probes' own launch code (probes/glm/glm_device), so the host
// contract checked here is the one the probes use: 37 rows (not a multiple of any work-group or
// vector width), p = 5 and p = 1, work-groups of 4; every variant, the CSR kernel and a Newton pass.
void glm_kernels(DeviceSession& s) {
    using namespace glm;
    for (std::uint32_t p : {5u, 1u}) {
        const Dataset d = make_dataset(37, p, Family::logistic, 3);
        const auto beta = evaluation_beta(d);
        const std::size_t groups = gradient_groups(s.info());
        const CsrMatrix m = make_csr(37, p, 0.4, 3);
        DeviceData csr = upload_csr(s, m, d.y, false, beta, groups);
        for (bool fp64 : {false, true}) {
            if (fp64 && !s.info().fp64) continue;
            DeviceData row = upload_dense(s, d, Layout::row, fp64, beta, groups);
            DeviceData col = upload_dense(s, d, Layout::col, fp64, beta, groups);
            for (Layout layout : {Layout::row, Layout::col})
                for (int w : {1, 2, 4, 8, 16})
                    for (int variant = 0; variant < 3; ++variant) {
                        GradientVariant v;
                        v.layout = layout;
                        v.vector = w;
                        v.wg = 4;
                        v.fp64 = fp64;
                        v.passes = variant == 1 ? 2 : 1;
                        v.reduction = variant == 2 ? Reduction::atomic : Reduction::local;
                        if (fp64 && v.reduction == Reduction::atomic && w != 8) continue;
                        try {
                            auto launches = gradient_launches(s, layout == Layout::row ? row : col, v, Family::logistic,
                                                              1.0 / 37, 1e-4);
                            enqueue_launches(s.queue(), launches);
                            s.queue().finish();
                        } catch (const ProbeUnsupported&) {  // e.g. no 64-bit atomics
                        }
                    }
            if (!fp64) {
                GradientVariant v;
                v.format = Format::csr;
                v.wg = 4;
                auto launches = gradient_launches(s, csr, v, Family::poisson, 1.0 / 37, 1e-4);
                enqueue_launches(s.queue(), launches);
                s.queue().finish();
            }
            NewtonPass pass(s, row, Family::poisson);
            pass.enqueue();
            s.queue().finish();
            pass.read_sums();
        }
        // X in fp16, bf16 and int8 (kernels/glm/storage.cl): every vector width, and a Newton pass.
        for (const Storage storage : reduced_storages) {
            DeviceData stored = upload_stored(s, d, encode(d, storage), beta, groups);
            for (int w : {1, 4, 8, 16}) {
                GradientVariant v;
                v.storage = storage;
                v.vector = w;
                v.wg = 4;
                auto launches = gradient_launches(s, stored, v, Family::logistic, 1.0 / 37, 1e-4);
                enqueue_launches(s.queue(), launches);
                s.queue().finish();
            }
            NewtonPass pass(s, stored, Family::poisson);
            pass.enqueue();
            s.queue().finish();
            pass.read_sums();
        }
    }
}

// The drift reference (src/runtime/drift_monitor.cpp): FMA chains, the fill and both reads.
void drift_kernels(DeviceSession& s) {
    constexpr std::size_t local = 4, items = 8;
    constexpr cl_uint per_item = 4;                                                // the reads unroll by 4
    cl::Buffer out(s.context(), CL_MEM_READ_WRITE, items * 16 * sizeof(cl_uint));  // a float8 or uint16 per item
    // Initialised from the host as well as by drift_fill: Oclgrind 21.10's uninitialised-value
    // checker flagged the reads of everything past the first 16 filled values (the monitor checks
    // the filled buffer's sum bit for bit on the real device).
    std::vector<cl_uint> init(items * per_item * 16, 1u);
    cl::Buffer data(s.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, init.size() * sizeof(cl_uint), init.data());
    cl::Kernel fma = s.kernels().kernel("drift/reference.cl", "drift_fma");
    set_args(fma, out, 0.5f, 0.5f, cl_uint{3});
    run(s, fma, items, local);
    cl::Kernel fill = s.kernels().kernel("drift/reference.cl", "drift_fill");
    set_args(fill, data);
    run(s, fill, items * per_item * 16, local);
    for (const char* name : {"drift_read_chunked", "drift_read_chunked_wide", "drift_read_interleaved"}) {
        cl::Kernel read = s.kernels().kernel("drift/reference.cl", name);
        set_args(read, data, out, per_item);
        run(s, read, items, local);
    }
}

}  // namespace

int main() {
    try {
        DeviceCatalog cat = enumerate_devices();
        if (cat.error || cat.listings.empty()) {
            std::fprintf(stderr, "kernel_hygiene: no OpenCL device\n");
            return 2;
        }
        const auto& l = cat.listings.front();
        // CLPROBE_KERNEL_DIR runs edited kernels (and lets a test show that a planted bug is caught).
        const char* dir = std::getenv("CLPROBE_KERNEL_DIR");
        DeviceSession s(cat.devices.front(), query_device_info(cat.devices.front(), l, cat.platforms.front()),
                        dir ? KernelSources::from_directory(dir) : KernelSources::embedded(), CacheConfig{false, {}});
        std::printf("kernel_hygiene on %s\n", s.info().name.c_str());
        // CLPROBE_HYGIENE_SET=glm runs only the GLM kernels, =rest everything else: Oclgrind 21.10's
        // uninitialised-value checker aborts (Uninitialized.cpp:1805) and misreports fp64 exp() on
        // the GLM kernels, so they are checked in a run of their own without that checker.
        const char* set_env = std::getenv("CLPROBE_HYGIENE_SET");
        const std::string set = set_env ? set_env : "";
        if (set != "glm") {
            cl::Kernel empty = s.kernels().kernel("peak/launch.cl", "empty");
            run(s, empty, 1, 1);
            bandwidth_kernels(s);
            memory_levels_kernels(s);
            compute_kernels(s, "-D REAL=float", 4);
            if (s.info().fp64) compute_kernels(s, "-D REAL=double -D REAL_IS_DOUBLE", 8);
            int_compute_kernels(s);
            transfer_kernels(s);
            attention_kernels(s);
            drift_kernels(s);
        }
        if (set != "rest") glm_kernels(s);
        std::printf("kernel_hygiene: every kernel ran\n");
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kernel_hygiene: %s\n", e.what());
        return 1;
    }
}
