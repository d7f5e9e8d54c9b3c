/*
 * igemm_half_halo.cu - cuda.conv.igemm-half-halo: 3x3, stride-1 conv layers
 * in float16 and bfloat16 on Hopper's tensor cores (wgmma m64n64k16 with A
 * from registers, fp32 accumulation), channels-last (NHWC) in and out, one
 * group, C and K multiples of 64, zero padding of at most 1 a side, the
 * fused epilogue y = act(acc + bias + residual) rounded once.
 *
 * The GEMM is cuda.conv.igemm-half's: Y[m][k] = sum_l A[m][l] * B[k][l],
 * m = (n, y, x) in linear order, l = tap * C + c, B the same repacked
 * weights (K x 9C, igemm_half_common.cuh). What differs is A: instead of
 * gathering a 128 x 64 tile for each of the 9 taps, a block stages once a
 * 64-channel chunk the input patch its 128 outputs need for all taps, and
 * reads each tap's rows from it with ldmatrix into wgmma's register A.
 *
 * The patch, in a virtual padded layout: the images stacked with one
 * padding row shared between consecutive images (Hs = H + pad_top rows an
 * image) and one padding column shared between consecutive rows (Ws = W +
 * pad_left positions a row), position P = (n Hs + iy + pad_top) Ws + ix +
 * pad_left. Output (n, oy, ox) at tap (dy, dx) reads position base + dy Ws
 * + dx, base = (n Hs + oy) Ws + ox: a tile's 128 consecutive outputs read
 * one contiguous range of positions, [base(m0), base(m_last) + 2 Ws + 2],
 * at most HH_PMAX (the host checks the bound, hh_span). Each position is
 * one 128-byte row of 64 channels (16-byte column j stored at j ^ (P & 7),
 * so that ldmatrix's 8 rows of a column hit distinct banks); positions
 * outside the image are zero-filled by cp.async.
 *
 * A block: 128 outputs (two warpgroups of 64) x 64 output channels; per
 * 64-channel chunk one stage = the patch (<= 40 KiB, sized by the host's
 * bound) + B for the 9 taps (9 x 64 rows x 128 bytes, 128-byte swizzle as
 * cuda.conv.igemm-half's, 72 KiB). One stage where two blocks fit an SM
 * (patches up to 304 positions: each block's copies run during the other's
 * wgmmas), else two (the next chunk's copies in flight during this chunk's
 * 36 wgmmas, one barrier a chunk). A's fragments of tap t + 1 are loaded
 * while tap t's wgmmas run (two register sets). The input pixel of each
 * patch position is computed once a tile into a table in shared memory.
 *
 * Not measured on a GPU yet: its estimate is 1e30, so the planner never
 * picks it; it runs when forced by name (algorithm "cuda.conv.igemm-half-
 * halo").
 */
#include "cuda/conv/igemm_half_common.cuh" /* loads, weight repack, epilogue */

#include <string.h>

extern "C" const tc__solver tc__solver_cuda_conv_igemm_half; /* its weight pack */

namespace {

constexpr int HH_BN = 64;
constexpr int HH_PMAX = 320; /* patch positions a stage, at most */
[[maybe_unused]] constexpr int HH_PPT = HH_PMAX * 8 / HG_THREADS; /* a thread's 16-byte patch copies a chunk */
constexpr int HH_BTAP = HH_BN * 128, HH_BBYTES = 9 * HH_BTAP;
static_assert(HH_PMAX * 8 % HG_THREADS == 0, "patch copies");
static_assert(HG_BM * (HH_BN + 4) * 4 <= HH_BBYTES, "epilogue tile");

struct hhp {
    int64_t M; /* N * OH * OW */
    int N, H, W, C, K, Kg, OH, OW, Hs, Ws, pt, pl, KRp, nchunk;
    int abytes, sbytes; /* a stage's patch (the host's bound, whole KiB) and whole size */
    int act, has_bias, has_res, vec8;
};

/* D[64 x 64] += A[64 x 16] * B[16 x 64], A from registers (each warp's 16
 * rows as mma.m16n8k16's A fragment: a0 (g, 2t..), a1 (g + 8, 2t..), a2 (g,
 * 2t + 8..), a3 (g + 8, 2t + 8..)), B K-major in shared memory (db) */
template <bool BF> __device__ __forceinline__ void hh_mma(float *d, const unsigned *a, uint64_t db);
#if IG_WGMMA
#define HH_MMA_ASM(TY)                                                                             \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                       \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32." TY "." TY " "                       \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21," \
                 "%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, {%32,%33,%34,%35}, %36, p, 1, 1, 0;\n}\n" \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),         \
                   "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),       \
                   "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),   \
                   "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),   \
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),   \
                   "+f"(d[30]), "+f"(d[31])                                                        \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)                             \
                 : "memory")
template <> __device__ __forceinline__ void hh_mma<false>(float *d, const unsigned *a, uint64_t db) {
    HH_MMA_ASM("f16");
}
template <> __device__ __forceinline__ void hh_mma<true>(float *d, const unsigned *a, uint64_t db) {
    HH_MMA_ASM("bf16");
}
#undef HH_MMA_ASM
#else
template <bool BF> __device__ __forceinline__ void hh_mma(float *, const unsigned *, uint64_t) {}
#endif

/* four 8 x 8 matrices of 16-bit elements, row addresses from lanes 8 i ..
 * 8 i + 7 for matrix i */
[[maybe_unused]] __device__ __forceinline__ void hh_ldsm4(unsigned *r, unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
}

/* output m's position in the virtual padded layout */
[[maybe_unused]] __device__ __forceinline__ int hh_base(unsigned m, const hhp &p) {
    const unsigned ox = m % (unsigned)p.OW, r = m / (unsigned)p.OW;
    const unsigned oy = r % (unsigned)p.OH, n = r / (unsigned)p.OH;
    return (int)((n * (unsigned)p.Hs + oy) * (unsigned)p.Ws + ox);
}

/* ST stages: 2 (the next chunk's copies during this chunk's wgmmas, one
 * block an SM) or 1 (two blocks an SM where they fit, each one's copies
 * during the other's wgmmas) */
template <bool BF, int ST>
__global__ void __launch_bounds__(HG_THREADS, ST == 1 ? 2 : 1)
    k_hh_conv(const uint16_t *__restrict__ x, const uint16_t *__restrict__ wp,
              const uint16_t *__restrict__ bias, const uint16_t *res, uint16_t *y, hhp p) {
#if IG_WGMMA
    extern __shared__ uint8_t hh_smem_raw[];
    /* the 128-byte swizzle takes its phase from address bits 7-9: 1 KiB alignment */
    uint8_t *smem = (uint8_t *)(((uintptr_t)hh_smem_raw + 1023) & ~(uintptr_t)1023);
    const unsigned sbase = (unsigned)__cvta_generic_to_shared(smem);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int64_t m0 = (int64_t)blockIdx.x * HG_BM;
    const int n0 = blockIdx.y * HH_BN;
    const int64_t ml = p.M - 1 < m0 + HG_BM - 1 ? p.M - 1 : m0 + HG_BM - 1;
    const int P0 = hh_base((unsigned)m0, p);
    const int SP = hh_base((unsigned)ml, p) + 2 * p.Ws + 3 - P0; /* the patch's positions */

    /* the input pixel of each patch position (-1: zero), once a tile, a
     * table after the stages that every thread's copies read */
    int *pix = (int *)(smem + ST * p.sbytes);
    for (int pos = tid; pos < SP; pos += HG_THREADS) {
        const unsigned P = (unsigned)(P0 + pos);
        const unsigned V = P / (unsigned)p.Ws, u = P - V * (unsigned)p.Ws;
        const unsigned n = V / (unsigned)p.Hs, pr = V - n * (unsigned)p.Hs;
        const int iy = (int)pr - p.pt, ix = (int)u - p.pl;
        pix[pos] = n < (unsigned)p.N && (unsigned)iy < (unsigned)p.H && (unsigned)ix < (unsigned)p.W
                       ? ((int)n * p.H + iy) * p.W + ix
                       : -1;
    }
    __syncthreads();
    /* this thread's patch copies: positions tid / 8 + 32 j, 16-byte column tid % 8 */
    const int col = tid & 7, r0 = tid >> 3;
    /* B: rows r0 and r0 + 32 of the tile, this column */
    const uint16_t *bp = wp + (int64_t)(n0 + r0) * p.KRp + col * 8;
    const int64_t bstep = (int64_t)32 * p.KRp;

    /* chunk ck's copies into stage s: the patch, then B's 9 taps */
    auto load = [&](int ck, int s) {
        const unsigned sa = sbase + s * p.sbytes, sb = sa + p.abytes;
        const int c0 = ck * 64;
#pragma unroll
        for (int j = 0; j < HH_PPT; j++) {
            const int pos = r0 + 32 * j;
            if (pos < SP) {
                const int px = pix[pos];
                hg_cp16(sa + pos * 128 + ((col ^ (pos & 7)) << 4),
                        px >= 0 ? x + (int64_t)px * p.C + c0 + col * 8 : x, px >= 0 ? 16 : 0);
            }
        }
#pragma unroll
        for (int t = 0; t < 9; t++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int r = r0 + 32 * h;
                hg_cp16(sb + t * HH_BTAP + r * 128 + ((col ^ (r & 7)) << 4),
                        bp + h * bstep + t * p.C + c0, 16);
            }
    };

    /* this lane's A row for ldmatrix: matrix i = lane / 8 holds rows 8 (i &
     * 1) .. + 7 of the warp's 16, k 8 (i >> 1) .. + 7; rows past M read
     * position 0 (their sums are not stored) */
    const int wg = warp >> 2;
    const int khalf = lane >> 4;
    int apos = 0;
    {
        const int64_t m = m0 + 64 * wg + 16 * (warp & 3) + 8 * ((lane >> 3) & 1) + (lane & 7);
        if (m < p.M) apos = hh_base((unsigned)m, p) - P0;
    }
    /* tap t's fragments (4 k16 steps of the chunk) from stage sa */
    auto frag = [&](unsigned (*a)[4], unsigned sa, int t) {
        const int pos = apos + (t / 3) * p.Ws + t % 3;
        const unsigned row = sa + pos * 128;
        const int sw = pos & 7;
#pragma unroll
        for (int kk = 0; kk < 4; kk++) hh_ldsm4(a[kk], row + (((2 * kk + khalf) ^ sw) << 4));
    };

    float acc[HH_BN / 2];
#pragma unroll
    for (int j = 0; j < HH_BN / 2; j++) acc[j] = 0.f;

    load(0, 0);
    ig_commit();
    for (int ck = 0; ck < p.nchunk; ck++) {
        const int s = ST == 2 ? ck & 1 : 0;
        ig_wait<0>();     /* this thread's copies of chunk ck have landed */
        ig_proxy_fence(); /* ... and are visible to wgmma (async proxy: B) */
        __syncthreads();  /* everyone's; and every read of chunk ck - 1's stage is done */
        if (ST == 2 && ck + 1 < p.nchunk) load(ck + 1, s ^ 1);
        ig_commit();
        const unsigned sa = sbase + s * p.sbytes;
        const uint64_t db0 = ig_desc_sw128(smem + s * p.sbytes + p.abytes);
        unsigned af[2][4][4];
        frag(af[0], sa, 0);
#pragma unroll
        for (int t = 0; t < 9; t++) {
            ig_wg_fence(); /* tap t's A registers written (ldmatrix) before wgmma reads them */
#pragma unroll
            for (int kk = 0; kk < 4; kk++)
                hh_mma<BF>(acc, af[t & 1][kk], db0 + (uint64_t)((t * HH_BTAP) >> 4) + 2 * kk);
            ig_wg_commit();
            if (t < 8) {
                ig_wg_wait<1>(); /* tap t - 1's wgmmas done: its register set is free */
                frag(af[(t + 1) & 1], sa, t + 1);
            }
        }
        ig_wg_wait<0>();
        if (ST == 1 && ck + 1 < p.nchunk) {
            __syncthreads(); /* every warp's reads of the one stage done */
            load(ck + 1, 0);
            ig_commit();
        }
    }
    ig_wait<0>();
    __syncthreads(); /* every wgmma and ldmatrix done: the stages become the output tile */
    hg_epilogue<HH_BN, BF>(acc, smem, m0, n0, 0, p, bias, res, y);
#endif
}

/* ---------------- host side ---------------- */

typedef void (*hh_kernel)(const uint16_t *, const uint16_t *, const uint16_t *, const uint16_t *,
                          uint16_t *, hhp);
/* [bfloat16][stages - 1] */
static const hh_kernel hh_tab[2][2] = {{k_hh_conv<false, 1>, k_hh_conv<false, 2>},
                                       {k_hh_conv<true, 1>, k_hh_conv<true, 2>}};
static int hh_attr_set[2][2][IG_NDEV]; /* the shared-memory limit set, per device */

/* dynamic shared memory: st stages of abytes + B, the pixel table, 1 KiB
 * of alignment; the most (two stages of the largest patch) fits the
 * H100's and H200's 227 KiB a block */
static size_t hh_smem(int abytes, int st) {
    return (size_t)st * (abytes + HH_BBYTES) + HH_PMAX * sizeof(int) + 1024;
}
constexpr int HH_ABYTES_MAX = HH_PMAX * 128;

/* The most patch positions a tile reads: its 128 outputs' bases step by 1,
 * by 1 + Ws - OW more at each of at most xr row ends and (Hs - OH) Ws more
 * at each of at most xi image ends, then the taps' reach 2 Ws + 2 */
static int64_t hh_span(const tc__problem *p) {
    const int64_t Hs = p->in[1] + p->pad_lo[1], Ws = p->in[2] + p->pad_lo[2];
    const int64_t OH = p->out[1], OW = p->out[2], plane = OH * OW;
    const int64_t xr = (HG_BM - 1 + OW - 1) / OW;
    const int64_t xi = p->N > 1 ? (HG_BM - 1 + plane - 1) / plane : 0;
    return HG_BM - 1 + (Ws - OW) * xr + (Hs - OH) * Ws * xi + 2 * Ws + 3;
}

static hhp hh_params(const tc__problem *p) {
    hhp q;
    memset(&q, 0, sizeof q);
    q.N = (int)p->N; q.H = (int)p->in[1]; q.W = (int)p->in[2];
    q.C = (int)p->C; q.K = q.Kg = (int)p->K;
    q.OH = (int)p->out[1]; q.OW = (int)p->out[2];
    q.pt = (int)p->pad_lo[1]; q.pl = (int)p->pad_lo[2];
    q.Hs = q.H + q.pt; q.Ws = q.W + q.pl;
    q.KRp = 9 * q.C;
    q.nchunk = q.C / 64;
    q.M = p->N * p->out[1] * p->out[2];
    q.act = (int)p->act;
    q.has_bias = p->has_bias;
    q.has_res = p->has_residual;
    q.abytes = (int)((hh_span(p) * 128 + 1023) / 1024 * 1024);
    q.sbytes = q.abytes + HH_BBYTES;
    return q;
}

/* The stages: 1 where two blocks fit an SM's shared memory (the patch of
 * at most 304 positions: ResNet-50's 3x3 layers), else 2.
 * TILECONV_CUDA_HALF_HALO_STAGES=1/2 forces one (tests, tuning). */
static int hh_stages(const hhp &q) {
    const char *f = tc__knob_get(TC__KNOB_CUDA_HALF_HALO_STAGES);
    if (f && (f[0] == '1' || f[0] == '2') && !f[1]) return f[0] - '0';
    const tc__cu_device *d = tc__cu_dev();
    const size_t per_sm = d ? d->smem_per_sm : 0;
    return 2 * (hh_smem(q.abytes, 1) + 1024) <= per_sm ? 1 : 2; /* 1 KiB reserved a block */
}

static size_t hh_wpack_bytes(const tc__problem *p) {
    return (size_t)p->K * 9 * (size_t)p->C * sizeof(uint16_t);
}

static tc_status hh_launch(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    cudaStream_t s = b->s;
    if ((uintptr_t)b->x & 15) /* hh_execute sends such inputs elsewhere */
        return tc__error(TC_ERR_BACKEND, "cuda.conv.igemm-half-halo: input not 16-byte aligned");
    hhp q = hh_params(p);
    const int bf = p->dtype == TC_BFLOAT16;
    void *wpk = NULL, *own_b = NULL, *own_r = NULL;
    const void *db = NULL, *dr = NULL;
    /* the plan's weights come packed (held on the device), in
     * cuda.conv.igemm-half's layout: K x (9 taps x C), the caller's own
     * channels-last weights, read in place where they are 16-byte aligned */
    const int cl = p->wlayout == TC_LAYOUT_CHANNELS_LAST;
    const void *wp = a->wpack ? a->wpack : cl && !((uintptr_t)b->w & 15) ? b->w : NULL;
    tc_status st = wp ? TC_OK : tc__cu_alloc(&wpk, hh_wpack_bytes(p), s);
    if (st == TC_OK && !wp) {
        wp = wpk;
        st = hg_wpack_dev(b->w, wpk, p->K, q.C, q.C, 9, 1, q.KRp, cl, s);
    }
    if (st == TC_OK) st = hg_epi_operands(a, b, &db, &dr, &own_b, &own_r);
    if (st == TC_OK) {
        q.vec8 = !((uintptr_t)b->y & 15) && !((uintptr_t)dr & 15) && !((uintptr_t)db & 15);
        const int nst = hh_stages(q);
        const hh_kernel k = hh_tab[bf][nst - 1];
        const size_t smem = hh_smem(q.abytes, nst);
        cudaError_t e = hg_smem_limit((const void *)k, hh_smem(HH_ABYTES_MAX, nst),
                                      hh_attr_set[bf][nst - 1]);
        if (e != cudaSuccess) {
            st = tc__cu_fail(e, "cudaFuncSetAttribute (cuda.conv.igemm-half-halo)", __FILE__,
                             __LINE__);
        } else {
            const dim3 grid((unsigned)tc__cu_div_up(q.M, HG_BM), (unsigned)(q.K / HH_BN));
            k<<<grid, HG_THREADS, smem, s>>>((const uint16_t *)b->x, (const uint16_t *)wp,
                                             (const uint16_t *)db, (const uint16_t *)dr,
                                             (uint16_t *)b->y, q);
            e = cudaGetLastError();
            if (e != cudaSuccess) st = tc__cu_fail(e, "launch k_hh_conv", __FILE__, __LINE__);
        }
    }
    tc__cu_free(wpk, s);
    tc__cu_free(own_b, s);
    tc__cu_free(own_r, s);
    return st;
}

static int hh_available(void) { return tc__cu_available(); }

static int hh_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    (void)e;
    const char *no = NULL;
    if (p->op != TC_OP_CONV) no = "convolution layers only";
    else if (p->dtype != TC_FLOAT16 && p->dtype != TC_BFLOAT16)
        no = "float16 and bfloat16 only";
    else if (p->layout != TC_LAYOUT_CHANNELS_LAST) no = "channels-last (NHWC) layers only";
    else if (p->mode != TC_MODE_CONSTANT || p->cval != 0) no = "zero padding only";
    else if (p->nsp != 2 || p->msk[0] != 1 || p->msk[1] != 3 || p->msk[2] != 3)
        no = "2D layers with 3x3 masks only";
    else if (p->stride[1] != 1 || p->stride[2] != 1 || p->dil[1] != 1 || p->dil[2] != 1)
        no = "stride 1 and dilation 1 only";
    else if (p->G != 1) no = "one group only";
    else if (p->C % 64 || p->K % 64) no = "C and K multiples of 64 only";
    else if (p->pad_lo[1] < 0 || p->pad_lo[1] > 1 || p->pad_lo[2] < 0 || p->pad_lo[2] > 1 ||
             p->pad_hi[1] < 0 || p->pad_hi[1] > p->pad_lo[1] || p->pad_hi[2] < 0 ||
             p->pad_hi[2] > p->pad_lo[2])
        no = "padding 0 or 1 a side (the far side at most the near one) only";
    else if (p->out[1] < 1 || p->out[2] < 1) no = "an empty output";
    if (!no) {
        const int64_t lim = INT32_MAX / 2;
        const int64_t M = p->N * p->out[1] * p->out[2];
        const int64_t Hs = p->in[1] + p->pad_lo[1], Ws = p->in[2] + p->pad_lo[2];
        if (M > lim || (p->N * Hs + 3) * Ws > lim || p->N * p->in[1] * p->in[2] > lim ||
            9 * p->C > lim || p->K / HH_BN > 65535)
            no = "sizes beyond the kernel's 32-bit index arithmetic";
        else if (hh_span(p) > HH_PMAX)
            no = "the input patch of a 128-output tile exceeds its 320 staged positions (rows "
                 "too wide: about W <= 61 with padding 1)";
        else if (!ig_wgmma_ok()) no = "needs Hopper's wgmma (the sm_90a image on an sm_90 device)";
        else if (!tc__cu_dev() || tc__cu_dev()->smem_optin < hh_smem(HH_ABYTES_MAX, 2))
            no = "needs 227 KiB of shared memory a block (Hopper)";
    }
    if (no) {
        if (why) snprintf(why, n, "%s", no);
        return 0;
    }
    return 1;
}

/* not measured on a GPU yet: never picked by the planner, run by name */
/* cuda.conv.igemm-half's estimate times the measured ratio (an H100,
 * ResNet-50 batch 32 float16 / bfloat16 channels-last, CUDA graphs,
 * bench/gpu_layers_half.py): 3x3 64 @56 30.0 us against 40.3 (0.74; the
 * shifted views 33.8); 128, 256 and 512 channels 0.85-0.92 (30.8 / 33.4,
 * 28.1 / 30.7, 39.8 / 46.6), where cuda.conv.igemm-half-shifted (0.78)
 * is faster still */
static double hh_estimate(const tc__problem *p, const tc__env *e) {
    const double base = tc__solver_cuda_conv_igemm_half.estimate(p, e);
    if (base >= 1e30) return 1e30;
    return base * (p->C <= 64 && p->K <= 64 ? 0.74 : 0.9);
}

/* cp.async's 16-byte copies need x 16-byte aligned (its rows are 128
 * bytes; host arrays are staged into aligned buffers): a device input that
 * is not runs cuda.conv.igemm-half, which takes the same packed weights */
static tc_status hh_execute(const tc__args *a) {
    if (((uintptr_t)a->x & 15) && tc__cu_is_device(a->x))
        return tc__solver_cuda_conv_igemm_half.execute(a);
    return tc__cu_run(a, NULL, 1, hh_launch);
}

/* the plan's packed weights: cuda.conv.igemm-half's (the same B) */
static size_t hh_wpack_size(const tc__problem *p, const tc__env *e) {
    return tc__solver_cuda_conv_igemm_half.wpack_size(p, e);
}
static tc_status hh_wpack_host(const tc__problem *p, const tc__env *e, const void *state,
                               const void *w, void *dst) {
    return tc__solver_cuda_conv_igemm_half.wpack(p, e, state, w, dst);
}

/* the repacked weights, a bias staged from host memory */
static size_t hh_device_ws(const tc__problem *p, const tc__env *e, const void *state) {
    (void)e;
    (void)state;
    return hh_wpack_bytes(p) + (p->has_bias ? (size_t)p->K * sizeof(uint16_t) : 0);
}

/* each kernel at the patch of ResNet-50's 3x3 64 @56 layer (304
 * positions: one stage, two blocks an SM) and at the largest (two stages) */
void hh_report(tc__cu_report *r) {
    for (int bf = 0; bf < 2; bf++)
        for (int st = 1; st <= 2; st++) {
            const void *k = (const void *)hh_tab[bf][st - 1];
            const int ab = st == 1 ? 304 * 128 : HH_ABYTES_MAX;
            (void)cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       (int)hh_smem(HH_ABYTES_MAX, st));
            (void)cudaGetLastError();
            char name[96];
            snprintf(name, sizeof name, "cuda.conv.igemm-half-halo 128x64 %d stage%s %s, %d positions",
                     st, st > 1 ? "s" : "", bf ? "bf16" : "f16", ab / 128);
            tc__cu_report_kernel(r, name, k, HG_THREADS, hh_smem(ab, st));
        }
}

} // namespace

TC__CU_SOLVER(tc__solver_cuda_conv_igemm_half_halo) = {
    .name = "cuda.conv.igemm-half-halo",
    .backend = TC_BACKEND_CUDA,
    .ops = TC_OP_CONV,
    .summary = "3x3 stride-1 conv layers in float16 / bfloat16 on Hopper's tensor cores (wgmma m64n64k16, A from registers by ldmatrix, fp32 accumulation), channels-last, one group, C and K multiples of 64, zero padding <= 1: each 64-channel chunk of a 128-output tile's input patch staged once in shared memory and read by all 9 taps (cuda.conv.igemm-half gathers it per tap), B for the 9 taps beside it, one stage two blocks an SM or two stages one; cuda.conv.igemm-half's packed weights and fused epilogue. Picked by the planner for 64-channel layers, where it measured fastest.",
    .available = hh_available,
    .applicable = hh_applicable,
    .estimate = hh_estimate,
    .execute = hh_execute,
    .wpack_size = hh_wpack_size,
    .wpack = hh_wpack_host,
    .device_workspace = hh_device_ws,
    .caps = TC__CAP_ALL | TC__CAP_WEIGHTS_CL,
    .report = hh_report,
};
