/*
 * igemm_half_shifted.cu - cuda.conv.igemm-half-shifted: stride-1 conv
 * layers in float16 / bfloat16 on Hopper's wgmma (m64nNk16, fp32
 * accumulation), channels-last (NLC / NHWC / NDHWC), zero padding, with
 * cuda.conv.igemm-half's fused epilogue y = act(acc + bias + residual).
 *
 * The TF32 shifted-view form (igemm_shifted.cu) in half precision: a block
 * computes TH output rows of one output plane of one image over the padded
 * width PW = out2 + (m2 - 1) d2 (positions m = r PW + c, r < TH; the
 * columns past the output width are computed and dropped), BM = 64, 128 or
 * 256 positions, for BN = 64 or 128 output channels. For each chunk of 64
 * input channels a producer warp copies the input patch those rows read
 * (PD0 planes x PH rows x PW columns, one pixel's 64 channels a 128-byte
 * row) with one tensor-memory-accelerator box of x itself (channels-last
 * needs no copy; outside the input the box reads zeros: the padding), in
 * the 128-byte swizzle wgmma reads K-major operands in; tap t's im2col tile
 * is then the same patch shifted by the tap's offset in pixels, so its
 * descriptor is the patch's plus 128 bytes a pixel. Every input pixel
 * crosses L2 once per block and chunk instead of once per tap (the
 * gathered form, cuda.conv.igemm-half, copies it R times). The weights
 * (packed K x (tap, CKP), CKP = C/G rounded up to 64) come one 64-deep k
 * step of BN rows a stage, a 2D box; mbarriers in place of block barriers:
 * the consumer warpgroups wait for their stage's bytes and free it when its
 * wgmmas are done; the producer refills it.
 *
 * Configurations (hs_cfgs, TILECONV_CUDA_HALF_SHIFTED_CFG forces one):
 * consumer warpgroups x row tiles of 64 a warpgroup x BN.
 *
 * Split-k (hs_splits; long loops whose grid leaves an SM's second block
 * slot empty: 3x3 512 @7 at batch 32): a cluster of two blocks
 * shares one output tile, each block half of the 64-channel chunks; both
 * put their fp32 tiles into their own shared memory, and after a cluster
 * barrier each block adds the other's half of the rows (read through
 * distributed shared memory) to its own and stores those rows with the
 * epilogue: no workspace, no second kernel, the epilogue split in two.
 *
 * Strides (up to 8 along y and x) split the patch into phases: phase (a,
 * b) holds input rows sy u + a - py and columns sx v + b - px (one box with
 * element strides sx, sy), and tap (r, s) reads phase (r % sy, s % sx) at
 * (r / sy, s / sx): a 3x3/2 layer is four phase patches of a 2x2, 2x1, 1x2
 * and 1x1 set of shifted views, every input pixel still copied once.
 *
 * Few-channel 2D layers (conv1: 7x7/2, C = 3) run merged
 * (hs_merged): k_hs_merge first writes xm[n][h'][w'][j], j = (dy, s, c),
 * = x[n][h' sy + dy - py][w' sx + s - px][c] (dy < sy, s < S; zeros outside
 * and up to Cm = sy S C rounded up to 8), so that the layer becomes a
 * stride-1 one of Cm channels, a ceil(R / sy) x 1 mask and no padding
 * (7x7/2 x 3 channels: 4 x 1 taps of 48 channels, the weights' missing
 * eighth row zero). 1x1 layers run as one GEMM over the N x positions
 * rows (hs_gemm_rows: the same memory seen as rows of up to 256
 * positions), the patch then being the tile's A block.
 */
#include "cuda/conv/igemm_half_common.cuh" /* mma, loads, weight repack, epilogue */
#include "cuda/conv/igemm_half_merge.cuh"  /* hs_merged, k_hs_merge, hs_wsrc, k_hs_wpack */

#include <math.h>

/* TC_HS_TRACE=1 (bench/hs_trace.sh builds this object so, beside a default
 * libtileconv.a; no CMake build does): k_hs_conv records per block where
 * its warps wait (igemm_half_shifted_trace.h). HS_TR(...) keeps those
 * statements out of every other build. */
#ifndef TC_HS_TRACE
#define TC_HS_TRACE 0
#endif
#if TC_HS_TRACE
#include "cuda/conv/igemm_half_shifted_trace.h"
#define HS_TR(...) __VA_ARGS__
#else
#define HS_TR(...)
#endif

extern "C" const tc__solver tc__solver_cuda_conv_igemm_half; /* its estimate */

namespace {

constexpr int HS_BK = 64;    /* channels a chunk: one 128-byte row a pixel */
constexpr int HS_MAXST = 8;  /* weight stages at most */
constexpr int HS_DEFST = 4;  /* weight stages by default */

struct hsp {
    int C, K, Cg, Kg, CKP, R, CK; /* CK = CKP / 64 chunks */
    int in0, in1, in2, out0, out1, out2, m1, m2, d0, d1, d2, p0, p1, p2;
    int PW, PH, PD0, TH, NPIX, NPIXA, nrb, nst, nbuf;
    int sy, sx, phw, nph; /* strides along y and x; phases: phw along x, nph in all */
    int bar_off; /* bytes from the aligned base to the barriers: past the
                    stages, the patches and the epilogue's fp32 tile */
    int act, has_bias, has_res, vec8;
    int ks; /* split-k: blocks (a cluster along x) sharing a tile, 1 or 2 */
    HS_TR(tc_hs_trace_block *trace;) /* the trace's records (NULL: none) */
};
/* the input (5D: C, in2, in1, in0, N) and the packed weights (2D) */
struct hs_maps {
    CUtensorMap x, w;
};

#if TC_HS_TRACE && IG_WGMMA
/* the SM's cycle counter (64 and 32 bits) and the SM's id; the "memory"
 * clobber keeps them in place among the waits' asm */
__device__ __forceinline__ unsigned long long hs_clk64() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%clock64;\n" : "=l"(t)::"memory");
    return t;
}
__device__ __forceinline__ unsigned hs_clk() {
    unsigned t;
    asm volatile("mov.u32 %0, %%clock;\n" : "=r"(t)::"memory");
    return t;
}
__device__ __forceinline__ unsigned hs_smid() {
    unsigned r;
    asm volatile("mov.u32 %0, %%smid;\n" : "=r"(r));
    return r;
}
#endif

#if IG_WGMMA
/* the generic address of p's word in the cluster's block `rank` (distributed
 * shared memory) */
__device__ __forceinline__ const float *hs_peer(const float *p, unsigned rank) {
    uint64_t r;
    asm volatile("mapa.u64 %0, %1, %2;\n" : "=l"(r) : "l"((uint64_t)(uintptr_t)p), "r"(rank));
    return (const float *)(uintptr_t)r;
}
#endif

/* NWG consumer warpgroups, each MTW row tiles of 64 positions and all BN
 * channels (wgmma m64nBNk16 with both operands in shared memory), and one
 * producer warp; BF: bfloat16 */
template <int NWG, int MTW, int BN, bool BF>
__global__ void __launch_bounds__(NWG * 128 + 32, 1)
    k_hs_conv(const uint16_t *__restrict__ bias, const uint16_t *res, uint16_t *y, const hsp q,
              const __grid_constant__ hs_maps tm) {
#if IG_WGMMA
    HS_TR(const unsigned long long tr_t0 = hs_clk64();
          tc_hs_trace_block *const tb =
              q.trace ? q.trace + (blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)) : NULL;)
    constexpr int NC = NWG * 128;      /* consumer threads */
    constexpr int BM = 64 * NWG * MTW; /* positions a block */
    constexpr int WS = BN * 128;       /* bytes of a weight stage */
    extern __shared__ uint8_t hs_smem_raw[];
    /* the 128-byte swizzle takes its phase from address bits 7-9: 1 KiB alignment */
    uint8_t *smem = (uint8_t *)(((uintptr_t)hs_smem_raw + 1023) & ~(uintptr_t)1023);
    const int NST = q.nst;
    uint8_t *patch = smem + NST * WS; /* nbuf buffers of nph phases of NPIXA 128-byte rows */
    uint64_t *full = (uint64_t *)(smem + q.bar_off), *empty = full + HS_MAXST;
    int *toff = (int *)(empty + HS_MAXST);
    const int tid = threadIdx.x, g = blockIdx.z, k0 = blockIdx.y * BN;
    /* split-k: block sp of the tile's ks (its cluster rank) takes chunks
     * cc0 .. cc1 - 1 */
    const int sp = q.ks > 1 ? (int)(blockIdx.x % q.ks) : 0, bx = (int)(blockIdx.x / q.ks);
    const int cc0 = sp * q.CK / q.ks, cc1 = (sp + 1) * q.CK / q.ks;
    const int rb = bx % q.nrb, u = bx / q.nrb;
    const int oz = u % q.out0, n = u / q.out0;
    const int oy0 = rb * q.TH;
    const int R = q.R, nsteps = (cc1 - cc0) * R;
    HS_TR(if (tb && !(tid & 31)) {
              if (tid < NC) tb->w[tid >> 5].start = tr_t0;
              else tb->pstart = tr_t0;
          }
          if (tb && tid == 0) {
              tb->gstart = ig_globaltimer();
              tb->smid = hs_smid();
              tb->nwarps = NC / 32;
          })
    /* the taps' offsets in patch pixels */
    for (int t = tid; t < R; t += NC + 32) {
        const int r2 = t % q.m2, v = t / q.m2, r1 = v % q.m1, r0 = v / q.m1;
        const int ph = (r1 % q.sy) * q.phw + r2 % q.sx; /* 0 at stride 1 */
        toff[t] = ph * q.NPIXA + ((r0 * q.d0) * q.PH + (r1 / q.sy) * q.d1) * q.PW + (r2 / q.sx) * q.d2;
    }
    if (tid == 0) {
        for (int i = 0; i < NST; i++) {
            ig_mbar_init(full + i, 1);
            ig_mbar_init(empty + i, NC / 32);
        }
        ig_mbar_init_fence();
    }
    /* rows past the box, which views of dropped positions reach: zeros */
    for (int b = 0; b < q.nbuf * q.nph; b++) {
        unsigned *pb = (unsigned *)(patch + (size_t)b * q.NPIXA * 128);
        for (int i = q.NPIX * 32 + tid; i < q.NPIXA * 32; i += NC + 32) pb[i] = 0u;
    }
    ig_proxy_fence();
    __syncthreads();
    HS_TR(if (tb && tid < NC && !(tid & 31)) tb->w[tid >> 5].sync = hs_clk64();)
    if (tid >= NC) { /* the producer warp: one lane issues every copy */
        if (tid == NC) {
            /* step s: weight slot s % NST of phase (s / NST) & 1, chunk cc =
             * s / R, tap t = s % R, counted; the patch of chunk cc with its
             * first tap's weights, into buffer cc & 1 */
            int slot = 0, cc = cc0, t = 0;
            unsigned ph = 0;
            const int wrow = g * q.Kg + k0, cx = g * q.Cg;
            HS_TR(unsigned tr_empty = 0;)
            for (int s = 0; s < nsteps; s++) {
                if (s >= NST) {
                    HS_TR(const unsigned c0 = hs_clk();)
                    ig_mbar_wait(empty + slot, ph ^ 1u);
                    HS_TR(tr_empty += hs_clk() - c0;)
                }
                ig_mbar_expect(full + slot,
                               (unsigned)WS + (t == 0 ? (unsigned)(q.nph * q.NPIX) * 128u : 0u));
                ig_tma2(smem + slot * WS, &tm.w, t * q.CKP + cc * HS_BK, wrow, full + slot);
                /* the patch: phase (a, b) = input rows sy u + a - py,
                 * columns sx v + b - px (one box with element strides sx,
                 * sy; a single phase at stride 1) */
                if (t == 0)
                    for (int a = 0, ph = 0; a < q.nph / q.phw; a++)
                        for (int b = 0; b < q.phw; b++, ph++)
                            ig_tma5(patch + ((size_t)(cc & (q.nbuf - 1)) * q.nph + ph) * q.NPIXA * 128,
                                    &tm.x, cx + cc * HS_BK, b - q.p2, q.sy * oy0 + a - q.p1,
                                    oz - q.p0, n, full + slot);
                if (++slot == NST) slot = 0, ph ^= 1u;
                if (++t == R) t = 0, ++cc;
            }
            HS_TR(if (tb) {
                tb->pend = hs_clk64();
                tb->empty = tr_empty;
            })
        }
        return;
    }
    const int wg = tid >> 7, lane = tid & 31;
    HS_TR(tc_hs_trace_warp *const tw = tb && lane == 0 ? tb->w + (tid >> 5) : NULL;
          unsigned tr_full = 0, tr_wg = 0;)
    float acc[MTW][BN / 2];
    hg_acc_zero(acc);
    /* the descriptors' low words as bases plus offsets in 16-byte units: a
     * weight slot WS / 16, a patch buffer NPIXA * 8, a pixel row 8, a
     * 64-row tile 512, a k16 step 2 (32 bytes along the row); the view of
     * tap t starts toff[t] rows into the patch */
    constexpr uint64_t DHI = ig_desc_sw128_hi << 32;
    const unsigned dw0 = (unsigned)ig_desc_sw128(smem);
    const unsigned dp0 = (unsigned)ig_desc_sw128(patch + (size_t)wg * MTW * 64 * 128);
    int slot = 0, cc = cc0, t = 0, pslot = 0;
    unsigned ph = 0;
    for (int s = 0; s < nsteps; s++) {
        HS_TR(const unsigned c0 = hs_clk();)
        ig_mbar_wait(full + slot, ph);
        HS_TR(if (s == 0) {
            if (tw) tw->first = hs_clk64();
        } else tr_full += hs_clk() - c0;)
        const unsigned w0 = dw0 + (unsigned)(slot * (WS / 16));
        const unsigned p0 = dp0 + (unsigned)((cc & (q.nbuf - 1)) * (q.nph * q.NPIXA * 8) + toff[t] * 8);
        ig_wg_fence();
#pragma unroll
        for (int k16 = 0; k16 < HS_BK / 16; k16++)
#pragma unroll
            for (int mt = 0; mt < MTW; mt++)
                hg_mma<BN, BF>(acc[mt], DHI | (uint64_t)(p0 + (unsigned)(mt * 512 + 2 * k16)),
                               DHI | (uint64_t)(w0 + (unsigned)(2 * k16)));
        ig_wg_commit();
        HS_TR(const unsigned c1 = hs_clk();)
        ig_wg_wait<1>();
        HS_TR(tr_wg += hs_clk() - c1;)
        /* the previous step's wgmmas are done: its weight slot is free (and,
         * after a chunk's last tap, its patch buffer: the host keeps
         * NST <= R + 1, so the producer refills that buffer only after) */
        if (s > 0 && lane == 0) ig_mbar_arrive(empty + pslot);
        pslot = slot;
        if (++slot == NST) slot = 0, ph ^= 1u;
        if (++t == R) t = 0, ++cc;
    }
    HS_TR(const unsigned c2 = hs_clk();)
    ig_wg_wait<0>();
    HS_TR(tr_wg += hs_clk() - c2;
          if (tw) {
              tw->loop = hs_clk64();
              tw->full = tr_full;
              tw->wgmma = tr_wg;
          })
    /* every consumer's wgmmas done and every copy landed (each step's full
     * barrier was waited for): the stages become the output tile. The
     * producer warp has left: the consumers meet at named barrier 1. */
    asm volatile("bar.sync 1, %0;\n" ::"n"(NC) : "memory");
    HS_TR(if (tw) tw->epibar = hs_clk64();)
    float *cs = (float *)smem;
#pragma unroll
    for (int mt = 0; mt < MTW; mt++) hg_acc_to_smem<BN>(acc[mt], cs, (wg * MTW + mt) * 64);
    auto rowpos = [&](int row) -> int64_t {
        const int r = row / q.PW, c = row - r * q.PW;
        if (r >= q.TH || oy0 + r >= q.out1 || c >= q.out2) return -1;
        return (((int64_t)n * q.out0 + oz) * q.out1 + oy0 + r) * q.out2 + c;
    };
    if (q.ks == 1) {
        asm volatile("bar.sync 1, %0;\n" ::"n"(NC) : "memory");
        HS_TR(if (tw) tw->epism = hs_clk64();)
        hg_store_rows<BN, BF, BM, NC>(cs, tid, k0, g, q, bias, res, y, rowpos);
    } else {
        /* both blocks' partial tiles in their shared memory (the cluster
         * barrier's release / acquire orders them; the producer warps
         * have exited); this block's rows sp BM / 2.. get the other's
         * partial sums, then are stored; the final wait keeps this block's
         * shared memory alive until the other has read it */
        ig_cluster_sync();
        constexpr int HR = BM / 2, CP = BN + 4;
        float *mine = cs + sp * HR * CP;
        const float *other = hs_peer(mine, (unsigned)(sp ^ 1));
        for (int i = tid; i < HR * (BN / 4); i += NC) {
            const int r = i / (BN / 4), c4 = 4 * (i - r * (BN / 4));
            float4 a = *(float4 *)(mine + r * CP + c4);
            const float4 o = *(const float4 *)(other + r * CP + c4);
            a.x += o.x; a.y += o.y; a.z += o.z; a.w += o.w;
            *(float4 *)(mine + r * CP + c4) = a;
        }
        ig_cluster_arrive();
        asm volatile("bar.sync 1, %0;\n" ::"n"(NC) : "memory");
        HS_TR(if (tw) tw->epism = hs_clk64();)
        hg_store_rows<BN, BF, HR, NC>(mine, tid, k0, g, q, bias, res, y,
                                      [&](int row) { return rowpos(row + sp * HR); });
        ig_cluster_wait();
    }
    HS_TR(if (tw) {
        tw->end = hs_clk64();
        tw->gend = ig_globaltimer();
    })
#endif
}

/* ---------------- host side ---------------- */

typedef void (*hs_kernel)(const uint16_t *, const uint16_t *, uint16_t *, const hsp, const hs_maps);
struct hs_cfg_t {
    int nwg, mtw, bn;
};
/* 0: 128 x 128 (two warpgroups, one row tile each); 1: 256 x 64 (two
 * warpgroups, two row tiles each: K <= 64); 2: 64 x 128 (one warpgroup:
 * small planes, 7x7); 3: 128 x 64 */
#define HS_NCFG 4
static const hs_cfg_t hs_cfgs[HS_NCFG] = {{2, 1, 128}, {2, 2, 64}, {1, 1, 128}, {2, 1, 64}};
#define HS_K2(W, M, B) {k_hs_conv<W, M, B, false>, k_hs_conv<W, M, B, true>}
static const hs_kernel hs_tab[HS_NCFG][2] = {HS_K2(2, 1, 128), HS_K2(2, 2, 64), HS_K2(1, 1, 128),
                                              HS_K2(2, 1, 64)};
#undef HS_K2
static int hs_attr_set[HS_NCFG][2][IG_NDEV]; /* the shared-memory limit set, per device */

static int hs_threads(int cfg) { return hs_cfgs[cfg].nwg * 128 + 32; }
static int hs_bm(int cfg) { return 64 * hs_cfgs[cfg].nwg * hs_cfgs[cfg].mtw; }

static size_t hs_smem_optin(void) {
    const tc__cu_device *d = tc__cu_dev();
    return d && d->smem_optin ? d->smem_optin : 227 * 1024;
}

/* the block's shared memory: the weight stages and patch buffers (the
 * epilogue's fp32 tile over them, the larger of the two), then the
 * barriers and the tap offsets (never overwritten: an mbarrier's memory is
 * not reused), 1 KiB of alignment; the barriers' offset in *bar_off */
static size_t hs_smem_at(const hsp &q, int cfg, int *bar_off) {
    const size_t main =
        (size_t)q.nst * hs_cfgs[cfg].bn * 128 + (size_t)q.nbuf * q.nph * q.NPIXA * 128;
    const size_t epi = (size_t)hs_bm(cfg) * (hs_cfgs[cfg].bn + 4) * sizeof(float);
    const size_t bo = ((main > epi ? main : epi) + 15) / 16 * 16;
    if (bar_off) *bar_off = (int)bo;
    return bo + 2 * HS_MAXST * sizeof(uint64_t) + (size_t)q.R * sizeof(int) + 1024;
}
static size_t hs_smem(const hsp &q, int cfg) { return hs_smem_at(q, cfg, NULL); }

/* the layer's output tiles in configuration cfg (blocks without split-k)
 * and the blocks of cfg an SM holds by shared memory */
static double hs_tiles(const tc__problem *p, const hsp &q, int cfg) {
    return (double)p->N * q.out0 * q.nrb * tc__cu_div_up(q.Kg, hs_cfgs[cfg].bn) * p->G;
}
static int hs_fit(const hsp &q, int cfg) {
    return (int)(hs_smem_optin() / (hs_smem(q, cfg) + 1024));
}

/* Split-k (two blocks of a cluster a tile, each half of the chunks):
 * TILECONV_CUDA_HALF_SHIFTED_KS=1 or 2 where the layer has two chunks or
 * more; else 2 where the grid has at most one block an SM, two fit an SM
 * (its second slot would stay empty) and each half keeps HS_KS_STEPS k
 * steps or more, else 1. Measured on an H100 (float16, batch 32): 3x3 512
 * @7 (128 blocks, 36 steps a half) 21.1 us split against 22.5, 3x3 256
 * @14 (128 blocks, 18 steps a half) 21.7 against 18.8: a half's fixed
 * costs (prologue, the cluster barrier, its epilogue) pay off over long
 * loops only. */
#define HS_KS_STEPS 32
static int hs_splits(const tc__problem *p, const hsp &q, int cfg) {
    if (q.CK < 2) return 1;
    const char *f = tc__knob_get(TC__KNOB_CUDA_HALF_SHIFTED_KS);
    if (f && (f[0] == '1' || f[0] == '2') && !f[1]) return f[0] - '0';
    const tc__cu_device *d = tc__cu_dev();
    const double sms = d && d->sms > 0 ? d->sms : 132;
    return hs_tiles(p, q, cfg) <= sms && hs_fit(q, cfg) >= 2 && q.CK / 2 * q.R >= HS_KS_STEPS ? 2 : 1;
}

/* The layer planned for configuration cfg: 0 where it does not fit (the
 * patch's width past the block's positions or a box side, shared memory,
 * grid limits); else 1 with *q filled in */
static int hs_plan(const tc__problem *p, int cfg, hsp *q) {
    memset(q, 0, sizeof *q);
    const hs_cfg_t &c = hs_cfgs[cfg];
    const int bm = hs_bm(cfg);
    q->C = (int)p->C; q->K = (int)p->K;
    q->Cg = (int)(p->C / p->G); q->Kg = (int)(p->K / p->G);
    q->CKP = (q->Cg + HS_BK - 1) / HS_BK * HS_BK;
    q->CK = q->CKP / HS_BK;
    q->R = (int)(p->msk[0] * p->msk[1] * p->msk[2]);
    q->in0 = (int)p->in[0]; q->in1 = (int)p->in[1]; q->in2 = (int)p->in[2];
    q->out0 = (int)p->out[0]; q->out1 = (int)p->out[1]; q->out2 = (int)p->out[2];
    q->m1 = (int)p->msk[1]; q->m2 = (int)p->msk[2];
    q->d0 = (int)p->dil[0]; q->d1 = (int)p->dil[1]; q->d2 = (int)p->dil[2];
    q->p0 = (int)p->pad_lo[0]; q->p1 = (int)p->pad_lo[1]; q->p2 = (int)p->pad_lo[2];
    q->act = (int)p->act;
    q->has_bias = p->has_bias;
    q->has_res = p->has_residual;
    /* strides along y and x: the patch in phases (a, b) of the input, a
     * tap (r, s) reading phase (r % sy, s % sx) at (r / sy, s / sx); the
     * phases' common pitch PW and height PH (the longest phase's taps) */
    q->sy = (int)p->stride[1];
    q->sx = (int)p->stride[2];
    q->phw = (int)(p->msk[2] < p->stride[2] ? p->msk[2] : p->stride[2]);
    q->nph = q->phw * (int)(p->msk[1] < p->stride[1] ? p->msk[1] : p->stride[1]);
    const int64_t rq = (p->msk[1] + p->stride[1] - 1) / p->stride[1];
    const int64_t sq = (p->msk[2] + p->stride[2] - 1) / p->stride[2];
    const int64_t PW = p->out[2] + (sq - 1) * p->dil[2];
    if (PW > bm || PW * p->stride[2] > 256) return 0;
    q->PW = (int)PW;
    q->TH = bm / q->PW < q->out1 ? bm / q->PW : q->out1;
    const int64_t PH = q->TH + (rq - 1) * p->dil[1], PD0 = (p->msk[0] - 1) * p->dil[0] + 1;
    if (PH * p->stride[1] > 256 || PD0 > 256) return 0;
    q->PH = (int)PH;
    q->PD0 = (int)PD0;
    const int64_t npix = PD0 * PH * PW;
    const int64_t maxoff = ((p->msk[0] - 1) * p->dil[0] * PH + (rq - 1) * p->dil[1]) * PW +
                           (sq - 1) * p->dil[2];
    const int64_t na = npix > bm + maxoff ? npix : bm + maxoff;
    if (na > 2048) return 0; /* 256 KiB: beyond any shared memory */
    q->NPIX = (int)npix;
    q->NPIXA = (int)((na + 7) / 8 * 8);
    q->nbuf = q->CK > 1 ? 2 : 1;
    q->nrb = (int)tc__cu_div_up(q->out1, q->TH);
    /* stages: TILECONV_CUDA_HALF_SHIFTED_STAGES, else 4, or 3 where that
     * lets two blocks share an SM and the grid has more blocks than SMs;
     * with two patch buffers at most R + 1 (a buffer is refilled once the
     * step NST before its next chunk's first tap is done, which must come
     * after its chunk's last tap) */
    const char *f = tc__knob_get(TC__KNOB_CUDA_HALF_SHIFTED_STAGES);
    int nst = f && f[0] >= '2' && f[0] <= '0' + HS_MAXST && !f[1] ? f[0] - '0' : HS_DEFST;
    if (q->nbuf == 2 && nst > q->R + 1) nst = q->R + 1;
    if (nst < 2) return 0;
    q->nst = nst;
    const size_t lim = hs_smem_optin();
    if (!f && nst == HS_DEFST) {
        const tc__cu_device *d = tc__cu_dev();
        const double sms = d && d->sms > 0 ? d->sms : 132;
        const double blocks = hs_tiles(p, *q, cfg);
        hsp q3 = *q;
        q3.nst = 3;
        if (blocks > sms && 2 * (hs_smem(*q, cfg) + 1024) > lim + 1024 &&
            2 * (hs_smem(q3, cfg) + 1024) <= lim + 1024)
            q->nst = 3;
    }
    if (hs_smem_at(*q, cfg, &q->bar_off) > lim) return 0;
    const int64_t nb = p->N * p->out[0] * q->nrb;
    if (nb > INT32_MAX / 2 || tc__cu_div_up(q->Kg, c.bn) > 65535 || p->G > 65535) return 0;
    q->ks = hs_splits(p, *q, cfg);
    return 1;
}

/* Seconds the layer planned as c in configuration cfg takes by the model
 * (not measured yet): the busiest SM's blocks (ceil(blocks / SMs)) times a
 * block's MACs (its whole tile, dropped positions included) at HS_RATE of
 * an SM's share of the dense 16-bit tensor rate (14x the nominal FP32
 * peak: ~990 TFLOP/s on the H100 / H200), 64-channel tiles at 0.8 of that
 * (an m64n64k16 wgmma reads 128 bytes of shared memory a clock at the
 * tensor cores' rate, all it gives; m64n128 96), 1.3x where an SM holds one
 * warpgroup only; or the bytes (x, y, a residual, the weights once; a
 * merged input written and read) over the copy bandwidth, whichever is
 * longer, plus a launch. */
#define HS_RATE 0.6
static double hs_time(const tc__problem *p, const hsp &c, int cfg) {
    const tc__cu_device *d = tc__cu_dev();
    const double sms = d && d->sms > 0 ? d->sms : 132;
    const double peak = (d ? d->peak_flops32 : 67e12) * 14.0, bw = d ? d->bandwidth : 3.35e12;
    const hs_cfg_t &h = hs_cfgs[cfg];
    const double blocks = hs_tiles(p, c, cfg) * c.ks;
    const double per_sm = ceil(blocks / sms);
    const int fit = hs_fit(c, cfg);
    const double resident = per_sm < fit ? per_sm : fit;
    double tc = per_sm * 2.0 * hs_bm(cfg) * h.bn * (double)c.CKP * c.R / c.ks / (HS_RATE * peak / sms);
    if (h.bn == 64) tc /= 0.8;
    if (resident * h.nwg < 2) tc *= 1.3;
    const double tm = 2.0 * ((double)tc__x_count(p) + (double)tc__y_count(p) * (1 + p->has_residual) +
                             (double)p->K * c.R * c.CKP) / bw;
    return (tc > tm ? tc : tm) + 6e-6;
}

/* The configuration for the layer: TILECONV_CUDA_HALF_SHIFTED_CFG, else
 * the one of least modelled time (hs_time; *t its seconds). -1: none fits. */
static int hs_choose(const tc__problem *p, hsp *q, double *t = NULL) {
    const char *f = tc__knob_get(TC__KNOB_CUDA_HALF_SHIFTED_CFG);
    if (f && f[0] >= '0' && f[0] < '0' + HS_NCFG && !f[1]) {
        const int cfg = f[0] - '0';
        if (!hs_plan(p, cfg, q)) return -1;
        if (t) *t = hs_time(p, *q, cfg);
        return cfg;
    }
    int best = -1;
    double bt = 0;
    for (int cfg = 0; cfg < HS_NCFG; cfg++) {
        hsp c;
        if (!hs_plan(p, cfg, &c)) continue;
        const double tm = hs_time(p, c, cfg);
        if (best < 0 || tm < bt) best = cfg, bt = tm;
        if (best == cfg) *q = c;
    }
    if (t) *t = bt;
    return best;
}

/* A 1x1 stride-1 unpadded layer as one GEMM over its M = N x positions:
 * the same memory read as one image of M / W' rows of W' positions, W' the
 * divisor of M in 8..64 that fills a 64-row tile best (floor(64 / W') W'
 * rows; the larger on a tie: 32 for M = 32 x 7 x 7, 64 for 32 x 56 x 56),
 * so that every tile configuration fits and a block's rows are BM
 * consecutive positions whatever the image shape (7x7 planes would keep 49
 * of 64 rows); M itself up to 64; 0 where M has no such divisor */
static int hs_gemm_rows(const tc__problem *p, tc__problem *pr) {
    if (p->op != TC_OP_CONV || p->msk[0] * p->msk[1] * p->msk[2] != 1) return 0;
    for (int i = 0; i < TC__NSP; i++)
        if (p->stride[i] != 1 || p->pad_lo[i] != 0 || p->pad_hi[i] != 0) return 0;
    const int64_t M = p->N * p->out[0] * p->out[1] * p->out[2];
    int64_t wr = 0;
    if (M <= 64) wr = M;
    else
        for (int64_t d = 64; d >= 8; d--)
            if (M % d == 0 && (!wr || (64 / d) * d > (64 / wr) * wr)) wr = d;
    if (!wr) return 0;
    if (pr) {
        *pr = *p;
        pr->N = 1;
        pr->in[0] = pr->out[0] = 1;
        pr->in[1] = pr->out[1] = M / wr;
        pr->in[2] = pr->out[2] = wr;
    }
    return 1;
}
/* the problem the kernel runs (*kind 0): p itself, or (in *buf) its merged
 * form (*kind 1: k_hs_merge writes its input) or a 1x1 layer's rows of the
 * GEMM (*kind 2: the same memory) */
static const tc__problem *hs_run_problem(const tc__problem *p, tc__problem *buf, int *kind) {
    int k = hs_merged(p, buf) ? 1 : hs_gemm_rows(p, buf) ? 2 : 0;
    if (kind) *kind = k;
    return k ? buf : p;
}
static hs_wmap hs_map(const tc__problem *p) {
    tc__problem pm;
    int kind;
    const tc__problem *r = hs_run_problem(p, &pm, &kind);
    return hs_map_run(p, r, kind == 1);
}
static size_t hs_wpack_bytes(const tc__problem *p) {
    tc__problem pm;
    return hs_wpack_bytes_run(p, hs_run_problem(p, &pm, NULL));
}

/* the two tensor maps: 0 on success */
static int hs_tensor_maps(const hsp &q, int cfg, int64_t N, const void *x, const void *wp,
                          hs_maps *tm) {
    PFN_cuTensorMapEncodeTiled_v12000 enc = ig_tma_encoder();
    if (!enc) return 1;
    const cuuint64_t C = (cuuint64_t)q.C, e = sizeof(uint16_t);
    const cuuint64_t xd[5] = {C, (cuuint64_t)q.in2, (cuuint64_t)q.in1, (cuuint64_t)q.in0,
                              (cuuint64_t)N};
    const cuuint64_t xs[4] = {C * e, C * e * q.in2, C * e * q.in2 * q.in1,
                              C * e * q.in2 * q.in1 * q.in0};
    /* a phase's box: PW x PH pixels taken every sx-th column and sy-th row */
    const cuuint32_t xb[5] = {HS_BK, (cuuint32_t)(q.sx * q.PW), (cuuint32_t)(q.sy * q.PH),
                              (cuuint32_t)q.PD0, 1};
    const cuuint32_t one[5] = {1, 1, 1, 1, 1};
    const cuuint32_t xe[5] = {1, (cuuint32_t)q.sx, (cuuint32_t)q.sy, 1, 1};
    const cuuint64_t rl = (cuuint64_t)q.R * q.CKP;
    const cuuint64_t wd[2] = {rl, (cuuint64_t)q.K}, ws[1] = {rl * e};
    const cuuint32_t wb[2] = {HS_BK, (cuuint32_t)hs_cfgs[cfg].bn};
    if (enc(&tm->x, CU_TENSOR_MAP_DATA_TYPE_UINT16, 5, (void *)x, xd, xs, xb, xe,
            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
            CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
        return 1;
    if (enc(&tm->w, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, (void *)wp, wd, ws, wb, one,
            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
        return 1;
    return 0;
}

#if TC_HS_TRACE
/* the armed trace (tc_hs_trace_arm) and its last launch */
static tc_hs_trace_block *hs_tr_buf;
static size_t hs_tr_bytes;
static tc_hs_trace_info hs_tr_info;
/* a launch of kernel k in configuration cfg: its records go to the buffer
 * where the grid fits it */
static void hs_trace_launch(hsp *q, int cfg, dim3 grid, int smem, const void *k) {
    if (!hs_tr_buf) return;
    const long long nb = (long long)grid.x * grid.y * grid.z;
    if ((size_t)nb * sizeof(tc_hs_trace_block) > hs_tr_bytes) {
        hs_tr_info.untraced++;
        return;
    }
    q->trace = hs_tr_buf;
    tc_hs_trace_info &i = hs_tr_info;
    i.launches++;
    i.blocks = (int)nb;
    i.grid[0] = (int)grid.x, i.grid[1] = (int)grid.y, i.grid[2] = (int)grid.z;
    i.threads = hs_threads(cfg);
    i.smem = smem;
    i.cfg = cfg;
    i.nwg = hs_cfgs[cfg].nwg, i.mtw = hs_cfgs[cfg].mtw, i.bm = hs_bm(cfg), i.bn = hs_cfgs[cfg].bn;
    i.nst = q->nst, i.nsteps = (q->CK + q->ks - 1) / q->ks * q->R, i.R = q->R, i.CK = q->CK;
    int fit = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, k, i.threads, (size_t)smem) != cudaSuccess)
        fit = -1;
    i.fit = fit;
}
#endif

static tc_status hs_launch(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p0 = a->p;
    tc__problem pm;
    int kind;
    const tc__problem *p = hs_run_problem(p0, &pm, &kind); /* p0, merged or GEMM rows */
    const int merged = kind == 1;
    cudaStream_t s = b->s;
    hsp q;
    const int cfg = hs_choose(p, &q);
    if (cfg < 0)
        return tc__error(TC_ERR_NOT_APPLICABLE,
                         "cuda.conv.igemm-half-shifted: no tile configuration fits this layer");
    const int bf = p->dtype == TC_BFLOAT16;
    void *wpk = NULL, *own_b = NULL, *own_r = NULL, *xa = NULL;
    const void *db = NULL, *dr = NULL, *dx = NULL, *wp = NULL;
    /* the plan's weights come packed (held on the device) */
    tc_status st = hs_prepare(b, p0, p, merged, q.Cg, q.CKP, q.R, a->wpack, &wpk, &xa, &wp, &dx, s);
    if (st == TC_OK) st = hg_epi_operands(a, b, &db, &dr, &own_b, &own_r);
    hs_maps tm;
    memset(&tm, 0, sizeof tm);
    if (st == TC_OK && hs_tensor_maps(q, cfg, p->N, dx, wp, &tm))
        st = tc__error(TC_ERR_BACKEND, "cuda.conv.igemm-half-shifted: tensor map encoding failed");
    if (st == TC_OK) {
        q.vec8 = !(q.K & 7) && !(q.Kg & 7) && !((uintptr_t)b->y & 15) && !((uintptr_t)dr & 15) &&
                 !((uintptr_t)db & 15);
        const hs_kernel k = hs_tab[cfg][bf];
        cudaError_t e = hg_smem_limit((const void *)k, hs_smem_optin(), hs_attr_set[cfg][bf]);
        if (e != cudaSuccess) {
            st = tc__cu_fail(e, "cudaFuncSetAttribute (cuda.conv.igemm-half-shifted)", __FILE__,
                             __LINE__);
        } else {
            const dim3 grid((unsigned)(p->N * q.out0 * q.nrb * q.ks),
                            (unsigned)tc__cu_div_up(q.Kg, hs_cfgs[cfg].bn), (unsigned)p->G);
            HS_TR(hs_trace_launch(&q, cfg, grid, (int)hs_smem(q, cfg), (const void *)k);)
            /* split-k: the tile's blocks a cluster along x */
            cudaLaunchConfig_t lc;
            memset(&lc, 0, sizeof lc);
            cudaLaunchAttribute at[1];
            at[0].id = cudaLaunchAttributeClusterDimension;
            at[0].val.clusterDim.x = (unsigned)q.ks;
            at[0].val.clusterDim.y = 1;
            at[0].val.clusterDim.z = 1;
            lc.gridDim = grid;
            lc.blockDim = dim3((unsigned)hs_threads(cfg));
            lc.dynamicSmemBytes = hs_smem(q, cfg);
            lc.stream = s;
            lc.attrs = at;
            lc.numAttrs = q.ks > 1 ? 1 : 0;
            e = cudaLaunchKernelEx(&lc, k, (const uint16_t *)db, (const uint16_t *)dr,
                                   (uint16_t *)b->y, q, tm);
            if (e == cudaSuccess) e = cudaGetLastError();
            if (e != cudaSuccess) st = tc__cu_fail(e, "launch k_hs_conv", __FILE__, __LINE__);
        }
    }
    tc__cu_free(wpk, s);
    tc__cu_free(xa, s);
    tc__cu_free(own_b, s);
    tc__cu_free(own_r, s);
    return st;
}

static int hs_available(void) { return tc__cu_available(); }

static int hs_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    (void)e;
    const char *no = hs_common_why(p);
    if (!no && !hs_merged(p, NULL)) {
        if (p->stride[0] != 1 || p->stride[1] > 8 || p->stride[2] > 8)
            no = "strides of at most 8 along the last two axes and 1 along depth (the copy "
                 "engine's element strides), or a 2D layer of one group and dilation 1 whose row "
                 "stride x mask width x C is at most 64 (merged: conv1's 7x7/2 with C = 3)";
        else if ((p->stride[1] > 1 || p->stride[2] > 1) && (p->dil[1] != 1 || p->dil[2] != 1))
            no = "dilation 1 where a stride is past 1";
        else if (p->C % 8)
            no = "C a multiple of 8 (the copy engine's 16-byte rows), or a 2D layer of one group "
                 "and dilation 1 with mask width x C at most 64 (merged)";
        else if (p->G != 1 && (p->C / p->G) % HS_BK)
            no = "one group, or C/G a multiple of 64 (a 64-channel box must not cross groups)";
    }
    if (!no) {
        const int64_t lim = INT32_MAX / 2;
        tc__problem pm;
        const tc__problem *r = hs_run_problem(p, &pm, NULL);
        const int64_t KRp = r->msk[0] * r->msk[1] * r->msk[2] * ((r->C / r->G + 63) / 64 * 64);
        hsp q;
        if (p->C > lim || p->K > lim || KRp > lim || p->N > lim || tc__cu_axis_reach(p) > (1 << 28) ||
            tc__x_count(r) > INT64_MAX / 4 || r->N * r->in[0] * r->in[1] * r->in[2] > lim)
            no = "sizes beyond the kernel's 32-bit index arithmetic";
        else if (hs_choose(r, &q) < 0)
            no = "the input patch of one output row does not fit a block (padded width over 256, "
                 "or over shared memory)";
        else if (!ig_wgmma_ok()) no = "needs Hopper's wgmma (the sm_90a image on an sm_90 device)";
        else if (!ig_tma_encoder()) no = "needs the driver's cuTensorMapEncodeTiled";
    }
    if (no) {
        if (why) snprintf(why, n, "%s", no);
        return 0;
    }
    return 1;
}

/* The planner's estimate: cuda.conv.igemm-half's, times the ratio of the
 * two solvers' device times measured per kind of layer (an H100, ResNet-50
 * batch 32, float16 and bfloat16 channels-last, CUDA graphs;
 * bench/gpu_layers_half.py): 2D one-group layers with more than one tap
 * at stride 1, and conv1 merged, 0.70-0.84 (3x3 at 56/28/14/7 33.8 /
 * 25.6 / 25.4 / 32.6 us against 40.3 / 33.4 / 30.7 / 46.6; conv1 150 / 204)
 * -> 0.78; 1x1 at stride 2 0.88 (52.1 / 58.9); 1x1 at stride 1 1.38 (51.8
 * / 37.5) and 3x3 at stride 2 1.07 (37.4 / 34.8) -> 1.2, as every layer
 * not measured (1D, 3D, groups): there the older solver stays the choice.
 * hs_time's model (HS_RATE) chooses among the tile configurations; it
 * predicted 2-3x the measured speed, hence no absolute use. */
static double hs_estimate(const tc__problem *p, const tc__env *e) {
    tc__problem pm;
    const tc__problem *r = hs_run_problem(p, &pm, NULL);
    hsp q;
    if (hs_choose(r, &q, NULL) < 0) return 1e30;
    const double base = tc__solver_cuda_conv_igemm_half.estimate(p, e);
    if (base >= 1e30) return 1e30;
    const int taps = (int)(p->msk[0] * p->msk[1] * p->msk[2]);
    const int strided = p->stride[0] * p->stride[1] * p->stride[2] > 1;
    const int two_d = p->in[0] == 1 && p->msk[0] == 1 && p->in[1] > 1 && p->G == 1;
    double f = 1.2;
    if (two_d && taps > 1 && (!strided || hs_merged(p, NULL))) f = 0.78;
    else if (two_d && taps == 1 && strided) f = 0.88;
    return base * f;
}

static tc_status hs_execute(const tc__args *a) { return tc__cu_run(a, NULL, 1, hs_launch); }

/* the plan's packed weights: K x (tap, CKP), l = tap * CKP + c */
static size_t hs_wpack_size(const tc__problem *p, const tc__env *e) {
    (void)e;
    return hs_wpack_bytes(p);
}
static tc_status hs_wpack_host(const tc__problem *p, const tc__env *e, const void *state,
                               const void *w, void *dst) {
    (void)e;
    (void)state;
    tc__problem pm;
    const tc__problem *r = hs_run_problem(p, &pm, NULL);
    const hs_wmap m = hs_map(p);
    hs_wpack_host(p, r, m, w, dst);
    return TC_OK;
}

/* the device workspace (hs_ws_bytes) */
static size_t hs_device_ws(const tc__problem *p, const tc__env *e, const void *state) {
    (void)e;
    (void)state;
    return hs_ws_bytes(p, hs_wpack_bytes(p));
}

/* each configuration's kernel, float16 and bfloat16 (no dynamic shared
 * memory: a layer's depends on its patch) */
void hs_report(tc__cu_report *r) {
    for (int cfg = 0; cfg < HS_NCFG; cfg++)
        for (int bf = 0; bf < 2; bf++) {
            char name[96];
            snprintf(name, sizeof name, "cuda.conv.igemm-half-shifted %dx%d %s", hs_bm(cfg),
                     hs_cfgs[cfg].bn, bf ? "bf16" : "f16");
            tc__cu_report_kernel(r, name, (const void *)hs_tab[cfg][bf], hs_threads(cfg), 0);
        }
    tc__cu_report_kernel(r, "cuda.conv.igemm-half-shifted merge", (const void *)k_hs_merge, 256, 0);
    tc__cu_report_kernel(r, "cuda.conv.igemm-half-shifted merged weight pack",
                         (const void *)k_hs_wpack, 256, 0);
}

} // namespace

#if TC_HS_TRACE
extern "C" int tc_hs_trace_arm(void *dev_buffer, size_t bytes) {
    hs_tr_buf = (tc_hs_trace_block *)dev_buffer;
    hs_tr_bytes = dev_buffer ? bytes : 0;
    memset(&hs_tr_info, 0, sizeof hs_tr_info);
    return 0;
}
extern "C" int tc_hs_trace_get(tc_hs_trace_info *info) {
    if (info) *info = hs_tr_info;
    return hs_tr_info.launches > 0 ? 0 : 1;
}
#endif

TC__CU_SOLVER(tc__solver_cuda_conv_igemm_half_shifted) = {
    .name = "cuda.conv.igemm-half-shifted",
    .backend = TC_BACKEND_CUDA,
    .ops = TC_OP_CONV,
    .summary = "conv layers in float16 / bfloat16 on Hopper's tensor cores (wgmma m64nNk16, fp32 accumulation), channels-last, zero padding, C a multiple of 8 (one group, or C/G a multiple of 64): a block's rows of one output plane over the padded width, each 64-channel chunk's input patch copied once by a TMA box of x (zeros outside: the padding) and read by every tap as a shifted wgmma descriptor; weights one k step a stage by TMA, a producer warp and mbarriers; cuda.conv.igemm-half's fused epilogue. strides as phase patches (element-strided boxes, each tap a shifted view of its phase); few-channel 2D layers (conv1: 7x7/2, C = 3) merged first into a stride-1 layer of (row stride x mask width x C) channels; 1x1 layers as one GEMM over rows of up to 256 positions; split-k by clusters of two blocks (partial tiles summed through distributed shared memory) on long loops whose grid leaves SMs half empty. Picked by the planner where it measured faster than cuda.conv.igemm-half (2D layers with more than one tap at stride 1, conv1, 1x1 at stride 2).",
    .available = hs_available,
    .applicable = hs_applicable,
    .estimate = hs_estimate,
    .execute = hs_execute,
    .wpack_size = hs_wpack_size,
    .wpack = hs_wpack_host,
    .device_workspace = hs_device_ws,
    .caps = TC__CAP_ALL | TC__CAP_WEIGHTS_CL,
    .report = hs_report,
};
