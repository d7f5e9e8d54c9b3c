/*
 * igemm_half.cu - cuda.conv.igemm-half: conv layers in float16 and bfloat16
 * on Hopper's tensor cores (wgmma m64nNk16, fp32 accumulation), channels-
 * last (NLC / NHWC / NDHWC) in and out, with the fused epilogue
 * y = act(acc + bias + residual) in the store, rounded once to the dtype.
 *
 * The layer as one GEMM per group g: Y[m][k] = sum_l A[m][l] * B[k][l],
 * m = (n, output position), k the output channel, l = (tap, c) with the
 * input channel fastest. In channels-last memory a row of A at one tap is
 * C/G contiguous channels, so A's tiles are gathered by 16-byte cp.async
 * copies of 8 channels (zero-filled outside the input: zero padding only);
 * the weights (dense K x C/G x taps, torch's layout) are repacked into
 * B = K x (taps x Cp), Cp = C/G rounded up to 8, each row padded with
 * zeros to a multiple of 64 (one k step): once, on the host, for weights
 * the plan holds (tc_plan_conv_set_weights; kept on the device), else on
 * every call, on the device, into scratch.
 *
 * Tiles: BM = 128 output positions (two warpgroups of 64) x BN = 64 or 128
 * output channels x BK = 64 (one 128-byte row a position: the 128-byte
 * swizzle of wgmma's K-major operands), 4 to 8 shared-memory stages with
 * copies ST - 2 steps ahead, each step's wgmmas issued before the next
 * copies. The epilogue goes through shared memory (fp32), so that bias,
 * residual and output move in 16-byte accesses along the channels.
 * Layers with one group and C not a multiple of 8 (conv1, C = 3) are first
 * merged along the last axis (k_hg_merge: each output column's window of
 * S x C values, padded to 8, becomes its channels; 7x7x3 -> 7 taps of 24
 * channels), other such layers gather 8 channels through registers.
 */
#include "cuda/conv/igemm_half_common.cuh" /* loads, weight repack, epilogue */

#include <stdlib.h>

namespace {

struct hgp {
    int64_t M;            /* N * output positions */
    int64_t plane;        /* input positions an image */
    int C, K, Cg, Kg, Cp, taps, KRp, ksteps;
    int in0, in1, in2, out0, out1, out2, m1, m2;
    int s0, s1, s2, d0, d1, d2, p0, p1, p2;
    int act, has_bias, has_res, vec8;
};

/* The merged input of a layer with few channels (one group, C not a
 * multiple of 8, conv1's 3): the last axis's window of every output
 * position q gathered once, xm[row][q][s * C + c] = x[row][q * st + s * dl
 * - pd][c] (0 outside, and for s * C + c >= mf * C up to Cm), so that the
 * layer becomes one with Cm = mf * C rounded up to 8 channels, a 1-long
 * last mask axis, and 16-byte copies (rows: N x in0 x in1) */
__global__ void k_hg_merge(const uint16_t *__restrict__ x, uint16_t *__restrict__ xm, int64_t rows,
                           int in2, int C, int out2, int Cm, int mf, int st, int dl, int pd) {
    const int e = blockIdx.x * blockDim.x + threadIdx.x; /* q * Cm + j */
    if (e >= out2 * Cm) return;
    const int q = e / Cm, j = e - q * Cm, sx = j / C, c = j - sx * C;
    const int wi = q * st + sx * dl - pd;
    const bool in = sx < mf && (unsigned)wi < (unsigned)in2;
    for (int64_t r = blockIdx.y; r < rows; r += gridDim.y)
        xm[r * out2 * Cm + e] = in ? x[(r * in2 + wi) * C + c] : (uint16_t)0;
}

/* One BM x BN tile of group blockIdx.z, ST shared-memory stages with copies
 * ST - 2 k steps ahead; VEC: 16-byte copies of x (C/G and C multiples of 8,
 * x 16-byte aligned), else a gather of 8 checked loads */
template <int BN, bool BF, bool VEC, int ST>
__global__ void __launch_bounds__(HG_THREADS, BN == 64 && ST == 4 ? 2 : 1)
    k_hg_conv(const uint16_t *__restrict__ x, const uint16_t *__restrict__ wp,
              const uint16_t *__restrict__ bias, const uint16_t *res, uint16_t *y, hgp p) {
#if IG_WGMMA
    constexpr int D = ST - 2;
    extern __shared__ uint8_t hg_smem_raw[];
    /* the 128-byte swizzle takes its phase from address bits 7-9: 1 KiB alignment */
    uint8_t *smem = (uint8_t *)(((uintptr_t)hg_smem_raw + 1023) & ~(uintptr_t)1023);
    constexpr int ABYTES = HG_BM * 128, BBYTES = BN * 128, SBYTES = ABYTES + BBYTES;
    const int tid = threadIdx.x, wg = tid >> 7;
    const int64_t m0 = (int64_t)blockIdx.x * HG_BM;
    const int n0 = blockIdx.y * BN, g = blockIdx.z;
    const unsigned sbase = (unsigned)__cvta_generic_to_shared(smem);

    /* this thread's A rows (tid / 8 + 32 i) and 16-byte column (tid % 8):
     * the window origin and the element offset of its (0, 0, 0) tap */
    const int col = tid & 7, r0 = tid >> 3;
    int64_t ro[4];
    int ib0[4], ib1[4], ib2[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        int64_t m = m0 + r0 + 32 * i;
        if (m < p.M) {
            int64_t q;
            int o0, o1, o2;
            if (p.M <= INT32_MAX) { /* 32-bit divisions: the 64-bit ones are long loops */
                unsigned u = (unsigned)m;
                o2 = (int)(u % (unsigned)p.out2); u /= (unsigned)p.out2;
                o1 = (int)(u % (unsigned)p.out1); u /= (unsigned)p.out1;
                o0 = (int)(u % (unsigned)p.out0); q = u / (unsigned)p.out0;
            } else {
                q = m;
                o2 = (int)(q % p.out2); q /= p.out2;
                o1 = (int)(q % p.out1); q /= p.out1;
                o0 = (int)(q % p.out0); q /= p.out0;
            }
            ib0[i] = o0 * p.s0 - p.p0;
            ib1[i] = o1 * p.s1 - p.p1;
            ib2[i] = o2 * p.s2 - p.p2;
            ro[i] = (q * p.plane + ((int64_t)ib0[i] * p.in1 + ib1[i]) * p.in2 + ib2[i]) * p.C +
                    (int64_t)g * p.Cg;
        } else {
            ro[i] = 0;
            ib0[i] = -(1 << 29); /* never inside */
            ib1[i] = ib2[i] = 0;
        }
    }
    /* the reduction position of this thread's column: tap (t0, t1, t2), channel c */
    int lc = col * 8, lt = 0, t0 = 0, t1 = 0, t2 = 0;
    while (lc >= p.Cp) {
        lc -= p.Cp;
        lt++;
        if (++t2 == p.m2) { t2 = 0; if (++t1 == p.m1) { t1 = 0; t0++; } }
    }
    /* B: rows r0 + 32 i of the tile, this column; valid rows as bits */
    const uint16_t *bp = wp + ((int64_t)g * p.Kg + n0 + r0) * p.KRp + col * 8;
    unsigned bok = 0;
#pragma unroll
    for (int i = 0; i < BN / 32; i++) bok |= (n0 + r0 + 32 * i < p.Kg ? 1u : 0u) << i;
    const int64_t bstep = (int64_t)32 * p.KRp;

    /* copies of the next k step into slot `slot`; advances (tap, c) and B */
    auto load = [&](int slot) {
        const unsigned sa = sbase + slot * SBYTES, sb = sa + ABYTES;
        const bool tap_ok = lt < p.taps;
        const int e0 = t0 * p.d0, e1 = t1 * p.d1, e2 = t2 * p.d2;
        const int64_t toff = (((int64_t)e0 * p.in1 + e1) * p.in2 + e2) * p.C + lc;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int r = r0 + 32 * i;
            const unsigned dst = sa + r * 128 + ((col ^ (r & 7)) << 4);
            const bool ok = tap_ok && (unsigned)(ib0[i] + e0) < (unsigned)p.in0 &&
                            (unsigned)(ib1[i] + e1) < (unsigned)p.in1 &&
                            (unsigned)(ib2[i] + e2) < (unsigned)p.in2;
            if (VEC) {
                hg_cp16(dst, ok ? x + ro[i] + toff : x, ok ? 16 : 0);
            } else {
                unsigned v[4] = {0, 0, 0, 0};
                if (ok) {
                    const uint16_t *src = x + ro[i] + toff - lc;
#pragma unroll
                    for (int j = 0; j < 8; j++)
                        if (lc + j < p.Cg) v[j >> 1] |= (unsigned)src[lc + j] << (16 * (j & 1));
                }
                asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(v[0]),
                             "r"(v[1]), "r"(v[2]), "r"(v[3])
                             : "memory");
            }
        }
#pragma unroll
        for (int i = 0; i < BN / 32; i++) {
            const int r = r0 + 32 * i;
            const unsigned dst = sb + r * 128 + ((col ^ (r & 7)) << 4);
            const bool ok = (bok >> i) & 1;
            hg_cp16(dst, ok ? bp + i * bstep : wp, ok ? 16 : 0);
        }
        bp += HG_BK;
        /* the next k step: 64 further along l */
        lc += HG_BK;
        while (lc >= p.Cp) {
            lc -= p.Cp;
            lt++;
            if (++t2 == p.m2) { t2 = 0; if (++t1 == p.m1) { t1 = 0; t0++; } }
        }
    };

    float acc[BN / 2];
#pragma unroll
    for (int j = 0; j < BN / 2; j++) acc[j] = 0.f;

    const int KT = p.ksteps;
#pragma unroll
    for (int s = 0; s < D; s++) {
        if (s < KT) load(s);
        ig_commit();
    }
    int cslot = 0, lslot = D; /* the slots of step kt and of step kt + D */
    const uint64_t da0 = ig_desc_sw128(smem + wg * 64 * 128), db0 = ig_desc_sw128(smem + ABYTES);
    for (int kt = 0; kt < KT; kt++) {
        ig_wait<D - 1>(); /* this thread's copies of step kt have landed */
        ig_proxy_fence(); /* ... and are visible to wgmma (async proxy) */
        __syncthreads();  /* everyone's; and every wgmma of step kt - 2 is done */
        /* the MMAs first, so that the tensor cores work while the copies of
         * step kt + D are computed and issued; the slot's descriptors: a
         * k16 step is 32 bytes along the row (2 in 16-byte address units) */
        const uint64_t so = (uint64_t)((cslot * SBYTES) >> 4);
        ig_wg_fence();
#pragma unroll
        for (int k16 = 0; k16 < 4; k16++)
            hg_mma<BN, BF>(acc, da0 + so + 2 * k16, db0 + so + 2 * k16);
        ig_wg_commit();
        /* step kt + D goes to the slot of step kt - 2, whose wgmmas every
         * warpgroup finished before the barrier */
        if (kt + D < KT) load(lslot);
        ig_commit();
        ig_wg_wait<1>(); /* step kt - 1's wgmmas done: its slot is free next step */
        cslot = cslot + 1 == ST ? 0 : cslot + 1;
        lslot = lslot + 1 == ST ? 0 : lslot + 1;
    }
    ig_wg_wait<0>();
    ig_wait<0>();
    __syncthreads(); /* every wgmma done: the stages become the output tile */

    hg_epilogue<BN, BF>(acc, smem, m0, n0, g, p, bias, res, y);
#endif
}

/* ---------------- host side ---------------- */

typedef void (*hg_kernel)(const uint16_t *, const uint16_t *, const uint16_t *, const uint16_t *,
                          uint16_t *, hgp);
/* the tile configurations: BN 64 with 4 stages (two blocks an SM), BN 64
 * with 8 stages and BN 128 with 6 (one block an SM, deeper copies) */
#define HG_NCFG 3
static const int hg_cfg_bn[HG_NCFG] = {64, 64, 128}, hg_cfg_st[HG_NCFG] = {4, 8, 6};
#define HG_K2(BN, BF, ST) {k_hg_conv<BN, BF, false, ST>, k_hg_conv<BN, BF, true, ST>}
#define HG_KC(BN, ST) {HG_K2(BN, false, ST), HG_K2(BN, true, ST)}
static const hg_kernel hg_tab[HG_NCFG][2][2] = {HG_KC(64, 4), HG_KC(64, 8), HG_KC(128, 6)};
static int hg_attr_set[HG_NCFG][2][2][IG_NDEV]; /* the shared-memory limit set, per device */

static size_t hg_smem(int cfg) {
    return (size_t)hg_cfg_st[cfg] * (HG_BM + hg_cfg_bn[cfg]) * 128 + 1024;
}

static hgp hg_params(const tc__problem *p) {
    hgp q;
    memset(&q, 0, sizeof q);
    q.C = (int)p->C; q.K = (int)p->K;
    q.Cg = (int)(p->C / p->G); q.Kg = (int)(p->K / p->G);
    q.Cp = (q.Cg + 7) / 8 * 8;
    q.taps = (int)(p->msk[0] * p->msk[1] * p->msk[2]);
    const int64_t kr = (int64_t)q.taps * q.Cp;
    q.KRp = (int)((kr + HG_BK - 1) / HG_BK * HG_BK);
    q.ksteps = q.KRp / HG_BK;
    q.in0 = (int)p->in[0]; q.in1 = (int)p->in[1]; q.in2 = (int)p->in[2];
    q.out0 = (int)p->out[0]; q.out1 = (int)p->out[1]; q.out2 = (int)p->out[2];
    q.m1 = (int)p->msk[1]; q.m2 = (int)p->msk[2];
    q.s0 = (int)p->stride[0]; q.s1 = (int)p->stride[1]; q.s2 = (int)p->stride[2];
    q.d0 = (int)p->dil[0]; q.d1 = (int)p->dil[1]; q.d2 = (int)p->dil[2];
    q.p0 = (int)p->pad_lo[0]; q.p1 = (int)p->pad_lo[1]; q.p2 = (int)p->pad_lo[2];
    q.plane = p->in[0] * p->in[1] * p->in[2];
    q.M = p->N * p->out[0] * p->out[1] * p->out[2];
    q.act = (int)p->act;
    q.has_bias = p->has_bias;
    q.has_res = p->has_residual;
    return q;
}

/* the tile configuration: BN 128 (cfg 2) where K/G >= 128 and its tiles
 * make one wave at least 70% full or two waves and more, else BN 64 two
 * blocks an SM (cfg 0). On the H200 (ResNet-50 batch 32, float16): 3x3
 * 256@14 (98 tiles of 128) 34 us in cfg 2 against 42 in cfg 0; 3x3 128@28
 * (196) 40 against 36; 3x3 512@7 (52) 57 against 49; cfg 1 (BN 64, one
 * block an SM, 8 stages) was never faster than cfg 0 there.
 * TILECONV_CUDA_HALF_CFG=0/1/2 forces one (tests, tuning) */
static int hg_cfg(const tc__problem *p, const hgp &q) {
    const char *f = tc__knob_get(TC__KNOB_CUDA_HALF_CFG);
    if (f && f[0] >= '0' && f[0] < '0' + HG_NCFG && !f[1]) return f[0] - '0';
    const tc__cu_device *d = tc__cu_dev();
    const int64_t sms = d ? d->sms : 132, mt = tc__cu_div_up(q.M, HG_BM);
    const int64_t t128 = mt * tc__cu_div_up(q.Kg, 128) * p->G;
    if (q.Kg >= 128 && ((10 * t128 >= 7 * sms && t128 <= sms) || t128 >= 2 * sms)) return 2;
    return 0;
}

/* Is the layer run in the merged form (k_hg_merge)? one group, C not a
 * multiple of 8, at most 64 merged channels; *pm the problem the kernel then
 * runs */
static int hg_merged(const tc__problem *p, tc__problem *pm) {
    if (p->G != 1 || p->C % 8 == 0 || p->msk[2] * p->C > 64 || p->msk[2] == 1) return 0;
    if (pm) {
        *pm = *p;
        pm->C = (p->msk[2] * p->C + 7) / 8 * 8;
        pm->in[2] = p->out[2];
        pm->msk[2] = 1;
        pm->stride[2] = pm->dil[2] = 1;
        pm->pad_lo[2] = pm->pad_hi[2] = 0;
    }
    return 1;
}
static size_t hg_merge_bytes(const tc__problem *p) {
    tc__problem pm;
    if (!hg_merged(p, &pm)) return 0;
    return (size_t)tc__x_count(&pm) * sizeof(uint16_t);
}

static size_t hg_wpack_bytes(const tc__problem *p) {
    tc__problem pm;
    const hgp q = hg_params(hg_merged(p, &pm) ? &pm : p);
    return (size_t)p->K * (size_t)q.KRp * sizeof(uint16_t);
}

static tc_status hg_launch(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    cudaStream_t s = b->s;
    tc__problem pm;
    const int merged = hg_merged(p, &pm);
    hgp q = hg_params(merged ? &pm : p);
    const int bf = p->dtype == TC_BFLOAT16;
    const int cfg = hg_cfg(p, q), bn = hg_cfg_bn[cfg];
    const int mf = merged ? (int)p->msk[2] : 1, Cg0 = (int)(p->C / p->G);
    void *wpk = NULL, *own_b = NULL, *own_r = NULL, *xm = NULL;
    const void *db = NULL, *dr = NULL, *dx = b->x;
    /* the plan's weights come packed (held on the device); where the packed
     * rows are the caller's own (C/G a multiple of 8 and taps x C/G of 64,
     * channels-last weights or one tap), the kernel reads those in place
     * (16-byte copies: an aligned address) */
    const int cl = p->wlayout == TC_LAYOUT_CHANNELS_LAST;
    const int in_place = !merged && q.Cp == Cg0 && q.KRp == q.taps * Cg0 && (cl || q.taps == 1) &&
                         !((uintptr_t)b->w & 15);
    const void *wp = a->wpack ? a->wpack : in_place ? b->w : NULL;
    tc_status st = wp ? TC_OK : tc__cu_alloc(&wpk, hg_wpack_bytes(p), s);
    if (st == TC_OK && merged) {
        st = tc__cu_alloc(&xm, hg_merge_bytes(p), s);
        if (st == TC_OK) {
            const int64_t rows = p->N * p->in[0] * p->in[1];
            const dim3 grid((unsigned)tc__cu_div_up(p->out[2] * pm.C, 256),
                            (unsigned)(rows < 65535 ? rows : 65535));
            k_hg_merge<<<grid, 256, 0, s>>>((const uint16_t *)b->x, (uint16_t *)xm, rows,
                                            (int)p->in[2], (int)p->C, (int)p->out[2], (int)pm.C,
                                            mf, (int)p->stride[2], (int)p->dil[2],
                                            (int)p->pad_lo[2]);
            cudaError_t e = cudaGetLastError();
            if (e != cudaSuccess) st = tc__cu_fail(e, "launch k_hg_merge", __FILE__, __LINE__);
            dx = xm;
        }
    }
    const int vec = q.Cg % 8 == 0 && q.C % 8 == 0 && ((uintptr_t)dx & 15) == 0;
    if (st == TC_OK && !wp) {
        wp = wpk;
        st = hg_wpack_dev(b->w, wpk, p->K, Cg0, q.Cp, q.taps, mf, q.KRp, cl, s);
    }
    if (st == TC_OK) st = hg_epi_operands(a, b, &db, &dr, &own_b, &own_r);
    if (st == TC_OK) {
        q.vec8 = !(q.K & 7) && !(q.Kg & 7) && !((uintptr_t)b->y & 15) &&
                 !((uintptr_t)dr & 15) && !((uintptr_t)db & 15);
        const hg_kernel k = hg_tab[cfg][bf][vec];
        const size_t smem = hg_smem(cfg);
        cudaError_t e = hg_smem_limit((const void *)k, smem, hg_attr_set[cfg][bf][vec]);
        if (e != cudaSuccess) {
            st = tc__cu_fail(e, "cudaFuncSetAttribute (cuda.conv.igemm-half)", __FILE__, __LINE__);
        } else {
            dim3 grid((unsigned)tc__cu_div_up(q.M, HG_BM), (unsigned)tc__cu_div_up(q.Kg, bn),
                      (unsigned)p->G);
            k<<<grid, HG_THREADS, smem, s>>>((const uint16_t *)dx, (const uint16_t *)wp,
                                             (const uint16_t *)db, (const uint16_t *)dr,
                                             (uint16_t *)b->y, q);
            e = cudaGetLastError();
            if (e != cudaSuccess) st = tc__cu_fail(e, "launch k_hg_conv", __FILE__, __LINE__);
        }
    }
    tc__cu_free(wpk, s);
    tc__cu_free(xm, s);
    tc__cu_free(own_b, s);
    tc__cu_free(own_r, s);
    return st;
}

static int hg_available(void) { return tc__cu_available(); }

static int hg_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    (void)e;
    const char *no = NULL;
    if (p->op != TC_OP_CONV) no = "convolution layers only";
    else if (p->dtype != TC_FLOAT16 && p->dtype != TC_BFLOAT16)
        no = "float16 and bfloat16 only (float32 layers: cuda.conv.igemm, -tf32)";
    else if (p->layout != TC_LAYOUT_CHANNELS_LAST)
        no = "channels-last layers only (NLC, NHWC, NDHWC): channels-first ones are staged "
             "through cuda.conv.igemm";
    else if (p->mode != TC_MODE_CONSTANT || p->cval != 0)
        no = "zero padding only";
    if (!no) {
        const int64_t lim = INT32_MAX / 2;
        const int64_t Cg = p->C / p->G, Kg = p->K / p->G;
        const int64_t taps = p->msk[0] * p->msk[1] * p->msk[2];
        const int64_t KRp = (taps * ((Cg + 7) / 8 * 8) + HG_BK - 1) / HG_BK * HG_BK;
        const int64_t M = p->N * p->out[0] * p->out[1] * p->out[2];
        int big = p->C > lim || p->K > lim || KRp > lim || tc__cu_div_up(M, HG_BM) > lim ||
                  tc__cu_div_up(Kg, 64) > 65535 || p->G > 65535;
        if (tc__cu_axis_reach(p) > (1 << 28)) big = 1;
        if (big) no = "sizes beyond the kernel's 32-bit index arithmetic";
        else if (!ig_wgmma_ok()) no = "needs Hopper's wgmma (the sm_90a image on an sm_90 device)";
    }
    if (no) {
        if (why) snprintf(why, n, "%s", no);
        return 0;
    }
    return 1;
}

static double hg_estimate(const tc__problem *p, const tc__env *e) {
    (void)e;
    const tc__cu_device *d = tc__cu_dev();
    if (!d) return 1e30;
    tc__problem pm;
    const hgp q = hg_params(hg_merged(p, &pm) ? &pm : p);
    const double flops = 2.0 * (double)q.M * (double)p->K * (double)q.KRp;
    const double bytes = 2.0 * ((double)tc__x_count(p) + (double)tc__y_count(p) * (1 + p->has_residual) +
                                2.0 * (double)p->K * q.KRp) + 2.0 * (double)hg_merge_bytes(p);
    const double tensor = d->peak_flops32 * 14.0; /* dense f16/bf16 wgmma: ~990 TFLOP/s on the H100/H200 */
    const int cfg = hg_cfg(p, q);
    const double tiles = (double)tc__cu_div_up(q.M, HG_BM) * tc__cu_div_up(q.Kg, hg_cfg_bn[cfg]) * p->G;
    const double per_wave = (double)d->sms * (cfg == 0 ? 2 : 1);
    const double fill = tiles / (per_wave * ceil(tiles / per_wave));
    const double tc = flops / (0.6 * tensor * fill), tm = bytes / d->bandwidth;
    return (tc > tm ? tc : tm) + 6e-6;
}

static tc_status hg_execute(const tc__args *a) { return tc__cu_run(a, NULL, 1, hg_launch); }

/* The packed weights of a plan that holds them (the core uploads them once,
 * src/core/planner.c): the same B as k_hg_wpack's, made on the host from
 * the dense weights in the problem's dtype */
static size_t hg_wpack_size(const tc__problem *p, const tc__env *e) {
    (void)e;
    return hg_wpack_bytes(p);
}
static tc_status hg_wpack_host(const tc__problem *p, const tc__env *e, const void *state,
                               const void *w, void *dst) {
    (void)e;
    (void)state;
    tc__problem pm;
    const int merged = hg_merged(p, &pm);
    const hgp q = hg_params(merged ? &pm : p);
    const int mf = merged ? (int)p->msk[2] : 1, Cg0 = (int)(p->C / p->G);
    const int cl = p->wlayout == TC_LAYOUT_CHANNELS_LAST;
    const uint16_t *ws = (const uint16_t *)w;
    uint16_t *wp = (uint16_t *)dst;
    const int64_t row = (int64_t)Cg0 * q.taps * mf;
    for (int64_t k = 0; k < p->K; k++)
        for (int l = 0; l < q.KRp; l++)
            wp[k * q.KRp + l] = hg_wsrc(ws + k * row, l, Cg0, q.Cp, q.taps, mf, cl);
    return TC_OK;
}

/* the repacked weights, the merged input, a bias staged from host memory (a
 * host residual beside a device y is a host operand's copy, outside this
 * bound: tc__cu_alloc_operand) */
static size_t hg_device_ws(const tc__problem *p, const tc__env *e, const void *state) {
    (void)e;
    (void)state;
    return hg_wpack_bytes(p) + hg_merge_bytes(p) +
           (p->has_bias ? (size_t)p->K * sizeof(uint16_t) : 0);
}

/* the conv kernel of each tile configuration, float16 and bfloat16, with
 * and without 16-byte output stores, at its shared memory; the copies */
void hg_report(tc__cu_report *r) {
    for (int cfg = 0; cfg < HG_NCFG; cfg++)
        for (int bf = 0; bf < 2; bf++)
            for (int vec = 0; vec < 2; vec++) {
                const void *k = (const void *)hg_tab[cfg][bf][vec];
                (void)cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)hg_smem(cfg));
                (void)cudaGetLastError();
                char name[96];
                snprintf(name, sizeof name, "cuda.conv.igemm-half %dx%d %d stages %s%s", HG_BM,
                         hg_cfg_bn[cfg], hg_cfg_st[cfg], bf ? "bf16" : "f16", vec ? " vec8" : "");
                tc__cu_report_kernel(r, name, k, HG_THREADS, hg_smem(cfg));
            }
    tc__cu_report_kernel(r, "cuda.conv.igemm-half weight pack", (const void *)k_hg_wpack, 256, 0);
    tc__cu_report_kernel(r, "cuda.conv.igemm-half weight pack rows", (const void *)k_hg_wpack_row,
                         256, 0);
    tc__cu_report_kernel(r, "cuda.conv.igemm-half merge", (const void *)k_hg_merge, 256, 0);
}

} // namespace

TC__CU_SOLVER(tc__solver_cuda_conv_igemm_half) = {
    .name = "cuda.conv.igemm-half",
    .backend = TC_BACKEND_CUDA,
    .ops = TC_OP_CONV,
    .summary = "implicit-GEMM conv layer in float16 / bfloat16 on Hopper's tensor cores (wgmma m64nNk16, fp32 accumulation), channels-last in and out: 128 x 64/128 tiles, BK 64 in 128-byte-swizzled shared memory, 4-8 cp.async stages of 16-byte channel copies with zero padding; few-channel layers (conv1) merged along the last axis first; the weights repacked once for plans that hold them (per call on the device otherwise); bias, activation and residual fused into a 16-byte store through shared memory, rounded once; any stride, dilation, groups, 1D-3D.",
    .available = hg_available,
    .applicable = hg_applicable,
    .estimate = hg_estimate,
    .execute = hg_execute,
    .wpack_size = hg_wpack_size,
    .wpack = hg_wpack_host,
    .device_workspace = hg_device_ws,
    .caps = TC__CAP_ALL | TC__CAP_WEIGHTS_CL,
    .report = hg_report,
};
