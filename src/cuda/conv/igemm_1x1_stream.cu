/*
 * igemm_1x1_stream.cu - cuda.conv.igemm-tf32 on 1x1 layers (stride 1, no
 * padding, P % 4 == 0) as a stream through resident weights.
 *
 * A persistent block holds its 64 output channels' weights (64 x Cg,
 * rounded to TF32) in shared memory for the whole call and walks tiles of
 * 128 positions of the input, four stages of 64 channels x 128 positions,
 * three in flight (cp.async, 16 bytes a copy: P % 4 == 0 and x 16-byte
 * aligned, as for the tiled kernel's 1x1 loader). The tiled kernel reloads
 * the weights from L2 for every 128-position block (64 KB each at 1x1
 * 256->64, as many bytes as the input: ncu 78% of L2 throughput, 52% of
 * DRAM); here they cross L2 once per block. Two forms (template WG):
 *
 *  WG = 0, mma.sync: 8 warps, each 16 positions x 64 channels with
 *    mma.sync m16n8k8 (A: positions x channels from the [channel][position]
 *    stage, rounded when loaded; B: the resident weights, one LDS.64 a
 *    fragment with the k slots paired as the tiled kernel pairs them).
 *    On the H100 (1x1 256->64 @56 b32) it ran 78.7 us with 32 channels a
 *    stage, 71.6 with 64, against the tiled kernel's 69.7-70.2 and cuDNN's
 *    48.6: the weights' L2 traffic is not what bounds the tiled kernel, and
 *    twice the bytes in flight gained 9%. So it is opt-in
 *    (TILECONV_CUDA_CONV_TF32_KERNEL=11).
 *  WG = 1, wgmma (the default for 1x1 layers with K/G <= 256 on the sm_90a
 *    image; TILECONV_CUDA_CONV_TF32_KERNEL=12 forces it): each warpgroup takes 64 of the
 *    tile's 128 positions and all 64 channels: wgmma m64n64k8 with A
 *    (positions x input channels) from registers, loaded from the
 *    [channel][position] stage (pitch 136: conflict-free) and rounded, and
 *    B the resident weights in the 128-byte swizzled K-major layout (32
 *    channels a 128-byte row, one 8 KB block of 64 rows per 32 channels),
 *    read by the tensor cores themselves. A warpgroup's shared reads per k8
 *    step: 2 KB of A (128 LDS.32) and 2 KB of B for 32 mma.sync
 *    equivalents, 128 bytes each against the mma.sync form's 320. A
 *    stage's wgmmas are waited for before the next stage's fragments are
 *    loaded (the stage is DRAM-bound: ~2500 clocks of loads against ~500
 *    of MMAs). Each block streams all of x for its 64 output channels: on
 *    the H100 (b32, us; this form / the tiled kernel) 256->64 @56 56.4 /
 *    73.5, 64->256 @56 75.5 / 127.8, but 128->512 @28 103.4 / 72.1 and
 *    256->1024 @14 98.0 / 57.2, where x is streamed 8 and 16 times: hence
 *    K/G <= 256.
 *
 * The 3xTF32 form (X3 = 1, with WG = 1; cuda.conv.igemm-3xtf32): the
 * weights split once into TF32 hi and lo parts (ig_tf32_split, cuda_hopper.h)
 * as they are staged, both resident (the lo block after the hi one, the
 * same swizzled layout); each A fragment split once into hi and lo
 * registers as it is loaded; each k8 step three wgmmas (A lo x W hi, A hi
 * x W lo, A hi x W hi). Two stages of 64 channels (one in flight while
 * the other is computed: the weights take twice the shared memory). A
 * stage's wgmmas sum into their own accumulators from zero (the first one
 * scale-d 0) and are added into the tile's fp32 sums after the stage (the
 * promotion of cuda.gemm.wgmma-3xtf32).
 */
#include "cuda/conv/gather.cuh"

namespace {

using namespace tc_conv;

#define S1_TP 128    /* positions a tile */
#define S1_XP 132    /* mma.sync stage row pitch (floats): 8t + g conflict-free A loads */
#define S1_XP_WG 136 /* wgmma's pitch: channel t, position g at bank 8t + g */
#define S1_ST 4
#define S1_BC 64 /* channels a stage */
#define S1_SMEM_MMA(CGP) ((size_t)(64 * ((CGP) + 8) + S1_ST * S1_BC * S1_XP) * sizeof(float))
/* wgmma: the weights swizzled (64 x CgP), the stages, 1 KiB to align */
#define S1_SMEM_WG(CGP) ((size_t)(64 * (CGP) + S1_ST * S1_BC * S1_XP_WG) * sizeof(float) + 1024)
/* 3xTF32: hi and lo weights, two stages */
#define S1_ST3 2
#define S1_SMEM_WG3(CGP) ((size_t)(2 * 64 * (CGP) + S1_ST3 * S1_BC * S1_XP_WG) * sizeof(float) + 1024)

template <int WG, int X3 = 0>
__global__ void __launch_bounds__(256, 1) /* ~200 KB of shared memory: one block an SM */
    k_igemm_1x1_stream(const float *__restrict__ x, const float *__restrict__ w,
                       const float *__restrict__ bias, float *__restrict__ y, const s1p a) {
    static_assert(!X3 || WG, "3xTF32: the wgmma form");
    constexpr int ST = X3 ? S1_ST3 : S1_ST; /* stages */
    extern __shared__ float4 s1_smem4[];
    float *Ws = reinterpret_cast<float *>(s1_smem4); /* mma.sync: [64][CgP + 8] */
    if (WG) /* a 1024-byte boundary (the swizzle's period) */
        Ws += ((1024 - ((unsigned)__cvta_generic_to_shared(Ws) & 1023)) & 1023) / 4;
    const int PW = a.CgP + 8;
    constexpr int XP = WG ? S1_XP_WG : S1_XP;
    /* X3: the lo weights at Wl, 64 * CgP floats after the hi ones */
    float *Wl = Ws + 64 * a.CgP;
    float *Xs = Ws + (WG ? 64 * a.CgP * (X3 ? 2 : 1) : 64 * PW); /* ST x [S1_BC][XP] */
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, gq = lane >> 2,
              tq = lane & 3;
    const int g = blockIdx.y / a.ktiles, k0 = (blockIdx.y % a.ktiles) * 64;
    const int nch = a.CgP / S1_BC;
    const int first = blockIdx.x, stride = gridDim.x;
    const int mytiles = first < a.ntiles ? (int)((a.ntiles - first + stride - 1) / stride) : 0;
    const int nsteps = mytiles * nch;
    /* stage s: tile first + (s / nch) * stride, channels S1_BC * (s % nch),
     * slot s % S1_ST, all counted (no 64-bit division by P or nch in the
     * loop; s1_plan keeps N * P + 256 within int). A tile is 128
     * consecutive positions of the N * P run, so it may span two images
     * (with tiles per image, 1x1 256->64 @56 b32 had 25 tiles an image, the
     * last half empty, and 7 tiles on the busiest block against 6.06 on
     * average). A thread copies positions qq .. qq + 3 of the tile (P % 4
     * == 0: one image) for channel rows id >> 5. */
    const int qq = (tid & 31) * 4;
    int is = 0, ich = 0, isl = 0, itile = first; /* the next stage to issue */
    const float *isrc = x;
    bool iqok = false;
    auto issue = [&]() {
        if (is < nsteps) {
            if (ich == 0) { /* a new tile: this thread's image and position */
                const int q = itile * S1_TP + qq, n = q / a.P;
                iqok = q < a.NP;
                isrc = x + ((int64_t)n * a.C + (int64_t)g * a.Cg) * a.P + (q - n * a.P);
            }
            const int ch = ich * S1_BC;
            float *dst = Xs + isl * S1_BC * XP;
#pragma unroll
            for (int j = 0; j < S1_BC / 8; j++) {
                const int c = (tid + 256 * j) >> 5;
                const bool ok = (ch + c < a.Cg) & iqok;
                ig_cp16(dst + c * XP + qq, ok ? isrc + (int64_t)(ch + c) * a.P : x, ok ? 16 : 0);
            }
            if (++ich == nch) ich = 0, itile += stride;
            if (++isl == ST) isl = 0;
            is++;
        }
        ig_commit();
    };
    /* the block's weights, rounded, zeros past Kg and Cg. wgmma: row k,
     * channel c at 32-channel block c / 32, 16-byte chunk (c % 32) / 4
     * swizzled by k % 8 */
    auto wslot = [&](int k, int c) -> float * {
        return WG ? Ws + (c >> 5) * 2048 + k * 32 + ((((c & 31) >> 2) ^ (k & 7)) << 2) + (c & 3)
                  : Ws + k * PW + c;
    };
    /* with wvec, 16-byte copies in their own cp.async group ahead of the
     * stages' (all in flight at once; a loop over elements issues about
     * four loads at a time, ~16 L2 round trips a thread before the first
     * stage), then each thread rounds the chunks it copied. Chunk i of the
     * block's 64 x CgP / 4: wgmma in shared-memory order (32-channel block,
     * row, chunk: a warp stores 512 contiguous bytes; row-major, four rows
     * of one warp fall on the same banks 8 KB apart: ncu), mma.sync
     * row-major */
    const int cq = a.CgP / 4;
    auto wchunk = [&](int i, int &k, int &c) {
        if (WG) {
            k = (i >> 3) & 63;
            c = (i >> 9) * 32 + (i & 7) * 4;
        } else {
            k = i / cq;
            c = (i - k * cq) * 4;
        }
    };
    if (a.wvec)
        for (int i = tid; i < 64 * cq; i += 256) {
            int k, c;
            wchunk(i, k, c);
            const bool ok = (k0 + k < a.Kg) & (c < a.Cg);
            ig_cp16(wslot(k, c), ok ? w + ((int64_t)g * a.Kg + k0 + k) * a.Cg + c : w, ok ? 16 : 0);
        }
    ig_commit();
#pragma unroll
    for (int s = 0; s < ST - 1; s++) issue();
    /* X3: hi in place, lo at the same offset from Wl */
    auto wsplit = [&](float *p, float v) {
        unsigned h, l;
        ig_tf32_split(v, h, l);
        *p = __uint_as_float(h);
        p[Wl - Ws] = __uint_as_float(l);
    };
    if (a.wvec) {
        ig_wait<ST - 1>(); /* this thread's weight copies (the stages may be in flight) */
        for (int i = tid; i < 64 * cq; i += 256) {
            int k, c;
            wchunk(i, k, c);
            float4 *p4 = reinterpret_cast<float4 *>(wslot(k, c));
            const float4 v = *p4;
            if (X3) {
                float *p = reinterpret_cast<float *>(p4);
                wsplit(p, v.x);
                wsplit(p + 1, v.y);
                wsplit(p + 2, v.z);
                wsplit(p + 3, v.w);
            } else {
                *p4 = make_float4(__uint_as_float(ig_tf32(v.x)), __uint_as_float(ig_tf32(v.y)),
                                  __uint_as_float(ig_tf32(v.z)), __uint_as_float(ig_tf32(v.w)));
            }
        }
    } else {
        for (int i = tid; i < 64 * a.CgP; i += 256) {
            const int k = i / a.CgP, c = i - k * a.CgP;
            const bool ok = (k0 + k < a.Kg) & (c < a.Cg);
            if (X3)
                wsplit(wslot(k, c), ok ? __ldg(w + ((int64_t)g * a.Kg + k0 + k) * a.Cg + c) : 0.f);
            else
                *wslot(k, c) = __uint_as_float(
                    ok ? ig_tf32(__ldg(w + ((int64_t)g * a.Kg + k0 + k) * a.Cg + c)) : 0u);
        }
    }
    if (WG) ig_proxy_fence(); /* the weights (generic proxy) to wgmma (async) */
    float acc[8][4];
    float tcc[X3 ? 32 : 1]; /* X3: a stage's sums */
#pragma unroll
    for (int j = 0; j < 8; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[j][e] = 0.f;
#pragma unroll
    for (int i = 0; i < (X3 ? 32 : 1); i++) {
        tcc[i] = 0.f;
        asm volatile("" : "+f"(tcc[i])); /* defined before the first wgmma (ptxas C7515) */
    }
    int csl = 0, cch = 0, ctile = first; /* the stage computed: slot, chunk, tile */
    for (int s = 0; s < nsteps; s++) {
        ig_wait<ST - 2>();
        __syncthreads();
        issue(); /* stage s + ST - 1 */
        if constexpr (X3) {
            /* A's fragments split once, then three wgmmas a k8 step into
             * tcc (the stage's first overwrites it), added into acc */
            const float *Xt = Xs + csl * S1_BC * XP + warp * 16 + gq;
            unsigned ah[S1_BC / 8][4], al[S1_BC / 8][4];
#pragma unroll
            for (int k8 = 0; k8 < S1_BC / 8; k8++) {
                const float *xp = Xt + (k8 * 8 + tq) * XP;
                ig_tf32_split(xp[0], ah[k8][0], al[k8][0]);
                ig_tf32_split(xp[8], ah[k8][1], al[k8][1]);
                ig_tf32_split(xp[4 * XP], ah[k8][2], al[k8][2]);
                ig_tf32_split(xp[4 * XP + 8], ah[k8][3], al[k8][3]);
            }
            const float *Wc = Ws + cch * (S1_BC / 32) * 2048, *Wd = Wl + cch * (S1_BC / 32) * 2048;
            ig_wg_fence();
#pragma unroll
            for (int k8 = 0; k8 < S1_BC / 8; k8++) {
                const int o = (k8 >> 2) * 2048 + (k8 & 3) * 8;
                ig_wgmma_rs64(tcc, al[k8], ig_desc_sw128(Wc + o), k8 > 0); /* lo hi */
                ig_wgmma_rs64(tcc, ah[k8], ig_desc_sw128(Wd + o), 1);      /* hi lo */
                ig_wgmma_rs64(tcc, ah[k8], ig_desc_sw128(Wc + o), 1);      /* hi hi */
            }
            ig_wg_commit();
            ig_wg_wait<0>();
#pragma unroll
            for (int j = 0; j < 8; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) acc[j][e] = (cch ? acc[j][e] : 0.f) + tcc[4 * j + e];
        } else if constexpr (WG) {
            /* warpgroup warp >> 2 takes positions 64 (warp >> 2) .. + 63; its
             * warp (warp & 3) rows 16 (warp & 3) + gq (+ 8) of them */
            const float *Xt = Xs + csl * S1_BC * XP + warp * 16 + gq;
            unsigned af[S1_BC / 8][4];
#pragma unroll
            for (int k8 = 0; k8 < S1_BC / 8; k8++) {
                const float *xp = Xt + (k8 * 8 + tq) * XP;
                af[k8][0] = ig_tf32(xp[0]);
                af[k8][1] = ig_tf32(xp[8]);
                af[k8][2] = ig_tf32(xp[4 * XP]);
                af[k8][3] = ig_tf32(xp[4 * XP + 8]);
            }
            const float *Wc = Ws + cch * (S1_BC / 32) * 2048;
            const int keep0 = cch != 0; /* a tile's first stage: D = A * B */
            ig_wg_fence();
#pragma unroll
            for (int k8 = 0; k8 < S1_BC / 8; k8++)
                ig_wgmma_rs64(&acc[0][0], af[k8], ig_desc_sw128(Wc + (k8 >> 2) * 2048 + (k8 & 3) * 8),
                              k8 > 0 || keep0);
            ig_wg_commit();
            ig_wg_wait<0>();
        } else {
            const float *Xt = Xs + csl * S1_BC * XP + warp * 16 + gq;
            const float *Wt = Ws + gq * PW + cch * S1_BC + 2 * tq;
#pragma unroll
            for (int k8 = 0; k8 < S1_BC / 8; k8++) {
                /* k slot tq <-> channel 8*k8 + 2*tq, slot tq + 4 <-> 2*tq + 1 */
                const float *xp = Xt + (k8 * 8 + 2 * tq) * XP;
                unsigned af[4];
                af[0] = ig_tf32(xp[0]);
                af[1] = ig_tf32(xp[8]);
                af[2] = ig_tf32(xp[XP]);
                af[3] = ig_tf32(xp[XP + 8]);
#pragma unroll
                for (int j = 0; j < 8; j++) {
                    const float2 b2 = *reinterpret_cast<const float2 *>(Wt + j * 8 * PW + k8 * 8);
                    const unsigned bf[2] = {__float_as_uint(b2.x), __float_as_uint(b2.y)};
                    ig_mma(acc[j], af, bf);
                }
            }
        }
        if (cch == nch - 1) {
            /* the tile's outputs: acc[j][e] is position warp*16 + gq +
             * 8*(e>>1), channel k0 + 8j + 2tq + (e&1) (wgmma's m64n64
             * accumulators, d[4j + e], lie the same way) */
            /* this thread's two positions, each in its own image */
            float *yp[2];
            bool in[2];
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int q = ctile * S1_TP + warp * 16 + gq + 8 * h, n = q / a.P;
                in[h] = q < a.NP;
                yp[h] = y + (n * a.K + (int64_t)g * a.Kg) * a.P + (q - n * a.P);
            }
#pragma unroll
            for (int j = 0; j < 8; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int kk = k0 + 8 * j + 2 * tq + (e & 1);
                    if (kk < a.Kg && in[e >> 1]) {
                        const int ko = g * a.Kg + kk;
                        yp[e >> 1][(int64_t)kk * a.P] =
                            acc[j][e] + (bias ? __ldg(bias + ko) : 0.f);
                    }
                    if (!WG) acc[j][e] = 0.f;
                }
        }
        if (++cch == nch) cch = 0, ctile += stride;
        if (++csl == ST) csl = 0;
    }
    ig_wait<0>();
}

} // namespace

namespace tc_conv {

/* The stream for a TF32 1x1 layer (lm == IG_1X1): the wgmma form by
 * default where the device runs the sm_90a image and K/G <= 256 (and under
 * TILECONV_CUDA_CONV_TF32_KERNEL=12), the mma.sync form only under TILECONV_CUDA_CONV_TF32_KERNEL=11.
 * Its geometry and grid in *q / *gx and the form in *wg; 0 where neither
 * takes the layer (another TFV forced, no sm_90a image, or 64 channels'
 * weights past the shared memory: the tiled kernel then). */
int s1_plan(const tc__problem *p, const igp &g, const void *a_w, s1p *q, unsigned *gx,
            size_t *smem, int *wg, int x3) {
    const tc__cu_device *d = tc__cu_dev();
    if (!d || !d->smem_optin) return 0;
    /* 3xTF32 (x3): the wgmma form, unless TILECONV_CUDA_CONV_TF32_KERNEL forces
     * another than 12 (the tiled 3xTF32 kernel then) */
    const char *f3 = tc__knob_get(TC__KNOB_CUDA_CONV_TF32_KERNEL);
    if (x3 && ((f3 && strcmp(f3, "12")) || tc__cu_div_up(g.Kg, 64) > 4 || !cv_wgmma_ok()))
        return 0;
    /* the mma.sync form opt-in only: at 1x1 256->64 @56 b32 it measured
     * 71.6 us against the tiled kernel's 70.2 (64 channels a stage; 78.7
     * with 32), cuDNN 48.6 */
    const char *f = tc__knob_get(TC__KNOB_CUDA_CONV_TF32_KERNEL);
    if (x3)
        *wg = 1;
    else if (f && !strcmp(f, "11"))
        *wg = 0;
    else if (((!f && tc__cu_div_up(g.Kg, 64) <= 4) || (f && !strcmp(f, "12"))) && cv_wgmma_ok())
        *wg = 1;
    else
        return 0;
    q->C = g.C; q->Cg = g.Cg; q->K = g.K; q->Kg = g.Kg; q->G = g.G; q->P = g.P;
    q->CgP = (int)tc__cu_div_up(g.Cg, S1_BC) * S1_BC;
    q->NP = p->N * (int64_t)g.P;
    q->ntiles = tc__cu_div_up(q->NP, S1_TP);
    q->ktiles = (int)tc__cu_div_up(g.Kg, 64);
    q->wvec = g.Cg % 4 == 0 && (uintptr_t)a_w % 16 == 0;
    *smem = x3 ? S1_SMEM_WG3(q->CgP) : *wg ? S1_SMEM_WG(q->CgP) : S1_SMEM_MMA(q->CgP);
    /* positions in int in the kernel (a tile past the end included) */
    if (*smem > d->smem_optin || (int64_t)q->ktiles * g.G > 65535 ||
        q->NP > INT32_MAX - 2 * S1_TP)
        return 0;
    /* one block an SM (212 registers a thread, ~200 KB of shared memory
     * at Cg = 256): a persistent grid of one block an SM */
    const int64_t cols = (int64_t)q->ktiles * g.G;
    int64_t x = tc__cu_div_up((int64_t)d->sms, cols);
    if (x > q->ntiles) x = q->ntiles;
    if (x < 1) x = 1;
    /* TILECONV_CUDA_CONV_GRID=n: n blocks along the tiles (tests: several
     * tiles a block on small layers) */
    const char *gv = tc__knob_get(TC__KNOB_CUDA_CONV_GRID);
    if (gv && atoi(gv) >= 1 && atoi(gv) <= 65535) x = atoi(gv);
    *gx = (unsigned)x;
    return 1;
}
tc_status s1_run(const tc__args *a, const tc__cu_bufs *b, const s1p &q, unsigned gx, size_t smem,
                 int wg, int x3) {
    static int attr_set[IG_NDEV][3]; /* mma.sync, wgmma, 3xTF32 */
    int dev = 0;
    TC_CU(cudaGetDevice(&dev));
    const int ki = x3 ? 2 : wg;
    const void *kf = x3   ? (const void *)k_igemm_1x1_stream<1, 1>
                     : wg ? (const void *)k_igemm_1x1_stream<1>
                          : (const void *)k_igemm_1x1_stream<0>;
    if (dev < 0 || dev >= IG_NDEV || !__atomic_load_n(&attr_set[dev][ki], __ATOMIC_ACQUIRE)) {
        const tc__cu_device *d = tc__cu_dev();
        TC_CU(cudaFuncSetAttribute(kf, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)d->smem_optin));
        if (dev >= 0 && dev < IG_NDEV) __atomic_store_n(&attr_set[dev][ki], 1, __ATOMIC_RELEASE);
    }
    const float *db;
    void *own;
    tc_status st = cv_bias(a, b->s, &db, &own);
    if (st) return st;
    const dim3 grid(gx, (unsigned)(q.ktiles * q.G));
    if (x3)
        k_igemm_1x1_stream<1, 1><<<grid, 256, smem, b->s>>>((const float *)b->x, (const float *)b->w,
                                                            db, (float *)b->y, q);
    else if (wg)
        k_igemm_1x1_stream<1><<<grid, 256, smem, b->s>>>((const float *)b->x, (const float *)b->w,
                                                         db, (float *)b->y, q);
    else
        k_igemm_1x1_stream<0><<<grid, 256, smem, b->s>>>((const float *)b->x, (const float *)b->w,
                                                         db, (float *)b->y, q);
    cudaError_t e = cudaGetLastError();
    tc__cu_free(own, b->s);
    if (e != cudaSuccess) return tc__cu_fail(e, "launch k_igemm_1x1_stream", __FILE__, __LINE__);
    return TC_OK;
}

/* at the opt-in shared memory (one block an SM, as launched) */
void s1_report(tc__cu_report *r) {
    const tc__cu_device *d = tc__cu_dev();
    const size_t sm = d ? d->smem_optin : 0;
    const void *k[2] = {(const void *)k_igemm_1x1_stream<0>, (const void *)k_igemm_1x1_stream<1>};
    const char *nm[2] = {"cuda.conv.igemm-tf32 1x1 stream mma", "cuda.conv.igemm-tf32 1x1 stream wgmma"};
    for (int i = 0; i < 2; i++) {
        (void)cudaFuncSetAttribute(k[i], cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm);
        (void)cudaGetLastError();
        tc__cu_report_kernel(r, nm[i], k[i], 256, sm);
    }
}
void s1_report3(tc__cu_report *r) {
    const tc__cu_device *d = tc__cu_dev();
    const size_t sm = d ? d->smem_optin : 0;
    const void *k = (const void *)k_igemm_1x1_stream<1, 1>;
    (void)cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm);
    (void)cudaGetLastError();
    tc__cu_report_kernel(r, "cuda.conv.igemm-3xtf32 1x1 stream wgmma", k, 256, sm);
}

} // namespace tc_conv
