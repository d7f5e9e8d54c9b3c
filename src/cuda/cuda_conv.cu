/*
 * cuda_conv.cu - convolution layers on the GPU (seed 002's cuDNN algorithm
 * list):
 *
 * cuda.conv.igemm   implicit GEMM, no im2col buffer, fp32 on the CUDA
 *                   cores. For group g the layer is
 *                   C[k][q] = sum_l W_g[k][l] * X_g[l][q] with l = (c, r0,
 *                   r1, r2) and q = (n, output position). Built as
 *                   cuda.gemm is: a BM x 128 block tile (BM = 128, or 64
 *                   when K/G <= 64), BK = 16, a 4-stage cp.async pipeline,
 *                   8 x 8 outputs per thread (two 4-wide quadrants BM/2 and
 *                   64 apart), A (weights) row-major in shared memory with
 *                   a 20-float pitch (16-byte copies when C/G*R % 4 == 0).
 *                   B (the im2col matrix) is gathered with 4-byte cp.async:
 *                   each thread owns one column q for the whole block (its
 *                   image pointer and window origin decomposed once), the
 *                   reduction row l = (c, tap) is split once per k tile,
 *                   and each tap's (dr0, dr1, dr2, offset) comes from a
 *                   per-block table in shared memory. With zero padding
 *                   and R < 64 taps a second table holds every reduction
 *                   row's (channel + tap offset, tap bit) and each thread
 *                   its column's in-bounds taps as a bit mask: an element
 *                   is a table load, an AND, a select and a zero-filling
 *                   cp.async (session 7). Otherwise in-bounds elements
 *                   are one unsigned compare per axis and one cp.async;
 *                   the rest take the edge path: cval (zeros) stored
 *                   directly, or the index remapped per axis for reflect /
 *                   replicate / circular and copied. 1x1 stride-1 layers
 *                   with P % 4 == 0 are a plain GEMM per image: 16-byte
 *                   copies of 4 consecutive columns. Layers with too few
 *                   output tiles to fill the GPU (3x3 512 @7) split the
 *                   reduction over blockIdx.z (split-K: partial sums in a
 *                   pooled device buffer, then a reduce kernel adds them,
 *                   the bias, and writes NCHW; deterministic). Masks with
 *                   more than 2048 taps, or sizes beyond 32-bit index
 *                   arithmetic, take the generic kernel (128 x 128, BK = 8,
 *                   register-prefetch double buffer, 64-bit gather).
 * cuda.conv.igemm-tf32  the same kernel with the inner product on the
 *                   tensor cores: mma.sync m16n8k8 TF32 (operands rounded
 *                   to TF32 by an integer add, fp32 accumulation), warp
 *                   tile 64 x 32 (32 x 32 for the 32-row tile); the
 *                   reduction rows permuted within each k8 step so that
 *                   the A fragments are LDS.64 and all fragment loads are
 *                   conflict-free (A pitch 24, B pitch 132); with zero
 *                   padding and R <= 32 taps B is register-staged (four
 *                   columns a thread, predicated LDG one k tile ahead,
 *                   rounded once, STS.128) instead of 4-byte cp.async
 *                   (session 8). Applicable only under TC_PLAN_ALLOW_TF32.
 *                   A Hopper variant (V 4, TC_CUDA_CONV_TFV=4, not the
 *                   default: it measured 0.88-1.13x of this one) issues
 *                   wgmma m64nBMk8 with both operands in shared memory
 *                   as core matrices; it is compiled into the file's
 *                   sm_90a image and used only where a probe finds that
 *                   image loaded (session 11). On that image the TF32
 *                   plans also take V 8 (TMA copies of channels-last
 *                   copies, wgmma on shifted views of an input patch) for
 *                   2D stride-1 zero-padded layers that fill a wave
 *                   (ig8_default, session 13), and V 10 (a persistent
 *                   stream of x through wgmma with the weights resident)
 *                   for 1x1 layers with K/G <= 256 (ig9_plan, session 15),
 *                   and V 11 (V 8's shifted views marching along depth
 *                   over a ring of plane slots, every weight resident)
 *                   for 3D zero-padded layers with C/G <= 32 (ig11_plan,
 *                   session 16).
 * cuda.conv.depthwise  groups == C: 1D/2D layers take the tiled kernel
 *                   (k_dw_tile): a block copies the padded input of several
 *                   (n, k) planes, or of a band of output rows, into shared
 *                   memory with the padding mode applied at the copy, then
 *                   computes without bounds checks, RV = 4 output rows per
 *                   thread for 3x3 / 5x5 masks at row stride 1; 3D layers
 *                   and rows too long for shared memory one thread per
 *                   output, taps from the read-only cache.
 *
 * Any stride, dilation, groups, padding mode (zeros / reflect / replicate /
 * circular), 1D/2D/3D; bias in the epilogue; NCHW in and out.
 * Host and device pointers as for the filters (tc__cu_run); the bias, K
 * values, is staged per call when it is host memory.
 */
#include "cuda/cuda_common.h"

#include "cuda/cuda_hopper.h" /* wgmma, mbarriers, TMA (V 4, V 7-V 11) */

namespace {

#define CV_M 128
#define CV_N 128
#define CV_K 8

struct cargs {
    int64_t C, K, G, Cg, Kg, R, Rl; /* Rl = Cg * R */
    int64_t in0, in1, in2, m0, m1, m2, out0, out1, out2, P, NP;
    int64_t s0, s1, s2, d0, d1, d2, p0, p1, p2;
    int mode;
    float cval;
};

/* One B column (output position q) of a thread, decomposed once per block:
 * the image's input offset and the origin of its window per axis. */
struct cv_col {
    int64_t xoff; /* (n * C + g * Cg) * in0 * in1 * in2, or -1 past the end */
    int b0, b1, b2;
};

__device__ __forceinline__ cv_col cv_column(const cargs &a, int64_t g, int64_t q) {
    cv_col c;
    if (q >= a.NP) {
        c.xoff = -1;
        c.b0 = c.b1 = c.b2 = 0;
        return c;
    }
    int64_t o2 = q % a.out2, u = q / a.out2;
    int64_t o1 = u % a.out1;
    u /= a.out1;
    int64_t o0 = u % a.out0, n = u / a.out0;
    c.xoff = (n * a.C + g * a.Cg) * a.in0 * a.in1 * a.in2;
    c.b0 = (int)(o0 * a.s0 - a.p0);
    c.b1 = (int)(o1 * a.s1 - a.p1);
    c.b2 = (int)(o2 * a.s2 - a.p2);
    return c;
}

__device__ __forceinline__ int cv_bidx(int i, int n, int mode) {
    if ((unsigned)i < (unsigned)n) return i;
    return (int)tc__cu_bidx(i, n, mode);
}

__global__ void __launch_bounds__(256, 2)
    k_conv_igemm_generic(const float *__restrict__ x, const float *__restrict__ w,
                 const float *__restrict__ bias, float *__restrict__ y, cargs a) {
    __shared__ __align__(16) float As[2][CV_K][CV_M + 4];
    __shared__ __align__(16) float Bs[2][CV_K][CV_N + 4];
    const int tid = threadIdx.x;
    const int64_t g = blockIdx.z;
    const int64_t q0 = (int64_t)blockIdx.x * CV_N, k0 = (int64_t)blockIdx.y * CV_M;
    const float *wg = w + g * a.Kg * a.Rl;
    /* loaders: A 128 rows x 8 (4 per thread: one row, 4 consecutive l);
     * B 8 rows x 128 columns (4 per thread: one l, 4 consecutive q) */
    const int arow = tid >> 1, acol = (tid & 1) * 4;
    const int brow = tid >> 5, bcol = (tid & 31) * 4;
    float ra[4], rb[4];
    cv_col col[4];
#pragma unroll
    for (int i = 0; i < 4; i++) col[i] = cv_column(a, g, q0 + bcol + i);
    const int m1 = (int)a.m1, m2 = (int)a.m2, m0 = (int)a.m0;
    const int in0 = (int)a.in0, in1 = (int)a.in1, in2 = (int)a.in2;
    const int64_t plane = a.in0 * a.in1 * a.in2;
    auto load = [&](int64_t l0) {
        int64_t kr = k0 + arow;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            int64_t l = l0 + acol + i;
            ra[i] = (kr < a.Kg && l < a.Rl) ? __ldg(wg + kr * a.Rl + l) : 0.f;
        }
        /* the reduction row of this thread's B loads, decomposed once (32-bit) */
        int l = (int)(l0 + brow);
        bool lok = l0 + brow < a.Rl;
        int r2 = l % m2, t = l / m2;
        int r1 = t % m1;
        t /= m1;
        int r0 = t % m0, c = t / m0;
        int e0 = r0 * (int)a.d0, e1 = r1 * (int)a.d1, e2 = r2 * (int)a.d2;
        const float *xc = x + (int64_t)c * plane;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            float v = 0.f;
            if (lok && col[i].xoff >= 0) {
                int i0 = cv_bidx(col[i].b0 + e0, in0, a.mode);
                int i1 = cv_bidx(col[i].b1 + e1, in1, a.mode);
                int i2 = cv_bidx(col[i].b2 + e2, in2, a.mode);
                v = (i0 < 0 || i1 < 0 || i2 < 0)
                        ? a.cval
                        : __ldg(xc + col[i].xoff + ((int64_t)i0 * in1 + i1) * in2 + i2);
            }
            rb[i] = v;
        }
    };
    auto store = [&](int buf) {
#pragma unroll
        for (int i = 0; i < 4; i++) As[buf][acol + i][arow] = ra[i];
#pragma unroll
        for (int i = 0; i < 4; i++) Bs[buf][brow][bcol + i] = rb[i];
    };
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = 0.f;
    const int tm = (tid >> 4) * 4, tn = (tid & 15) * 4; /* quadrant origins */
    load(0);
    store(0);
    __syncthreads();
    int buf = 0;
    for (int64_t l0 = 0; l0 < a.Rl; l0 += CV_K) {
        bool more = l0 + CV_K < a.Rl;
        if (more) load(l0 + CV_K);
#pragma unroll
        for (int kk = 0; kk < CV_K; kk++) {
            float av[8], bv[8];
            /* 16-byte shared loads: rows are 132 floats (528 bytes), the
             * quadrant origins multiples of 4 */
            float4 a0 = *reinterpret_cast<const float4 *>(&As[buf][kk][tm]);
            float4 a1 = *reinterpret_cast<const float4 *>(&As[buf][kk][tm + 64]);
            float4 b0 = *reinterpret_cast<const float4 *>(&Bs[buf][kk][tn]);
            float4 b1 = *reinterpret_cast<const float4 *>(&Bs[buf][kk][tn + 64]);
            av[0] = a0.x; av[1] = a0.y; av[2] = a0.z; av[3] = a0.w;
            av[4] = a1.x; av[5] = a1.y; av[6] = a1.z; av[7] = a1.w;
            bv[0] = b0.x; bv[1] = b0.y; bv[2] = b0.z; bv[3] = b0.w;
            bv[4] = b1.x; bv[5] = b1.y; bv[6] = b1.z; bv[7] = b1.w;
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
        if (more) {
            store(buf ^ 1);
            __syncthreads();
            buf ^= 1;
        }
    }
    /* epilogue: column q = (n, p) -> y[n][g*Kg + k][p] */
#pragma unroll
    for (int i = 0; i < 8; i++) {
        int64_t k = k0 + tm + (i < 4 ? i : 60 + i);
        if (k >= a.Kg) continue;
        int64_t kk = g * a.Kg + k;
        float b = bias ? __ldg(bias + kk) : 0.f;
#pragma unroll
        for (int j = 0; j < 8; j++) {
            int64_t q = q0 + tn + (j < 4 ? j : 60 + j);
            if (q >= a.NP) continue;
            int64_t n = q / a.P, pp = q - n * a.P;
            y[(n * a.K + kk) * a.P + pp] = acc[i][j] + b;
        }
    }
}

/* ---------------- the fast implicit GEMM (fp32 and TF32) ---------------- */
#define IG_BN 128
#define IG_BK 16
#define IG_AP 20  /* A row pitch (floats): 16 + 4, conflict-free for both paths */
#define IG_BP 136 /* B row pitch (floats): 128 + 8, conflict-free mma B loads */
#define IG_STAGES 4
#define IG_TAPMAX 2048
#define IG_MAXSPLIT 16
/* reduction-row table entries (int2, 30 KiB): with the tap table (R < 64,
 * <= 1008 bytes) within the IG_TAPMAX room the kernels are set up for */
#define IG_LTMAX 3840

/* 32-bit problem description (ig_fast checks every bound) */
struct igp {
    int C, Cg, K, Kg, G, R, Rl, P, NP;
    int in0, in1, in2, plane;
    int m0, m1, m2, out1, out2;
    int s0, s1, s2, d0, d1, d2, p0, p1, p2;
    int mode;
    float cval;
    int avec; /* A by 16-byte copies */
    int yvec; /* float4 output stores */
    int ktps; /* k tiles per split */
    int ltab; /* zero padding: the reduction-row table, 1: R <= 32, 2: R < 64 */
};

__device__ __forceinline__ void ig_mma(float *c, const unsigned *a, const unsigned *b) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}


/* *p through the read-only path where ok, else 0 (one predicated load, no
 * branch): the register-staged gathers */
__device__ __forceinline__ float ig_ldg_if(const float *p, bool ok) {
    float v;
    asm("{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n mov.b32 %0, 0;\n"
        " @p ld.global.nc.f32 %0, [%1];\n}\n"
        : "=f"(v)
        : "l"(p), "r"((int)ok));
    return v;
}

/* An im2col element outside the input, padding mode reflect / replicate /
 * circular: the index remapped per axis and copied. */
__device__ __noinline__ void ig_edge(float *dst, const float *xc, int i0, int i1, int i2,
                                     int n0, int n1, int n2, int mode) {
    i0 = cv_bidx(i0, n0, mode);
    i1 = cv_bidx(i1, n1, mode);
    i2 = cv_bidx(i2, n2, mode);
    ig_cp4(dst, xc + ((int64_t)i0 * n1 + i1) * n2 + i2, 4);
}

/* One output value (or a partial sum under split-K) of channel kk, column q. */
__device__ __forceinline__ void ig_put(float *__restrict__ y, float *__restrict__ part,
                                       const igp &a, int split, int kk, int q, float v,
                                       float b) {
    if (part) {
        part[((int64_t)split * a.K + kk) * a.NP + q] = v;
    } else {
        int n = q / a.P, pp = q - n * a.P;
        y[((int64_t)n * a.K + kk) * a.P + pp] = v + b;
    }
}

/* LM, the B loader: IG_ZEROS gathers with zero padding (out-of-bounds
 * elements by cp.async zero-fill, no branch), IG_REMAP gathers with any
 * padding mode (out-of-bounds elements remapped on a side path), IG_1X1
 * copies 4 columns of X_n with one 16-byte cp.async. */
enum { IG_ZEROS = 0, IG_REMAP = 1, IG_1X1 = 2 };
template <bool B> struct ig_bool {
    static constexpr bool value = B;
};
/* V, the shared-memory layout and B loader (session 8):
 *   0  fp32 (CUDA cores): A pitch 20, B pitch 136
 *   1  TF32: within each k8 step the reduction rows are permuted so that a
 *      thread's two A values of a row (k = tq and tq + 4) are adjacent in
 *      shared memory (one LDS.64), A pitch 24 and B pitch 132: the A and B
 *      fragment loads are conflict-free
 *   3  TF32, as 1, and with zero padding and the reduction-row table of
 *      single-bit entries (R <= 32) B is register-staged: a thread loads
 *      four consecutive columns of its rows with predicated LDG (one table
 *      entry per row for the four), one k tile ahead, rounds them to TF32
 *      and stores them with one STS.128 (the B fragments need no rounding)
 *   4  TF32 on Hopper's wgmma (session 11): the warpgroup's M is 64 output
 *      positions, its N the BM output channels; both operands are read by
 *      the tensor cores from shared memory stored as 8 x 4 core matrices
 *      (ig_cm, ig_bt), the im2col tile position-major. The weights are
 *      truncated to TF32 rather than rounded; with zero padding and the
 *      single-bit row table the im2col tile is register-staged and rounded
 *      (R4; else V 1), with reflect / replicate / circular gathered by
 *      cp.async and truncated. wgmma.wait_group 1: a tile's MMAs run while
 *      the next tile is loaded, two of the four stages in flight. Measured against V 3 on the H100 (session 11): 0.88-1.13x,
 *      faster only on the 32-row tile (3D 3x3x3 32 @32); the register-
 *      staged gather, one tile ahead, bounds both, not the MMA. A variant
 *      with every B loader by cp.async and 6 stages (B truncated) ran
 *      0.73-0.97x of V 3 and was removed
 * (BK 32 with 3 stages, and A rounded in shared memory once per stage,
 * were measured too and lost: docs/solvers/cuda-conv-igemm.md, session 8; BK
 * and the stage count stay parameters.) */
template <int V> struct igv {
    static constexpr int BK = IG_BK;
    static constexpr int ST = IG_STAGES;
    static constexpr int AP = V == 0 ? IG_AP : V >= 4 ? IG_BK : 24;
    static constexpr int BP = V == 0 ? IG_BP : V >= 4 ? IG_BN : 132;
};
template <int BM, bool TF32, int LM, int V = 0>
__global__ void __launch_bounds__(BM == 32 ? 128 : 2 * BM, BM == 128 ? 2 : BM == 64 ? 3 : 4)
    k_ig(const float *__restrict__ x, const float *__restrict__ w,
         const float *__restrict__ bias, float *__restrict__ y, float *__restrict__ part,
         const igp a) {
    constexpr bool VEC1 = LM == IG_1X1;
    constexpr int NT = BM == 32 ? 128 : 2 * BM;
    constexpr int TR = BM == 32 ? 4 : 8;            /* fp32: rows per thread */
    constexpr int MI = BM >= 64 ? 4 : BM / 16;      /* TF32: m16 tiles per warp */
    constexpr bool WG = V == 4;                    /* the wgmma kernel */
    constexpr int BK = igv<V>::BK, NST = igv<V>::ST, AP = igv<V>::AP, BP = igv<V>::BP;
    constexpr int STF = BM * AP + BK * BP;
    extern __shared__ float4 ig_smem4[];
    float *smem = reinterpret_cast<float *>(ig_smem4);
    int4 *taps = reinterpret_cast<int4 *>(smem + NST * STF);
    const int tid = threadIdx.x;
    const int g = blockIdx.z % a.G, split = blockIdx.z / a.G;
    const int q0 = blockIdx.x * IG_BN, k0 = blockIdx.y * BM;
    const int KT = (a.Rl + BK - 1) / BK;
    const int kt0 = split * a.ktps;
    const int nkt = min(KT - kt0, a.ktps);
    const int krows = min(BM, a.Kg - k0);
    const float *wg = w + ((int64_t)g * a.Kg + k0) * a.Rl;

    /* ---- B loader state: one column per thread (gather) or 4 (1x1) ---- */
    constexpr int RPT = BK * IG_BN / NT; /* gather rows per thread: 8 .. 32 */
    constexpr int VG = NT / 32, VR = BK / VG; /* 1x1: row groups, rows each */
    const int bcol = VEC1 ? (tid & 31) * 4 : tid % IG_BN;
    const int brow0 = VEC1 ? (tid >> 5) : (tid / IG_BN) * RPT;
    const float *xi = x; /* the column's image, group g, channel 0 (+ p for 1x1) */
    int xoff = 0;        /* its window origin's offset in the image (32-bit) */
    int b0 = -(1 << 29), b1 = 0, b2 = 0; /* window origin; b0 < 0 fails every tap */
    const int qc = q0 + bcol;
    const bool cok = qc < a.NP;
    if (cok) {
        int n = qc / a.P, p = qc - n * a.P;
        xi = x + ((int64_t)n * a.C + (int64_t)g * a.Cg) * a.plane;
        if (VEC1) {
            xi += p;
        } else {
            int o2 = p % a.out2, u = p / a.out2;
            int o1 = u % a.out1, o0 = u / a.out1;
            b0 = o0 * a.s0 - a.p0;
            b1 = o1 * a.s1 - a.p1;
            b2 = o2 * a.s2 - a.p2;
            xoff = (b0 * a.in1 + b1) * a.in2 + b2;
        }
    }
    if (!VEC1) {
        /* tap table: (r0*d0, r1*d1, r2*d2, their offset in the input) */
        for (int t = tid; t < a.R; t += NT) {
            int r2 = t % a.m2, u = t / a.m2;
            int r1 = u % a.m1, r0 = u / a.m1;
            int e0 = r0 * a.d0, e1 = r1 * a.d1, e2 = r2 * a.d2;
            taps[t] = make_int4(e0, e1, e2, (e0 * a.in1 + e1) * a.in2 + e2);
        }
        __syncthreads();
    }
    /* zero padding: the taps inside the input for this thread's column, a
     * bit each (R <= 64; a column past the end has b0 far out: none); with
     * a.ltab (R < 64) a table of the reduction rows l padded to whole k
     * tiles: (c * plane + the tap's offset, tap t), t = 63 past Rl (bit 63
     * is never set), or with a.ltab == 1 (R <= 32) (offset, 1 << t), 0 past
     * Rl, so one element costs a table load, a bit test, a select and the
     * copy */
    int2 *ltab = reinterpret_cast<int2 *>(taps + a.R);
    if (LM == IG_ZEROS && a.ltab) {
        for (int l = tid; l < KT * BK; l += NT) {
            const int c = l / a.R, t = l - c * a.R;
            ltab[l] = l >= a.Rl      ? make_int2(0, a.ltab == 1 ? 0 : 63)
                      : a.ltab == 1 ? make_int2(c * a.plane + taps[t].w, (int)(1u << t))
                                    : make_int2(c * a.plane + taps[t].w, t);
        }
        __syncthreads();
    }
    /* V3: B register-staged (TF32, zero padding, a.ltab set by the host):
     * columns q0 + 4*lane .. +3, rows warp*RW .. +RW-1 of each tile; per
     * column the image pointer at the window origin and the in-bounds taps */
    constexpr bool RS = V == 3 && LM == IG_ZEROS;
    /* V 4: B (im2col) stored transposed, position-major, as core matrices:
     * element (reduction row r, position p) of a stage at ig_bt(r, p); with
     * zero padding register-staged (R4: one position a thread, a quad of
     * rows at a time, rounded, STS.128) */
    constexpr bool R4 = V == 4 && LM == IG_ZEROS;
    auto ig_bt = [](int r, int p) { return ((p >> 3) * (BK / 4) + (r >> 2)) * 32 + (p & 7) * 4 + (r & 3); };
    constexpr int RW = BK / (NT / 32);
    const float *rp[RS ? 4 : 1];
    unsigned long long rt[RS ? 4 : 1];
    /* register staging (RS, R4): column q's image pointer at its window
     * origin (*cp; x past the end) and its in-bounds taps, a bit each */
    auto col_taps = [&](int q, const float **cp) -> unsigned long long {
        *cp = x;
        if (q >= a.NP) return 0;
        const int n = q / a.P, p = q - n * a.P;
        const int o2 = p % a.out2, u = p / a.out2;
        const int o1 = u % a.out1, o0 = u / a.out1;
        const int c0 = o0 * a.s0 - a.p0, c1 = o1 * a.s1 - a.p1, c2 = o2 * a.s2 - a.p2;
        *cp = x + ((int64_t)n * a.C + (int64_t)g * a.Cg) * a.plane + ((c0 * a.in1 + c1) * a.in2 + c2);
        unsigned long long m = 0;
        for (int t = 0; t < a.R; t++) {
            const int4 tp = taps[t];
            const bool inb = ((unsigned)(c0 + tp.x) < (unsigned)a.in0) &
                             ((unsigned)(c1 + tp.y) < (unsigned)a.in1) &
                             ((unsigned)(c2 + tp.z) < (unsigned)a.in2);
            m |= (unsigned long long)inb << t;
        }
        return m;
    };
    if (RS) {
#pragma unroll
        for (int j = 0; j < (RS ? 4 : 1); j++) rt[j] = col_taps(q0 + (tid & 31) * 4 + j, &rp[j]);
    }
    auto load_b = [&](int kt, float (&rv)[RW][4]) {
        const int2 *lt = ltab + kt * BK + (tid >> 5) * RW;
#pragma unroll
        for (int i = 0; i < RW; i++) {
            const int2 e = lt[i];
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const bool ok = a.ltab == 1 ? ((unsigned)rt[j & (RS ? 3 : 0)] & (unsigned)e.y) != 0
                                            : ((rt[j & (RS ? 3 : 0)] >> e.y) & 1) != 0;
                rv[i][j] = ig_ldg_if(rp[j & (RS ? 3 : 0)] + e.x, ok);
            }
        }
    };
    auto store_b = [&](int st, const float (&rv)[RW][4]) {
        float *Bs = smem + st * STF + BM * AP;
#pragma unroll
        for (int i = 0; i < RW; i++) {
            uint4 u = make_uint4(ig_tf32(rv[i][0]), ig_tf32(rv[i][1]), ig_tf32(rv[i][2]),
                                 ig_tf32(rv[i][3]));
            *reinterpret_cast<uint4 *>(Bs + ((tid >> 5) * RW + i) * BP + (tid & 31) * 4) = u;
        }
    };
    /* R4 (V 4, zero padding, the single-bit row table): position
     * q0 + tid % 128, quads of rows tid / 128 + j * (NT / 128) */
    constexpr int QN = R4 ? (BK / 4) / (NT / IG_BN) : 1;
    const float *rp4 = x;
    /* R <= 32 (the single-bit table): the mask fits 32 bits */
    const unsigned rt4 = R4 ? (unsigned)col_taps(q0 + tid % IG_BN, &rp4) : 0u;
    auto load_b4 = [&](int kt, float (&rv)[QN][4]) {
        const int2 *lt = ltab + kt * BK + (tid / IG_BN) * 4;
#pragma unroll
        for (int j = 0; j < QN; j++)
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int2 e = lt[j * (NT / IG_BN) * 4 + i];
                const bool ok = (rt4 & (unsigned)e.y) != 0;
                rv[j][i] = ig_ldg_if(rp4 + e.x, ok);
            }
    };
    auto store_b4 = [&](int st, const float (&rv)[QN][4]) {
        float *Bs = smem + st * STF + BM * AP;
#pragma unroll
        for (int j = 0; j < QN; j++) {
            const int kq = tid / IG_BN + j * (NT / IG_BN);
            *reinterpret_cast<uint4 *>(Bs + ig_bt(kq * 4, tid % IG_BN)) =
                make_uint4(ig_tf32(rv[j][0]), ig_tf32(rv[j][1]), ig_tf32(rv[j][2]), ig_tf32(rv[j][3]));
        }
    };
    unsigned long long tin = 0;
    if (LM == IG_ZEROS && a.R <= 64 && !RS) {
        for (int t = 0; t < a.R; t++) {
            const int4 tp = taps[t];
            const bool inb = ((unsigned)(b0 + tp.x) < (unsigned)a.in0) &
                             ((unsigned)(b1 + tp.y) < (unsigned)a.in1) &
                             ((unsigned)(b2 + tp.z) < (unsigned)a.in2);
            tin |= (unsigned long long)inb << t;
        }
    }
    const unsigned tin32 = (unsigned)tin;
    /* the reduction row of this thread's first B element in the next stage
     * to load: channel term cb = c * plane + xoff and tap tb; the stages are
     * loaded in order, so (cb, tb) advance by BK rows per stage */
    int tb = 0, cb = 0;
    const int q16 = BK / a.R, r16 = BK - q16 * a.R;
    if (!VEC1) {
        int l = kt0 * BK + brow0;
        int c = l / a.R;
        tb = l - c * a.R;
        cb = c * a.plane + xoff;
    }
    /* A: 16-byte copies (row tid/QR + i*NT/QR, columns 4*(tid%QR).., QR =
     * BK/4 quads a row) or 4-byte ones (row tid/BK + i*NT/BK, column
     * tid%BK); 32-bit offsets in W_g */
    constexpr int QR = BK / 4;
    /* V 4 stores A as core matrices (ig_cm): 16-byte copies of row
     * tid%8 + 8*(tid/(8*QR)), quad (tid/8)%QR, so a warp fills 4 whole core
     * matrices (conflict-free) */
    const int arow = WG ? (a.avec ? (tid & 7) + 8 * (tid / (8 * QR)) : 0)
                            : a.avec ? tid / QR : tid / BK;
    const int akc = WG ? (a.avec ? ((tid >> 3) % QR) * 4 : 0)
                           : a.avec ? (tid % QR) * 4 : tid % BK;
    const int aoff = arow * a.Rl + akc;
    /* V 4: element (row r, reduction k) of a stage's A tile */
    auto ig_cm = [&](int r, int k) { return ((r >> 3) * QR + (k >> 2)) * 32 + (r & 7) * 4 + (k & 3); };

    auto load_stage = [&](int kt, int st) {
        float *As = smem + st * STF, *Bs = As + BM * AP;
        const int l0 = kt * BK;
        if (WG && !a.avec) {
            /* a warp fills one core matrix a pass: row 8*rg + lane%8,
             * reduction 4*kc + lane/8 (conflict-free) */
            const int wp = tid >> 5, ln = tid & 31;
#pragma unroll
            for (int i = 0; i < BM * BK / NT; i++) {
                const int id = i * (NT / 32) + wp;
                const int row = (id / QR) * 8 + (ln & 7), k = (id % QR) * 4 + (ln >> 3);
                const bool ok = (l0 + k < a.Rl) & (row < krows);
                ig_cp4(As + id * 32 + (ln & 7) * 4 + (ln >> 3), wg + (ok ? row * a.Rl + l0 + k : 0),
                       ok ? 4 : 0);
            }
        } else if (a.avec) {
            const bool kok = l0 + akc < a.Rl;
#pragma unroll
            for (int i = 0; i < BM * QR / NT; i++) {
                const int row = arow + i * (NT / QR);
                const bool ok = kok & (row < krows);
                ig_cp16(As + (WG ? ig_cm(row, akc) : row * AP + akc),
                        wg + (ok ? aoff + i * (NT / QR) * a.Rl + l0 : 0), ok ? 16 : 0);
            }
        } else {
            const bool kok = l0 + akc < a.Rl;
#pragma unroll
            for (int i = 0; i < BM * BK / NT; i++) {
                const int row = arow + i * (NT / BK);
                const bool ok = kok & (row < krows);
                ig_cp4(As + row * AP + akc, wg + (ok ? aoff + i * (NT / BK) * a.Rl + l0 : 0),
                       ok ? 4 : 0);
            }
        }
        if (RS || R4) {
            /* B: load_b / store_b, load_b4 / store_b4 */
        } else if (VEC1) {
#pragma unroll
            for (int i = 0; i < VR; i++) {
                int r = brow0 + i * VG, l = l0 + r;
                bool ok = cok & (l < a.Rl);
                ig_cp16(Bs + r * BP + bcol, ok ? xi + (int64_t)l * a.plane : x, ok ? 16 : 0);
            }
        } else {
            const int l = l0 + brow0;
            if (LM == IG_ZEROS && a.ltab == 1) {
                const int2 *lt = ltab + l;
#pragma unroll
                for (int i = 0; i < RPT; i++) {
                    const int2 e = lt[i];
                    const bool ok = (tin32 & (unsigned)e.y) != 0;
                    const unsigned o = ok ? (unsigned)(xoff + e.x) : 0u;
                    ig_cp4(Bs + (WG ? ig_bt(brow0 + i, bcol) : (brow0 + i) * BP + bcol), xi + o, ok ? 4 : 0);
                }
            } else if (LM == IG_ZEROS && a.ltab) {
                const int2 *lt = ltab + l;
#pragma unroll
                for (int i = 0; i < RPT; i++) {
                    const int2 e = lt[i];
                    const bool ok = (tin >> e.y) & 1;
                    const unsigned o = ok ? (unsigned)(xoff + e.x) : 0u;
                    ig_cp4(Bs + (WG ? ig_bt(brow0 + i, bcol) : (brow0 + i) * BP + bcol), xi + o, ok ? 4 : 0);
                }
            } else if (LM == IG_ZEROS) {
                /* zero-fill for padding, past-the-end rows and columns (the
                 * source then the image start: never read); UM: the tap's
                 * in-bounds test is one bit of tin (R <= 64) */
                auto gather = [&](auto um) {
                    constexpr bool UM = decltype(um)::value;
                    int t = tb, c = cb;
#pragma unroll
                    for (int i = 0; i < RPT; i++) {
                        float *dst = Bs + (WG ? ig_bt(brow0 + i, bcol) : (brow0 + i) * BP + bcol);
                        bool inb;
                        int off;
                        if (UM) {
                            inb = (tin >> t) & 1;
                            off = taps[t].w;
                        } else {
                            const int4 tp = taps[t];
                            inb = ((unsigned)(b0 + tp.x) < (unsigned)a.in0) &
                                  ((unsigned)(b1 + tp.y) < (unsigned)a.in1) &
                                  ((unsigned)(b2 + tp.z) < (unsigned)a.in2);
                            off = tp.w;
                        }
                        const bool ok = inb & (l + i < a.Rl);
                        ig_cp4(dst, xi + (ok ? c + off : 0), ok ? 4 : 0);
                        if (++t == a.R) {
                            t = 0;
                            c += a.plane;
                        }
                    }
                };
                if (a.R <= 64)
                    gather(ig_bool<true>());
                else
                    gather(ig_bool<false>());
            } else {
                int t = tb, c = cb;
#pragma unroll
                for (int i = 0; i < RPT; i++) {
                    float *dst = Bs + (WG ? ig_bt(brow0 + i, bcol) : (brow0 + i) * BP + bcol);
                    const int4 tp = taps[t];
                    const bool inb = ((unsigned)(b0 + tp.x) < (unsigned)a.in0) &
                                     ((unsigned)(b1 + tp.y) < (unsigned)a.in1) &
                                     ((unsigned)(b2 + tp.z) < (unsigned)a.in2);
                    const bool lok = l + i < a.Rl;
                    if (cok & lok) {
                        if (inb)
                            ig_cp4(dst, xi + (c + tp.w), 4);
                        else if (a.mode == TC_MODE_CONSTANT)
                            *dst = a.cval;
                        else /* the image's channel: c less the window origin */
                            ig_edge(dst, xi + (c - xoff), b0 + tp.x, b1 + tp.y, b2 + tp.z,
                                    a.in0, a.in1, a.in2, a.mode);
                    } else {
                        *dst = 0.f;
                    }
                    if (++t == a.R) {
                        t = 0;
                        c += a.plane;
                    }
                }
            }
            /* advance (cb, tb) by BK rows for the next stage */
            tb += r16;
            cb += q16 * a.plane;
            if (tb >= a.R) {
                tb -= a.R;
                cb += a.plane;
            }
        }
    };

    /* stages in flight: NST - 1, V 4 NST - 2 (the slot a load overwrites
     * was read by the wgmma two iterations back, which each warpgroup has
     * waited for before the barrier) */
    constexpr int PD = WG ? NST - 2 : NST - 1;
#pragma unroll
    for (int s = 0; s < PD; s++) {
        if (s < nkt) load_stage(kt0 + s, s);
        ig_commit();
    }

    if (!TF32) {
        /* ---- fp32 FFMA, 8 x 8 per thread ---- */
        const int tx = tid & 15, ty = tid >> 4;
        float acc[TR][8];
#pragma unroll
        for (int i = 0; i < TR; i++)
#pragma unroll
            for (int j = 0; j < 8; j++) acc[i][j] = 0.f;
        for (int kt = 0; kt < nkt; kt++) {
            ig_wait<NST - 2>();
            __syncthreads();
            const int nk = kt + NST - 1;
            if (nk < nkt) load_stage(kt0 + nk, nk % NST);
            ig_commit();
            const float *As = smem + (kt % NST) * STF;
            const float *Bs = As + BM * AP;
#pragma unroll
            for (int kc = 0; kc < BK / 4; kc++) {
                float av[TR][4];
#pragma unroll
                for (int i = 0; i < TR; i++) {
                    int row = TR == 8 ? (i < 4 ? 0 : BM / 2) + ty * 4 + (i & 3) : ty * 4 + i;
                    float4 q = *reinterpret_cast<const float4 *>(As + row * AP + kc * 4);
                    av[i][0] = q.x; av[i][1] = q.y; av[i][2] = q.z; av[i][3] = q.w;
                }
#pragma unroll
                for (int kk = 0; kk < 4; kk++) {
                    const float *br = Bs + (kc * 4 + kk) * BP;
                    float4 c0 = *reinterpret_cast<const float4 *>(br + tx * 4);
                    float4 c1 = *reinterpret_cast<const float4 *>(br + 64 + tx * 4);
                    float bv[8] = {c0.x, c0.y, c0.z, c0.w, c1.x, c1.y, c1.z, c1.w};
#pragma unroll
                    for (int i = 0; i < TR; i++)
#pragma unroll
                        for (int j = 0; j < 8; j++) acc[i][j] = fmaf(av[i][kk], bv[j], acc[i][j]);
                }
            }
        }
        ig_wait<0>();
        /* epilogue: rows k0 + {0, BM/2} + ty*4 + i, columns q0 + {0, 64} + tx*4 + j */
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int qb = q0 + h * 64 + tx * 4;
            if (qb >= a.NP) continue;
            int nb = qb / a.P, pb = qb - nb * a.P;
            const bool vec = !part && a.yvec && qb + 3 < a.NP;
#pragma unroll
            for (int i = 0; i < TR; i++) {
                int k = k0 + (TR == 8 ? (i < 4 ? 0 : BM / 2) + ty * 4 + (i & 3) : ty * 4 + i);
                if (k >= a.Kg) continue;
                int kk = g * a.Kg + k;
                float b = (bias && !part) ? __ldg(bias + kk) : 0.f;
                if (vec) {
                    float4 v = make_float4(acc[i][h * 4] + b, acc[i][h * 4 + 1] + b,
                                           acc[i][h * 4 + 2] + b, acc[i][h * 4 + 3] + b);
                    *reinterpret_cast<float4 *>(y + ((int64_t)nb * a.K + kk) * a.P + pb) = v;
                } else {
#pragma unroll
                    for (int j = 0; j < 4; j++)
                        if (qb + j < a.NP) ig_put(y, part, a, split, kk, qb + j, acc[i][h * 4 + j], b);
                }
            }
        }
    } else if (WG) {
        /* ---- TF32 wgmma: a warpgroup's m64 tiles are output positions,
         * N = BM channels; NWG warpgroups split the 128 positions ---- */
        constexpr int NWG = NT / 128, MW = IG_BN / NWG / 64, ND = BM / 2;
        const int warp = tid >> 5, lane = tid & 31, gq = lane >> 2, tq = lane & 3;
        const int wgb = (warp >> 2) * (IG_BN / NWG), pw0 = wgb + (warp & 3) * 16;
        float acc[MW][ND];
#pragma unroll
        for (int i = 0; i < MW; i++)
#pragma unroll
            for (int j = 0; j < ND; j++) acc[i][j] = 0.f;
        float r4v[QN][4];
        if (R4 && nkt > 0) {
            load_b4(kt0, r4v);
            store_b4(0, r4v);
        }
        for (int kt = 0; kt < nkt; kt++) {
            ig_wait<PD - 1>();
            ig_proxy_fence(); /* this thread's cp.async and STS for wgmma */
            __syncthreads();
            const int nk = kt + PD;
            if (nk < nkt) load_stage(kt0 + nk, nk % NST);
            ig_commit();
            const float *As = smem + (kt % NST) * STF;
            const float *Bs = As + BM * AP;
            if (R4 && kt + 1 < nkt) load_b4(kt0 + kt + 1, r4v);
            ig_wg_fence();
#pragma unroll
            for (int k8 = 0; k8 < BK / 8; k8++) {
                /* each operand's two core-matrix columns of the step: 128
                 * bytes apart along K, QR * 128 bytes between 8-row groups */
                const uint64_t db = ig_desc(As + k8 * 64, 128, QR * 128);
#pragma unroll
                for (int mw = 0; mw < MW; mw++)
                    ig_wgmma<BM>(acc[mw], ig_desc(Bs + ig_bt(k8 * 8, wgb + mw * 64), 128, QR * 128), db);
            }
            ig_wg_commit();
            /* slot (kt+1) % NST was last read by the wgmma of tile kt+1-NST */
            if (R4 && kt + 1 < nkt) store_b4((kt + 1) % NST, r4v);
            /* the previous tile's wgmma done: its slot may be loaded next */
            ig_wg_wait<1>();
        }
        ig_wg_wait<0>();
        ig_wait<0>();
        /* epilogue: acc[mw][4j + 2h + e] is position pw0 + mw*64 + gq + 8h,
         * channel 8j + 2tq + e */
#pragma unroll
        for (int mw = 0; mw < MW; mw++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int qq = q0 + pw0 + mw * 64 + gq + 8 * h;
                if (qq >= a.NP) continue;
                const int n = qq / a.P, pp = qq - n * a.P;
#pragma unroll
                for (int j = 0; j < BM / 8; j++)
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        const int k = k0 + 8 * j + 2 * tq + e;
                        if (k >= a.Kg) continue;
                        const int kk = g * a.Kg + k;
                        const float v = acc[mw][4 * j + 2 * h + e];
                        if (part)
                            part[((int64_t)split * a.K + kk) * a.NP + qq] = v;
                        else
                            y[((int64_t)n * a.K + kk) * a.P + pp] =
                                v + (bias ? __ldg(bias + kk) : 0.f);
                    }
            }
    } else {
        /* ---- TF32 mma.sync m16n8k8, warp tile 64 x 32 ---- */
        const int warp = tid >> 5, lane = tid & 31;
        const int wm = warp >> 2, wn = warp & 3, gq = lane >> 2, tq = lane & 3;
        float rv[RW][4];
        if (RS && nkt > 0) {
            load_b(kt0, rv);
            store_b(0, rv);
        }
        float acc[MI][4][4];
#pragma unroll
        for (int i = 0; i < MI; i++)
#pragma unroll
            for (int j = 0; j < 4; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) acc[i][j][e] = 0.f;
        for (int kt = 0; kt < nkt; kt++) {
            ig_wait<NST - 2>();
            __syncthreads();
            const int nk = kt + NST - 1;
            if (nk < nkt) load_stage(kt0 + nk, nk % NST);
            ig_commit();
            const float *As = smem + (kt % NST) * STF;
            const float *Bs = As + BM * AP;
            if (RS && kt + 1 < nkt) load_b(kt0 + kt + 1, rv);
#pragma unroll
            for (int k8 = 0; k8 < BK / 8; k8++) {
                unsigned af[MI][4], bf[4][2];
                {
                    /* the MMA's k index kk of this step is the stage's
                     * row / column 8*k8 + 2*(kk & 3) + (kk >> 2), for A and
                     * B alike (any order of the reduction gives the same
                     * sum): a thread's a0/a2 and a1/a3 are adjacent */
#pragma unroll
                    for (int mi = 0; mi < MI; mi++) {
                        const float *ap = As + (wm * 64 + mi * 16 + gq) * AP + k8 * 8 + 2 * tq;
                        const float2 lo = *reinterpret_cast<const float2 *>(ap);
                        const float2 hi = *reinterpret_cast<const float2 *>(ap + 8 * AP);
                        af[mi][0] = ig_tf32(lo.x);
                        af[mi][1] = ig_tf32(hi.x);
                        af[mi][2] = ig_tf32(lo.y);
                        af[mi][3] = ig_tf32(hi.y);
                    }
#pragma unroll
                    for (int ni = 0; ni < 4; ni++) {
                        const float *bp = Bs + (k8 * 8 + 2 * tq) * BP + wn * 32 + ni * 8 + gq;
                        /* V3: rounded when stored */
                        bf[ni][0] = RS ? __float_as_uint(bp[0]) : ig_tf32(bp[0]);
                        bf[ni][1] = RS ? __float_as_uint(bp[BP]) : ig_tf32(bp[BP]);
                    }
                }
#pragma unroll
                for (int mi = 0; mi < MI; mi++)
#pragma unroll
                    for (int ni = 0; ni < 4; ni++) ig_mma(acc[mi][ni], af[mi], bf[ni]);
            }
            /* slot (kt+1) % NST was last read in iteration kt+1-NST < kt */
            if (RS && kt + 1 < nkt) store_b((kt + 1) % NST, rv);
        }
        ig_wait<0>();
        /* epilogue: acc[mi][ni][e] is row wm*64 + mi*16 + gq + 8*(e>>1),
         * column wn*32 + ni*8 + 2*tq + (e&1) */
#pragma unroll
        for (int ni = 0; ni < 4; ni++) {
            const int qb = q0 + wn * 32 + ni * 8 + 2 * tq;
            if (qb >= a.NP) continue;
            const bool two = qb + 1 < a.NP;
            int n0 = qb / a.P, p0 = qb - n0 * a.P;
            int n1 = n0, p1 = p0 + 1;
            if (p1 == a.P) { p1 = 0; n1++; }
#pragma unroll
            for (int mi = 0; mi < MI; mi++)
#pragma unroll
                for (int hr = 0; hr < 2; hr++) {
                    int k = k0 + wm * 64 + mi * 16 + gq + 8 * hr;
                    if (k >= a.Kg) continue;
                    int kk = g * a.Kg + k;
                    float v0 = acc[mi][ni][2 * hr], v1 = acc[mi][ni][2 * hr + 1];
                    if (part) {
                        float *pp = part + ((int64_t)split * a.K + kk) * a.NP + qb;
                        pp[0] = v0;
                        if (two) pp[1] = v1;
                    } else {
                        float b = bias ? __ldg(bias + kk) : 0.f;
                        y[((int64_t)n0 * a.K + kk) * a.P + p0] = v0 + b;
                        if (two) y[((int64_t)n1 * a.K + kk) * a.P + p1] = v1 + b;
                    }
                }
        }
    }
}

/* V 9 (session 14): the 1x1 layer in TF32 as a stream. A persistent
 * block holds its 64 output channels' weights (64 x Cg, rounded to TF32)
 * in shared memory for the whole call and walks tiles of 128 positions of
 * the input, four stages of 64 channels x 128 positions, three in flight
 * (cp.async, 16 bytes a copy: P % 4 == 0 and x 16-byte aligned, as for
 * the 1x1 loader); 8 warps, each 16 positions x 64 channels with mma.sync
 * m16n8k8 (A: positions x channels from the [channel][position] stage,
 * rounded when loaded; B: the resident weights, one LDS.64 a fragment with
 * the k slots paired as V 1 pairs them). V 1 reloads the weights from L2
 * for every 128-position block (64 KB each at 1x1 256->64, as many bytes
 * as the input: ncu 78% of L2 throughput, 52% of DRAM, session 14); here
 * they cross L2 once per block. Measured on the H100 (session 14, 1x1
 * 256->64 @56 b32): 78.7 us with 32 channels a stage, 71.6 with 64,
 * against V 1's 69.7-70.2 and cuDNN's 48.6: the weights' L2 traffic was
 * not what bounds V 1, and twice the bytes in flight gained 9%. So V 9 is
 * opt-in (TC_CUDA_CONV_TFV=11) until a form of it is faster. */
#define IG9_TP 128 /* positions a tile */
#define IG9_XP 132 /* stage row pitch (floats): 8t + g conflict-free A loads */
#define IG10_XP 136 /* V 10's pitch: channel t, position g at bank 8t + g */
#define IG9_ST 4
#define IG9_BC 64 /* channels a stage */
#define IG9_SMEM(CGP) ((size_t)(64 * ((CGP) + 8) + IG9_ST * IG9_BC * IG9_XP) * sizeof(float))
/* V 10: the weights swizzled (64 x CgP), the stages, 1 KiB to align */
#define IG10_SMEM(CGP) ((size_t)(64 * (CGP) + IG9_ST * IG9_BC * IG10_XP) * sizeof(float) + 1024)
struct ig9p {
    int C, Cg, CgP, K, Kg, G, P;
    int64_t NP;     /* N * P: the positions of all images, tiled as one run */
    int64_t ntiles; /* NP / 128 rounded up */
    int ktiles;     /* output-channel tiles of 64 a group */
    int wvec;       /* Cg % 4 == 0 and w 16-byte aligned: weights by cp.async */
};
/* V 10 (WG = 1, session 15): V 9's stream with the MMAs on Hopper's
 * wgmma. Each warpgroup takes 64 of the tile's 128 positions and all 64
 * channels: wgmma m64n64k8 with A (positions x input channels) from
 * registers, loaded from the [channel][position] stage (pitch 136:
 * conflict-free) and rounded, and B the resident weights in the 128-byte
 * swizzled K-major layout (32 channels a 128-byte row, one 8 KB block of
 * 64 rows per 32 channels), read by the tensor cores themselves. A
 * warpgroup's shared reads per k8 step: 2 KB of A (128 LDS.32) and 2 KB of
 * B for 32 mma.sync-equivalents, 128 bytes each against V 9's 320. A stage's
 * wgmmas are waited for before the next stage's fragments are loaded (the
 * stage is DRAM-bound: ~2500 clocks of loads against ~500 of MMAs). */
template <int WG>
__global__ void __launch_bounds__(256, 1) /* ~200 KB of shared memory: one block an SM */
    k_ig9(const float *__restrict__ x, const float *__restrict__ w,
          const float *__restrict__ bias, float *__restrict__ y, const ig9p a) {
    extern __shared__ float4 ig9_smem4[];
    float *Ws = reinterpret_cast<float *>(ig9_smem4); /* V 9: [64][CgP + 8] */
    if (WG) /* a 1024-byte boundary (the swizzle's period) */
        Ws += ((1024 - ((unsigned)__cvta_generic_to_shared(Ws) & 1023)) & 1023) / 4;
    const int PW = a.CgP + 8;
    constexpr int XP = WG ? IG10_XP : IG9_XP;
    float *Xs = Ws + (WG ? 64 * a.CgP : 64 * PW); /* IG9_ST x [IG9_BC][XP] */
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, gq = lane >> 2,
              tq = lane & 3;
    const int g = blockIdx.y / a.ktiles, k0 = (blockIdx.y % a.ktiles) * 64;
    const int nch = a.CgP / IG9_BC;
    const int first = blockIdx.x, stride = gridDim.x;
    const int mytiles = first < a.ntiles ? (int)((a.ntiles - first + stride - 1) / stride) : 0;
    const int nsteps = mytiles * nch;
    /* stage s: tile first + (s / nch) * stride, channels IG9_BC * (s % nch),
     * slot s % IG9_ST, all counted (session 16: no 64-bit division by P
     * or nch in the loop; ig9_plan keeps N * P + 256 within int). A tile
     * is 128 consecutive positions of the N * P run, so it may span two
     * images (session 15: with tiles per image, 1x1 256->64 @56 b32 had 25
     * tiles an image, the last half empty, and 7 tiles on the busiest
     * block against 6.06 on average). A thread copies positions qq .. qq
     * + 3 of the tile (P % 4 == 0: one image) for channel rows id >> 5. */
    const int qq = (tid & 31) * 4;
    int is = 0, ich = 0, isl = 0, itile = first; /* the next stage to issue */
    const float *isrc = x;
    bool iqok = false;
    auto issue = [&]() {
        if (is < nsteps) {
            if (ich == 0) { /* a new tile: this thread's image and position */
                const int q = itile * IG9_TP + qq, n = q / a.P;
                iqok = q < a.NP;
                isrc = x + ((int64_t)n * a.C + (int64_t)g * a.Cg) * a.P + (q - n * a.P);
            }
            const int ch = ich * IG9_BC;
            float *dst = Xs + isl * IG9_BC * XP;
#pragma unroll
            for (int j = 0; j < IG9_BC / 8; j++) {
                const int c = (tid + 256 * j) >> 5;
                const bool ok = (ch + c < a.Cg) & iqok;
                ig_cp16(dst + c * XP + qq, ok ? isrc + (int64_t)(ch + c) * a.P : x, ok ? 16 : 0);
            }
            if (++ich == nch) ich = 0, itile += stride;
            if (++isl == IG9_ST) isl = 0;
            is++;
        }
        ig_commit();
    };
    /* the block's weights, rounded, zeros past Kg and Cg. V 10: row k,
     * channel c at 32-channel block c / 32, 16-byte chunk (c % 32) / 4
     * swizzled by k % 8 */
    auto wslot = [&](int k, int c) -> float * {
        return WG ? Ws + (c >> 5) * 2048 + k * 32 + ((((c & 31) >> 2) ^ (k & 7)) << 2) + (c & 3)
                  : Ws + k * PW + c;
    };
    /* with wvec, 16-byte copies in their own cp.async group ahead of the
     * stages' (all in flight at once; session 15: the element loop issued
     * about four loads at a time, ~16 L2 round trips a thread before the
     * first stage), then each thread rounds the chunks it copied. Chunk i
     * of the block's 64 x CgP / 4: V 10 in shared-memory order
     * (32-channel block, row, chunk: a warp stores 512 contiguous bytes;
     * row-major, four rows of one warp fell on the same banks 8 KB apart:
     * ncu, session 15), V 9 row-major */
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
    for (int s = 0; s < IG9_ST - 1; s++) issue();
    if (a.wvec) {
        ig_wait<IG9_ST - 1>(); /* this thread's weight copies (the stages may be in flight) */
        for (int i = tid; i < 64 * cq; i += 256) {
            int k, c;
            wchunk(i, k, c);
            float4 *p4 = reinterpret_cast<float4 *>(wslot(k, c));
            const float4 v = *p4;
            *p4 = make_float4(__uint_as_float(ig_tf32(v.x)), __uint_as_float(ig_tf32(v.y)),
                              __uint_as_float(ig_tf32(v.z)), __uint_as_float(ig_tf32(v.w)));
        }
    } else {
        for (int i = tid; i < 64 * a.CgP; i += 256) {
            const int k = i / a.CgP, c = i - k * a.CgP;
            const bool ok = (k0 + k < a.Kg) & (c < a.Cg);
            *wslot(k, c) = __uint_as_float(
                ok ? ig_tf32(__ldg(w + ((int64_t)g * a.Kg + k0 + k) * a.Cg + c)) : 0u);
        }
    }
    if (WG) ig_proxy_fence(); /* the weights (generic proxy) to wgmma (async) */
    float acc[8][4];
#pragma unroll
    for (int j = 0; j < 8; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[j][e] = 0.f;
    int csl = 0, cch = 0, ctile = first; /* the stage computed: slot, chunk, tile */
    for (int s = 0; s < nsteps; s++) {
        ig_wait<IG9_ST - 2>();
        __syncthreads();
        issue(); /* stage s + IG9_ST - 1 */
        if constexpr (WG) {
            /* warpgroup warp >> 2 takes positions 64 (warp >> 2) .. + 63; its
             * warp (warp & 3) rows 16 (warp & 3) + gq (+ 8) of them */
            const float *Xt = Xs + csl * IG9_BC * XP + warp * 16 + gq;
            unsigned af[IG9_BC / 8][4];
#pragma unroll
            for (int k8 = 0; k8 < IG9_BC / 8; k8++) {
                const float *xp = Xt + (k8 * 8 + tq) * XP;
                af[k8][0] = ig_tf32(xp[0]);
                af[k8][1] = ig_tf32(xp[8]);
                af[k8][2] = ig_tf32(xp[4 * XP]);
                af[k8][3] = ig_tf32(xp[4 * XP + 8]);
            }
            const float *Wc = Ws + cch * (IG9_BC / 32) * 2048;
            const int keep0 = cch != 0; /* a tile's first stage: D = A * B */
            ig_wg_fence();
#pragma unroll
            for (int k8 = 0; k8 < IG9_BC / 8; k8++)
                ig_wgmma_rs64(&acc[0][0], af[k8], ig_desc_sw128(Wc + (k8 >> 2) * 2048 + (k8 & 3) * 8),
                              k8 > 0 || keep0);
            ig_wg_commit();
            ig_wg_wait<0>();
        } else {
            const float *Xt = Xs + csl * IG9_BC * XP + warp * 16 + gq;
            const float *Wt = Ws + gq * PW + cch * IG9_BC + 2 * tq;
#pragma unroll
            for (int k8 = 0; k8 < IG9_BC / 8; k8++) {
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
                const int q = ctile * IG9_TP + warp * 16 + gq + 8 * h, n = q / a.P;
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
        if (++csl == IG9_ST) csl = 0;
    }
    ig_wait<0>();
}

/* V 7 (session 12, opt-in: TC_CUDA_CONV_TFV=7): stride-1 layers as
 * shifted views of a shared-memory patch, TF32 wgmma. The call copies x
 * into xT (N, spatial, C) and the weights into wT (K, tap, CKP), CKP = Cg
 * rounded up to 32 with zeros, both rounded to TF32 (k_ig7_prep, one
 * launch). A block computes TH output rows of one output plane (of one
 * image) over the whole padded width PW, M = TH * PW <= 64 * MT positions
 * (the columns past the output width are computed and dropped), for BM
 * output channels. For each chunk of 32 channels it loads the input patch
 * those rows read, (m0-1)*d0+1 planes x TH+(m1-1)*d1 rows x PW columns,
 * once, one pixel's 32 channels a 128-byte row in the 128-byte swizzled
 * layout (TC_CUDA_CONV_V7SW=0: no-swizzle core matrices, [channel
 * quad][pixel][4]): the im2col tile of tap t is then the same patch
 * shifted by the tap's offset in pixels, so its wgmma descriptor is the
 * patch's plus 128 bytes a pixel. Every input pixel crosses L2 once per
 * block instead of once per tap; every padding mode is a per-pixel map
 * (zeros: zero-fill). Weights: a ring of 4 stages (TC_CUDA_CONV_V7NST), two
 * in flight; the patch: two buffers, the next chunk's loaded with the first
 * weight stage of that chunk. Measured on the H100
 * (docs/solvers/cuda-conv-igemm.md,
 * session 12) at 0.5-1.15x of V 3: faster only at 3x3 256 @14, where
 * cuda.conv.winograd2-tf32 is faster still; ncu at 128 @28: one block per
 * SM, 6% occupancy, no eligible warp 75% of the cycles. */
#define IG7_BK 32
#define IG7_ST 4
/* V 8's stages: three where the grid has more blocks than SMs (two
 * blocks then share an SM: 3x3 128 @28 0.072 ms against 0.081 with four
 * stages and one block an SM, session 13), else four (256 @14, 128
 * blocks: 0.071 against 0.075 with three) */
#define IG8_ST_MANY 3
#define IG8_ST_FEW 4
#define IG7_PPT 8 /* patch pixels a thread at most: NPIXA <= 128 * IG7_PPT */
/* V 7's copies in one launch (session 14: one launch less on the host's
 * path before the main kernel): blocks below nxb copy x (N, C, S) -> xt
 * (N, S, C) by 32 x 32 tiles (tx tiles along S, ty along C), rounded to
 * TF32; the blocks after them repack w (rows, Cg, R) -> wt (rows, R, CKP),
 * zeros for c >= Cg, rounded: one thread a (row, channel), its R taps */
__global__ void __launch_bounds__(256) k_ig7_prep(const float *__restrict__ x,
                                                  float *__restrict__ xt, int C, int S, int tx,
                                                  int ty, int64_t nxb,
                                                  const float *__restrict__ w,
                                                  float *__restrict__ wt, int64_t rows, int Cg,
                                                  int R, int CKP) {
    __shared__ float tile[32][33];
    const int64_t bid = blockIdx.x;
    if (bid >= nxb) {
        const int64_t i = (bid - nxb) * 256 + threadIdx.x;
        if (i >= rows * CKP) return;
        const int c = (int)(i % CKP);
        const int64_t k = i / CKP;
        for (int t = 0; t < R; t++)
            wt[(k * R + t) * CKP + c] =
                c < Cg ? __uint_as_float(ig_tf32(w[(k * Cg + c) * R + t])) : 0.f;
        return;
    }
    const int bx = (int)(bid % tx), by = (int)(bid / tx % ty);
    const int64_t bz = bid / ((int64_t)tx * ty);
    const int s0 = bx * 32, c0 = by * 32;
    const int64_t base = bz * C * S;
    const int lx = threadIdx.x & 31, ly = threadIdx.x >> 5;
    for (int j = ly; j < 32; j += 8)
        if (c0 + j < C && s0 + lx < S) tile[j][lx] = x[base + (int64_t)(c0 + j) * S + s0 + lx];
    __syncthreads();
    for (int j = ly; j < 32; j += 8)
        if (s0 + j < S && c0 + lx < C)
            xt[base + (int64_t)(s0 + j) * C + c0 + lx] = __uint_as_float(ig_tf32(tile[lx][j]));
}
struct ig7p {
    igp a;
    int PW, TH, PH, PD0, NPIX, NPIXA, nrb, CKP, out0;
    int swz; /* 1: both operands in the 128-byte swizzled layout (the
              * default); 0: no-swizzle core matrices (TC_CUDA_CONV_V7SW=0) */
    int nst; /* weight stages, nst - 2 in flight (TC_CUDA_CONV_V7NST, 3..8) */
    double blocks; /* the grid's blocks (host side: V 8's stages and estimate) */
};
/* cp.async.wait_group n for a run-time n in 0..6 */
__device__ __forceinline__ void ig_wait_n(int n) {
    switch (n) {
    case 0: ig_wait<0>(); break;
    case 1: ig_wait<1>(); break;
    case 2: ig_wait<2>(); break;
    case 3: ig_wait<3>(); break;
    case 4: ig_wait<4>(); break;
    case 5: ig_wait<5>(); break;
    default: ig_wait<6>(); break;
    }
}
/* V 8 (session 13, opt-in: TC_CUDA_CONV_TFV=8): V 7 with its copies
 * issued by a producer warp as tensor-memory-accelerator boxes (the patch
 * a 5D box of xT with zeros outside, the weight stage a 2D box of wT, both
 * 128-byte swizzled by the copy engine into V 7's layout) and mbarriers in
 * place of cp.async groups and block barriers: the consumer warpgroups
 * wait only for their stage's bytes and free it when its wgmmas are done.
 * Zero padding, groups == 1 or Cg % 32 == 0 (a box reads 32 channels);
 * other layers run V 7. */
#define IG7_MAXST 8
struct ig7tm {
    CUtensorMap x, w; /* V 8: xT (C, in2, in1, in0, N) and wT (Rl, K) */
};
template <int BM, int MT, int LM, int TMA>
__global__ void __launch_bounds__((BM == 128 && !(TMA && MT == 1) ? 256 : 128) + 32 * TMA,
                                  TMA ? 2 : 1)
    k_ig7(const float *__restrict__ x, const float *__restrict__ w,
          const float *__restrict__ bias, float *__restrict__ y, const ig7p q,
          const __grid_constant__ ig7tm tm) {
    const igp &a = q.a;
    /* two warpgroups for the 128-channel tile, each taking 64 of them
     * (session 12 on the H100: 0.118 against 0.134 ms at 3x3 128 @28, 0.151
     * against 0.25 at 512 @7; at 64 channels two warpgroups of 32 lost:
     * 0.19-0.27 against 0.15 ms at 64 @56) */
    /* V 8's 128-channel tile with one row tile: one warpgroup of m64n128
     * wgmmas (two of m64n64 move 128 shared bytes a clock: ig8_default) */
    constexpr int NT = BM == 128 && !(TMA && MT == 1) ? 256 : 128, NWG = NT / 128, BN = BM / NWG;
    constexpr int BK = IG7_BK, QR = BK / 4;
    const int NST = q.nst, PD = NST - 2;
    constexpr int WS = BM * BK;          /* a weight stage (floats) */
    constexpr int WPT = BM * QR / NT;    /* weight copies a thread */
    constexpr int PPT = (IG7_PPT * 128 + NT - 1) / NT; /* patch pixels a thread at most */
    extern __shared__ float4 ig_smem4[];
    float *smem = reinterpret_cast<float *>(ig_smem4);
    /* a 1024-byte boundary (the swizzle's period; the host adds 1 KiB) */
    smem += ((1024 - ((unsigned)__cvta_generic_to_shared(smem) & 1023)) & 1023) / 4;
    const bool SW = q.swz != 0;
    float *patch = smem + NST * WS;      /* two buffers of NPIXA * BK floats */
    /* V 8: full[IG7_MAXST], empty[IG7_MAXST] */
    uint64_t *full = reinterpret_cast<uint64_t *>(patch + 2 * q.NPIXA * BK), *empty = full + IG7_MAXST;
    int *toff = reinterpret_cast<int *>(full + 2 * IG7_MAXST);
    const int tid = threadIdx.x;
    const int g = blockIdx.z;
    const int k0 = blockIdx.y * BM;
    const int rb = blockIdx.x % q.nrb, u = blockIdx.x / q.nrb;
    const int oz = u % q.out0, n = u / q.out0;
    const int oy0 = rb * q.TH;
    const int CK = q.CKP / BK, R = a.R;
    const int nst = CK * R;
    const int krows = min(BM, a.Kg - k0);
    const float *wg = w + ((int64_t)g * a.Kg + k0) * a.Rl;
    /* the taps' offsets in patch pixels */
    for (int t = tid; t < R; t += NT) {
        int r2 = t % a.m2, v = t / a.m2;
        int r1 = v % a.m1, r0 = v / a.m1;
        toff[t] = ((r0 * a.d0) * q.PH + r1 * a.d1) * q.PW + r2 * a.d2;
    }
    /* this thread's patch pixels tid + NT j: the source pixel in xT (-1:
     * zero); V 8: unused */
    int64_t src[PPT];
#pragma unroll
    for (int j = 0; j < (TMA ? 0 : PPT); j++) {
        const int p = tid + NT * j;
        src[j] = -1;
        if (p < q.NPIX) {
            const int c2 = p % q.PW, v = p / q.PW;
            const int c1 = v % q.PH, c0 = v / q.PH;
            int i0 = oz - a.p0 + c0, i1 = oy0 - a.p1 + c1, i2 = c2 - a.p2;
            bool ok;
            if (LM == IG_ZEROS) {
                ok = ((unsigned)i0 < (unsigned)a.in0) & ((unsigned)i1 < (unsigned)a.in1) &
                     ((unsigned)i2 < (unsigned)a.in2);
            } else {
                /* rows past the outputs' reach may lie beyond one reflection:
                 * they feed only dropped positions */
                i0 = min(max(cv_bidx(i0, a.in0, a.mode), 0), a.in0 - 1);
                i1 = min(max(cv_bidx(i1, a.in1, a.mode), 0), a.in1 - 1);
                i2 = min(max(cv_bidx(i2, a.in2, a.mode), 0), a.in2 - 1);
                ok = true;
            }
            if (ok) src[j] = (int64_t)n * a.plane + ((int64_t)i0 * a.in1 + i1) * a.in2 + i2;
        }
    }
    const float *xg = x + (int64_t)g * a.Cg;
    if constexpr (TMA) {
        if (tid == 0) {
            for (int i = 0; i < NST; i++) {
                ig_mbar_init(full + i, 1);
                ig_mbar_init(empty + i, NT / 32);
            }
            ig_mbar_init_fence();
        }
        /* rows past the box that views of dropped positions reach: zeros */
        for (int i = q.NPIX * BK + tid; i < q.NPIXA * BK; i += NT + 32) {
            patch[i] = 0.f;
            patch[q.NPIXA * BK + i] = 0.f;
        }
        ig_proxy_fence();
        __syncthreads();
        if (tid >= NT) { /* the producer warp: one lane issues every copy */
            /* step s: slot s % NST of phase (s / NST) & 1, chunk cc = s / R,
             * tap t = s % R, all counted (no division in the loop) */
            if (tid == NT) {
                int slot = 0, cc = 0, t = 0;
                unsigned ph = 0;
                for (int s = 0; s < CK * R; s++) {
                    if (s >= NST) ig_mbar_wait(empty + slot, ph ^ 1u);
                    ig_mbar_expect(full + slot, (unsigned)(WS + (t == 0 ? q.NPIX * BK : 0)) * 4u);
                    ig_tma2(smem + slot * WS, &tm.w, t * q.CKP + cc * BK, g * a.Kg + k0, full + slot);
                    if (t == 0)
                        ig_tma5(patch + (cc & 1) * q.NPIXA * BK, &tm.x, g * a.Cg + cc * BK, -a.p2,
                                oy0 - a.p1, oz - a.p0, n, full + slot);
                    if (++slot == NST) slot = 0, ph ^= 1u;
                    if (++t == R) t = 0, ++cc;
                }
            }
            return;
        }
    } else {
        __syncthreads();
    }
    auto load_patch = [&](int cc, int pb) {
        float *P = patch + pb * q.NPIXA * BK;
#pragma unroll
        for (int j = 0; j < PPT; j++) {
            const int p = tid + NT * j;
            if (p >= q.NPIXA) break;
#pragma unroll
            for (int kq = 0; kq < QR; kq++) {
                const bool ok = src[j] >= 0 && cc * BK + 4 * kq < a.Cg;
                ig_cp16(P + (SW ? p * 32 + ((kq ^ (p & 7)) * 4) : ((int64_t)kq * q.NPIXA + p) * 4),
                        ok ? xg + src[j] * a.C + cc * BK + 4 * kq : x, ok ? 16 : 0);
            }
        }
    };
    /* stage s: chunk s / R, tap s % R */
    auto load_stage = [&](int s) {
        const int cc = s / R, t = s - cc * R;
        if (t == 0) load_patch(cc, cc & 1);
        float *Ws = smem + (s % NST) * WS;
#pragma unroll
        for (int j = 0; j < WPT; j++) {
            const int ci = j * NT + tid;
            const int r8 = ci & 7, q4 = (ci >> 3) & 7, rg = ci >> 6;
            const int row = rg * 8 + r8;
            const bool ok = row < krows;
            ig_cp16(Ws + (SW ? row * 32 + ((q4 ^ r8) * 4) : (rg * QR + q4) * 32 + r8 * 4),
                    ok ? wg + (int64_t)row * a.Rl + t * q.CKP + cc * BK + 4 * q4 : w, ok ? 16 : 0);
        }
    };
    for (int s = 0; s < (TMA ? 0 : PD); s++) {
        if (s < nst) load_stage(s);
        ig_commit();
    }
    /* V 8 with two warpgroups over two 64-position row tiles: each takes
     * one row tile and all BM channels. An m64nNk8 wgmma reads 2 KiB of
     * patch and 32N bytes of weights from shared memory: two m64n64 per
     * warpgroup (the channel split) move 128 bytes a clock at the tensor
     * cores' rate, all the shared memory gives; one m64n128, 96. */
    constexpr bool SPM = TMA && NWG == 2 && MT == 2;
    constexpr int MTW = SPM ? 1 : MT, BNW = SPM ? BM : BN, ND = BNW / 2;
    const int warp = (tid >> 5) & 3, wgi = tid >> 7, lane = tid & 31, gq = lane >> 2, tq = lane & 3;
    const int mt0 = SPM ? wgi : 0, nb0 = SPM ? 0 : wgi * BN; /* this warpgroup's tiles */
    float acc[MTW][ND];
#pragma unroll
    for (int i = 0; i < MTW; i++)
#pragma unroll
        for (int j = 0; j < ND; j++) {
            acc[i][j] = 0.f;
            /* defined here, not inside the first wgmma stage (ptxas C7515) */
            asm volatile("" : "+f"(acc[i][j]));
        }
    const unsigned lbo = (unsigned)q.NPIXA * 16;
    /* stage s: slot s % NST of phase (s / NST) & 1, chunk cc = s / R, tap
     * t = s % R, counted, and the swizzled descriptors as bases plus
     * offsets (16-byte units: a slot WS / 4, a patch buffer NPIXA * BK / 4,
     * a pixel row 8, a 64-row tile 512, a k8 step 2). Session 15: ncu's
     * source view of V 8 found the consumers' stalls spread over the
     * integer divisions by R and NST between one stage's wgmmas and the
     * next's */
    int slot = 0, cc = 0, t = 0, pslot = 0;
    unsigned ph = 0;
    /* the low words (the high word is the constant of ig_desc_sw128) */
    const unsigned dw0 = SW ? (unsigned)ig_desc_sw128(smem + nb0 * 32) : 0u;
    const unsigned dp0 = SW ? (unsigned)ig_desc_sw128(patch + mt0 * 64 * 32) : 0u;
    constexpr uint64_t DHI = ig_desc_sw128_hi << 32;
    for (int s = 0; s < nst; s++) {
        if constexpr (TMA) {
            ig_mbar_wait(full + slot, ph);
        } else {
            ig_wait_n(PD - 1);
            ig_proxy_fence();
            __syncthreads();
            if (s + PD < nst) load_stage(s + PD);
            ig_commit();
        }
        const int ot = toff[t];
        /* the descriptors first: no branch between the wgmmas. Swizzled: a
         * k8 step is 32 bytes along the rows; the view of tap t starts ot
         * rows into the patch; this warpgroup's BNW channels nb0 rows into
         * the stage */
        uint64_t da[BK / 8][MTW], db[BK / 8];
        if (SW) {
            const unsigned w0 = dw0 + (unsigned)(slot * (WS / 4));
            const unsigned p0 = dp0 + (unsigned)((cc & 1) * (q.NPIXA * BK / 4) + ot * 8);
#pragma unroll
            for (int k8 = 0; k8 < BK / 8; k8++) {
                db[k8] = DHI | (w0 + 2 * k8);
#pragma unroll
                for (int mt = 0; mt < MTW; mt++) da[k8][mt] = DHI | (p0 + (unsigned)(mt * 512 + 2 * k8));
            }
        } else {
            const float *Ws = smem + slot * WS;
            const float *P0 = patch + (cc & 1) * q.NPIXA * BK;
#pragma unroll
            for (int k8 = 0; k8 < BK / 8; k8++) {
                db[k8] = ig_desc(Ws + (nb0 / 8) * QR * 32 + k8 * 64, 128, QR * 128);
#pragma unroll
                for (int mt = 0; mt < MTW; mt++) {
                    const int r0 = ot + (mt0 + mt) * 64;
                    da[k8][mt] = ig_desc(P0 + ((int64_t)2 * k8 * q.NPIXA + r0) * 4, lbo, 128);
                }
            }
        }
        ig_wg_fence();
#pragma unroll
        for (int k8 = 0; k8 < BK / 8; k8++)
#pragma unroll
            for (int mt = 0; mt < MTW; mt++) ig_wgmma<BNW>(acc[mt], da[k8][mt], db[k8]);
        ig_wg_commit();
        ig_wg_wait<1>();
        /* V 8: the previous stage's wgmmas are done: its slot is free */
        if (TMA && s > 0 && lane == 0) ig_mbar_arrive(empty + pslot);
        pslot = slot;
        if (++slot == NST) slot = 0, ph ^= 1u;
        if (++t == R) t = 0, ++cc;
    }
    ig_wg_wait<0>();
    ig_wait<0>();
    /* epilogue: acc[mt][4j + 2h + e] is position m = (mt0 + mt)*64 +
     * warp*16 + gq + 8h (row m / PW of the block, column m % PW), channel
     * nb0 + 8j + 2tq + e */
#pragma unroll
    for (int mt = 0; mt < MTW; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int m = (mt0 + mt) * 64 + warp * 16 + gq + 8 * h;
            const int r = m / q.PW, c = m - r * q.PW;
            if (r >= q.TH || oy0 + r >= a.out1 || c >= a.out2) continue;
            const int64_t pos = ((int64_t)oz * a.out1 + oy0 + r) * a.out2 + c;
#pragma unroll
            for (int j = 0; j < BNW / 8; j++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const int k = k0 + nb0 + 8 * j + 2 * tq + e;
                    if (k >= a.Kg) continue;
                    const int kk = g * a.Kg + k;
                    y[((int64_t)n * a.K + kk) * a.P + pos] =
                        acc[mt][4 * j + 2 * h + e] + (bias ? __ldg(bias + kk) : 0.f);
                }
        }
}

/* V 11 (session 16; default for 3D TF32 layers it takes, TC_CUDA_CONV_TFV=13
 * forces it on 2D ones too): V 8's shifted views of an input patch, made
 * persistent along the first spatial axis (depth) with every weight of
 * the block's 32 output channels resident. Session 15's V 8 loaded a whole
 * (m0-1)*d0+1-plane patch per block and streamed a weight stage per tap:
 * at 3D 3x3x3 32 @32 (one 32-channel chunk) each block loaded 69 KB of
 * patch and 110 KB of weights for 96 outputs x 32 channels, and the load
 * did not overlap the block's own compute. Here a block takes items of DS
 * consecutive output planes (of one image and one band of TH output rows)
 * and holds a ring of NSL plane slots: each input plane (TH+(m1-1)*d1 rows
 * x PW columns x 32 channels, one TMA box, 128-byte swizzled) is loaded
 * once per item and serves the m0 output planes that read it; the producer
 * warp loads plane j+NSL-1 while the consumers compute on planes j.. . The
 * weights (R taps x 32 channels x 32 input channels, 4 KB a tap) are
 * loaded once per block. Consumer warpgroup i takes output rows 64i..64i+63
 * of the TH * PW positions (columns past the output width computed and
 * dropped, as in V 7), wgmma m64n32k8, all R * 4 of an output plane in one
 * group. Plane slots: SROWS >= PH * PW rows (pixels); the rows past the box
 * (zeroed once) are read only by dropped positions. Cg <= 32 (one chunk:
 * channels past Cg are zero weights; past C the box reads zeros), G == 1
 * or Cg == 32, zero padding, stride 1. Measured on the H100 (session 16,
 * 3D 3x3x3 32 @32 b8, device time a call): 91.0 us of kernel + 28.9 of
 * copies = 119.9 against V 4's 265.3, V 8's 216.8 + 28.3 and cuDNN's
 * 147.5 + 52.7 of layout copies; DS = 11 (the plan's choice) against 98.6
 * us at DS = 2, 103.4 at 4, 126.6 at 16. */
#define IG11_MAXSL 8
struct ig11p {
    igp a;
    int PW, TH, PH, PD0, nrb, out0, CKP;
    int SROWS;     /* pixel rows of a plane slot (a multiple of 8: 1 KiB) */
    int NSL;       /* plane slots */
    int DS, nseg;  /* output planes an item, items along depth */
    int ktiles;    /* 32-channel output tiles a group */
    int64_t items; /* N * nrb * nseg */
};
template <int MT>
__global__ void __launch_bounds__(MT * 128 + 32, 1)
    k_ig11(const float *__restrict__ bias, float *__restrict__ y, const ig11p q,
           const __grid_constant__ ig7tm tm) {
    const igp &a = q.a;
    constexpr int NT = MT * 128;
    extern __shared__ float4 ig_smem4[];
    float *smem = reinterpret_cast<float *>(ig_smem4);
    smem += ((1024 - ((unsigned)__cvta_generic_to_shared(smem) & 1023)) & 1023) / 4;
    float *wsm = smem;                 /* tap t at t * 1024 floats (4 KB) */
    float *pl = wsm + a.R * 1024;      /* slot s at s * SROWS * 32 floats */
    uint64_t *full = reinterpret_cast<uint64_t *>(pl + q.NSL * q.SROWS * 32),
             *empty = full + IG11_MAXSL, *wbar = empty + IG11_MAXSL;
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
             * d2 pixels in, counted (session 16: with the in-plane offsets
             * read from a shared table, ncu put 26% of the stall samples on
             * the adds waiting for those loads) */
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

/* split-K: y = bias + sum over splits, NCHW */
__global__ void __launch_bounds__(256)
    k_ig_reduce(const float *__restrict__ part, const float *__restrict__ bias,
                float *__restrict__ y, const igp a, int S) {
    const int64_t total = (int64_t)a.K * a.NP;
    int64_t e = (int64_t)blockIdx.x * 256 + threadIdx.x;
    if (e >= total) return;
    int kk = (int)(e / a.NP), q = (int)(e - (int64_t)kk * a.NP);
    float s = 0.f;
    for (int sp = 0; sp < S; sp++) s += part[(int64_t)sp * total + e];
    if (bias) s += __ldg(bias + kk);
    int n = q / a.P, pp = q - n * a.P;
    y[((int64_t)n * a.K + kk) * a.P + pp] = s;
}

/* depthwise: y[n][k][o] = bias + sum_r w[k][r] X(n, k / mult, o*s + r*d - pad) */
__global__ void __launch_bounds__(256)
    k_conv_dw(const float *__restrict__ x, const float *__restrict__ w,
              const float *__restrict__ bias, float *__restrict__ y, cargs a, int64_t total) {
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    int64_t o2 = t % a.out2, u = t / a.out2;
    int64_t o1 = u % a.out1;
    u /= a.out1;
    int64_t o0 = u % a.out0;
    u /= a.out0;
    int64_t k = u % a.K, n = u / a.K;
    int64_t c = k / (a.K / a.C);
    const float *xp = x + (n * a.C + c) * a.in0 * a.in1 * a.in2;
    const float *wk = w + k * a.m0 * a.m1 * a.m2;
    float s = bias ? __ldg(bias + k) : 0.f;
    for (int64_t r0 = 0; r0 < a.m0; r0++) {
        int64_t i0 = tc__cu_bidx(o0 * a.s0 + r0 * a.d0 - a.p0, a.in0, a.mode);
        for (int64_t r1 = 0; r1 < a.m1; r1++) {
            int64_t i1 = tc__cu_bidx(o1 * a.s1 + r1 * a.d1 - a.p1, a.in1, a.mode);
            for (int64_t r2 = 0; r2 < a.m2; r2++) {
                int64_t i2 = tc__cu_bidx(o2 * a.s2 + r2 * a.d2 - a.p2, a.in2, a.mode);
                float v = (i0 < 0 || i1 < 0 || i2 < 0)
                              ? a.cval
                              : __ldg(xp + (i0 * a.in1 + i1) * a.in2 + i2);
                s = fmaf(__ldg(wk + (r0 * a.m1 + r1) * a.m2 + r2), v, s);
            }
        }
    }
    y[t] = s;
}

/* depthwise, 1D/2D layers: a block takes PP (n, k) planes (or one band of
 * BH output rows of one plane) and first copies the part of the input they
 * read into shared memory with the padding already applied (rows x cols
 * cells from input row ib = band's first output row * s1 - p1 and column
 * -p2; cells outside the input through the padding mode, read from global
 * memory), a warp per row, lanes over columns (coalesced). The compute
 * then has no bounds checks and no divergence at the plane's border: one
 * item = RV output rows at one column (lanes on consecutive columns: shared
 * loads conflict-free); with RV > 1 (s1 = d1 = 1) each loaded row of M2
 * values feeds up to M1 of the RV accumulators. M1 = M2 = 0: mask sizes at
 * run time, RV = 1. Each output sums bias + w * x in (r1, r2) order. */
/* n / d for 0 <= n < 2^31 by a multiply-high: (umulhi(n, m) + n) >> s */
struct dwdiv {
    unsigned m;
    int s;
};
__device__ __forceinline__ int dw_div(int n, dwdiv d) {
    return (int)((__umulhi((unsigned)n, d.m) + (unsigned)n) >> d.s);
}
struct dwp {
    int NK, K, C, mult; /* planes N*K, channels, multiplier K/C */
    int in1, in2, out1, out2;
    int m1, m2, s1, s2, d1, d2, p1, p2;
    int mode;
    float cval;
    int pp, bh, rows, cols; /* planes per block, band height, smem rows/cols per plane */
    int items;              /* items per plane of a band: ceil(bh / RV) * out2 */
    dwdiv drows, ditems, dout2;
};

template <int M1, int M2, int RV>
__global__ void __launch_bounds__(256)
    k_dw_tile(const float *__restrict__ x, const float *__restrict__ w,
              const float *__restrict__ bias, float *__restrict__ y, const dwp a) {
    extern __shared__ float4 dw_smem4[];
    /* [pp] plane offsets in x (int64), [pp] channel k, then the tiles */
    long long *sb = reinterpret_cast<long long *>(dw_smem4);
    int *sk = reinterpret_cast<int *>(sb + a.pp);
    float *xs = reinterpret_cast<float *>(sk + a.pp + (a.pp & 1));
    const int pl0 = blockIdx.x * a.pp, ob = blockIdx.y * a.bh;
    const int npl = min(a.pp, a.NK - pl0);
    const int ib = ob * a.s1 - a.p1;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
    const int nrows = npl * a.rows;
    for (int i = threadIdx.x; i < npl; i += blockDim.x) {
        const int pl = pl0 + i, k = pl % a.K, n = pl / a.K;
        sk[i] = k;
        sb[i] = ((long long)n * a.C + k / a.mult) * ((long long)a.in1 * a.in2);
    }
    __syncthreads();
    /* ---- load: row rw = (plane pi, padded row u), 4 rows in flight per warp ---- */
    for (int v0 = 0; v0 < a.cols; v0 += 32) {
        const int v = v0 + lane, j = v - a.p2;
        const bool vin = v < a.cols;
        const bool jin = (unsigned)j < (unsigned)a.in2;
        const int jj = jin ? j : cv_bidx(j, a.in2, a.mode);
        for (int r0 = warp; r0 < nrows; r0 += 4 * nw) {
            float val[4];
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const int rw = r0 + q * nw;
                val[q] = 0.f;
                if (rw < nrows && vin) {
                    const int pi = dw_div(rw, a.drows), u = rw - pi * a.rows;
                    const float *xp = x + sb[pi];
                    const int i = ib + u;
                    const int ii = (unsigned)i < (unsigned)a.in1 ? i : cv_bidx(i, a.in1, a.mode);
                    val[q] = (ii < 0 || jj < 0) ? a.cval : __ldg(xp + ii * a.in2 + jj);
                }
            }
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const int rw = r0 + q * nw;
                if (rw < nrows && vin) xs[rw * a.cols + v] = val[q];
            }
        }
    }
    __syncthreads();
    /* ---- compute: item = (plane, row group, column) ---- */
    const int brows = min(a.bh, a.out1 - ob);
    const int64_t P = (int64_t)a.out1 * a.out2;
    for (int it = threadIdx.x; it < npl * a.items; it += blockDim.x) {
        const int pi = dw_div(it, a.ditems), r = it - pi * a.items;
        const int rg = dw_div(r, a.dout2), o2 = r - rg * a.out2;
        if (rg * RV >= brows) continue; /* the last band's missing rows */
        const int pl = pl0 + pi, k = sk[pi];
        const float *xr = xs + (pi * a.rows + rg * RV * a.s1) * a.cols + o2 * a.s2;
        const float b = bias ? __ldg(bias + k) : 0.f;
        float *yp = y + pl * P + (int64_t)(ob + rg * RV) * a.out2 + o2;
        if (M1 > 0) {
            const float *wk = w + k * (M1 * M2);
            float wr[M1 * M2 > 0 ? M1 * M2 : 1];
#pragma unroll
            for (int t = 0; t < M1 * M2; t++) wr[t] = __ldg(wk + t);
            float acc[RV];
#pragma unroll
            for (int jr = 0; jr < RV; jr++) acc[jr] = b;
            if (RV > 1) {
#pragma unroll
                for (int u = 0; u < RV + M1 - 1; u++) {
                    float v[M2 > 0 ? M2 : 1];
#pragma unroll
                    for (int r2 = 0; r2 < M2; r2++) v[r2] = xr[u * a.cols + r2 * a.d2];
#pragma unroll
                    for (int jr = 0; jr < RV; jr++) {
                        const int r1 = u - jr;
                        if (r1 >= 0 && r1 < M1) {
#pragma unroll
                            for (int r2 = 0; r2 < M2; r2++)
                                acc[jr] = fmaf(wr[r1 * M2 + r2], v[r2], acc[jr]);
                        }
                    }
                }
            } else {
#pragma unroll
                for (int r1 = 0; r1 < M1; r1++)
#pragma unroll
                    for (int r2 = 0; r2 < M2; r2++)
                        acc[0] = fmaf(wr[r1 * M2 + r2], xr[r1 * a.d1 * a.cols + r2 * a.d2], acc[0]);
            }
#pragma unroll
            for (int jr = 0; jr < RV; jr++)
                if (rg * RV + jr < brows) yp[jr * a.out2] = acc[jr];
        } else {
            const float *wk = w + (int64_t)k * a.m1 * a.m2;
            float acc = b;
            for (int r1 = 0; r1 < a.m1; r1++) {
                const float *xq = xr + r1 * a.d1 * a.cols;
                const float *wq = wk + r1 * a.m2;
                for (int r2 = 0; r2 < a.m2; r2++) acc = fmaf(__ldg(wq + r2), xq[r2 * a.d2], acc);
            }
            yp[0] = acc;
        }
    }
}

static cargs cv_args(const tc__problem *p) {
    cargs a;
    a.C = p->C; a.K = p->K; a.G = p->G;
    a.Cg = p->C / p->G; a.Kg = p->K / p->G;
    a.R = p->msk[0] * p->msk[1] * p->msk[2];
    a.Rl = a.Cg * a.R;
    a.in0 = p->in[0]; a.in1 = p->in[1]; a.in2 = p->in[2];
    a.m0 = p->msk[0]; a.m1 = p->msk[1]; a.m2 = p->msk[2];
    a.out0 = p->out[0]; a.out1 = p->out[1]; a.out2 = p->out[2];
    a.P = a.out0 * a.out1 * a.out2;
    a.NP = p->N * a.P;
    a.s0 = p->stride[0]; a.s1 = p->stride[1]; a.s2 = p->stride[2];
    a.d0 = p->dil[0]; a.d1 = p->dil[1]; a.d2 = p->dil[2];
    a.p0 = p->pad_lo[0]; a.p1 = p->pad_lo[1]; a.p2 = p->pad_lo[2];
    a.mode = (int)p->mode;
    a.cval = (float)p->cval;
    return a;
}

/* The bias on the device: in place, or staged into *own
 * (tc__cu_conv_bias, cuda_common.h). */
static tc_status cv_bias(const tc__args *a, cudaStream_t s, const float **db, void **own) {
    *db = NULL;
    *own = NULL;
    if (!a->p->has_bias) return TC_OK;
    if (tc__cu_is_device(a->bias)) {
        *db = (const float *)a->bias;
        return TC_OK;
    }
    size_t bytes = (size_t)a->p->K * sizeof(float);
    tc_status st = tc__cu_alloc(own, bytes, s);
    if (st == TC_OK) st = tc__cu_h2d(*own, a->bias, bytes, s);
    *db = (const float *)*own;
    return st;
}

/* ---- the fast implicit GEMM: host side ---- */

/* Does the 32-bit fast kernel take the problem? (else the generic one) */
static int ig_fast(const tc__problem *p) {
    const int64_t lim = INT32_MAX / 4;
    int64_t R = p->msk[0] * p->msk[1] * p->msk[2];
    int64_t Cg = p->C / p->G, Kg = p->K / p->G;
    int64_t P = p->out[0] * p->out[1] * p->out[2];
    int64_t plane = p->in[0] * p->in[1] * p->in[2];
    if (R > IG_TAPMAX || Cg * R > lim || P > lim || p->N * P > lim || plane > lim) return 0;
    if (p->C > lim || p->K > lim) return 0;
    /* 32-bit offsets: c * plane + window + tap within one image's channels,
     * row * (C/G * R) within one group's weights */
    if ((p->C + 2) * plane > lim || 130 * Cg * R > lim) return 0;
    if (tc__cu_div_up(Kg, 64) > 65535 || p->G > 65535) return 0;
    for (int i = 0; i < 3; i++) {
        /* window origins and tap offsets in int */
        int64_t v = p->out[i] * p->stride[i] + p->msk[i] * p->dil[i] + p->pad_lo[i] + p->in[i];
        if (v > lim) return 0;
    }
    /* tap offsets (e0*in1 + e1)*in2 + e2 in int */
    int64_t e0 = (p->msk[0] - 1) * p->dil[0], e1 = (p->msk[1] - 1) * p->dil[1],
            e2 = (p->msk[2] - 1) * p->dil[2];
    if ((e0 * p->in[1] + e1) * p->in[2] + e2 > lim) return 0;
    return 1;
}

/* 1x1, stride 1, no padding, P % 4 == 0: B is X_n (C x P) itself */
static int ig_is_1x1(const tc__problem *p) {
    for (int i = 0; i < 3; i++)
        if (p->msk[i] != 1 || p->stride[i] != 1 || p->pad_lo[i] != 0 || p->out[i] != p->in[i])
            return 0;
    return (p->out[0] * p->out[1] * p->out[2]) % 4 == 0;
}

static igp ig_params(const tc__problem *p) {
    igp a;
    a.C = (int)p->C; a.K = (int)p->K; a.G = (int)p->G;
    a.Cg = (int)(p->C / p->G); a.Kg = (int)(p->K / p->G);
    a.R = (int)(p->msk[0] * p->msk[1] * p->msk[2]);
    a.Rl = a.Cg * a.R;
    a.P = (int)(p->out[0] * p->out[1] * p->out[2]);
    a.NP = (int)(p->N * a.P);
    a.in0 = (int)p->in[0]; a.in1 = (int)p->in[1]; a.in2 = (int)p->in[2];
    a.plane = a.in0 * a.in1 * a.in2;
    a.m0 = (int)p->msk[0]; a.m1 = (int)p->msk[1]; a.m2 = (int)p->msk[2];
    a.out1 = (int)p->out[1]; a.out2 = (int)p->out[2];
    a.s0 = (int)p->stride[0]; a.s1 = (int)p->stride[1]; a.s2 = (int)p->stride[2];
    a.d0 = (int)p->dil[0]; a.d1 = (int)p->dil[1]; a.d2 = (int)p->dil[2];
    a.p0 = (int)p->pad_lo[0]; a.p1 = (int)p->pad_lo[1]; a.p2 = (int)p->pad_lo[2];
    a.mode = (int)p->mode;
    a.cval = (float)p->cval;
    a.avec = 0;
    a.yvec = 0;
    a.ktps = 1;
    a.ltab = 0;
    return a;
}

/* kernel kinds: 0 fp32 (V 0), 1 TF32 V 1, 2 TF32 V 3, 3 TF32 V 4 (wgmma) */
#define IG_NKIND 4
static const int ig_kbk[IG_NKIND] = {igv<0>::BK, igv<1>::BK, igv<3>::BK, igv<4>::BK};
static size_t ig_smem(int bm, int taps, int kind) {
    static const int st[IG_NKIND] = {igv<0>::ST, igv<1>::ST, igv<3>::ST, igv<4>::ST};
    static const int ap[IG_NKIND] = {igv<0>::AP, igv<1>::AP, igv<3>::AP, igv<4>::AP};
    static const int bp[IG_NKIND] = {igv<0>::BP, igv<1>::BP, igv<3>::BP, igv<4>::BP};
    return (size_t)st[kind] * (bm * ap[kind] + ig_kbk[kind] * bp[kind]) * sizeof(float) +
           (size_t)taps * sizeof(int4);
}

typedef void (*ig_kernel)(const float *, const float *, const float *, float *, float *, const igp);

/* kernel [tile: BM 128, 64, 32][kind][loader] */
#define IG_K3(BM, TF, V) {k_ig<BM, TF, 0, V>, k_ig<BM, TF, 1, V>, k_ig<BM, TF, 2, V>}
/* V3 differs from V1 only with zero padding (the other loaders are V1's) */
#define IG_KV3(BM) {k_ig<BM, true, 0, 3>, k_ig<BM, true, 1, 1>, k_ig<BM, true, 2, 1>}
static const ig_kernel ig_tab[3][IG_NKIND][3] = {
    {IG_K3(128, false, 0), IG_K3(128, true, 1), IG_KV3(128), IG_K3(128, true, 4)},
    {IG_K3(64, false, 0), IG_K3(64, true, 1), IG_KV3(64), IG_K3(64, true, 4)},
    {IG_K3(32, false, 0), IG_K3(32, true, 1), IG_KV3(32), IG_K3(32, true, 4)},
};
#undef IG_KV3
#undef IG_K3
/* the TF32 kind: V 3 (which falls back to V 1 where it does not apply;
 * ig_run takes V 4 for the 32-row tile, V 8 for ig8_default's layers,
 * V 10 for ig9_plan's and V 11 for ig11_default's; TFV=11, 12 and 13 are
 * read there);
 * TC_CUDA_CONV_TFV=1, 4, 7 or 8 forces V 1 or, where the device runs it,
 * the wgmma V 4, V 7 or V 8 (tuning and A/B only: session 11 measured V 4 against
 * V 3 at 0.88-1.13x, docs/solvers/cuda-conv-igemm.md) */
static int ig_tf_kind(void) {
    const char *e = getenv("TC_CUDA_CONV_TFV");
    const char c = e && e[0] && !e[1] ? e[0] : 0;
    if (c == '1') return 1;
    if (c == '4' && ig_wgmma_ok()) return 3;
    if (c == '7' && ig_wgmma_ok()) return 5; /* V 7: its own launcher (ig7_run) */
    if (c == '8' && ig_wgmma_ok()) return 6; /* V 8: V 7's launcher with copies by TMA */
    return 2;
}
static const int ig_bm[3] = {128, 64, 32};
static int ig_threads(int bm) { return bm == 32 ? 128 : 2 * bm; }

/* Resident blocks per SM of a kernel at the largest dynamic shared memory
 * it is launched with (the tap table at IG_TAPMAX), set up once. */
static int ig_occ_cache[IG_NDEV][3][IG_NKIND][3]; /* per device, as the attribute */
static tc_status ig_prepare(int bi, int kind, int lm, int *occ) {
    int dev = 0;
    TC_CU(cudaGetDevice(&dev));
    int *slot = dev >= 0 && dev < IG_NDEV ? &ig_occ_cache[dev][bi][kind][lm] : NULL;
    int v = slot ? __atomic_load_n(slot, __ATOMIC_ACQUIRE) : 0;
    if (v > 0) {
        *occ = v;
        return TC_OK;
    }
    const void *k = (const void *)ig_tab[bi][kind][lm];
    const int bm = ig_bm[bi];
    const size_t smax = ig_smem(bm, lm == IG_1X1 ? 0 : IG_TAPMAX, kind);
    TC_CU(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smax));
    TC_CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&v, k, ig_threads(bm),
                                                        ig_smem(bm, lm == IG_1X1 ? 0 : 32, kind)));
    if (v < 1) return tc__error(TC_ERR_UNSUPPORTED, "cuda.conv.igemm: kernel does not fit");
    if (slot) __atomic_store_n(slot, v, __ATOMIC_RELEASE);
    *occ = v;
    return TC_OK;
}

/* Tile height BM and reduction splits S (split-K) by a small time model,
 * fitted to a sweep of forced shapes on the H100
 * (docs/solvers/cuda-conv-igemm.md,
 * session 6): the busiest SM runs ceil(blocks x S / SMs) blocks of k tiles
 * per split each, at the SM's measured rate (~30 TFLOP/s fp32, ~60 TF32 on
 * the whole GPU; the 64- and 32-row tiles at 0.85 and 0.6 of it: the same
 * gather per k tile for less arithmetic), plus, for S > 1, writing and
 * reading the partial sums at ~2.5 TB/s. A smaller tile only where it
 * wastes fewer rows; split only below two waves. */
typedef struct ig_shape {
    int bi, S, ktps;
} ig_shape;
static const double ig_rate[3] = {1.0, 0.85, 0.6};
/* with the reduction-row table (zero padding, R < 64, Rl <= IG_LTMAX) the
 * gather is cheaper and the smaller tiles lose less (session 7 sweep on the
 * H100: 64 x 128 at 0.97-1.0 of the 128-row tile's rate, 32 x 128 ~0.78) */
static const double ig_rate_lt[3] = {1.0, 0.97, 0.75};
/* TF32 with the table (session 8 sweep on the H100, V 3): the 128-row tile
 * ran ~0.55 TFLOP/s per SM with 1-3 blocks resident, the 64-row tile ~0.88
 * of that, the 32-row one ~0.66; with 0.97 the model took 64 x 128 split 2
 * on 3x3 256 @14 (0.134 ms) where 128 x 128 split 4 ran 0.122 */
static const double ig_rate_lt_tf[3] = {1.0, 0.88, 0.66};
/* 128 rows only where K/G > 64, 32 only where K/G <= 32 */
static int ig_tile_ok(int bi, int Kg) { return bi == 0 ? Kg > 64 : bi == 1 ? 1 : Kg <= 32; }
static ig_shape ig_choose(const igp &g, int tf32, int bk, int sms, const int occ[3], int lt) {
    const double *rate = lt ? (tf32 ? ig_rate_lt_tf : ig_rate_lt) : ig_rate;
    const int KT = (int)tc__cu_div_up(g.Rl, bk);
    ig_shape best = {g.Kg <= 32 ? 2 : g.Kg <= 64 ? 1 : 0, 1, KT};
    double tbest = 1e30;
    const double rsm = (tf32 ? 72e12 : 30e12) / 132;
    for (int bi = 0; bi < 3; bi++) {
        if (!ig_tile_ok(bi, g.Kg) || occ[bi] < 1) continue;
        const int bm = ig_bm[bi];
        const int64_t slots = (int64_t)occ[bi] * sms;
        const int64_t blocks = tc__cu_div_up(g.NP, IG_BN) * tc__cu_div_up(g.Kg, bm) * g.G;
        for (int s = 1; s <= IG_MAXSPLIT; s++) {
            if (s > 1 && (blocks >= 2 * slots || (int64_t)g.G * s > 65535)) break;
            int per = (int)tc__cu_div_up(KT, s);
            if (s > 1 && per * bk < 128) break;
            int sr = (int)tc__cu_div_up(KT, per);
            double nb = (double)tc__cu_div_up(blocks * sr, sms);
            double t = nb * per * (2.0 * bm * IG_BN * bk) / (rsm * rate[bi]);
            if (sr > 1) t += (2.0 * sr + 1) * g.K * (double)g.NP * 4 / 2.5e12 + 3e-6;
            if (t < tbest) {
                tbest = t;
                best.bi = bi;
                best.S = sr;
                best.ktps = per;
            }
        }
    }
    return best;
}

/* V 7's kernels [BM 128, 64, 32][MT 1, 2][zeros, remap] and its plan: 0,
 * or 1 with *q and the block's shared memory filled in */
typedef void (*ig7_kernel)(const float *, const float *, const float *, float *, const ig7p,
                           const ig7tm);
/* [BM][MT][zeros, remap, V 8 (zeros)] */
#define IG7_K(BM)                                                                              \
    {{k_ig7<BM, 1, IG_ZEROS, 0>, k_ig7<BM, 1, IG_REMAP, 0>, k_ig7<BM, 1, IG_ZEROS, 1>},        \
     {k_ig7<BM, 2, IG_ZEROS, 0>, k_ig7<BM, 2, IG_REMAP, 0>, k_ig7<BM, 2, IG_ZEROS, 1>}}
static const ig7_kernel ig7_tab[3][2][3] = {IG7_K(128), IG7_K(64), IG7_K(32)};
static int ig7_attr_set[IG_NDEV][3][2][3]; /* per device: the smem attribute set */
#undef IG7_K
static int ig7_plan(const tc__problem *p, const igp &g, int lm, ig7p *q, size_t *smem, int *bi,
                    int v8) {
    for (int i = 0; i < 3; i++)
        if (p->stride[i] != 1) return 0;
    if (lm == IG_1X1 || g.Cg % 4 || g.R < 3 || (lm != IG_ZEROS && p->mode == TC_MODE_CONSTANT))
        return 0;
    q->a = g;
    q->PW = g.out2 + (g.m2 - 1) * g.d2;
    if (q->PW > 128) return 0;
    q->TH = 128 / q->PW < g.out1 ? 128 / q->PW : g.out1;
    q->PH = q->TH + (g.m1 - 1) * g.d1;
    q->PD0 = (g.m0 - 1) * g.d0 + 1;
    q->NPIX = q->PD0 * q->PH * q->PW;
    const int mt = q->TH * q->PW > 64 ? 2 : 1;
    const int maxoff = ((g.m0 - 1) * g.d0 * q->PH + (g.m1 - 1) * g.d1) * q->PW + (g.m2 - 1) * g.d2;
    int na = q->NPIX > mt * 64 + maxoff ? q->NPIX : mt * 64 + maxoff;
    q->NPIXA = (na + 7) / 8 * 8;
    if (q->NPIXA > 128 * IG7_PPT) return 0;
    q->CKP = (int)tc__cu_div_up(g.Cg, IG7_BK) * IG7_BK;
    q->a.Rl = g.R * q->CKP;
    q->nrb = (int)tc__cu_div_up(g.out1, q->TH);
    q->out0 = g.P / (g.out1 * g.out2);
    *bi = g.Kg > 64 ? 0 : g.Kg > 32 ? 1 : 2;
    const char *fb = getenv("TC_CUDA_CONV_SHAPE"); /* "bm,S": tuning only (S ignored) */
    int fbm = 0;
    if (fb && sscanf(fb, "%d", &fbm) == 1 && (fbm == 128 || fbm == 64 || fbm == 32))
        *bi = fbm == 128 ? 0 : fbm == 64 ? 1 : 2;
    const int bm = ig_bm[*bi];
    const char *sw = getenv("TC_CUDA_CONV_V7SW"), *ns = getenv("TC_CUDA_CONV_V7NST");
    q->swz = !(sw && sw[0] == '0' && !sw[1]);
    const tc__cu_device *d = tc__cu_dev();
    q->blocks = (double)p->N * q->out0 * q->nrb * (double)tc__cu_div_up(g.Kg, bm) * g.G;
    const int many = q->blocks > (d && d->sms > 0 ? d->sms : 132);
    q->nst = ns && ns[0] >= '3' && ns[0] <= '8' && !ns[1] ? ns[0] - '0'
             : v8                                         ? (many ? IG8_ST_MANY : IG8_ST_FEW)
                                                          : IG7_ST;
    /* a patch buffer is reloaded nst - 2 stages before the chunk after next
     * starts: the taps of a chunk must outlast that (R >= nst - 1) */
    if (g.R < q->nst - 1) return 0;
    *smem = ((size_t)q->nst * bm * IG7_BK + 2 * (size_t)q->NPIXA * IG7_BK) * sizeof(float) +
            2 * IG7_MAXST * sizeof(uint64_t) + (size_t)g.R * sizeof(int) +
            1024; /* + the alignment to 1 KiB */
    const size_t lim = d && d->smem_optin ? d->smem_optin : 227 * 1024;
    if (*smem > lim) return 0;
    const int64_t nb = (int64_t)p->N * q->out0 * q->nrb;
    if (nb > INT32_MAX || p->N > 65535 || g.G > 65535 || tc__cu_div_up(g.Kg, bm) > 65535)
        return 0;
    /* k_ig7_prep's one-dimensional grid */
    if (tc__cu_div_up(g.plane, 32) * tc__cu_div_up(g.C, 32) * p->N +
            tc__cu_div_up((int64_t)g.K * q->CKP, 256) > INT32_MAX)
        return 0;
    return mt;
}
/* V 8's two tensor maps over the call's copies: 0 on success */
static int ig8_maps(const ig7p &q, int bm, const void *xt, const void *wt, int64_t N, ig7tm *tm) {
    PFN_cuTensorMapEncodeTiled_v12000 enc = ig_tma_encoder();
    const igp &g = q.a;
    if (!enc) return 1;
    const cuuint64_t C = (cuuint64_t)g.C;
    const cuuint64_t xd[5] = {C, (cuuint64_t)g.in2, (cuuint64_t)g.in1, (cuuint64_t)g.in0,
                              (cuuint64_t)N};
    const cuuint64_t xs[4] = {C * 4, C * 4 * g.in2, C * 4 * g.in2 * g.in1,
                              C * 4 * g.in2 * g.in1 * g.in0};
    const cuuint32_t xb[5] = {IG7_BK, (cuuint32_t)q.PW, (cuuint32_t)q.PH, (cuuint32_t)q.PD0, 1};
    const cuuint32_t one[5] = {1, 1, 1, 1, 1};
    const cuuint64_t wd[2] = {(cuuint64_t)g.Rl, (cuuint64_t)g.K};
    const cuuint64_t ws[1] = {(cuuint64_t)g.Rl * 4};
    const cuuint32_t wb[2] = {IG7_BK, (cuuint32_t)bm};
    if (enc(&tm->x, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 5, (void *)xt, xd, xs, xb, one,
            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
            CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
        return 1;
    if (enc(&tm->w, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void *)wt, wd, ws, wb, one,
            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
        return 1;
    return 0;
}
/* V 8 takes a layer V 7 planned (q) where its boxes fit: zero padding,
 * whole 32-channel boxes within a group, box sides <= 256 */
static int ig8_fits(const ig7p &q, int lm) {
    const igp &g = q.a;
    return lm == IG_ZEROS && (g.G == 1 || g.Cg % IG7_BK == 0) && q.PH <= 256 && q.PD0 <= 256 &&
           ig_tma_encoder() != NULL;
}
/* V 8 by default in TF32 plans (no TC_CUDA_CONV_TFV): 2D layers with
 * stride 1 and zero padding whose V 8 tile has 64 or 128 channels, on a
 * device running the sm_90a image, with blocks for at least 0.9 of a wave
 * (V 7 and V 8 have no split-K; V 3 splits small layers). Measured on the
 * H100 (session 13, batch 32): 3x3 128 @28 0.082 ms against V 3's 0.112,
 * 256 @14 0.073 / 0.124, 512 @7 0.106 / 0.115, 64 @56 0.118 / 0.120; the
 * 3D layer (32-channel tile) 0.45 against V 4's 0.27, so not there.
 * *est (may be NULL): seconds, as waves of blocks (one per SM) times a
 * block's MACs (its whole tile, dropped positions included) at a rate per
 * SM in units of the nominal FP32 peak per SM, fitted to the single-call
 * times (the copies and the host's time in the call folded in, as the
 * Winograd model is): since session 15's stage counters (no divisions in
 * the loops), 3.0 for the 128-channel tile (two warpgroups on two row
 * tiles: 128 @28 0.056 ms, two blocks an SM, 256 @14 0.048; one warpgroup
 * on one row tile: 512 @7 0.054) and 1.55 for the 64-channel tile (one
 * warpgroup, m64n64: 64 @56 0.089). Session 13's rates were 2.2 / 1.6 /
 * 1.15, when the consumers' integer divisions stood between one stage's
 * wgmmas and the next's. Those rates hold at R = 9 taps; a block's time is
 * a fixed part (its patch, pipeline fill, epilogue) plus one per tap,
 * fitted as R / 9 x (5.83 + 0.352 R) / 9 of the 3x3 time (session 21,
 * H200: an 11x11 64 @56 b8 layer, TH = 1 row a block, ran 0.256 ms where
 * the R-proportional model said 0.651, and the planner took cuda.conv.fft
 * at 0.348): the rate scales by R / (5.83 + 0.352 R), 1 at R = 9, 2.5 at
 * R = 121. */
/* A V 7 / V 8 launch as planned on the host: the plan, its block's shared
 * memory, tile index, row tiles and kernel form (v8: copies by TMA) */
struct ig7sel {
    ig7p q;
    size_t smem;
    int bi, mt, v8;
};
/* V 7 (v8 = 0) or V 8 planned for the layer, V 7 where V 8's boxes do not
 * fit: 0 where neither takes it */
static int ig7_select(const tc__problem *p, const igp &g, int lm, int v8, ig7sel *s) {
    s->mt = ig7_plan(p, g, lm, &s->q, &s->smem, &s->bi, v8);
    if (s->mt && v8 && !ig8_fits(s->q, lm)) { /* V 7 then, with its own stages */
        v8 = 0;
        s->mt = ig7_plan(p, g, lm, &s->q, &s->smem, &s->bi, 0);
    }
    s->v8 = v8;
    return s->mt > 0;
}
static int ig8_default(const tc__problem *p, const igp &g, int lm, double *est, ig7sel *sel) {
    if (lm != IG_ZEROS || g.m0 != 1 || g.in0 != 1 || g.m1 < 2 || getenv("TC_CUDA_CONV_TFV"))
        return 0;
    ig7sel s; /* V 8 as planned, without ig7_select's V 7 fallback plan */
    s.v8 = 1;
    s.mt = ig7_plan(p, g, lm, &s.q, &s.smem, &s.bi, 1);
    if (!s.mt || s.bi == 2 || !ig8_fits(s.q, lm)) return 0;
    const int64_t bm = ig_bm[s.bi];
    const tc__cu_device *d = tc__cu_dev();
    const double sms = d && d->sms > 0 ? d->sms : 132;
    if (s.q.blocks < 0.9 * sms || !ig_wgmma_ok()) return 0;
    if (est) {
        const double per_sm = (d ? d->peak_flops32 : 67e12) / sms;
        const double rate =
            (s.bi == 1 ? 1.55 : 3.0) * (double)g.R / (5.83 + 0.352 * (double)g.R);
        const double fpb = 2.0 * s.mt * 64.0 * (double)bm * (double)g.R * (double)g.Cg;
        *est = ceil(s.q.blocks / sms) * fpb / (rate * per_sm) + 5e-6;
    }
    if (sel) *sel = s;
    return 1;
}
/* V 7 / V 8 / V 11's copies: xT (N, spatial, C), then wT (K, tap, CKP) at
 * a 1 KiB boundary (TMA: 16-byte aligned bases), in one scratch allocation
 * (*xt, freed by the caller) by one k_ig7_prep launch (g.Rl = R * CKP) */
static tc_status ig7_copies(const tc__problem *p, const tc__cu_bufs *b, const igp &g, int CKP,
                            void **xt, float **wt) {
    const int64_t nx = p->N * (int64_t)g.plane * g.C, nw = (int64_t)g.K * g.Rl;
    const size_t woff = ((size_t)nx * sizeof(float) + 1023) / 1024 * 1024;
    tc_status st = tc__cu_alloc(xt, woff + (size_t)nw * sizeof(float), b->s);
    if (st) return st;
    *wt = (float *)((char *)*xt + woff);
    const int tx = (int)tc__cu_div_up(g.plane, 32), ty = (int)tc__cu_div_up(g.C, 32);
    const int64_t nxb = (int64_t)tx * ty * p->N, nwb = tc__cu_div_up((int64_t)g.K * CKP, 256);
    k_ig7_prep<<<(unsigned)(nxb + nwb), 256, 0, b->s>>>((const float *)b->x, (float *)*xt, g.C,
                                                        g.plane, tx, ty, nxb,
                                                        (const float *)b->w, *wt, g.K, g.Cg, g.R,
                                                        CKP);
    return TC_OK;
}
/* The launch of a layer planned by ig7_select: the copies of x and w into
 * one scratch allocation by one k_ig7_prep launch, then the kernel */
static tc_status ig7_run(const tc__args *a, const tc__cu_bufs *b, const ig7sel &sel, int lm) {
    const tc__problem *p = a->p;
    const ig7p &q = sel.q;
    const igp &g = q.a;
    const int bi = sel.bi, mt = sel.mt;
    const size_t smem = sel.smem;
    int v8 = sel.v8;
    const int li = lm == IG_ZEROS ? 0 : 1;
    const float *db;
    void *own, *xt = NULL;
    tc_status st = cv_bias(a, b->s, &db, &own);
    if (st) return st;
    float *wt;
    if ((st = ig7_copies(p, b, g, q.CKP, &xt, &wt))) {
        tc__cu_free(own, b->s);
        return st;
    }
    /* while the copies run: the kernels' shared-memory limit, raised to the
     * device's opt-in maximum once per device (ig7_plan checked smem
     * against it): V 7's, and V 8's where it may run */
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    for (int v = 0; v <= v8 && e == cudaSuccess; v++) {
        const int kl = v ? 2 : li;
        int *slot = dev >= 0 && dev < IG_NDEV ? &ig7_attr_set[dev][bi][mt - 1][kl] : NULL;
        if (!slot || !__atomic_load_n(slot, __ATOMIC_ACQUIRE)) {
            const tc__cu_device *d = tc__cu_dev();
            const size_t lim = d && d->smem_optin ? d->smem_optin : smem;
            e = cudaFuncSetAttribute((const void *)ig7_tab[bi][mt - 1][kl],
                                     cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     (int)(lim > smem ? lim : smem));
            if (e == cudaSuccess && slot && d && d->smem_optin)
                __atomic_store_n(slot, 1, __ATOMIC_RELEASE);
        }
    }
    if (e == cudaSuccess) {
        dim3 grid((unsigned)((int64_t)p->N * q.out0 * q.nrb),
                  (unsigned)tc__cu_div_up(g.Kg, ig_bm[bi]), (unsigned)g.G);
        ig7tm tm;
        memset(&tm, 0, sizeof tm);
        if (v8 && ig8_maps(q, ig_bm[bi], xt, wt, p->N, &tm)) v8 = 0; /* V 7 then */
        ig7_kernel k = ig7_tab[bi][mt - 1][v8 ? 2 : li];
        k<<<grid, (ig_bm[bi] == 128 && !(v8 && mt == 1) ? 256 : 128) + (v8 ? 32 : 0), smem,
            b->s>>>((const float *)xt, wt, db, (float *)b->y, q, tm);
        e = cudaGetLastError();
    }
    tc__cu_free(xt, b->s);
    tc__cu_free(own, b->s);
    if (e != cudaSuccess) return tc__cu_fail(e, "launch k_ig7", __FILE__, __LINE__);
    return TC_OK;
}

/* V 11's plan (k_ig11): 0 where it does not take the layer, else MT (1
 * or 2 consumer warpgroups) with *q, the block's shared memory and the
 * grid's x (persistent blocks along the items) filled in. TC_CUDA_CONV_
 * V11DS=n forces n output planes an item, TC_CUDA_CONV_V9GRID=n n blocks
 * along the items (tests: items wrapping the plane ring, several items a
 * block). */
static int ig11_plan(const tc__problem *p, const igp &g, int lm, ig11p *q, size_t *smem,
                     unsigned *gx) {
    for (int i = 0; i < 3; i++)
        if (p->stride[i] != 1) return 0;
    if (lm != IG_ZEROS || g.Cg > IG7_BK || g.Cg % 4 || (g.G > 1 && g.Cg != IG7_BK)) return 0;
    const tc__cu_device *d = tc__cu_dev();
    if (!d || !d->smem_optin || !ig_wgmma_ok() || !ig_tma_encoder()) return 0;
    q->a = g;
    q->CKP = IG7_BK;
    q->a.Rl = g.R * IG7_BK;
    q->PW = g.out2 + (g.m2 - 1) * g.d2;
    if (q->PW > 128) return 0;
    q->TH = 128 / q->PW < g.out1 ? 128 / q->PW : g.out1;
    q->PH = q->TH + (g.m1 - 1) * g.d1;
    q->PD0 = (g.m0 - 1) * g.d0 + 1;
    q->NSL = q->PD0 + 1;
    if (q->PH > 256 || q->NSL > IG11_MAXSL) return 0;
    const int mt = q->TH * q->PW > 64 ? 2 : 1;
    const int reach = mt * 64 + (g.m1 - 1) * g.d1 * q->PW + (g.m2 - 1) * g.d2;
    const int rows = q->PH * q->PW > reach ? q->PH * q->PW : reach;
    q->SROWS = (rows + 7) / 8 * 8;
    *smem = ((size_t)g.R * 1024 + (size_t)q->NSL * q->SROWS * 32) * sizeof(float) +
            (2 * IG11_MAXSL + 1) * sizeof(uint64_t) + 1024;
    if (*smem > d->smem_optin) return 0;
    q->out0 = g.P / (g.out1 * g.out2);
    q->nrb = (int)tc__cu_div_up(g.out1, q->TH);
    q->ktiles = (int)tc__cu_div_up(g.Kg, 32);
    const int64_t cols = (int64_t)q->ktiles * g.G;
    if (cols > 65535 || p->N > INT32_MAX / 2) return 0;
    /* k_ig7_prep's one-dimensional grid */
    if (tc__cu_div_up(g.plane, 32) * tc__cu_div_up(g.C, 32) * p->N +
            tc__cu_div_up((int64_t)g.K * IG7_BK, 256) > INT32_MAX)
        return 0;
    /* blocks along the items: the SMs over the grid's columns (one block
     * an SM: ~200 KB of shared memory at 3x3x3) */
    int64_t x = tc__cu_div_up((int64_t)d->sms, cols);
    /* planes an item: the fewest waves of items times (DS + 0.5), the half
     * plane the item's extra m0 - 1 input planes and its start */
    const char *fd = getenv("TC_CUDA_CONV_V11DS");
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
    const char *gv = getenv("TC_CUDA_CONV_V9GRID");
    if (gv && atoi(gv) >= 1 && atoi(gv) <= 65535) x = atoi(gv);
    *gx = (unsigned)(x < 1 ? 1 : x);
    return mt;
}
/* V 11 by default in TF32 plans (no TC_CUDA_CONV_TFV) for the 3D layers
 * it takes; *est (may be NULL): seconds, the copies (x read and written,
 * at 2.5 TB/s) plus the busiest block's output planes, each MT * 64
 * positions x 32 channels x R * 32 MACs at 3.0 times the nominal FP32
 * rate per SM, in waves of blocks where the grid has more blocks than
 * SMs. Guessed before the first measurement; it then gave 0.134 ms at 3D
 * 3x3x3 32 @32 b8 against 0.133 measured in a single call (session 16;
 * the kernel alone ran at 3.4x: 91 us for 22 planes a block). */
/* V 11 as planned for a launch: the plan, the block's shared memory, the
 * grid's x and the consumer warpgroups (0: not taken) */
struct ig11sel {
    ig11p q;
    size_t smem;
    unsigned gx;
    int mt;
};
static int ig11_select(const tc__problem *p, const igp &g, int lm, ig11sel *s) {
    s->mt = ig11_plan(p, g, lm, &s->q, &s->smem, &s->gx);
    return s->mt;
}
static int ig11_default(const tc__problem *p, const igp &g, int lm, double *est, ig11sel *sel) {
    if (g.m0 < 2 || getenv("TC_CUDA_CONV_TFV")) return 0;
    ig11sel s;
    if (!ig11_select(p, g, lm, &s)) return 0;
    const ig11p &q = s.q;
    const unsigned gx = s.gx;
    const int mt = s.mt;
    if (est) {
        const tc__cu_device *d = tc__cu_dev();
        const double sms = d && d->sms > 0 ? d->sms : 132;
        const double per_sm = (d ? d->peak_flops32 : 67e12) / sms;
        const double planes = (double)tc__cu_div_up(q.items, gx) * q.DS;
        const double waves = ceil((double)gx * q.ktiles * g.G / sms);
        const double fpp = 2.0 * mt * 64.0 * 32.0 * (double)g.R * IG7_BK;
        *est = waves * planes * fpp / (3.0 * per_sm) +
               2.0 * (double)p->N * g.plane * g.C * 4 / 2.5e12 + 5e-6;
    }
    if (sel) *sel = s;
    return mt;
}
static int ig11_attr_set[IG_NDEV][2];
static tc_status ig11_run(const tc__args *a, const tc__cu_bufs *b, const ig11sel &sel) {
    const tc__problem *p = a->p;
    const ig11p &q = sel.q;
    const size_t smem = sel.smem;
    const unsigned gx = sel.gx;
    const int mt = sel.mt;
    const float *db;
    void *own, *xt = NULL;
    float *wt;
    tc_status st = cv_bias(a, b->s, &db, &own);
    if (st) return st;
    if ((st = ig7_copies(p, b, q.a, IG7_BK, &xt, &wt))) {
        tc__cu_free(own, b->s);
        return st;
    }
    const void *kf = mt == 2 ? (const void *)k_ig11<2> : (const void *)k_ig11<1>;
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    int *slot = e == cudaSuccess && dev >= 0 && dev < IG_NDEV ? &ig11_attr_set[dev][mt - 1] : NULL;
    if (e == cudaSuccess && (!slot || !__atomic_load_n(slot, __ATOMIC_ACQUIRE))) {
        e = cudaFuncSetAttribute(kf, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)tc__cu_dev()->smem_optin);
        if (e == cudaSuccess && slot) __atomic_store_n(slot, 1, __ATOMIC_RELEASE);
    }
    if (e == cudaSuccess) {
        /* the tensor maps: x one plane a box (V 7's plan with PD0 = 1), wT
         * one tap of 32 output channels */
        ig7p q7;
        memset(&q7, 0, sizeof q7);
        q7.a = q.a;
        q7.PW = q.PW;
        q7.PH = q.PH;
        q7.PD0 = 1;
        ig7tm tm;
        memset(&tm, 0, sizeof tm);
        if (ig8_maps(q7, 32, xt, wt, p->N, &tm)) {
            tc__cu_free(xt, b->s);
            tc__cu_free(own, b->s);
            return tc__error(TC_ERR_INTERNAL, "cuda.conv.igemm-tf32: cuTensorMapEncodeTiled failed for V 11");
        }
        const dim3 grid(gx, (unsigned)(q.ktiles * q.a.G));
        if (mt == 2)
            k_ig11<2><<<grid, 288, smem, b->s>>>(db, (float *)b->y, q, tm);
        else
            k_ig11<1><<<grid, 160, smem, b->s>>>(db, (float *)b->y, q, tm);
        e = cudaGetLastError();
    }
    tc__cu_free(xt, b->s);
    tc__cu_free(own, b->s);
    if (e != cudaSuccess) return tc__cu_fail(e, "launch k_ig11", __FILE__, __LINE__);
    return TC_OK;
}
/* V 9 / V 10 (k_ig9<0> / <1>) for a TF32 1x1 layer (lm == IG_1X1):
 * V 10 by default where the device runs the sm_90a image and K/G <= 256
 * (and under TC_CUDA_CONV_TFV=12), V 9 only under TC_CUDA_CONV_TFV=11 (it
 * measured no faster than V 1). Each block streams all of x for its 64
 * output channels: on the H100 (session 15, b32, us) V 10 / V 1 measured
 * 256->64 @56 56.4 / 73.5, 64->256 @56 75.5 / 127.8, but 128->512 @28
 * 103.4 / 72.1 and 256->1024 @14 98.0 / 57.2, where x is streamed 8 and 16
 * times. Its geometry and grid in *q / *gx and the form in
 * *wg; 0 where neither takes the layer (another TFV forced, no sm_90a
 * image, or 64 channels' weights past the shared memory: V 1 then). */
static int ig9_plan(const tc__problem *p, const igp &g, const void *a_w, ig9p *q, unsigned *gx,
                    size_t *smem, int *wg) {
    const tc__cu_device *d = tc__cu_dev();
    if (!d || !d->smem_optin) return 0;
    /* opt-in only: V 9 at 1x1 256->64 @56 b32 measured 71.6 us against
     * V 1's 70.2 (64 channels a stage; 78.7 with 32), cuDNN 48.6 (session
     * 14) */
    const char *f = getenv("TC_CUDA_CONV_TFV");
    if (f && !strcmp(f, "11"))
        *wg = 0;
    else if (((!f && tc__cu_div_up(g.Kg, 64) <= 4) || (f && !strcmp(f, "12"))) && ig_wgmma_ok())
        *wg = 1;
    else
        return 0;
    q->C = g.C; q->Cg = g.Cg; q->K = g.K; q->Kg = g.Kg; q->G = g.G; q->P = g.P;
    q->CgP = (int)tc__cu_div_up(g.Cg, IG9_BC) * IG9_BC;
    q->NP = p->N * (int64_t)g.P;
    q->ntiles = tc__cu_div_up(q->NP, IG9_TP);
    q->ktiles = (int)tc__cu_div_up(g.Kg, 64);
    q->wvec = g.Cg % 4 == 0 && (uintptr_t)a_w % 16 == 0;
    *smem = *wg ? IG10_SMEM(q->CgP) : IG9_SMEM(q->CgP);
    /* positions in int in the kernel (a tile past the end included) */
    if (*smem > d->smem_optin || (int64_t)q->ktiles * g.G > 65535 ||
        q->NP > INT32_MAX - 2 * IG9_TP)
        return 0;
    /* one block an SM (212 registers a thread, ~200 KB of shared memory
     * at Cg = 256): a persistent grid of one block an SM */
    const int64_t cols = (int64_t)q->ktiles * g.G;
    int64_t x = tc__cu_div_up((int64_t)d->sms, cols);
    if (x > q->ntiles) x = q->ntiles;
    if (x < 1) x = 1;
    /* TC_CUDA_CONV_V9GRID=n: n blocks along the tiles (tests: several
     * tiles a block on small layers) */
    const char *gv = getenv("TC_CUDA_CONV_V9GRID");
    if (gv && atoi(gv) >= 1 && atoi(gv) <= 65535) x = atoi(gv);
    *gx = (unsigned)x;
    return 1;
}
static tc_status ig9_run(const tc__args *a, const tc__cu_bufs *b, const ig9p &q, unsigned gx,
                         size_t smem, int wg) {
    static int attr_set[IG_NDEV][2];
    int dev = 0;
    TC_CU(cudaGetDevice(&dev));
    const void *kf = wg ? (const void *)k_ig9<1> : (const void *)k_ig9<0>;
    if (dev < 0 || dev >= IG_NDEV || !__atomic_load_n(&attr_set[dev][wg], __ATOMIC_ACQUIRE)) {
        const tc__cu_device *d = tc__cu_dev();
        TC_CU(cudaFuncSetAttribute(kf, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)d->smem_optin));
        if (dev >= 0 && dev < IG_NDEV) __atomic_store_n(&attr_set[dev][wg], 1, __ATOMIC_RELEASE);
    }
    const float *db;
    void *own;
    tc_status st = cv_bias(a, b->s, &db, &own);
    if (st) return st;
    const dim3 grid(gx, (unsigned)(q.ktiles * q.G));
    if (wg)
        k_ig9<1><<<grid, 256, smem, b->s>>>((const float *)b->x, (const float *)b->w, db,
                                            (float *)b->y, q);
    else
        k_ig9<0><<<grid, 256, smem, b->s>>>((const float *)b->x, (const float *)b->w, db,
                                            (float *)b->y, q);
    cudaError_t e = cudaGetLastError();
    tc__cu_free(own, b->s);
    if (e != cudaSuccess) return tc__cu_fail(e, "launch k_ig9", __FILE__, __LINE__);
    return TC_OK;
}

/* The tile and split ig_run launches for kernel kind `kind` with loader
 * lm (the shape model, or TC_CUDA_CONV_SHAPE); occ[] gets each tile's
 * resident blocks (its kernel set up here). ig_run and the device
 * scratch bound (tc__cu_conv_igemm_scratch) both ask here. */
static tc_status ig_pick_shape(const igp &g, int tf32, int kind, int lm, int occ[3],
                               ig_shape *out) {
    const int bk = ig_kbk[kind];
    tc_status st;
    for (int bi = 0; bi < 3; bi++)
        if (ig_tile_ok(bi, g.Kg) && (st = ig_prepare(bi, kind, lm, &occ[bi]))) return st;
    const tc__cu_device *d = tc__cu_dev();
    const int lt_ok = lm == IG_ZEROS && g.R < 64 &&
                      tc__cu_div_up(g.Rl, bk) * bk <= IG_LTMAX && !getenv("TC_CUDA_CONV_NOLTAB");
    ig_shape sh = ig_choose(g, tf32, bk, d ? d->sms : 132, occ, lt_ok);
    const char *fb = getenv("TC_CUDA_CONV_SHAPE"); /* "bm,S": tuning only */
    if (fb) {
        int fbm = 0, fs = 0;
        int nf = sscanf(fb, "%d,%d", &fbm, &fs);
        int fbi = fbm == 128 ? 0 : fbm == 64 ? 1 : fbm == 32 ? 2 : -1;
        if (nf == 2 && fbi >= 0 && occ[fbi] > 0 && fs >= 1 &&
            fs <= IG_MAXSPLIT && (int64_t)g.G * fs <= 65535) {
            int KT = (int)tc__cu_div_up(g.Rl, bk);
            sh.bi = fbi;
            sh.ktps = (int)tc__cu_div_up(KT, fs);
            sh.S = (int)tc__cu_div_up(KT, sh.ktps);
        }
    }
    *out = sh;
    return TC_OK;
}

/* the kernel kind for a plan's flags and loader (ig_tf_kind in TF32) */
static int ig_kind(int tf32, int lm) {
    const int kind = tf32 ? ig_tf_kind() : 0;
    return kind == 3 && lm == IG_1X1 ? 2 : kind; /* V 4 has no 1x1 loader (V 1's) */
}

static tc_status ig_run(const tc__args *a, const tc__cu_bufs *b, int tf32) {
    const tc__problem *p = a->p;
    igp g = ig_params(p);
    const float *x = (const float *)b->x, *w = (const float *)b->w;
    float *y = (float *)b->y;
    const int lm = ig_is_1x1(p) && (uintptr_t)x % 16 == 0 ? IG_1X1
                   : (p->mode == TC_MODE_CONSTANT && p->cval == 0) ? IG_ZEROS
                                                                  : IG_REMAP;
    g.avec = g.Rl % 4 == 0 && (uintptr_t)w % 16 == 0;
    g.yvec = g.P % 4 == 0 && (uintptr_t)y % 16 == 0;
    int kind = ig_kind(tf32, lm);
    if (kind == 2 && lm == IG_1X1) { /* V 9 where it takes the layer */
        ig9p q9;
        unsigned gx9 = 0;
        size_t sm9 = 0;
        int wg9 = 0;
        if (ig9_plan(p, g, w, &q9, &gx9, &sm9, &wg9)) return ig9_run(a, b, q9, gx9, sm9, wg9);
    }
    if (kind == 2 && lm == IG_ZEROS) { /* V 11: 3D by default, any layer it takes with TFV=13 */
        const char *f = getenv("TC_CUDA_CONV_TFV");
        ig11sel s11;
        if ((f && !strcmp(f, "13") && ig11_select(p, g, lm, &s11)) ||
            ig11_default(p, g, lm, NULL, &s11))
            return ig11_run(a, b, s11);
    }
    {
        ig7sel sel;
        if ((kind == 2 && ig8_default(p, g, lm, NULL, &sel)) ||
            ((kind == 5 || kind == 6) && ig7_select(p, g, lm, kind == 6, &sel)))
            return ig7_run(a, b, sel, lm);
        if (kind == 5 || kind == 6) kind = 2; /* V 7 does not take the layer: V 3 */
    }
    const int bk = ig_kbk[kind];
    int occ[3] = {0, 0, 0};
    ig_shape sh;
    tc_status st = ig_pick_shape(g, tf32, kind, lm, occ, &sh);
    if (st) return st;
    const tc__cu_device *d = tc__cu_dev();
    /* V 4 where it measured faster than V 3 on the H100: the 32-row tile
     * with zero padding (3D 3x3x3 32 @32 b8: 0.276-0.279 ms against
     * 0.310-0.316 in four calls of sessions 11-12;
     * docs/solvers/cuda-conv-igemm.md);
     * not when TC_CUDA_CONV_TFV forces a kernel */
    if (kind == 2 && sh.bi == 2 && lm == IG_ZEROS && !getenv("TC_CUDA_CONV_TFV") &&
        ig_wgmma_ok()) {
        int o4 = 0;
        if (ig_prepare(2, 3, lm, &o4) == TC_OK && o4 > 0) kind = 3;
    }
    const int bm = ig_bm[sh.bi], S = sh.S;
    g.ktps = sh.ktps;
    ig_kernel k = ig_tab[sh.bi][kind][lm];
    /* the reduction-row table (within the tap table's IG_TAPMAX room) */
    const int KTt = (int)tc__cu_div_up(g.Rl, bk);
    g.ltab = lm == IG_ZEROS && g.R < 64 && KTt * bk <= IG_LTMAX && !getenv("TC_CUDA_CONV_NOLTAB")
                 ? (g.R <= 32 ? 1 : 2)
                 : 0;
    size_t smem = ig_smem(bm, lm == IG_1X1 ? 0 : g.R, kind);
    if (g.ltab) {
        /* only where the table keeps the blocks per SM the model assumed
         * (1 KiB per block reserved by the runtime) */
        const size_t with = smem + (size_t)KTt * bk * 8;
        const size_t per_sm = d && d->smem_per_sm ? d->smem_per_sm : 228 * 1024;
        if ((with + 1024) * (size_t)occ[sh.bi] <= per_sm)
            smem = with;
        else
            g.ltab = 0;
    }
    /* V3 stages B through registers only with the single-bit row table
     * (R <= 32; with R < 64 it measured slower on conv1); else V1, the same
     * shared-memory layout (its attribute set up here) */
    if (kind >= 2 && lm == IG_ZEROS && g.ltab != 1) {
        int o1 = 0;
        if ((st = ig_prepare(sh.bi, 1, lm, &o1))) return st;
        k = ig_tab[sh.bi][1][lm];
        /* V 4's stages are smaller than V 1's: V 1's size (same BK) */
        smem = ig_smem(bm, g.R, 1) + (g.ltab ? (size_t)KTt * bk * 8 : 0);
    }
    const int64_t gx = tc__cu_div_up(g.NP, IG_BN), gy = tc__cu_div_up(g.Kg, bm);
    const float *db;
    void *own, *part = NULL;
    st = cv_bias(a, b->s, &db, &own);
    if (st) return st;
    if (S > 1 && (st = tc__cu_alloc(&part, (size_t)S * g.K * g.NP * sizeof(float), b->s))) {
        tc__cu_free(own, b->s);
        return st;
    }
    dim3 grid((unsigned)gx, (unsigned)gy, (unsigned)(g.G * S));
    k<<<grid, ig_threads(bm), smem, b->s>>>(x, w, db, y, (float *)part, g);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess && S > 1) {
        int64_t total = (int64_t)g.K * g.NP;
        k_ig_reduce<<<(unsigned)tc__cu_div_up(total, 256), 256, 0, b->s>>>((const float *)part, db, y,
                                                                          g, S);
        e = cudaGetLastError();
    }
    tc__cu_free(part, b->s);
    tc__cu_free(own, b->s);
    if (e != cudaSuccess) return tc__cu_fail(e, "launch k_ig", __FILE__, __LINE__);
    return TC_OK;
}

static tc_status launch_igemm_generic(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    cargs c = cv_args(p);
    const float *db;
    void *own;
    tc_status st = cv_bias(a, b->s, &db, &own);
    if (st) return st;
    int64_t gx = tc__cu_div_up(c.NP, CV_N), gy = tc__cu_div_up(c.Kg, CV_M);
    if (gx > 0x7fffffff || gy > 65535 || p->G > 65535) {
        tc__cu_free(own, b->s);
        return tc__error(TC_ERR_UNSUPPORTED, "cuda.conv.igemm: grid too large");
    }
    dim3 grid((unsigned)gx, (unsigned)gy, (unsigned)p->G);
    k_conv_igemm_generic<<<grid, 256, 0, b->s>>>((const float *)b->x, (const float *)b->w, db,
                                                 (float *)b->y, c);
    cudaError_t e = cudaGetLastError();
    tc__cu_free(own, b->s);
    if (e != cudaSuccess) return tc__cu_fail(e, "launch k_conv_igemm", __FILE__, __LINE__);
    return TC_OK;
}

static tc_status launch_igemm(const tc__args *a, const tc__cu_bufs *b) {
    if (ig_fast(a->p) && !getenv("TC_CUDA_CONV_GENERIC")) return ig_run(a, b, 0);
    return launch_igemm_generic(a, b);
}
static tc_status launch_igemm_tf32(const tc__args *a, const tc__cu_bufs *b) {
    return ig_run(a, b, 1);
}

typedef void (*dw_kernel)(const float *, const float *, const float *, float *, const dwp);

/* The tiled depthwise kernel for a 1D/2D layer: planes per block or bands
 * of output rows so that a block's padded input fits in DW_SMEM bytes and
 * a block has ~1024 items. *done = 0 (nothing launched) where it does not
 * apply: the caller then takes the one-thread-per-output kernel. */
#define DW_SMEM (40 * 1024)
static dwdiv dw_magic(int d) {
    dwdiv r;
    r.s = 0;
    while ((1LL << r.s) < d) r.s++;
    r.m = (unsigned)((((uint64_t)1 << 32) * (((uint64_t)1 << r.s) - (uint64_t)d)) / (uint64_t)d + 1);
    return r;
}
static tc_status dw_tiled(const tc__problem *p, const tc__cu_bufs *b, const float *db, int *done) {
    *done = 0;
    if (p->in[0] != 1 || p->out[0] != 1 || p->msk[0] != 1 || getenv("TC_CUDA_CONV_GENERIC"))
        return TC_OK;
    const int64_t lim = INT32_MAX / 4;
    const int64_t NK = p->N * p->K, plane = p->in[1] * p->in[2];
    if (NK > lim || plane > lim || p->out[1] * p->out[2] > lim || p->C * plane > lim * 64)
        return TC_OK;
    dwp g;
    g.NK = (int)NK; g.K = (int)p->K; g.C = (int)p->C; g.mult = (int)(p->K / p->C);
    g.in1 = (int)p->in[1]; g.in2 = (int)p->in[2];
    g.out1 = (int)p->out[1]; g.out2 = (int)p->out[2];
    g.m1 = (int)p->msk[1]; g.m2 = (int)p->msk[2];
    g.s1 = (int)p->stride[1]; g.s2 = (int)p->stride[2];
    g.d1 = (int)p->dil[1]; g.d2 = (int)p->dil[2];
    g.p1 = (int)p->pad_lo[1]; g.p2 = (int)p->pad_lo[2];
    g.mode = (int)p->mode;
    g.cval = (float)p->cval;
    const char *frv = getenv("TC_CUDA_DW_RV"); /* "1": RV = 1 (tuning only) */
    const bool rv1 = frv && frv[0] == '1';
    const bool unit1 = g.s1 == 1 && g.d1 == 1 && !rv1;
    dw_kernel k;
    int rv = 1;
    if (g.m1 == 3 && g.m2 == 3) {
        k = unit1 ? k_dw_tile<3, 3, 4> : k_dw_tile<3, 3, 1>;
        rv = unit1 ? 4 : 1;
    } else if (g.m1 == 5 && g.m2 == 5 && unit1) {
        k = k_dw_tile<5, 5, 4>;
        rv = 4;
    } else {
        k = k_dw_tile<0, 0, 1>;
    }
    const int64_t cols = (p->out[2] - 1) * p->stride[2] + (p->msk[2] - 1) * p->dil[2] + 1;
    auto rows_for = [&](int64_t bh) {
        return ((bh + rv - 1) / rv * rv - 1) * p->stride[1] + (p->msk[1] - 1) * p->dil[1] + 1;
    };
    if (cols * 4 * rows_for(rv) > DW_SMEM) return TC_OK;
    int64_t bh = p->out[1], pp = 1;
    const char *ft = getenv("TC_CUDA_DW_THREADS"); /* target items per block (tuning only) */
    /* ~4 items a thread: 1024 ran 11% faster than 256 on the MobileNet
     * layer (28 x 28 planes: 5 planes a block; session-7 sweep, H100) */
    const int64_t target = ft && atoi(ft) >= 32 && atoi(ft) <= 4096 ? atoi(ft) : 1024;
    if (cols * 4 * rows_for(bh) <= DW_SMEM) {
        const int64_t items = tc__cu_div_up(bh, rv) * p->out[2];
        pp = target / items;
        const int64_t cap = DW_SMEM / (cols * 4 * rows_for(bh));
        pp = pp < 1 ? 1 : pp > cap ? cap : pp;
        if (pp > NK) pp = NK;
    } else {
        /* the most output rows (a multiple of rv) whose input fits */
        int64_t fit = (DW_SMEM / (cols * 4) - (p->msk[1] - 1) * p->dil[1] - 1) / p->stride[1] + 1;
        bh = fit / rv * rv;
        if (bh < rv) return TC_OK;
    }
    g.pp = (int)pp;
    g.bh = (int)bh;
    g.rows = (int)rows_for(bh);
    g.cols = (int)cols;
    g.items = (int)(tc__cu_div_up(bh, rv) * p->out[2]);
    g.drows = dw_magic(g.rows);
    g.ditems = dw_magic(g.items);
    g.dout2 = dw_magic(g.out2);
    const int64_t gx = tc__cu_div_up(NK, pp), gy = tc__cu_div_up(p->out[1], bh);
    if (gx > 0x7fffffff || gy > 65535) return TC_OK;
    int64_t nt = tc__cu_div_up(pp * tc__cu_div_up(bh, rv) * p->out[2], 32) * 32;
    nt = nt > 256 ? 256 : nt;
    const size_t smem = (size_t)(pp * g.rows * cols) * sizeof(float) + (size_t)pp * 12 + 8;
    k<<<dim3((unsigned)gx, (unsigned)gy), (unsigned)nt, smem, b->s>>>(
        (const float *)b->x, (const float *)b->w, db, (float *)b->y, g);
    *done = 1;
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return tc__cu_fail(e, "launch k_dw_tile", __FILE__, __LINE__);
    return TC_OK;
}

static tc_status launch_dw(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    cargs c = cv_args(p);
    const float *db;
    void *own;
    tc_status st = cv_bias(a, b->s, &db, &own);
    if (st) return st;
    int done = 0;
    st = dw_tiled(p, b, db, &done);
    if (st || done) {
        tc__cu_free(own, b->s);
        return st;
    }
    int64_t total = p->N * p->K * c.P;
    int64_t blocks = tc__cu_div_up(total, 256);
    if (blocks > 0x7fffffff) {
        tc__cu_free(own, b->s);
        return tc__error(TC_ERR_UNSUPPORTED, "cuda.conv.depthwise: grid too large");
    }
    k_conv_dw<<<(unsigned)blocks, 256, 0, b->s>>>((const float *)b->x, (const float *)b->w, db,
                                                  (float *)b->y, c, total);
    cudaError_t e = cudaGetLastError();
    tc__cu_free(own, b->s);
    if (e != cudaSuccess) return tc__cu_fail(e, "launch k_conv_dw", __FILE__, __LINE__);
    return TC_OK;
}

static int cv_available(void) { return tc__cu_available(); }

static int cv_base(const tc__problem *p, char *why, size_t n) {
    if (p->op != TC_OP_CONV) {
        if (why) snprintf(why, n, "convolution layers only");
        return 0;
    }
    if (p->dtype != TC_FLOAT32) {
        if (why) snprintf(why, n, "float32 only");
        return 0;
    }
    return 1;
}

static int ig_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (!cv_base(p, why, n)) return 0;
    if (p->K / p->G > 65535 * (int64_t)CV_M || p->G > 65535) {
        if (why) snprintf(why, n, "too many channels or groups for the grid");
        return 0;
    }
    int64_t rl = (p->C / p->G) * p->msk[0] * p->msk[1] * p->msk[2];
    int64_t span = 0;
    for (int i = 0; i < 3; i++) {
        int64_t v = p->out[i] * p->stride[i] + p->msk[i] * p->dil[i] + p->pad_lo[i] + p->in[i];
        span = v > span ? v : span;
    }
    if (rl > INT32_MAX / 2 || span > INT32_MAX / 2) {
        if (why) snprintf(why, n, "reduction or axis length beyond 32-bit index arithmetic");
        return 0;
    }
    return 1;
}

static int tf_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (!cv_base(p, why, n)) return 0;
    if (!e || !(e->flags & TC_PLAN_ALLOW_TF32)) {
        if (why) snprintf(why, n, "TF32 only when the plan flags include TC_PLAN_ALLOW_TF32");
        return 0;
    }
    if (!ig_fast(p)) {
        if (why)
            snprintf(why, n, "more than %d mask taps or sizes beyond 32-bit index arithmetic",
                     IG_TAPMAX);
        return 0;
    }
    (void)ig_wgmma_ok(); /* the probe at plan time, not in an execute */
    return 1;
}

static int dw_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (!cv_base(p, why, n)) return 0;
    if (p->G != p->C || p->K % p->C) {
        if (why) snprintf(why, n, "depthwise layers only (groups == in_channels)");
        return 0;
    }
    return 1;
}

/* Partial-tile waste counted; the FP32 kernel at ~60% of the FP32 peak
 * (cuda.gemm's rate; the generic kernel ~20%), the TF32 one at ~2x the FP32
 * peak (mma.sync); depthwise is memory-bound. */
static double ig_fill(const tc__problem *p) {
    double Kg = (double)(p->K / p->G), NP = (double)p->N * p->out[0] * p->out[1] * p->out[2];
    int bm = Kg <= 32 ? 32 : Kg <= 64 ? 64 : 128;
    return Kg / (tc__cu_div_up((int64_t)Kg, bm) * (double)bm) * NP /
           (tc__cu_div_up((int64_t)NP, IG_BN) * (double)IG_BN);
}
/* A block's fixed cost (tap table, pipeline fill, epilogue), ~2 us of one
 * of ~3 slots per SM: what makes the implicit GEMM lose on grouped layers
 * with one or two output channels per group, where each block does one k
 * tile (session 7: the TF32 estimate chose cuda.conv.igemm-tf32 for a
 * stride-2 depthwise layer, measured 0.244 ms against 0.052 for
 * cuda.conv.depthwise). */
static double ig_blocks_time(const tc__problem *p) {
    const int64_t Kg = p->K / p->G;
    const int64_t bm = Kg <= 32 ? 32 : Kg <= 64 ? 64 : 128;
    const double NP = (double)p->N * p->out[0] * p->out[1] * p->out[2];
    const double blocks = ceil(NP / IG_BN) * (double)tc__cu_div_up(Kg, bm) * (double)p->G;
    const tc__cu_device *d = tc__cu_dev();
    return blocks * 2e-6 / (3.0 * (d && d->sms > 0 ? d->sms : 132));
}
static double ig_estimate(const tc__problem *p, const tc__env *e) {
    return tc__cu_estimate(tc__problem_bytes(p), tc__problem_flops(p) / ig_fill(p),
                           ig_fast(p) ? 0.6 : 0.2) +
           ig_blocks_time(p);
}
/* TF32 at the nominal FP32 rate (was 2x until session 9): the kernel ran
 * 61-67 TFLOP/s on the ResNet-50 3x3 layers at batch 32 on the H100, ~1.0
 * of the nominal 67; at 2x, TF32 plans never took cuda.conv.winograd2-tf32
 * where it is 1.3x faster (3x3 256 @14, 512 @7). */
static double tf_estimate(const tc__problem *p, const tc__env *e) {
    /* V 8 where the plan will run it: its own model (ig8_default) */
    double t8 = 0.0;
    const int lm = p->mode == TC_MODE_CONSTANT && p->cval == 0 ? IG_ZEROS : IG_REMAP;
    if (!ig_is_1x1(p) && ig8_default(p, ig_params(p), lm, &t8, NULL)) return t8;
    /* V 11 likewise (ig11_default) */
    if (!ig_is_1x1(p) && ig11_default(p, ig_params(p), lm, &t8, NULL)) return t8;
    return tc__cu_estimate(tc__problem_bytes(p), tc__problem_flops(p) / ig_fill(p), 1.0) +
           ig_blocks_time(p);
}
/* the tiled kernel moved 0.8-1.4 TB/s on the MobileNet layers (session 7,
 * H100): the bytes at ~0.45 of the nominal bandwidth */
static double dw_estimate(const tc__problem *p, const tc__env *e) {
    return tc__cu_estimate(tc__problem_bytes(p) * 2.0, tc__problem_flops(p), 0.25);
}

static tc_status ig_execute(const tc__args *a) { return tc__cu_run(a, NULL, 1, launch_igemm); }
static tc_status tf_execute(const tc__args *a) { return tc__cu_run(a, NULL, 1, launch_igemm_tf32); }
static tc_status dw_execute(const tc__args *a) { return tc__cu_run(a, NULL, 1, launch_dw); }

} // namespace

int tc__cu_conv_igemm_fast(const tc__problem *p) { return ig_fast(p); }
int tc__cu_conv_fp32_layer(const tc__problem *p, char *why, size_t n) { return cv_base(p, why, n); }

tc_status tc__cu_conv_bias(const tc__args *a, cudaStream_t s, const float **db, void **own) {
    return cv_bias(a, s, db, own);
}

/* cuda.conv.igemm(-tf32)'s device scratch, at most: the staged bias, and
 * the larger of the split-K partial sums (S x K x N*P floats at the shape
 * ig_run picks, for either loader where a 1x1 layer's depends on x's
 * alignment) and, in TF32 on the sm_90a image, V 7 / V 8 / V 11's copies
 * (xT, then wT at a 1 KiB boundary; ig7_copies). V 9 / V 10 and the
 * generic kernel take none. */
size_t tc__cu_conv_igemm_scratch(const tc__problem *p, int tf32) {
    const size_t bias = p->has_bias ? (size_t)p->K * sizeof(float) : 0;
    if (!ig_fast(p)) return bias;
    const igp g = ig_params(p);
    const int lm0 = p->mode == TC_MODE_CONSTANT && p->cval == 0 ? IG_ZEROS : IG_REMAP;
    size_t split = 0;
    for (int t = 0; t < 1 + ig_is_1x1(p); t++) {
        const int lm = t ? IG_1X1 : lm0;
        int kind = ig_kind(tf32, lm);
        if (kind == 5 || kind == 6) kind = 2; /* V 7's copies are counted below */
        int occ[3] = {0, 0, 0};
        ig_shape sh;
        size_t S = IG_MAXSPLIT; /* the shape model unavailable: its largest split */
        if (ig_pick_shape(g, tf32, kind, lm, occ, &sh) == TC_OK)
            S = (size_t)sh.S;
        else
            tc__error_clear();
        const size_t b = S > 1 ? S * (size_t)g.K * (size_t)g.NP * sizeof(float) : 0;
        if (b > split) split = b;
    }
    size_t copies = 0;
    if (tf32 && ig_wgmma_ok()) {
        const size_t nx = (size_t)p->N * (size_t)g.plane * (size_t)g.C;
        const size_t ckp = (size_t)tc__cu_div_up(g.Cg, IG7_BK) * IG7_BK;
        copies = (nx * sizeof(float) + 1023) / 1024 * 1024 +
                 (size_t)g.K * (size_t)g.R * ckp * sizeof(float);
    }
    return bias + (split > copies ? split : copies);
}
static size_t ig_device_ws(const tc__problem *p, const tc__env *e, const void *state) {
    return tc__cu_conv_igemm_scratch(p, 0);
}
static size_t tf_device_ws(const tc__problem *p, const tc__env *e, const void *state) {
    return tc__cu_conv_igemm_scratch(p, 1);
}
static size_t dw_device_ws(const tc__problem *p, const tc__env *e, const void *state) {
    return p->has_bias ? (size_t)p->K * sizeof(float) : 0;
}

tc_status tc__cu_conv_igemm(const tc__problem *p, const void *x, const void *w, void *y,
                            cudaStream_t s, int tf32) {
    if (p->has_bias || !ig_fast(p))
        return tc__error(TC_ERR_UNSUPPORTED,
                         "cuda.conv.igemm: internal problem outside the fast kernel's range");
    tc__args a;
    memset(&a, 0, sizeof a);
    a.p = p;
    tc__cu_bufs b;
    b.x = x;
    b.y = y;
    b.w = w;
    b.hw = NULL;
    b.s = s;
    return ig_run(&a, &b, tf32);
}

TC__CU_SOLVER(tc__solver_cuda_conv_igemm) = {
    .name = "cuda.conv.igemm",
    .backend = TC_BACKEND_CUDA,
    .ops = TC_OP_CONV,
    .summary = "implicit-GEMM conv layer (fp32, CUDA cores): 128x128 or 64x128 tiles, BK 16, 4-stage cp.async pipeline, im2col gathered through a per-block tap table with the padding mode; split-K for few tiles; any stride, dilation, groups, 1D-3D.",
    .available = cv_available,
    .applicable = ig_applicable,
    .estimate = ig_estimate,
    .execute = ig_execute,
    .device_workspace = ig_device_ws,
};

TC__CU_SOLVER(tc__solver_cuda_conv_igemm_tf32) = {
    .name = "cuda.conv.igemm-tf32",
    .backend = TC_BACKEND_CUDA,
    .ops = TC_OP_CONV,
    .summary = "implicit-GEMM conv layer on the TF32 tensor cores (mma.sync m16n8k8, fp32 accumulation, conflict-free fragment loads, register-staged im2col gather with zero padding; on Hopper's sm_90a image wgmma kernels: TMA-fed shifted views for 2D stride-1 zero-padded layers, the same marching along depth with resident weights for 3D ones with C/G <= 32, a streaming kernel for 1x1 layers); only under TC_PLAN_ALLOW_TF32.",
    .available = cv_available,
    .applicable = tf_applicable,
    .estimate = tf_estimate,
    .execute = tf_execute,
    .device_workspace = tf_device_ws,
};

TC__CU_SOLVER(tc__solver_cuda_conv_depthwise) = {
    .name = "cuda.conv.depthwise",
    .backend = TC_BACKEND_CUDA,
    .ops = TC_OP_CONV,
    .summary = "depthwise conv layer (groups == channels): 1D/2D through shared-memory tiles with the padding applied at the copy (several planes or a band of rows a block, 4 output rows a thread for 3x3/5x5); 3D one thread per output; every padding mode.",
    .available = cv_available,
    .applicable = dw_applicable,
    .estimate = dw_estimate,
    .execute = dw_execute,
    .device_workspace = dw_device_ws,
};
