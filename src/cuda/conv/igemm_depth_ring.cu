/*
 * igemm_depth_ring.cu - cuda.conv.igemm-tf32 on 3D zero-padded stride-1
 * layers with C/G <= 32: the shifted views of igemm_shifted.cu made
 * persistent along the first spatial axis (depth), with every weight of
 * the block's 32 output channels resident (wgmma and TMA: the sm_90a
 * image). The default for the 3D TF32 layers it takes;
 * TILECONV_CUDA_CONV_TF32_KERNEL=13 forces it on 2D ones too.
 *
 * The shifted-view kernel loads a whole (m0-1)*d0+1-plane patch per block
 * and streams a weight stage per tap: at 3D 3x3x3 32 @32 (one 32-channel
 * chunk) each block loads 69 KB of patch and 110 KB of weights for 96
 * outputs x 32 channels, and the load does not overlap the block's own
 * compute. Here a block takes items of DS consecutive output planes (of
 * one image and one band of TH output rows) and holds a ring of NSL plane
 * slots: each input plane (TH+(m1-1)*d1 rows x PW columns x 32 channels,
 * one TMA box, 128-byte swizzled) is loaded once per item and serves the
 * m0 output planes that read it; the producer warp loads plane j+NSL-1
 * while the consumers compute on planes j.. . The weights (R taps x 32
 * channels x 32 input channels, 4 KB a tap) are loaded once per block.
 * Consumer warpgroup i takes output rows 64i..64i+63 of the TH * PW
 * positions (columns past the output width computed and dropped), wgmma
 * m64n32k8, all R * 4 of an output plane in one group. Plane slots: SROWS
 * >= PH * PW rows (pixels); the rows past the box (zeroed once) are read
 * only by dropped positions. Cg <= 32 (one chunk: channels past Cg are
 * zero weights; past C the box reads zeros), G == 1 or Cg == 32, zero
 * padding, stride 1. Measured on the H100 (3D 3x3x3 32 @32 b8, device time
 * a call): 91.0 us of kernel + 28.9 of copies = 119.9 against the tiled
 * wgmma kernel's 265.3, the shifted views' 216.8 + 28.3 and cuDNN's 147.5
 * + 52.7 of layout copies; DS = 11 (the plan's choice) against 98.6 us at
 * DS = 2, 103.4 at 4, 126.6 at 16.
 */
#include "cuda/conv/gather.cuh"

#include <math.h>

namespace {

using namespace tc_conv;

template <int MT>
__global__ void __launch_bounds__(MT * 128 + 32, 1)
    k_igemm_depth_ring(const float *__restrict__ bias, float *__restrict__ y, const drp q,
                       const __grid_constant__ sv_maps tm) {
    const igp &a = q.a;
    constexpr int NT = MT * 128;
    extern __shared__ float4 ig_smem4[];
    float *smem = reinterpret_cast<float *>(ig_smem4);
    smem += ((1024 - ((unsigned)__cvta_generic_to_shared(smem) & 1023)) & 1023) / 4;
    float *wsm = smem;                 /* tap t at t * 1024 floats (4 KB) */
    float *pl = wsm + a.R * 1024;      /* slot s at s * SROWS * 32 floats */
    uint64_t *full = reinterpret_cast<uint64_t *>(pl + q.NSL * q.SROWS * 32),
             *empty = full + DR_MAXSL, *wbar = empty + DR_MAXSL;
    const int tid = threadIdx.x;
    const int gcol = blockIdx.y, g = gcol / q.ktiles, k0 = (gcol - g * q.ktiles) * 32;
    const int PPX = q.PH * q.PW;
    /* the slots' rows past the box: zeros (read only by dropped positions) */
    for (int s = 0; s < q.NSL; s++)
        for (int i = PPX * 32 + tid; i < q.SROWS * 32; i += NT + 32) pl[s * q.SROWS * 32 + i] = 0.f;
    if (tid == 0) {
        for (int i = 0; i < q.NSL; i++) {
            ig_mbar_init(full + i, 1);
            ig_mbar_init(empty + i, NT / 32);
        }
        ig_mbar_init(wbar, 1);
        ig_mbar_init_fence();
    }
    ig_proxy_fence();
    __syncthreads();
    if (tid >= NT) { /* the producer warp: one lane issues every copy */
        if (tid == NT) {
            ig_mbar_expect(wbar, (unsigned)a.R * 4096u);
            for (int t = 0; t < a.R; t++)
                ig_tma2(wsm + t * 1024, &tm.w, t * q.CKP, g * a.Kg + k0, wbar);
            const unsigned pbytes = (unsigned)PPX * 128u;
            int slot = 0;
            unsigned ph = 0;
            int64_t L = 0; /* planes loaded */
            for (int64_t it = blockIdx.x; it < q.items; it += gridDim.x) {
                const int seg = (int)(it % q.nseg);
                const int64_t u = it / q.nseg;
                const int rb = (int)(u % q.nrb), n = (int)(u / q.nrb);
                const int oz0 = seg * q.DS, ds = min(q.DS, q.out0 - oz0), nj = ds + q.PD0 - 1;
                for (int j = 0; j < nj; j++, L++) {
                    if (L >= q.NSL) ig_mbar_wait(empty + slot, ph ^ 1u);
                    ig_mbar_expect(full + slot, pbytes);
                    ig_tma5(pl + slot * q.SROWS * 32, &tm.x, g * a.Cg, -a.p2, rb * q.TH - a.p1,
                            oz0 - a.p0 + j, n, full + slot);
                    if (++slot == q.NSL) slot = 0, ph ^= 1u;
                }
            }
        }
        return;
    }
    const int wgi = tid >> 7, warp = (tid >> 5) & 3, lane = tid & 31, gq = lane >> 2,
              tq = lane & 3;
    /* this thread's output rows m (h = 0, 1) of the TH * PW positions: row
     * r of the band, column c; its channels k0 + 8j + 2tq + e */
    int pr[2], pc[2];
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int m = wgi * 64 + warp * 16 + gq + 8 * h;
        pr[h] = m / q.PW;
        pc[h] = m - pr[h] * q.PW;
    }
    const int64_t OP = (int64_t)a.out1 * a.out2, KOP = (int64_t)q.out0 * OP;
    float bv[4][2];
    int64_t kof[4][2]; /* channel offsets in y, -1: past Kg */
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const int k = k0 + 8 * j + 2 * tq + e;
            const int kk = g * a.Kg + k;
            bv[j][e] = k < a.Kg && bias ? __ldg(bias + kk) : 0.f;
            kof[j][e] = k < a.Kg ? (int64_t)kk * KOP : -1;
        }
    const unsigned dw0 = (unsigned)ig_desc_sw128(wsm);
    const unsigned dp0 = (unsigned)ig_desc_sw128(pl + wgi * 64 * 32);
    constexpr uint64_t DHI = ig_desc_sw128_hi << 32;
    const unsigned SLOTU = (unsigned)q.SROWS * 8u; /* a slot in 16-byte units */
    const unsigned rstep = (unsigned)(a.d1 * q.PW) * 8u, cstep = (unsigned)a.d2 * 8u;
    ig_mbar_wait(wbar, 0);
    int cws = 0, fs = 0, sb = 0; /* the next plane waited for / freed, the item's first */
    unsigned cwp = 0;
    for (int64_t it = blockIdx.x; it < q.items; it += gridDim.x) {
        const int seg = (int)(it % q.nseg);
        const int64_t u = it / q.nseg;
        const int rb = (int)(u % q.nrb), n = (int)(u / q.nrb);
        const int oz0 = seg * q.DS, ds = min(q.DS, q.out0 - oz0), nj = ds + q.PD0 - 1;
        const int oy0 = rb * q.TH;
        int64_t yo[2]; /* position offsets in plane oz0 of image n, -1: dropped */
#pragma unroll
        for (int h = 0; h < 2; h++)
            yo[h] = pr[h] < q.TH && oy0 + pr[h] < a.out1 && pc[h] < a.out2
                        ? (int64_t)n * a.K * KOP + oz0 * OP + (int64_t)(oy0 + pr[h]) * a.out2 + pc[h]
                        : -1;
        int so = sb; /* slot of plane o (the output plane's first tap plane) */
        for (int o = 0; o < ds; o++) {
            for (int i = o == 0 ? q.PD0 : 1; i > 0; i--) {
                ig_mbar_wait(full + cws, cwp);
                if (++cws == q.NSL) cws = 0, cwp ^= 1u;
            }
            float acc[16];
#pragma unroll
            for (int i = 0; i < 16; i++) {
                acc[i] = 0.f;
                asm volatile("" : "+f"(acc[i]));
            }
            ig_wg_fence();
            /* the taps' views: plane slot s, row r1 * d1 * PW + column r2 *
             * d2 pixels in, counted (with the in-plane offsets read from a
             * shared table, ncu put 26% of the stall samples on the adds
             * waiting for those loads) */
            unsigned wa = dw0;
            for (int r0 = 0; r0 < a.m0; r0++) {
                int s = so + r0 * a.d0;
                if (s >= q.NSL) s -= q.NSL;
                unsigned prow = dp0 + (unsigned)s * SLOTU;
                for (int r1 = 0; r1 < a.m1; r1++, prow += rstep) {
                    unsigned pa = prow;
                    for (int r2 = 0; r2 < a.m2; r2++, pa += cstep, wa += 256u) {
#pragma unroll
                        for (int k8 = 0; k8 < 4; k8++)
                            ig_wgmma<32>(acc, DHI | (pa + 2u * k8), DHI | (wa + 2u * k8));
                    }
                }
            }
            ig_wg_commit();
            ig_wg_wait<0>();
            /* plane o is read by no later output plane of the item */
            if (lane == 0) ig_mbar_arrive(empty + fs);
            if (++fs == q.NSL) fs = 0;
            /* acc[4j + 2h + e]: row h, channel 8j + 2tq + e */
#pragma unroll
            for (int h = 0; h < 2; h++) {
                if (yo[h] < 0) continue;
                float *yp = y + yo[h] + (int64_t)o * OP;
#pragma unroll
                for (int j = 0; j < 4; j++)
#pragma unroll
                    for (int e = 0; e < 2; e++)
                        if (kof[j][e] >= 0) yp[kof[j][e]] = acc[4 * j + 2 * h + e] + bv[j][e];
            }
            if (++so == q.NSL) so = 0;
        }
        /* the item's last PD0 - 1 planes */
        for (int j = ds; j < nj; j++) {
            if (lane == 0) ig_mbar_arrive(empty + fs);
            if (++fs == q.NSL) fs = 0;
        }
        sb = fs;
    }
}

} // namespace

namespace tc_conv {

/* The plan: 0 where it does not take the layer, else MT (1
 * or 2 consumer warpgroups) with *q, the block's shared memory and the
 * grid's x (persistent blocks along the items) filled in. TC_CUDA_CONV_
 * TILECONV_CUDA_CONV_RING_PLANES=n forces n output planes an item, TILECONV_CUDA_CONV_GRID=n n blocks
 * along the items (tests: items wrapping the plane ring, several items a
 * block). */
static int dr_plan(const tc__problem *p, const igp &g, int lm, drp *q, size_t *smem,
                   unsigned *gx) {
    for (int i = 0; i < 3; i++)
        if (p->stride[i] != 1) return 0;
    if (lm != IG_ZEROS || g.Cg > SV_BK || g.Cg % 4 || (g.G > 1 && g.Cg != SV_BK)) return 0;
    const tc__cu_device *d = tc__cu_dev();
    if (!d || !d->smem_optin || !cv_wgmma_ok() || !ig_tma_encoder()) return 0;
    q->a = g;
    q->CKP = SV_BK;
    q->a.Rl = g.R * SV_BK;
    q->PW = g.out2 + (g.m2 - 1) * g.d2;
    if (q->PW > 128) return 0;
    q->TH = 128 / q->PW < g.out1 ? 128 / q->PW : g.out1;
    q->PH = q->TH + (g.m1 - 1) * g.d1;
    q->PD0 = (g.m0 - 1) * g.d0 + 1;
    q->NSL = q->PD0 + 1;
    if (q->PH > 256 || q->NSL > DR_MAXSL) return 0;
    const int mt = q->TH * q->PW > 64 ? 2 : 1;
    const int reach = mt * 64 + (g.m1 - 1) * g.d1 * q->PW + (g.m2 - 1) * g.d2;
    const int rows = q->PH * q->PW > reach ? q->PH * q->PW : reach;
    q->SROWS = (rows + 7) / 8 * 8;
    *smem = ((size_t)g.R * 1024 + (size_t)q->NSL * q->SROWS * 32) * sizeof(float) +
            (2 * DR_MAXSL + 1) * sizeof(uint64_t) + 1024;
    if (*smem > d->smem_optin) return 0;
    q->out0 = g.P / (g.out1 * g.out2);
    q->nrb = (int)tc__cu_div_up(g.out1, q->TH);
    q->ktiles = (int)tc__cu_div_up(g.Kg, 32);
    const int64_t cols = (int64_t)q->ktiles * g.G;
    if (cols > 65535 || p->N > INT32_MAX / 2) return 0;
    /* k_igemm_channels_last's one-dimensional grid */
    if (tc__cu_div_up(g.plane, 32) * tc__cu_div_up(g.C, 32) * p->N +
            tc__cu_div_up((int64_t)g.K * SV_BK, 256) > INT32_MAX)
        return 0;
    /* blocks along the items: the SMs over the grid's columns (one block
     * an SM: ~200 KB of shared memory at 3x3x3) */
    int64_t x = tc__cu_div_up((int64_t)d->sms, cols);
    /* planes an item: the fewest waves of items times (DS + 0.5), the half
     * plane the item's extra m0 - 1 input planes and its start */
    const char *fd = tc__knob_get(TC__KNOB_CUDA_CONV_RING_PLANES);
    int best = 1;
    double tb = 1e300;
    for (int ds = 1; ds <= q->out0; ds++) {
        const int64_t it = (int64_t)p->N * q->nrb * tc__cu_div_up(q->out0, ds);
        const double t = (double)tc__cu_div_up(it, x < it ? x : it) * (ds + 0.5);
        if (t < tb - 1e-9) tb = t, best = ds;
    }
    if (fd && atoi(fd) >= 1) best = atoi(fd) < q->out0 ? atoi(fd) : q->out0;
    q->DS = best;
    q->nseg = (int)tc__cu_div_up(q->out0, best);
    q->items = (int64_t)p->N * q->nrb * q->nseg;
    if (x > q->items) x = q->items;
    const char *gv = tc__knob_get(TC__KNOB_CUDA_CONV_GRID);
    if (gv && atoi(gv) >= 1 && atoi(gv) <= 65535) x = atoi(gv);
    *gx = (unsigned)(x < 1 ? 1 : x);
    return mt;
}
int dr_select(const tc__problem *p, const igp &g, int lm, dr_sel *s) {
    s->mt = dr_plan(p, g, lm, &s->q, &s->smem, &s->gx);
    return s->mt;
}
/* The depth ring by default in TF32 plans (no TILECONV_CUDA_CONV_TF32_KERNEL) for the
 * 3D layers it takes; *est (may be NULL): seconds, the copies (x read and
 * written, at 2.5 TB/s) plus the busiest block's output planes, each MT *
 * 64 positions x 32 channels x R * 32 MACs at 3.0 times the nominal FP32
 * rate per SM, in waves of blocks where the grid has more blocks than
 * SMs. It gave 0.134 ms at 3D 3x3x3 32 @32 b8 against 0.133 measured in a
 * single call (the kernel alone ran at 3.4x: 91 us for 22 planes a
 * block). */
int dr_default(const tc__problem *p, const igp &g, int lm, double *est, dr_sel *sel) {
    if (g.m0 < 2 || tc__knob_get(TC__KNOB_CUDA_CONV_TF32_KERNEL)) return 0;
    dr_sel s;
    if (!dr_select(p, g, lm, &s)) return 0;
    const drp &q = s.q;
    const unsigned gx = s.gx;
    const int mt = s.mt;
    if (est) {
        const tc__cu_device *d = tc__cu_dev();
        const double sms = d && d->sms > 0 ? d->sms : 132;
        const double per_sm = (d ? d->peak_flops32 : 67e12) / sms;
        const double planes = (double)tc__cu_div_up(q.items, gx) * q.DS;
        const double waves = ceil((double)gx * q.ktiles * g.G / sms);
        const double fpp = 2.0 * mt * 64.0 * 32.0 * (double)g.R * SV_BK;
        *est = waves * planes * fpp / (3.0 * per_sm) +
               2.0 * (double)p->N * g.plane * g.C * 4 / 2.5e12 + 5e-6;
    }
    if (sel) *sel = s;
    return mt;
}
static int dr_attr_set[IG_NDEV][2];
tc_status dr_run(const tc__args *a, const tc__cu_bufs *b, const dr_sel &sel) {
    const tc__problem *p = a->p;
    const drp &q = sel.q;
    const size_t smem = sel.smem;
    const unsigned gx = sel.gx;
    const int mt = sel.mt;
    const float *db;
    void *own, *xt = NULL;
    float *wt;
    tc_status st = cv_bias(a, b->s, &db, &own);
    if (st) return st;
    if ((st = sv_copies(p, b, q.a, SV_BK, &xt, &wt))) {
        tc__cu_free(own, b->s);
        return st;
    }
    const void *kf =
        mt == 2 ? (const void *)k_igemm_depth_ring<2> : (const void *)k_igemm_depth_ring<1>;
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    int *slot = e == cudaSuccess && dev >= 0 && dev < IG_NDEV ? &dr_attr_set[dev][mt - 1] : NULL;
    if (e == cudaSuccess && (!slot || !__atomic_load_n(slot, __ATOMIC_ACQUIRE))) {
        e = cudaFuncSetAttribute(kf, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)tc__cu_dev()->smem_optin);
        if (e == cudaSuccess && slot) __atomic_store_n(slot, 1, __ATOMIC_RELEASE);
    }
    if (e == cudaSuccess) {
        /* the tensor maps: x one plane a box (a shifted-view plan with PD0
         * = 1), wT one tap of 32 output channels */
        svp qs;
        memset(&qs, 0, sizeof qs);
        qs.a = q.a;
        qs.PW = q.PW;
        qs.PH = q.PH;
        qs.PD0 = 1;
        sv_maps tm;
        memset(&tm, 0, sizeof tm);
        if (sv_tensor_maps(qs, 32, xt, wt, p->N, &tm)) {
            tc__cu_free(xt, b->s);
            tc__cu_free(own, b->s);
            return tc__error(TC_ERR_INTERNAL, "cuda.conv.igemm-tf32: cuTensorMapEncodeTiled "
                                              "failed for the depth-ring kernel");
        }
        const dim3 grid(gx, (unsigned)(q.ktiles * q.a.G));
        if (mt == 2)
            k_igemm_depth_ring<2><<<grid, 288, smem, b->s>>>(db, (float *)b->y, q, tm);
        else
            k_igemm_depth_ring<1><<<grid, 160, smem, b->s>>>(db, (float *)b->y, q, tm);
        e = cudaGetLastError();
    }
    tc__cu_free(xt, b->s);
    tc__cu_free(own, b->s);
    if (e != cudaSuccess) return tc__cu_fail(e, "launch k_igemm_depth_ring", __FILE__, __LINE__);
    return TC_OK;
}

/* at the opt-in shared memory (the attribute they are launched with) */
void dr_report(tc__cu_report *r) {
    const tc__cu_device *d = tc__cu_dev();
    const size_t sm = d ? d->smem_optin : 0;
    const void *k[2] = {(const void *)k_igemm_depth_ring<1>, (const void *)k_igemm_depth_ring<2>};
    const int nt[2] = {160, 288};
    const char *nm[2] = {"cuda.conv.igemm-tf32 depth ring mt1", "cuda.conv.igemm-tf32 depth ring mt2"};
    for (int i = 0; i < 2; i++) {
        (void)cudaFuncSetAttribute(k[i], cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm);
        (void)cudaGetLastError();
        tc__cu_report_kernel(r, nm[i], k[i], nt[i], sm);
    }
}

} // namespace tc_conv
