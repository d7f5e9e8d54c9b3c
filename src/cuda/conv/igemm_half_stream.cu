/*
 * igemm_half_stream.cu - cuda.conv.igemm-half-stream: float16 / bfloat16
 * channels-last conv layers of a short reduction (1x1 layers at stride 1,
 * and conv1-like layers merged first) on Hopper's wgmma (m64nNk16, fp32
 * accumulation), as a stream of the input through resident weights, with
 * cuda.conv.igemm-half's fused epilogue y = act(acc + bias + residual).
 *
 * The layer as a GEMM over M flattened rows of its run problem, with R taps
 * as row offsets: row m's output = sum over taps t and 64-channel chunks of
 * A[m + t * toff] . W[t]. A 1x1 layer (stride 1, no padding): R = 1, the
 * rows the N x positions of x itself. A merged layer (hs_merged,
 * igemm_half_merge.cuh: conv1's 7x7/2 on C = 3 becomes a stride-1 layer of
 * 48 channels over the merged input xm, N x Hm x Wm, Hm = out_h + R - 1,
 * and an R x 1 mask): toff = Wm, and the rows of h' >= out_h (3 of 115 a
 * conv1 image) are computed and dropped; rows past the end read zeros
 * (the copy engine's out-of-bounds fill). A strided 1x1 layer (strides up
 * to 8 along y and x, no padding): a tile is TH whole output rows of Wo
 * positions of one image (TH = BM / Wo), its A box 64 channels x sx Wo x sy
 * TH input pixels with element strides (sx, sy) (every input pixel it
 * reads, as the shifted kernel's phase patches), the stage's rows past TH x
 * Wo computed and dropped.
 *
 * A persistent block owns a BN slice of the output channels (of one group)
 * and walks the tiles of BM rows j, j + P, j + 2P, ... (P blocks a slice;
 * the slices of one tile in neighbouring blocks, so that a K past BN reads
 * each A tile from L2 once). Its slice's packed weights (all taps and
 * chunks: cuda.conv.igemm-half-shifted's packed layout and 128-byte
 * swizzle, one 64 x BN box a k step) are copied once at block start and
 * stay in shared memory. A producer warp (one lane) streams the A tiles,
 * one TMA box of 64 channels x BM rows a (tile, tap, chunk) step, into two
 * rings of stages, one for each consumer warpgroup: the block's tile i goes
 * to warpgroup i & 1 (ping-pong: one warpgroup's epilogue runs beside the
 * other's wgmmas) through ring i & 1. Each ring's stages are consumed by
 * one warpgroup, in its own order, so the usual full / empty phase
 * bookkeeping holds (one ring consumed alternately by two warpgroups that
 * run unordered lets a warpgroup wait for a stage's fill two phases ahead
 * of the barrier, which a parity wait cannot tell from a completed one).
 * The epilogue: each warp puts its 16 rows of a 64-row tile into its own
 * part of its warpgroup's fp32 staging tile and stores them itself
 * (hg_store_rows with 32 threads): only __syncwarp, no block or named
 * barrier in the tile loop.
 *
 * Configurations (hsm_cfgs; TILECONV_CUDA_HALF_STREAM_CFG forces one):
 * BM x BN = 128 x 64 and 64 x 128.
 */
#include "cuda/conv/igemm_half_common.cuh" /* mma, loads, weight repack, epilogue */
#include "cuda/conv/igemm_half_merge.cuh"  /* hs_merged, k_hs_merge, hs_wsrc, k_hs_wpack */

#include <math.h>
#include <stdlib.h>

namespace {

constexpr int HSM_BK = 64;     /* channels a chunk: one 128-byte row a position */
constexpr int HSM_MAXS2 = 8;   /* stages a ring at most (two rings) */
constexpr int HSM_NC = 256;    /* consumer threads: two warpgroups */
constexpr int HSM_THREADS = HSM_NC + 32;

struct hsmq {
    int C, K, Cg, Kg, CKP, CK, R, S; /* S = R x CK steps a tile */
    int toff;                        /* rows between consecutive taps */
    int M;                           /* rows of the run problem (x or xm) */
    int ntiles, nkb, nsl, pblk;      /* tiles; slices a group, in all; blocks a slice */
    int merged, HW, Wm, out1;        /* merged: rows of an image Hm x Wm, kept h' < out1 */
    int img, Wo, Ho, TH, nhb;        /* strided 1x1: a tile TH output rows of Wo of one image */
    int abytes;                      /* bytes of an A box */
    int sy;                          /* strided 1x1: the row stride */
    int bm;                          /* rows a tile */
    int ns2;                         /* stages a ring */
    int ring_off, stg_off, bar_off;  /* bytes from the aligned base */
    int act, has_bias, has_res, vec8;
};
/* A: 2D [M rows][C channels]; the packed weights: 2D [K][R x CKP] */
struct hsm_maps {
    CUtensorMap x, w;
};

/* Output position of row tr of tile `tile` (-1: a dropped row): the rows
 * of x (1x1), of xm (merged: h' >= out_h dropped) or TH x Wo rows of one
 * image (IMG: rows past TH x Wo and h >= Ho dropped) */
template <bool IMG>
__device__ __forceinline__ int64_t hsm_rowpos(const hsmq &q, int tile, int tr) {
    if (IMG) {
        if (tr >= q.TH * q.Wo) return -1;
        const int ni = tile / q.nhb, hb = tile - ni * q.nhb;
        const int hl = tr / q.Wo, h = hb * q.TH + hl;
        if (h >= q.Ho) return -1;
        return ((int64_t)ni * q.Ho + h) * q.Wo + tr - hl * q.Wo;
    }
    const int m = tile * q.bm + tr;
    if (m >= q.M) return -1;
    if (!q.merged) return m;
    const int n = m / q.HW, rem = m - n * q.HW;
    if (rem >= q.out1 * q.Wm) return -1;
    return (int64_t)n * (q.out1 * q.Wm) + rem;
}
/* A warp's 16 rows of the staging tile out (hg_store_items, 32 threads).
 * The residual's loads go one item at a time at BN = 128 (batched, the
 * 64 x 128 instances spilt 32-40 bytes) and two at BN = 64; the rows'
 * residual lines were prefetched into L2 before the tile's main loop. */
template <int BN, bool BF, class RowPos>
__device__ __forceinline__ void hsm_store(const float *cs, int lane, int n0, int g, const hsmq &p,
                                          const uint16_t *bias, const uint16_t *res, uint16_t *y,
                                          RowPos rowpos) {
    if (p.has_res)
        hg_store_items_act<BN == 64 ? 2 : 1, BN, BF, 16, 32>(cs, lane, n0, g, p, bias, res, y, rowpos);
    else
        hg_store_items_act<1, BN, BF, 16, 32>(cs, lane, n0, g, p, bias, res, y, rowpos);
}

/* MT row tiles of 64 a warpgroup tile (BM = 64 MT), BN output channels;
 * BF: bfloat16; IMG: tiles of whole output rows (strided 1x1 layers; its
 * own instance, so that the row forms' registers are untouched) */
template <int MT, int BN, bool BF, bool IMG>
__global__ void __launch_bounds__(HSM_THREADS, 1)
    k_hsm_conv(const uint16_t *__restrict__ bias, const uint16_t *res, uint16_t *y, const hsmq q,
               const __grid_constant__ hsm_maps tm) {
#if IG_WGMMA
    constexpr int BM = 64 * MT;
    constexpr int AS = BM * 128; /* bytes of an A stage */
    constexpr int WS = BN * 128; /* bytes of a weight k step */
    constexpr int CP = BN + 4;   /* the staging tile's row pitch (floats) */
    extern __shared__ uint8_t hsm_smem_raw[];
    /* the 128-byte swizzle takes its phase from address bits 7-9: 1 KiB alignment */
    uint8_t *smem = (uint8_t *)(((uintptr_t)hsm_smem_raw + 1023) & ~(uintptr_t)1023);
    uint8_t *wsm = smem;                /* the slice's weights, q.S steps */
    uint8_t *ring = smem + q.ring_off;  /* ring w: stages w ns2 .. (w + 1) ns2 - 1 */
    uint64_t *full = (uint64_t *)(smem + q.bar_off), *empty = full + 2 * HSM_MAXS2;
    uint64_t *wfull = empty + 2 * HSM_MAXS2;
    const int tid = threadIdx.x;
    const int sl = (int)(blockIdx.x % (unsigned)q.nsl), j = (int)(blockIdx.x / (unsigned)q.nsl);
    const int g = sl / q.nkb, k0 = (sl - g * q.nkb) * BN;
    const int R = q.R, S = q.S, ns2 = q.ns2;
    if (tid == 0) {
        for (int i = 0; i < 2 * ns2; i++) {
            ig_mbar_init(full + i, 1);
            ig_mbar_init(empty + i, 4); /* lane 0 of each warp of the ring's warpgroup */
        }
        ig_mbar_init(wfull, 1);
        ig_mbar_init_fence();
    }
    __syncthreads();
    if (tid >= HSM_NC) { /* the producer warp: one lane issues every copy */
        if (tid == HSM_NC) {
            const int wrow = g * q.Kg + k0, cx = g * q.Cg;
            /* the weights: step s = (chunk cc = s / R, tap t = s % R) at s WS */
            ig_mbar_expect(wfull, (unsigned)(S * WS));
            for (int s = 0, cc = 0, t = 0; s < S; s++) {
                ig_tma2(wsm + s * WS, &tm.w, t * q.CKP + cc * HSM_BK, wrow, wfull);
                if (++t == R) t = 0, ++cc;
            }
            /* the tiles: tile i of the block into ring i & 1; each ring's
             * slot and phase carried across its tiles (cur: this tile's
             * ring, oth: the other's). The first pass over a ring waits
             * on parity 1 of a fresh empty barrier: complete at once. */
            int slot = 0, oslot = 0;
            unsigned ph = 0, oph = 0;
            int base = 0, obase = ns2; /* the rings' first stage */
            for (int tile = j; tile < q.ntiles; tile += q.pblk) {
                const int m0 = tile * BM;
                const int ni = IMG ? tile / q.nhb : 0, hb = tile - ni * q.nhb;
                for (int s = 0, cc = 0, t = 0; s < S; s++) {
                    const int st = base + slot, row = m0 + t * q.toff;
                    ig_mbar_wait(empty + st, ph ^ 1u);
                    if (IMG) { /* TH rows of Wo outputs: every sx-th pixel of every sy-th row */
                        ig_mbar_expect(full + st, (unsigned)q.abytes);
                        ig_tma5(ring + (size_t)st * AS, &tm.x, cx + cc * HSM_BK, 0,
                                hb * q.TH * q.sy, ni, 0, full + st);
                    } else if (row < q.M) {
                        ig_mbar_expect(full + st, (unsigned)q.abytes);
                        ig_tma2(ring + (size_t)st * AS, &tm.x, cx + cc * HSM_BK, row, full + st);
                    } else {
                        /* a box wholly past the rows (a merged tap of the
                         * last tile): every row it feeds is dropped, the
                         * stage is released as it is */
                        ig_mbar_arrive(full + st);
                    }
                    if (++slot == ns2) slot = 0, ph ^= 1u;
                    if (++t == R) t = 0, ++cc;
                }
                int ts = slot; slot = oslot; oslot = ts;
                unsigned tp = ph; ph = oph; oph = tp;
                ts = base; base = obase; obase = ts;
            }
        }
        return;
    }
    const int wg = tid >> 7, wr = (tid >> 5) & 3, lane = tid & 31;
    float *cs = (float *)(smem + q.stg_off) + wg * 64 * CP; /* the warpgroup's 64 x BN tile */
    /* the descriptors' low words as bases plus offsets in 16-byte units: an
     * A stage AS / 16, a 64-row tile 512, a weight step WS / 16, a k16 step
     * 2 (32 bytes along the row) */
    constexpr uint64_t DHI = ig_desc_sw128_hi << 32;
    const unsigned dw0 = (unsigned)ig_desc_sw128(wsm);
    const unsigned da0 = (unsigned)ig_desc_sw128(ring + (size_t)wg * ns2 * AS);
    uint64_t *fb = full + wg * ns2, *eb = empty + wg * ns2;
    int slot = 0;
    unsigned ph = 0;
    ig_mbar_wait(wfull, 0);
    for (int tile = j + wg * q.pblk; tile < q.ntiles; tile += 2 * q.pblk) {
        float acc[MT][BN / 2];
        hg_acc_zero(acc);
        /* the residual rows this warp stores after the main loop, into L2
         * now (one 128-byte line a lane a request) */
        if (q.has_res) {
            constexpr int LPR = BN * 2 / 128; /* lines a row */
#pragma unroll
            for (int i = lane; i < MT * 16 * LPR; i += 32) {
                const int mt = i / (16 * LPR), rr = i - mt * 16 * LPR, r = rr / LPR;
                const int64_t o = hsm_rowpos<IMG>(q, tile, mt * 64 + wr * 16 + r);
                if (o >= 0 && k0 + (rr - r * LPR) * 64 < q.Kg)
                    asm volatile("prefetch.L2 [%0];\n" ::"l"(
                        res + o * q.K + (int64_t)g * q.Kg + k0 + (rr - r * LPR) * 64));
            }
        }
        int pslot = 0;
        for (int s = 0; s < S; s++) {
            ig_mbar_wait(fb + slot, ph);
            const unsigned a0 = da0 + (unsigned)(slot * (AS / 16));
            const unsigned w0 = dw0 + (unsigned)(s * (WS / 16));
            /* (the last chunk's k16 slices past the channels, zeros in both
             * operands, are not skipped: a data-dependent wgmma count made
             * ptxas serialize the wgmmas, C7520) */
            ig_wg_fence();
#pragma unroll
            for (int k16 = 0; k16 < HSM_BK / 16; k16++)
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
                    hg_mma<BN, BF>(acc[mt], DHI | (uint64_t)(a0 + (unsigned)(mt * 512 + 2 * k16)),
                                   DHI | (uint64_t)(w0 + (unsigned)(2 * k16)));
            ig_wg_commit();
            ig_wg_wait<1>();
            /* the previous step's wgmmas are done: its stage is free */
            if (s > 0 && lane == 0) ig_mbar_arrive(eb + pslot);
            pslot = slot;
            if (++slot == ns2) slot = 0, ph ^= 1u;
        }
        ig_wg_wait<0>();
        if (lane == 0) ig_mbar_arrive(eb + pslot);
        /* the epilogue, warp by warp: its 16 rows of each 64-row tile
         * through its own rows of the staging tile */
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
            hg_acc_to_smem<BN>(acc[mt], cs, 0);
            __syncwarp();
            const int tb = mt * 64 + wr * 16; /* the warp's first row of the tile */
            hsm_store<BN, BF>(cs + wr * 16 * CP, lane, k0, g, q, bias, res, y,
                              [&](int r) -> int64_t { return hsm_rowpos<IMG>(q, tile, tb + r); });
            __syncwarp();
        }
    }
#endif
}

/* ---------------- host side ---------------- */

typedef void (*hsm_kernel)(const uint16_t *, const uint16_t *, uint16_t *, const hsmq,
                           const hsm_maps);
struct hsm_cfg_t {
    int mt, bn;
};
/* 0: 128 x 64; 1: 64 x 128 (a 128 x 128 tile, 128 accumulators a
 * thread, spilt 500 bytes under the 168 registers a thread that 288
 * threads leave) */
#define HSM_NCFG 2
static const hsm_cfg_t hsm_cfgs[HSM_NCFG] = {{2, 64}, {1, 128}};
#define HSM_K4(M, B)                                                                              \
    {{k_hsm_conv<M, B, false, false>, k_hsm_conv<M, B, true, false>},                              \
     {k_hsm_conv<M, B, false, true>, k_hsm_conv<M, B, true, true>}}
/* [cfg][img][bf] */
static const hsm_kernel hsm_tab[HSM_NCFG][2][2] = {HSM_K4(2, 64), HSM_K4(1, 128)};
#undef HSM_K4
static int hsm_attr_set[HSM_NCFG][2][2][IG_NDEV]; /* the shared-memory limit set, per device */

static int hsm_bm(int cfg) { return 64 * hsm_cfgs[cfg].mt; }

static size_t hsm_smem_optin(void) {
    const tc__cu_device *d = tc__cu_dev();
    return d && d->smem_optin ? d->smem_optin : 227 * 1024;
}

/* The problem the kernel runs and its kind: the merged form (*kind
 * HSM_MERGED; k_hs_merge writes its input), or p itself, a 1x1 layer
 * without padding at stride 1 (HSM_FLAT: rows of x) or at strides along y
 * and x only (HSM_IMG: tiles of whole output rows of one image, the input
 * pixels read by a box with element strides); NULL where none */
enum { HSM_FLAT = 0, HSM_MERGED = 1, HSM_IMG = 2 };
static const tc__problem *hsm_run_problem(const tc__problem *p, tc__problem *buf, int *kind) {
    if (hs_merged(p, buf)) {
        if (kind) *kind = HSM_MERGED;
        return buf;
    }
    if (kind) *kind = HSM_FLAT;
    if (p->op != TC_OP_CONV || p->msk[0] * p->msk[1] * p->msk[2] != 1) return NULL;
    for (int i = 0; i < TC__NSP; i++)
        if (p->pad_lo[i] != 0 || p->pad_hi[i] != 0 || p->stride[i] < 1) return NULL;
    if (p->stride[1] == 1 && p->stride[2] == 1 && p->stride[0] == 1) return p;
    /* strided: along y and x only, each at most 8 (the copy engine's
     * element strides) */
    if (p->stride[0] != 1 || p->stride[1] > 8 || p->stride[2] > 8) return NULL;
    if (kind) *kind = HSM_IMG;
    return p;
}

/* The layer planned for configuration cfg (r: the run problem): 0 where
 * it does not fit (the slice's weights, the staging tiles and two stages a
 * ring over shared memory; grid and coordinate limits), else 1 with *q */
static int hsm_plan(const tc__problem *r, int kind, int cfg, hsmq *q) {
    memset(q, 0, sizeof *q);
    const hsm_cfg_t &c = hsm_cfgs[cfg];
    const int bm = hsm_bm(cfg);
    const int merged = kind == HSM_MERGED;
    /* rows: of x (or xm), or the output's rows (strided) */
    const int64_t M = kind == HSM_IMG ? r->N * r->out[0] * r->out[1] * r->out[2]
                                      : r->N * r->in[0] * r->in[1] * r->in[2];
    const int64_t R = r->msk[0] * r->msk[1] * r->msk[2];
    const int64_t Cg = r->C / r->G, Kg = r->K / r->G, CKP = (Cg + HSM_BK - 1) / HSM_BK * HSM_BK;
    /* TMA coordinates (int32): the last tile's rows plus the taps' offsets */
    const int64_t toff = merged ? r->in[2] : 0;
    if (M < 1 || tc__cu_div_up(M, bm) * bm + (R - 1) * toff > INT32_MAX / 2) return 0;
    if (R * CKP > INT32_MAX / 2 || r->K > INT32_MAX / 2 || r->C > INT32_MAX / 2) return 0;
    q->C = (int)r->C; q->K = (int)r->K;
    q->Cg = (int)Cg; q->Kg = (int)Kg;
    q->CKP = (int)CKP; q->CK = (int)(CKP / HSM_BK);
    q->R = (int)R; q->S = (int)(R * q->CK);
    q->toff = (int)toff;
    q->M = (int)M;
    q->ntiles = (int)tc__cu_div_up(M, bm);
    q->abytes = bm * 128;
    q->bm = bm;
    if (kind == HSM_IMG) {
        /* a tile: TH whole output rows of one image (of N x out0 planes),
         * its box sx Wo x sy TH input pixels with element strides sx, sy */
        const int64_t Wo = r->out[2], Ho = r->out[1];
        if (Wo > bm || r->stride[2] * Wo > 256) return 0;
        const int64_t TH0 = bm / Wo, TH = TH0 < Ho ? TH0 : Ho;
        if (r->stride[1] * TH > 256) return 0;
        const int64_t nhb = tc__cu_div_up(Ho, TH), nimg = r->N * r->out[0];
        if (nimg * nhb > INT32_MAX / 2 || r->stride[1] * nhb * TH > INT32_MAX / 2) return 0;
        q->img = 1;
        q->Wo = (int)Wo;
        q->Ho = (int)Ho;
        q->TH = (int)TH;
        q->nhb = (int)nhb;
        q->sy = (int)r->stride[1];
        q->ntiles = (int)(nimg * nhb);
        q->abytes = (int)(TH * Wo * 128);
    }
    q->nkb = (int)tc__cu_div_up(Kg, c.bn);
    if ((int64_t)q->nkb * r->G > INT32_MAX / 2) return 0;
    q->nsl = q->nkb * (int)r->G;
    q->merged = merged;
    if (merged) {
        q->Wm = (int)r->in[2];
        q->HW = (int)(r->in[1] * r->in[2]);
        q->out1 = (int)r->out[1]; /* kept rows h' < out_h (hs_merged keeps out[] and
                                     sets in[1] = out_h + R - 1) */
    }
    q->act = (int)r->act;
    q->has_bias = r->has_bias;
    q->has_res = r->has_residual;
    /* shared memory: weights, the two warpgroups' staging tiles, the rings,
     * the barriers; 1 KiB of alignment */
    const size_t wbytes = (size_t)q->S * c.bn * 128;
    const size_t stg = (size_t)2 * 64 * (c.bn + 4) * sizeof(float);
    const size_t bars = (size_t)(4 * HSM_MAXS2 + 1) * sizeof(uint64_t);
    const size_t lim = hsm_smem_optin();
    const size_t fixed = wbytes + stg + bars + 1024;
    if (fixed >= lim) return 0;
    int64_t ns2 = (int64_t)((lim - fixed) / (2 * (size_t)bm * 128));
    if (ns2 > HSM_MAXS2) ns2 = HSM_MAXS2;
    if (ns2 < 2) return 0;
    q->ns2 = (int)ns2;
    q->ring_off = (int)wbytes;
    q->stg_off = (int)(wbytes + 2 * ns2 * bm * 128);
    q->bar_off = (int)(q->stg_off + stg);
    return 1;
}
static size_t hsm_smem(const hsmq &q) {
    return (size_t)q.bar_off + (4 * HSM_MAXS2 + 1) * sizeof(uint64_t) + 1024;
}

/* Seconds by the model (not measured): the larger of
 *  - DRAM: x (or xm) once, y, a residual, at HSM_BWF of the nominal
 *    bandwidth (the 1x1 layer is memory-bound);
 *  - L2 to shared memory: every (tile, tap, chunk) box, each slice's blocks
 *    reading every tile (K / BN slices), at HSM_L2F x the nominal DRAM
 *    bandwidth;
 *  - the tensor cores: the busiest SM's tiles x a tile's MACs at HSM_RATE
 *    of an SM's share of the dense 16-bit rate (14 x the nominal FP32 peak),
 *    0.8 of it for 64-channel tiles;
 *  - the bytes in flight: an SM's rings' bytes a latency (HSM_LAT);
 * plus a block's start (the weights' copy: HSM_LAT) and a launch; merged
 * layers add k_hs_merge's pass (x read, xm written) at HSM_BWF. */
#define HSM_BWF 0.85
#define HSM_L2F 2.0
#define HSM_RATE 0.6
#define HSM_LAT 1.5e-6
static double hsm_time(const tc__problem *p, const tc__problem *r, const hsmq &q, int cfg) {
    const tc__cu_device *d = tc__cu_dev();
    const double sms = d && d->sms > 0 ? d->sms : 132;
    const double peak = (d ? d->peak_flops32 : 67e12) * 14.0, bw = d ? d->bandwidth : 3.35e12;
    const hsm_cfg_t &h = hsm_cfgs[cfg];
    const double es = 2.0, bm = hsm_bm(cfg);
    const double xb = (double)q.M * q.C * es;
    const double dram = (xb + (double)tc__y_count(p) * es * (1 + p->has_residual)) / (HSM_BWF * bw);
    const double l2 = (double)q.ntiles * q.abytes * q.S * q.nsl / (HSM_L2F * bw);
    const double blocks = q.nsl * (double)q.pblk;
    const double tiles_sm = ceil((double)q.ntiles / q.pblk) * ceil(blocks / sms);
    double tc = tiles_sm * 2.0 * bm * h.bn * (double)q.CKP * q.R / (HSM_RATE * peak / sms);
    if (h.bn == 64) tc /= 0.8;
    /* an SM's bytes in flight over a latency: its share of the stream */
    const double inflight = 2.0 * q.ns2 * bm * 128.0 * ceil(blocks / sms);
    const double lat = (double)q.ntiles * q.abytes * q.S * q.nsl / sms / (inflight / HSM_LAT);
    double t = dram;
    if (l2 > t) t = l2;
    if (tc > t) t = tc;
    if (lat > t) t = lat;
    t += HSM_LAT + 3e-6;
    if (q.merged)
        t += ((double)tc__x_count(p) * es + xb) / (HSM_BWF * bw) + 3e-6;
    (void)r;
    return t;
}

/* blocks a slice: the resident blocks (one an SM) shared among the
 * slices, or TILECONV_CUDA_HALF_STREAM_BLOCKS (tests: many tiles a block) */
static int hsm_pblk(const hsmq &q) {
    const tc__cu_device *d = tc__cu_dev();
    const int sms = d && d->sms > 0 ? d->sms : 132;
    int pb = sms / q.nsl;
    const char *f = tc__knob_get(TC__KNOB_CUDA_HALF_STREAM_BLOCKS);
    if (f && atoi(f) > 0) pb = atoi(f);
    if (pb < 1) pb = 1;
    if (pb > q.ntiles) pb = q.ntiles;
    return pb;
}

/* The configuration: TILECONV_CUDA_HALF_STREAM_CFG, else the one of least
 * modelled time (*t). -1: none fits. */
static int hsm_choose(const tc__problem *p, const tc__problem *r, int kind, hsmq *q,
                      double *t = NULL) {
    const char *f = tc__knob_get(TC__KNOB_CUDA_HALF_STREAM_CFG);
    if (f && f[0] >= '0' && f[0] < '0' + HSM_NCFG && !f[1]) {
        const int cfg = f[0] - '0';
        if (!hsm_plan(r, kind, cfg, q)) return -1;
        q->pblk = hsm_pblk(*q);
        if (t) *t = hsm_time(p, r, *q, cfg);
        return cfg;
    }
    int best = -1;
    double bt = 0;
    for (int cfg = 0; cfg < HSM_NCFG; cfg++) {
        hsmq c;
        if (!hsm_plan(r, kind, cfg, &c)) continue;
        c.pblk = hsm_pblk(c);
        const double tm = hsm_time(p, r, c, cfg);
        if (best < 0 || tm < bt) {
            best = cfg;
            bt = tm;
            *q = c;
        }
    }
    if (t) *t = bt;
    return best;
}

/* the packed weights' map (igemm_half_merge.cuh): merged, or the plain
 * K x CKP of a 1x1 layer */
static hs_wmap hsm_map(const tc__problem *p) {
    tc__problem pm;
    int merged = 0;
    const tc__problem *r = hsm_run_problem(p, &pm, &merged);
    if (!r) {
        hs_wmap m;
        memset(&m, 0, sizeof m);
        return m;
    }
    return hs_map_run(p, r, merged == HSM_MERGED);
}
static size_t hsm_wpack_bytes(const tc__problem *p) {
    tc__problem pm;
    const tc__problem *r = hsm_run_problem(p, &pm, NULL);
    return r ? hs_wpack_bytes_run(p, r) : 0;
}

/* the two tensor maps (r: the run problem): 0 on success. A: rows x C
 * (2D), or for strided layers x itself as C x W x H x (N planes) x 1 read
 * by boxes of 64 channels x sx Wo x sy TH pixels with element strides
 * (1, sx, sy, 1, 1): Wo x TH pixels, as cuda.conv.igemm-half-shifted's
 * phase patches */
static int hsm_tensor_maps(const hsmq &q, int cfg, const tc__problem *r, const void *x,
                           const void *wp, hsm_maps *tm) {
    PFN_cuTensorMapEncodeTiled_v12000 enc = ig_tma_encoder();
    if (!enc) return 1;
    const cuuint64_t e = sizeof(uint16_t);
    const cuuint32_t one[5] = {1, 1, 1, 1, 1};
    if (q.img) {
        const cuuint64_t C = (cuuint64_t)q.C, W = (cuuint64_t)r->in[2], H = (cuuint64_t)r->in[1];
        const cuuint64_t NP = (cuuint64_t)(r->N * r->in[0]);
        const cuuint64_t xd[5] = {C, W, H, NP, 1};
        const cuuint64_t xs[4] = {C * e, C * e * W, C * e * W * H, C * e * W * H * NP};
        const cuuint32_t xb[5] = {HSM_BK, (cuuint32_t)(r->stride[2] * q.Wo),
                                  (cuuint32_t)(r->stride[1] * q.TH), 1, 1};
        const cuuint32_t xe[5] = {1, (cuuint32_t)r->stride[2], (cuuint32_t)r->stride[1], 1, 1};
        if (enc(&tm->x, CU_TENSOR_MAP_DATA_TYPE_UINT16, 5, (void *)x, xd, xs, xb, xe,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
            return 1;
    }
    const cuuint64_t xd[2] = {(cuuint64_t)q.C, (cuuint64_t)(q.M > 0 ? q.M : 1)},
                     xs[1] = {(cuuint64_t)q.C * e};
    const cuuint32_t xb[2] = {HSM_BK, (cuuint32_t)hsm_bm(cfg)};
    const cuuint64_t rl = (cuuint64_t)q.R * q.CKP;
    const cuuint64_t wd[2] = {rl, (cuuint64_t)q.K}, ws[1] = {rl * e};
    const cuuint32_t wb[2] = {HSM_BK, (cuuint32_t)hsm_cfgs[cfg].bn};
    if (!q.img && enc(&tm->x, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, (void *)x, xd, xs, xb, one,
                      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                      CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
        return 1;
    if (enc(&tm->w, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, (void *)wp, wd, ws, wb, one,
            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
        return 1;
    return 0;
}

static tc_status hsm_launch(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p0 = a->p;
    tc__problem pm;
    int kind = 0;
    const tc__problem *p = hsm_run_problem(p0, &pm, &kind);
    const int merged = kind == HSM_MERGED;
    cudaStream_t s = b->s;
    hsmq q;
    const int cfg = p ? hsm_choose(p0, p, kind, &q) : -1;
    if (cfg < 0)
        return tc__error(TC_ERR_NOT_APPLICABLE,
                         "cuda.conv.igemm-half-stream: no tile configuration fits this layer");
    const int bf = p->dtype == TC_BFLOAT16;
    void *wpk = NULL, *own_b = NULL, *own_r = NULL, *xa = NULL;
    const void *db = NULL, *dr = NULL, *dx = NULL, *wp = NULL;
    /* the plan's weights come packed (held on the device); a 1x1 layer's
     * packed rows are its C/G channels (R = 1) */
    tc_status st = hs_prepare(b, p0, p, merged, q.Cg, q.CKP, merged ? q.R : 1, a->wpack, &wpk, &xa, &wp,
                              &dx, s);
    if (st == TC_OK) st = hg_epi_operands(a, b, &db, &dr, &own_b, &own_r);
    hsm_maps tm;
    memset(&tm, 0, sizeof tm);
    if (st == TC_OK && hsm_tensor_maps(q, cfg, p, dx, wp, &tm))
        st = tc__error(TC_ERR_BACKEND, "cuda.conv.igemm-half-stream: tensor map encoding failed");
    if (st == TC_OK) {
        q.vec8 = !(q.K & 7) && !(q.Kg & 7) && !((uintptr_t)b->y & 15) && !((uintptr_t)dr & 15) &&
                 !((uintptr_t)db & 15);
        const hsm_kernel k = hsm_tab[cfg][q.img][bf];
        cudaError_t e =
            hg_smem_limit((const void *)k, hsm_smem_optin(), hsm_attr_set[cfg][q.img][bf]);
        if (e != cudaSuccess) {
            st = tc__cu_fail(e, "cudaFuncSetAttribute (cuda.conv.igemm-half-stream)", __FILE__,
                             __LINE__);
        } else {
            const unsigned grid = (unsigned)q.nsl * (unsigned)q.pblk;
            k<<<grid, HSM_THREADS, hsm_smem(q), s>>>((const uint16_t *)db, (const uint16_t *)dr,
                                                     (uint16_t *)b->y, q, tm);
            e = cudaGetLastError();
            if (e != cudaSuccess) st = tc__cu_fail(e, "launch k_hsm_conv", __FILE__, __LINE__);
        }
    }
    tc__cu_free(wpk, s);
    tc__cu_free(xa, s);
    tc__cu_free(own_b, s);
    tc__cu_free(own_r, s);
    return st;
}

static int hsm_available(void) { return tc__cu_available(); }

static int hsm_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    (void)e;
    const char *no = hs_common_why(p);
    tc__problem pm;
    int kind = 0;
    const tc__problem *r = NULL;
    if (no)
        ; /* the common checks' reason */
    else if (!(r = hsm_run_problem(p, &pm, &kind)))
        no = "short-reduction layers only: 1x1 without padding (strides up to 8 along y and x, 1 "
             "along depth), or a 2D layer of one group and dilation 1 whose row stride x mask "
             "width x C is at most 64 (merged: conv1's 7x7/2 with C = 3)";
    else if (kind != HSM_MERGED && p->C % 8)
        no = "C a multiple of 8 (the copy engine's 16-byte rows)";
    else if (kind != HSM_MERGED && p->G != 1 && (p->C / p->G) % HSM_BK)
        no = "one group, or C/G a multiple of 64 (a 64-channel box must not cross groups)";
    if (!no) {
        const int64_t lim = INT32_MAX / 2;
        hsmq q;
        if (p->C > lim || p->K > lim || p->N > lim || tc__cu_axis_reach(p) > (1 << 28) ||
            tc__x_count(r) > INT64_MAX / 4 || r->N * r->in[0] * r->in[1] * r->in[2] > lim)
            no = "sizes beyond the kernel's 32-bit row and copy coordinates";
        else if (hsm_choose(p, r, kind, &q) < 0)
            no = kind == HSM_IMG
                     ? "strided 1x1: an output row wider than a 128-row tile, or the slice's "
                       "resident weights (channels x 64 or 128 output channels), the staging "
                       "tiles and two stages a ring exceed shared memory"
                     : "the slice's resident weights (taps x channels x 64 or 128 output "
                       "channels), the staging tiles and two stages a ring exceed shared memory";
        else if (!ig_wgmma_ok()) no = "needs Hopper's wgmma (the sm_90a image on an sm_90 device)";
        else if (!ig_tma_encoder()) no = "needs the driver's cuTensorMapEncodeTiled";
    }
    if (no) {
        if (why) snprintf(why, n, "%s", no);
        return 0;
    }
    return 1;
}

/* The planner's estimate: hsm_time's model of the chosen configuration
 * (its constants not fitted to a device run) where
 * TILECONV_CUDA_HALF_STREAM_AUTO=1; else 1e30: the solver runs by name only
 * until a device run has timed it beside cuda.conv.igemm-half-shifted. */
static double hsm_estimate(const tc__problem *p, const tc__env *e) {
    (void)e;
    const char *f = tc__knob_get(TC__KNOB_CUDA_HALF_STREAM_AUTO);
    if (!(f && f[0] == '1' && !f[1])) return 1e30;
    tc__problem pm;
    int kind = 0;
    const tc__problem *r = hsm_run_problem(p, &pm, &kind);
    hsmq q;
    double t = 1e30;
    if (!r || hsm_choose(p, r, kind, &q, &t) < 0) return 1e30;
    return t;
}

static tc_status hsm_execute(const tc__args *a) { return tc__cu_run(a, NULL, 1, hsm_launch); }

/* the plan's packed weights: K x (tap, CKP), l = tap * CKP + c */
static size_t hsm_wpack_size(const tc__problem *p, const tc__env *e) {
    (void)e;
    return hsm_wpack_bytes(p);
}
static tc_status hsm_wpack_host(const tc__problem *p, const tc__env *e, const void *state,
                                const void *w, void *dst) {
    (void)e;
    (void)state;
    tc__problem pm;
    const tc__problem *r = hsm_run_problem(p, &pm, NULL);
    if (!r) return tc__error(TC_ERR_NOT_APPLICABLE, "cuda.conv.igemm-half-stream: not applicable");
    const hs_wmap m = hsm_map(p);
    hs_wpack_host(p, r, m, w, dst);
    return TC_OK;
}

/* the device workspace (hs_ws_bytes) */
static size_t hsm_device_ws(const tc__problem *p, const tc__env *e, const void *state) {
    (void)e;
    (void)state;
    return hs_ws_bytes(p, hsm_wpack_bytes(p));
}

/* each configuration's kernel, float16 and bfloat16 (no dynamic shared
 * memory: a layer's depends on its weights) */
void hsm_report(tc__cu_report *r) {
    for (int cfg = 0; cfg < HSM_NCFG; cfg++)
        for (int img = 0; img < 2; img++)
            for (int bf = 0; bf < 2; bf++) {
                char name[96];
                snprintf(name, sizeof name, "cuda.conv.igemm-half-stream %dx%d%s %s", hsm_bm(cfg),
                         hsm_cfgs[cfg].bn, img ? " strided" : "", bf ? "bf16" : "f16");
                tc__cu_report_kernel(r, name, (const void *)hsm_tab[cfg][img][bf], HSM_THREADS,
                                     0);
            }
}

} // namespace

TC__CU_SOLVER(tc__solver_cuda_conv_igemm_half_stream) = {
    .name = "cuda.conv.igemm-half-stream",
    .backend = TC_BACKEND_CUDA,
    .ops = TC_OP_CONV,
    .summary = "short-reduction conv layers in float16 / bfloat16 on Hopper's tensor cores (wgmma m64nNk16, fp32 accumulation), channels-last: 1x1 layers without padding (C a multiple of 8; one group, or C/G a multiple of 64) and few-channel 2D layers merged first (conv1: 7x7/2, C = 3), as one GEMM over the flattened rows with the taps as row offsets (strided 1x1 layers: tiles of whole output rows, the input pixels read by element-strided TMA boxes); persistent blocks, each holding its 64 or 128 output channels' packed weights in shared memory for the whole call, a producer warp streaming the input rows by TMA into two rings, two consumer warpgroups taking alternate tiles (one's epilogue beside the other's wgmmas); cuda.conv.igemm-half's fused epilogue. By name only (TILECONV_CUDA_HALF_STREAM_AUTO=1 lets the planner weigh its model).",
    .available = hsm_available,
    .applicable = hsm_applicable,
    .estimate = hsm_estimate,
    .execute = hsm_execute,
    .wpack_size = hsm_wpack_size,
    .wpack = hsm_wpack_host,
    .device_workspace = hsm_device_ws,
    .caps = TC__CAP_ALL | TC__CAP_WEIGHTS_CL,
    .report = hsm_report,
};
