// Scaled dot-product attention, prefill and decode (probes/attention/).
// Build options: -D HEAD_DIM=<multiple of 8> (private arrays and unrolled float8 loops need it at
// compile time) and -D KV_GROUP (int8 values per scale, dividing HEAD_DIM). With -D ATTN_FP16 the
// program holds only the fp16 KV-cache decode kernel: a separate program, because building it is
// how the probes find out whether half8 works on this driver. With -D ATTN_ROW_BLOCK it holds
// only attn_fused_rows, whose private arrays (tens of KiB per work-item) a GPU compiler may
// refuse: a failed build then costs that kernel's tiles, not the whole attention workload.
//
// Layout: every sequence-head (b, h) is a block of rows of HEAD_DIM floats; starts[bh] is the row
// where its token 0 sits and lens[bh] its length, so one kernel serves the padded
// [batch, heads, seq, head_dim] layout and packed variable-length batches alike.
#ifndef HEAD_DIM
#define HEAD_DIM 64
#endif
#ifndef KV_GROUP
#define KV_GROUP 32  // int8 values sharing one scale (probes/attention/kv_quant.cpp, kv_group_for)
#endif
#define NV (HEAD_DIM / 8)
#define MAX_TILE_K 128  // keys per fused tile at most (probes/attention/attention_device.cpp)

// Horizontal max and sum through private memory rather than vector swizzles: the compiler turns
// them into the same shuffles, and Oclgrind's uninitialised-value checker (21.10) crashes on
// swizzles of these vectors.
inline float hmax8(float8 v) {
    float t[8];
    vstore8(v, 0, t);
    return fmax(fmax(fmax(t[0], t[1]), fmax(t[2], t[3])), fmax(fmax(t[4], t[5]), fmax(t[6], t[7])));
}
inline float hsum8(float8 v) {
    float t[8];
    vstore8(v, 0, t);
    return ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
}

#if !defined(ATTN_FP16) && !defined(ATTN_ROW_BLOCK)

// ---------------------------------------------------------------------------------------------
// Unfused prefill: the way attention is first written. Three kernels; the score matrix
// S[bh][i][j] (seq x seq per head) goes through global memory twice.

// One work-item per score: gid0 = key j, gid1 = query i, gid2 = bh.
__kernel void attn_scores(__global const float* q, __global const float* k, __global float* s, uint seq,
                          float scale, uint causal) {
    const uint j = get_global_id(0), i = get_global_id(1), bh = get_global_id(2);
    if (i >= seq || j >= seq) return;
    const size_t base = (size_t)bh * seq * HEAD_DIM;
    __global const float* qi = q + base + (size_t)i * HEAD_DIM;
    __global const float* kj = k + base + (size_t)j * HEAD_DIM;
    float8 acc = 0.0f;
    for (uint d = 0; d < NV; ++d)
        acc = fma(vload8(d, qi), vload8(d, kj), acc);
    const float v = hsum8(acc) * scale;
    s[((size_t)bh * seq + i) * seq + j] = (causal && j > i) ? -INFINITY : v;
}

// One work-item per row of scores, softmax in place.
__kernel void attn_softmax(__global float* s, uint seq, uint rows) {
    const uint r = get_global_id(0);
    if (r >= rows) return;
    __global float* row = s + (size_t)r * seq;
    float m = -INFINITY;
    for (uint j = 0; j < seq; ++j)
        m = fmax(m, row[j]);
    float sum = 0.0f;
    for (uint j = 0; j < seq; ++j) {
        const float e = exp(row[j] - m);
        row[j] = e;
        sum += e;
    }
    const float inv = 1.0f / sum;
    for (uint j = 0; j < seq; ++j)
        row[j] *= inv;
}

// One work-item per output element: gid0 = d, gid1 = query i, gid2 = bh.
__kernel void attn_pv(__global const float* p, __global const float* v, __global float* o, uint seq) {
    const uint d = get_global_id(0), i = get_global_id(1), bh = get_global_id(2);
    if (i >= seq || d >= HEAD_DIM) return;
    __global const float* pi = p + ((size_t)bh * seq + i) * seq;
    __global const float* vb = v + (size_t)bh * seq * HEAD_DIM + d;
    float acc = 0.0f;
    for (uint j = 0; j < seq; ++j)
        acc = fma(pi[j], vb[(size_t)j * HEAD_DIM], acc);
    o[((size_t)bh * seq + i) * HEAD_DIM + d] = acc;
}

// ---------------------------------------------------------------------------------------------
// Fused prefill (flash attention): one work-item per query row, a work-group per tile of rows.
// K and V tiles of tile_k keys are staged in local memory, K transposed in blocks of eight keys
// ([key / 8][dim][key % 8]) so one float8 load holds eight keys' values of one dimension; scores
// are computed eight keys at a time as float8 without any horizontal sum, then folded into the
// running output with an online softmax. The score matrix is never written. Written for CPU
// devices as much as GPUs: the vectors run across head_dim and keys (PoCL does not vectorise
// across work-items around loops), and the running output stays in registers. tile_k must be a
// multiple of 8 and at most MAX_TILE_K.
//
// pad_to > lens[bh] makes the group compute padded rows and keys (masked), as a padded batch does.

// The eight keys' contributions to the running output; unrolled so the output stays in registers.
#define PV_LANE(lane, pv)                                                 \
    {                                                                     \
        __local const float* vrow = vs + (c + lane) * HEAD_DIM;           \
        const float8 pb = (float8)(pv);                                   \
        _Pragma("unroll") for (uint w = 0; w < NV; ++w) a[w] = fma(pb, vload8(w, vrow), a[w]); \
    }

__kernel void attn_fused(__global const float* q, __global const float* k, __global const float* v,
                         __global float* o, __global const uint* starts, __global const uint* lens, uint pad_to,
                         float scale, uint causal, __local float* kt, __local float* vs, uint tile_k) {
    const uint lid = get_local_id(0), tq = get_local_size(0);
    const uint row0 = get_group_id(0) * tq;
    const uint bh = get_global_id(1);
    const uint len = lens[bh];
    const uint extent = max(len, pad_to);
    if (row0 >= extent) return;  // uniform across the group: no barrier is skipped by part of it
    const uint i = row0 + lid;
    const size_t base = (size_t)starts[bh] * HEAD_DIM;

    __global const float* qrow = q + base + (size_t)min(i, extent - 1) * HEAD_DIM;
    float8 acc[NV];
    for (uint w = 0; w < NV; ++w)
        acc[w] = 0.0f;
    float m = -INFINITY, l = 0.0f;

    const uint kend = causal ? min(extent, row0 + tq) : extent;
    for (uint k0 = 0; k0 < kend; k0 += tile_k) {
        const uint kn = min(tile_k, kend - k0);
        barrier(CLK_LOCAL_MEM_FENCE);  // the previous tile is no longer read
        // Eight values per step: a row piece of V as is, of K scattered into its transposed block.
        for (uint e = lid; e < tile_k * NV; e += tq) {
            const uint kk = e / NV, d = (e % NV) * 8;
            const size_t g = base + (size_t)(k0 + kk) * HEAD_DIM + d;
            float kv[8];
            vstore8(kk < kn ? vload8(0, k + g) : (float8)(0.0f), 0, kv);
            const float8 vv = kk < kn ? vload8(0, v + g) : (float8)(0.0f);
            __local float* kd = kt + (kk / 8) * (8 * HEAD_DIM) + d * 8 + kk % 8;
            kd[0] = kv[0];
            kd[8] = kv[1];
            kd[16] = kv[2];
            kd[24] = kv[3];
            kd[32] = kv[4];
            kd[40] = kv[5];
            kd[48] = kv[6];
            kd[56] = kv[7];
            vstore8(vv, 0, vs + kk * HEAD_DIM + d);
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        // The running state is copied into variables local to this barrier-free stretch: CPU
        // drivers keep values that live across a barrier in memory, these stay in registers.
        float8 a[NV];
#pragma unroll
        for (uint w = 0; w < NV; ++w)
            a[w] = acc[w];
        float mr = m, lr = l;
        // The query row in private memory, pre-scaled. Re-read for every tile (a few hundred
        // bytes from cache) because a CPU driver would otherwise keep it, and the broadcasts it
        // derives from it, in per-work-item memory across the barrier: far outside L1.
        float qr[HEAD_DIM];
#pragma unroll
        for (uint d = 0; d < HEAD_DIM; ++d)
            qr[d] = qrow[d] * scale;
        // Scores of the whole tile first, so the running output is rescaled (a scalar exp on the
        // critical path) once per tile rather than once per eight keys.
        float8 sc[MAX_TILE_K / 8];
        float tmax = -INFINITY;
        for (uint c = 0; c < kn; c += 8) {
            // Four partial sums: one chain of dependent FMAs would wait on the FMA latency.
            float8 s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
            __local const float* kb = kt + c * HEAD_DIM;  // these 8 keys: [dim][key] contiguous
#pragma unroll
            for (uint d = 0; d < HEAD_DIM; d += 4) {
                s0 = fma((float8)(qr[d]), vload8(d, kb), s0);
                s1 = fma((float8)(qr[d + 1]), vload8(d + 1, kb), s1);
                s2 = fma((float8)(qr[d + 2]), vload8(d + 2, kb), s2);
                s3 = fma((float8)(qr[d + 3]), vload8(d + 3, kb), s3);
            }
            // Masked keys: past this tile, past the sequence, or in the future of row i.
            const int8 key = (int8)(0, 1, 2, 3, 4, 5, 6, 7) + (int)(k0 + c);
            int8 masked = key >= (int)(k0 + kn) || key >= (int)len;
            if (causal) masked |= key > (int)i;
            const float8 s = select((s0 + s1) + (s2 + s3), (float8)(-INFINITY), masked);
            sc[c / 8] = s;
            tmax = fmax(tmax, hmax8(s));
        }
        const float mnew = fmax(mr, tmax);
        if (mnew != -INFINITY) {  // else every key so far is masked for this row
            const float alpha = exp(mr - mnew);
            lr *= alpha;
#pragma unroll
            for (uint w = 0; w < NV; ++w)
                a[w] *= alpha;
            for (uint c = 0; c < kn; c += 8) {
                const float8 p = exp(sc[c / 8] - mnew);
                lr += hsum8(p);
                float pa[8];
                vstore8(p, 0, pa);
                PV_LANE(0, pa[0])
                PV_LANE(1, pa[1])
                PV_LANE(2, pa[2])
                PV_LANE(3, pa[3])
                PV_LANE(4, pa[4])
                PV_LANE(5, pa[5])
                PV_LANE(6, pa[6])
                PV_LANE(7, pa[7])
            }
            mr = mnew;
        }
#pragma unroll
        for (uint w = 0; w < NV; ++w)
            acc[w] = a[w];
        m = mr;
        l = lr;
    }
    if (i < len) {
        const float inv = 1.0f / l;
        __global float* orow = o + base + (size_t)i * HEAD_DIM;
        for (uint w = 0; w < NV; ++w)
            vstore8(acc[w] * inv, w, orow);
    }
}

#endif  // !ATTN_FP16 && !ATTN_ROW_BLOCK

#ifdef ATTN_ROW_BLOCK
// ---------------------------------------------------------------------------------------------
// Fused prefill for CPU devices: the same algorithm, each work-item holding a block of
// ROW_BLOCK query rows as the lanes of two float8 vectors (a work-group covers
// ROW_BLOCK * local size rows). A vector of eight rows times one broadcast key value is an outer
// product, so QK^T and PV become register-blocked matrix products: every K or V value loaded
// from the staged tile feeds sixteen rows, where attn_fused loads it once per row and its loads,
// not its FMAs, bound it on a CPU core. Softmax runs across the row lanes without any horizontal
// operation. Same arguments and local tiles as attn_fused; rows beyond a sequence are clamped
// reads whose results are not written.
#define ROW_BLOCK 16

// 2^x for the softmax weights: the builtin exp costs several times the FMAs each score needs
// on CPU devices. Round to the nearest integer n, 2^f on [-0.5, 0.5] by its degree-6 Taylor
// polynomial in f ln 2 (relative error about 1e-7, below the fp32 rounding of the sums it
// feeds), then add n to the exponent. Masked scores (-inf) and anything below 2^-126 give 0.
inline float8 exp2_softmax(float8 x) {
    const float8 xc = fmax(x, (float8)(-126.0f));
    const float8 n = rint(xc);
    const float8 f = (xc - n) * 0.6931471805599453f;
    float8 p = (float8)(1.0f / 720.0f);
    p = fma(p, f, (float8)(1.0f / 120.0f));
    p = fma(p, f, (float8)(1.0f / 24.0f));
    p = fma(p, f, (float8)(1.0f / 6.0f));
    p = fma(p, f, (float8)(0.5f));
    p = fma(p, f, (float8)(1.0f));
    p = fma(p, f, (float8)(1.0f));
    const float8 r = as_float8(as_int8(p) + (convert_int8(n) << 23));
    return select(r, (float8)(0.0f), x < (float8)(-126.0f));
}

// Scores of key `key` for eight rows, -inf where the key is past the tile or the sequence, or
// (causal) after the row. Vector comparisons: their true is -1, which select needs.
inline float8 mask_key(float8 s, int key, int8 rows, int tile_end, int len, uint causal) {
    const int8 kv = (int8)(key);
    int8 masked = (kv >= (int8)(tile_end)) | (kv >= (int8)(len));
    if (causal) masked |= kv > rows;
    return select(s, (float8)(-INFINITY), masked);
}

__kernel void attn_fused_rows(__global const float* q, __global const float* k, __global const float* v,
                              __global float* o, __global const uint* starts, __global const uint* lens, uint pad_to,
                              float scale, uint causal, __local float* ks, __local float* vs, uint tile_k) {
    const uint lid = get_local_id(0), items = get_local_size(0);
    const uint row0 = get_group_id(0) * items * ROW_BLOCK;
    const uint bh = get_global_id(1);
    const uint len = lens[bh];
    const uint extent = max(len, pad_to);
    if (row0 >= extent) return;  // uniform across the group: no barrier is skipped by part of it
    const uint r0 = row0 + lid * ROW_BLOCK;
    const size_t base = (size_t)starts[bh] * HEAD_DIM;

    // Q transposed ([dim][row]) and pre-scaled into the base-2 domain (e^s = 2^(s log2 e)); the
    // output transposed alike. Both are read and written as float8 of rows.
    const float qscale = scale * 1.4426950408889634f;
    float qt[HEAD_DIM * ROW_BLOCK], ot[HEAD_DIM * ROW_BLOCK];
    for (uint r = 0; r < ROW_BLOCK; ++r) {
        __global const float* qrow = q + base + (size_t)min(r0 + r, extent - 1) * HEAD_DIM;
        for (uint d = 0; d < HEAD_DIM; ++d) {
            qt[d * ROW_BLOCK + r] = qrow[d] * qscale;
            ot[d * ROW_BLOCK + r] = 0.0f;
        }
    }
    const int8 rows_a = (int8)(0, 1, 2, 3, 4, 5, 6, 7) + (int)r0, rows_b = rows_a + 8;
    float8 ma = (float8)(-INFINITY), mb = (float8)(-INFINITY), la = 0.0f, lb = 0.0f;

    const uint kend = causal ? min(extent, row0 + items * ROW_BLOCK) : extent;
    for (uint k0 = 0; k0 < kend; k0 += tile_k) {
        const uint kn = min(tile_k, kend - k0);
        barrier(CLK_LOCAL_MEM_FENCE);  // the previous tile is no longer read
        for (uint e = lid; e < tile_k * NV; e += items) {
            const bool in = e / NV < kn;
            vstore8(in ? vload8(e, k + base + (size_t)k0 * HEAD_DIM) : (float8)(0.0f), e, ks);
            vstore8(in ? vload8(e, v + base + (size_t)k0 * HEAD_DIM) : (float8)(0.0f), e, vs);
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        // Scores of the whole tile, four keys at a time: eight accumulators (both FMA pipes
        // busy despite their latency) for two Q loads and four broadcasts per dimension.
        float8 sa[MAX_TILE_K], sb[MAX_TILE_K];
        float8 ta = (float8)(-INFINITY), tb = (float8)(-INFINITY);
        const uint tile_end = k0 + kn;
        // Only key blocks reaching past the sequence, the tile or the first row's diagonal need a mask.
        const uint clear_end = min(min(tile_end, len), causal ? r0 + 1 : tile_end);
        for (uint j = 0; j < kn; j += 4) {
            float8 a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, b0 = 0.0f, b1 = 0.0f, b2 = 0.0f, b3 = 0.0f;
            __local const float* kj = ks + j * HEAD_DIM;
            for (uint d = 0; d < HEAD_DIM; ++d) {
                const float8 qa = vload8(0, qt + d * ROW_BLOCK), qb = vload8(1, qt + d * ROW_BLOCK);
                float8 kb = (float8)(kj[d]);
                a0 = fma(qa, kb, a0);
                b0 = fma(qb, kb, b0);
                kb = (float8)(kj[HEAD_DIM + d]);
                a1 = fma(qa, kb, a1);
                b1 = fma(qb, kb, b1);
                kb = (float8)(kj[2 * HEAD_DIM + d]);
                a2 = fma(qa, kb, a2);
                b2 = fma(qb, kb, b2);
                kb = (float8)(kj[3 * HEAD_DIM + d]);
                a3 = fma(qa, kb, a3);
                b3 = fma(qb, kb, b3);
            }
            const int key = (int)(k0 + j);
            if (key + 4 > (int)clear_end) {
                a0 = mask_key(a0, key, rows_a, tile_end, len, causal);
                b0 = mask_key(b0, key, rows_b, tile_end, len, causal);
                a1 = mask_key(a1, key + 1, rows_a, tile_end, len, causal);
                b1 = mask_key(b1, key + 1, rows_b, tile_end, len, causal);
                a2 = mask_key(a2, key + 2, rows_a, tile_end, len, causal);
                b2 = mask_key(b2, key + 2, rows_b, tile_end, len, causal);
                a3 = mask_key(a3, key + 3, rows_a, tile_end, len, causal);
                b3 = mask_key(b3, key + 3, rows_b, tile_end, len, causal);
            }
            sa[j] = a0;
            sa[j + 1] = a1;
            sa[j + 2] = a2;
            sa[j + 3] = a3;
            sb[j] = b0;
            sb[j + 1] = b1;
            sb[j + 2] = b2;
            sb[j + 3] = b3;
            ta = fmax(ta, fmax(fmax(a0, a1), fmax(a2, a3)));
            tb = fmax(tb, fmax(fmax(b0, b1), fmax(b2, b3)));
        }

        // Online softmax per row lane. A row whose keys so far are all masked keeps max -inf:
        // nothing accumulated, nothing to rescale.
        const float8 na = fmax(ma, ta), nb = fmax(mb, tb);
        const float8 alpha_a = select(exp2_softmax(ma - na), (float8)(1.0f), na == (float8)(-INFINITY));
        const float8 alpha_b = select(exp2_softmax(mb - nb), (float8)(1.0f), nb == (float8)(-INFINITY));
        la *= alpha_a;
        lb *= alpha_b;
        for (uint d = 0; d < HEAD_DIM; ++d) {
            vstore8(vload8(0, ot + d * ROW_BLOCK) * alpha_a, 0, ot + d * ROW_BLOCK);
            vstore8(vload8(1, ot + d * ROW_BLOCK) * alpha_b, 1, ot + d * ROW_BLOCK);
        }
        for (uint j = 0; j < kn; ++j) {
            const float8 pa = exp2_softmax(sa[j] - na), pb = exp2_softmax(sb[j] - nb);
            sa[j] = pa;
            sb[j] = pb;
            la += pa;
            lb += pb;
        }
        ma = na;
        mb = nb;

        // PV: four output dimensions for sixteen rows in eight accumulators, over every key of the tile.
        for (uint d = 0; d < HEAD_DIM; d += 4) {
            __local const float* vd = vs + d;
            float8 a0 = vload8(0, ot + d * ROW_BLOCK), b0 = vload8(1, ot + d * ROW_BLOCK);
            float8 a1 = vload8(0, ot + (d + 1) * ROW_BLOCK), b1 = vload8(1, ot + (d + 1) * ROW_BLOCK);
            float8 a2 = vload8(0, ot + (d + 2) * ROW_BLOCK), b2 = vload8(1, ot + (d + 2) * ROW_BLOCK);
            float8 a3 = vload8(0, ot + (d + 3) * ROW_BLOCK), b3 = vload8(1, ot + (d + 3) * ROW_BLOCK);
            for (uint j = 0; j < kn; ++j) {
                const float8 pa = sa[j], pb = sb[j];
                __local const float* vj = vd + j * HEAD_DIM;
                float8 vb = (float8)(vj[0]);
                a0 = fma(pa, vb, a0);
                b0 = fma(pb, vb, b0);
                vb = (float8)(vj[1]);
                a1 = fma(pa, vb, a1);
                b1 = fma(pb, vb, b1);
                vb = (float8)(vj[2]);
                a2 = fma(pa, vb, a2);
                b2 = fma(pb, vb, b2);
                vb = (float8)(vj[3]);
                a3 = fma(pa, vb, a3);
                b3 = fma(pb, vb, b3);
            }
            vstore8(a0, 0, ot + d * ROW_BLOCK);
            vstore8(b0, 1, ot + d * ROW_BLOCK);
            vstore8(a1, 0, ot + (d + 1) * ROW_BLOCK);
            vstore8(b1, 1, ot + (d + 1) * ROW_BLOCK);
            vstore8(a2, 0, ot + (d + 2) * ROW_BLOCK);
            vstore8(b2, 1, ot + (d + 2) * ROW_BLOCK);
            vstore8(a3, 0, ot + (d + 3) * ROW_BLOCK);
            vstore8(b3, 1, ot + (d + 3) * ROW_BLOCK);
        }
    }
    float lsum[ROW_BLOCK];
    vstore8(la, 0, lsum);
    vstore8(lb, 1, lsum);
    for (uint r = 0; r < ROW_BLOCK && r0 + r < len; ++r) {
        __global float* orow = o + base + (size_t)(r0 + r) * HEAD_DIM;
        const float inv = 1.0f / lsum[r];
        for (uint d = 0; d < HEAD_DIM; ++d)
            orow[d] = ot[d * ROW_BLOCK + r] * inv;
    }
}
#endif  // ATTN_ROW_BLOCK


// ---------------------------------------------------------------------------------------------
// Decode: one query per sequence-head against a KV cache [bh][kv_len][HEAD_DIM]. Work-group
// `split` of head bh covers keys [split*chunk, split*chunk + chunk); each work-item streams a
// contiguous run of them (CPU devices prefetch sequential streams) with its own online softmax,
// then the group merges its work-items through local memory. With one split the group writes the
// normalised output; with several it writes (output, max, sum) partials for attn_decode_merge.
// red holds LOCAL_STRIDE floats per work-item (output, max, sum, merge weight); partials
// RED_STRIDE (output, max, sum). Every precision has the same arguments (the
// scales are read by the int8 kernel only), so the host drives them alike.
#define RED_STRIDE (HEAD_DIM + 2)
#define LOCAL_STRIDE (HEAD_DIM + 3)

#define DECODE_KERNEL(NAME, T, LOAD_K, LOAD_V)                                                                         \
    __kernel void NAME(__global const float* q, __global const T* k, __global const T* v,                              \
                       __global const float* kscale, __global const float* vscale, __global float* out,                \
                       __global float* part, uint kv_len, uint chunk, float scale, __local float* red) {               \
        const uint lid = get_local_id(0), wg = get_local_size(0);                                                      \
        const uint split = get_group_id(0), splits = get_num_groups(0), bh = get_global_id(1);                         \
        const uint first = min(kv_len, split * chunk), last = min(kv_len, first + chunk);                              \
        const uint per = (last - first + wg - 1) / wg;                                                                 \
        const uint j0 = min(last, first + lid * per), j1 = min(last, j0 + per);                                        \
        float8 qv[NV], acc[NV];                                                                                        \
        for (uint w = 0; w < NV; ++w) {                                                                                \
            qv[w] = vload8(w, q + (size_t)bh * HEAD_DIM) * scale;                                                      \
            acc[w] = 0.0f;                                                                                             \
        }                                                                                                              \
        float m = -INFINITY, l = 0.0f;                                                                                 \
        /* Eight keys at a time: eight independent dot products (no chain waits on the FMA                             \
           latency), and one rescale (a scalar exp) per eight keys instead of per key. */                              \
        for (uint jb = j0; jb < j1; jb += 8) {                                                                         \
            float8 t[8];                                                                                               \
            _Pragma("unroll") for (uint u = 0; u < 8; ++u) t[u] = 0.0f;                                                \
            _Pragma("unroll") for (uint w = 0; w < NV; ++w) {                                                          \
                _Pragma("unroll") for (uint u = 0; u < 8; ++u) {                                                       \
                    const size_t row = (size_t)bh * kv_len + min(jb + u, j1 - 1);                                      \
                    t[u] = fma(qv[w], LOAD_K(row, w), t[u]);                                                           \
                }                                                                                                      \
            }                                                                                                          \
            float sc[8];                                                                                               \
            _Pragma("unroll") for (uint u = 0; u < 8; ++u) sc[u] = hsum8(t[u]);                                        \
            const int8 key = (int8)(0, 1, 2, 3, 4, 5, 6, 7) + (int)jb;                                                 \
            const float8 sv = select(vload8(0, sc), (float8)(-INFINITY), key >= (int)j1);                              \
            const float mnew = fmax(m, hmax8(sv));                                                                     \
            const float alpha = exp(m - mnew);                                                                         \
            const float8 p = exp(sv - mnew);                                                                           \
            l = l * alpha + hsum8(p);                                                                                  \
            float pa[8];                                                                                               \
            vstore8(p, 0, pa);                                                                                         \
            _Pragma("unroll") for (uint w = 0; w < NV; ++w) acc[w] *= alpha;                                           \
            _Pragma("unroll") for (uint u = 0; u < 8; ++u) {                                                           \
                const size_t row = (size_t)bh * kv_len + min(jb + u, j1 - 1);                                          \
                _Pragma("unroll") for (uint w = 0; w < NV; ++w) acc[w] = fma((float8)(pa[u]), LOAD_V(row, w), acc[w]); \
            }                                                                                                          \
            m = mnew;                                                                                                  \
        }                                                                                                              \
        /* Merge the work-items: each one's weight exp(m - max) is computed once, by itself. */                        \
        __local float* mine = red + lid * LOCAL_STRIDE;                                                                \
        for (uint w = 0; w < NV; ++w) vstore8(acc[w], w, mine);                                                        \
        mine[HEAD_DIM] = m;                                                                                            \
        mine[HEAD_DIM + 1] = l;                                                                                        \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                                  \
        float mg = -INFINITY;                                                                                          \
        for (uint t = 0; t < wg; ++t) mg = fmax(mg, red[t * LOCAL_STRIDE + HEAD_DIM]);                                 \
        mine[HEAD_DIM + 2] = m == -INFINITY ? 0.0f : exp(m - mg);                                                      \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                                  \
        float lg = 0.0f;                                                                                               \
        for (uint t = 0; t < wg; ++t)                                                                                  \
            lg += red[t * LOCAL_STRIDE + HEAD_DIM + 1] * red[t * LOCAL_STRIDE + HEAD_DIM + 2];                         \
        __global float* dst = splits == 1 ? out + (size_t)bh * HEAD_DIM                                                \
                                          : part + ((size_t)bh * splits + split) * RED_STRIDE;                         \
        const float norm = splits == 1 ? 1.0f / lg : 1.0f;                                                             \
        for (uint d = lid; d < HEAD_DIM; d += wg) {                                                                    \
            float x = 0.0f;                                                                                            \
            for (uint t = 0; t < wg; ++t) x += red[t * LOCAL_STRIDE + d] * red[t * LOCAL_STRIDE + HEAD_DIM + 2];       \
            dst[d] = x * norm;                                                                                         \
        }                                                                                                              \
        if (splits > 1 && lid == 0) {                                                                                  \
            dst[HEAD_DIM] = mg;                                                                                        \
            dst[HEAD_DIM + 1] = lg;                                                                                    \
        }                                                                                                              \
    }

#ifdef ATTN_FP16
// half8 arithmetic types need cl_khr_fp16: if this does not build, the driver cannot do fp16.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define LOAD_F16_K(row, w) convert_float8(vload8(w, k + (row) * HEAD_DIM))
#define LOAD_F16_V(row, w) convert_float8(vload8(w, v + (row) * HEAD_DIM))
DECODE_KERNEL(attn_decode_f16, half, LOAD_F16_K, LOAD_F16_V)
#elif !defined(ATTN_ROW_BLOCK)
#define LOAD_F32_K(row, w) vload8(w, k + (row) * HEAD_DIM)
#define LOAD_F32_V(row, w) vload8(w, v + (row) * HEAD_DIM)
DECODE_KERNEL(attn_decode_f32, float, LOAD_F32_K, LOAD_F32_V)

// int8 with one float scale per KV_GROUP consecutive values of a row (symmetric quantisation).
#define GROUPS_PER_ROW (HEAD_DIM / KV_GROUP)
#define LOAD_I8(src, sc, row, w) \
    (convert_float8(vload8(w, src + (row) * HEAD_DIM)) * sc[(row) * GROUPS_PER_ROW + (w) * 8 / KV_GROUP])
#define LOAD_I8_K(row, w) LOAD_I8(k, kscale, row, w)
#define LOAD_I8_V(row, w) LOAD_I8(v, vscale, row, w)
DECODE_KERNEL(attn_decode_i8, char, LOAD_I8_K, LOAD_I8_V)

// Merges the splits of each head: gid0 = d, gid1 = bh.
__kernel void attn_decode_merge(__global const float* part, __global float* out, uint splits) {
    const uint d = get_global_id(0), bh = get_global_id(1);
    if (d >= HEAD_DIM) return;
    __global const float* pb = part + (size_t)bh * splits * RED_STRIDE;
    float mg = -INFINITY;
    for (uint s = 0; s < splits; ++s)
        mg = fmax(mg, pb[s * RED_STRIDE + HEAD_DIM]);
    float x = 0.0f, lg = 0.0f;
    for (uint s = 0; s < splits; ++s) {
        const float ms = pb[s * RED_STRIDE + HEAD_DIM];
        if (ms == -INFINITY) continue;
        const float f = exp(ms - mg);
        x += pb[s * RED_STRIDE + d] * f;
        lg += pb[s * RED_STRIDE + HEAD_DIM + 1] * f;
    }
    out[(size_t)bh * HEAD_DIM + d] = x / lg;
}
#endif
