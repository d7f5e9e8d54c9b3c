/*
 * winograd.cu - cuda.conv.winograd-f4 (F(4x4,3x3)) and
 * cuda.conv.winograd-f2 (F(2x2,3x3)): non-fused Winograd conv layers in fp32
 * on the CUDA cores, for kernels kd x 3 x 3 (2D: kd = 1) with stride 1 and
 * dilation 1 in the last two axes (the depth axis: any taps, stride and
 * dilation), any groups, bias, every padding mode.
 *
 * Lavin's minimal filtering, as the CPU solvers (src/cpu/conv_winograd.c,
 * same points 0, +-1, +-2, infinity for F(4,3)): with A = m + 2 (6 or 4)
 * and T tiles of m x m outputs (n, output depth, tile row, tile column),
 * per execute on the stream:
 *   1. weight transform: U[xi][k][r] = (G g G^T)[xi], r = c * KD + rd over
 *      the group's channels and depth taps (rows padded to CRp, a multiple
 *      of 4, with zeros);
 *   2. input transform: V[xi][c * KD + rd][t] = (B^T d B)[xi] of the A x A
 *      input tile at input depth od * s0 + rd * d0 - p0, the padding mode
 *      applied at the read (cval for zeros/constant); columns padded to Tp,
 *      a multiple of 4, with zeros;
 *   3. A*A x G batched GEMMs on blockIdx.z: M[xi][g] (Kg x Tp) =
 *      U[xi][g] (Kg x CR) V[xi][g] (CR x Tp), CR = Cg * KD (the depth taps
 *      are a longer reduction, as the CPU winograd4 does in 3D); the kernel
 *      is cuda.gemm.simt's design (BK 16, 8x8 outputs a thread, 4-stage cp.async
 *      pipeline, 16-byte copies zero-filled at the edges) with a BM x 128
 *      block tile, BM = 128, 64 or 32 (2 * BM threads);
 *   4. output transform: y = A^T M A + bias, written to NC(D)HW with the
 *      partial tiles at the right and bottom edges masked.
 * U, V and M come from the stream-ordered device pool, in one allocation (tc__cu_alloc keeps
 * its memory, so no cudaMalloc per execute). U is rebuilt on every execute
 * (the weights come with each call; 36 K CRp floats).
 * cuda.conv.winograd-f2-tf32 (under TC_PLAN_ALLOW_TF32) runs step 3 on the
 * TF32 tensor cores through cuda.conv.igemm-tf32's kernel, the products
 * posed as one grouped 1x1 conv (wg_gemm_problem; U then unpadded, CRp =
 * CR). F(4x4,3x3) is not offered in TF32: its transforms carry the TF32
 * rounding to 7e-3 - 2e-2 of max|y| on the ResNet-50 layers,
 * past the 5e-3 bound of the TF32 solvers.
 * Environment (tuning, read per execute): TILECONV_CUDA_WINO_GEMM=igemm runs the
 * fp32 solvers' step 3 through cuda.conv.igemm too; TILECONV_CUDA_WINO_BM = 128, 64 or 32
 * forces the GEMM tile height; TILECONV_CUDA_WINO_STAGES = a bit set of the
 * stages to run (1 weights, 2 input, 4 GEMM, 8 output; default 15), for
 * timing one stage alone (the output is then wrong).
 */
#include "cuda/cuda_common.h"

#include <math.h>
#include <stdlib.h>

namespace {

/* ---- the 1D transforms (rows, then columns) ---- */
template <int M> struct wt;

template <> struct wt<4> {
    static constexpr int A = 6;
    /* B^T d */
    __device__ __forceinline__ static void in(const float d[6], float v[6]) {
        v[0] = 4.f * d[0] - 5.f * d[2] + d[4];
        v[1] = -4.f * (d[1] + d[2]) + d[3] + d[4];
        v[2] = 4.f * (d[1] - d[2]) - d[3] + d[4];
        v[3] = 2.f * (d[3] - d[1]) - d[2] + d[4];
        v[4] = 2.f * (d[1] - d[3]) - d[2] + d[4];
        v[5] = 4.f * d[1] - 5.f * d[3] + d[5];
    }
    /* G g */
    __device__ __forceinline__ static void flt(const float g[3], float u[6]) {
        u[0] = 0.25f * g[0];
        u[1] = (-1.f / 6.f) * (g[0] + g[1] + g[2]);
        u[2] = (-1.f / 6.f) * (g[0] - g[1] + g[2]);
        u[3] = (1.f / 24.f) * g[0] + (1.f / 12.f) * g[1] + (1.f / 6.f) * g[2];
        u[4] = (1.f / 24.f) * g[0] - (1.f / 12.f) * g[1] + (1.f / 6.f) * g[2];
        u[5] = g[2];
    }
    /* A^T m */
    __device__ __forceinline__ static void out(const float m[6], float y[4]) {
        const float a = m[1] + m[2], b = m[1] - m[2], c = m[3] + m[4], d = m[3] - m[4];
        y[0] = m[0] + a + c;
        y[1] = b + 2.f * d;
        y[2] = a + 4.f * c;
        y[3] = b + 8.f * d + m[5];
    }
};

template <> struct wt<2> {
    static constexpr int A = 4;
    __device__ __forceinline__ static void in(const float d[4], float v[4]) {
        v[0] = d[0] - d[2];
        v[1] = d[1] + d[2];
        v[2] = d[2] - d[1];
        v[3] = d[1] - d[3];
    }
    __device__ __forceinline__ static void flt(const float g[3], float u[4]) {
        u[0] = g[0];
        u[1] = 0.5f * (g[0] + g[1] + g[2]);
        u[2] = 0.5f * (g[0] - g[1] + g[2]);
        u[3] = g[2];
    }
    __device__ __forceinline__ static void out(const float m[4], float y[2]) {
        y[0] = m[0] + m[1] + m[2];
        y[1] = m[1] - m[2] - m[3];
    }
};

/* Geometry of one layer (host and device). */
struct wgeo {
    int64_t N, C, K, G, Cg, Kg, KD;
    int64_t CR, CRp;        /* reduction length Cg * KD, padded to 4 */
    int64_t in0, in1, in2;  /* input depth, height, width */
    int64_t out0, out1, out2;
    int64_t s0, d0, p0, p1, p2;
    int64_t TH, TW, T, Tp;  /* tiles per row / column, all tiles, padded */
    int mode;
    float cval;
};

/* ---- 1. weights: U[xi][k][r], r < CRp ---- */
template <int M>
__global__ void __launch_bounds__(256)
k_wg_wtrans(const float *__restrict__ w, float *__restrict__ U, const wgeo g) {
    constexpr int A = wt<M>::A;
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= g.K * g.CRp) return;
    const int64_t k = i / g.CRp, r = i - k * g.CRp;
    const int64_t xs = g.K * g.CRp; /* U stride between transform points */
    if (r >= g.CR) {
#pragma unroll
        for (int e = 0; e < A * A; e++) U[e * xs + i] = 0.f;
        return;
    }
    /* weights K x Cg x KD x 3 x 3: (k, c, rd) is row k * CR + r */
    const float *src = w + (k * g.CR + r) * 9;
    float t[A][3]; /* G g: rows transformed, per filter column */
#pragma unroll
    for (int j = 0; j < 3; j++) {
        float col[3] = {src[j], src[3 + j], src[6 + j]}, u[A];
        wt<M>::flt(col, u);
#pragma unroll
        for (int a = 0; a < A; a++) t[a][j] = u[a];
    }
#pragma unroll
    for (int a = 0; a < A; a++) {
        float u[A];
        wt<M>::flt(t[a], u);
#pragma unroll
        for (int b = 0; b < A; b++) U[(a * A + b) * xs + i] = u[b];
    }
}

/* ---- 2. input: V[xi][c * KD + rd][t], t < Tp ---- */
template <int M>
__global__ void __launch_bounds__(256)
k_wg_itrans(const float *__restrict__ x, float *__restrict__ V, const wgeo g, int64_t gy0) {
    constexpr int A = wt<M>::A;
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t row = (int64_t)blockIdx.y + gy0; /* c * KD + rd */
    if (t >= g.Tp) return;
    const int64_t xs = g.C * g.KD * g.Tp;
    float *dst = V + row * g.Tp + t;
    if (t >= g.T) {
#pragma unroll
        for (int e = 0; e < A * A; e++) dst[e * xs] = 0.f;
        return;
    }
    const int64_t c = row / g.KD, rd = row - c * g.KD;
    int64_t q = t;
    const int64_t tw = q % g.TW; q /= g.TW;
    const int64_t th = q % g.TH; q /= g.TH;
    const int64_t od = q % g.out0;
    const int64_t n = q / g.out0;
    const int64_t id = tc__cu_bidx(od * g.s0 + rd * g.d0 - g.p0, g.in0, g.mode);
    float d[A][A];
    if (id < 0) {
#pragma unroll
        for (int a = 0; a < A; a++)
#pragma unroll
            for (int b = 0; b < A; b++) d[a][b] = g.cval;
    } else {
        const float *plane = x + ((n * g.C + c) * g.in0 + id) * g.in1 * g.in2;
        int64_t ci[A];
        const int64_t h0 = th * M - g.p1, w0 = tw * M - g.p2;
#pragma unroll
        for (int b = 0; b < A; b++) ci[b] = tc__cu_bidx(w0 + b, g.in2, g.mode);
#pragma unroll
        for (int a = 0; a < A; a++) {
            const int64_t ri = tc__cu_bidx(h0 + a, g.in1, g.mode);
            const float *rp = plane + ri * g.in2;
#pragma unroll
            for (int b = 0; b < A; b++) d[a][b] = (ri < 0 || ci[b] < 0) ? g.cval : __ldg(rp + ci[b]);
        }
    }
    /* B^T d B: columns first (each column of d), then rows */
    float s[A][A];
#pragma unroll
    for (int b = 0; b < A; b++) {
        float col[A], v[A];
#pragma unroll
        for (int a = 0; a < A; a++) col[a] = d[a][b];
        wt<M>::in(col, v);
#pragma unroll
        for (int a = 0; a < A; a++) s[a][b] = v[a];
    }
#pragma unroll
    for (int a = 0; a < A; a++) {
        float v[A];
        wt<M>::in(s[a], v);
#pragma unroll
        for (int b = 0; b < A; b++) dst[(a * A + b) * xs] = v[b];
    }
}

/* ---- 4. output: y = A^T M A + bias ---- */
template <int M>
__global__ void __launch_bounds__(256)
k_wg_otrans(const float *__restrict__ Mm, const float *__restrict__ bias, float *__restrict__ y,
            const wgeo g, int64_t gy0) {
    constexpr int A = wt<M>::A;
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t k = (int64_t)blockIdx.y + gy0;
    if (t >= g.T) return;
    const int64_t xs = g.K * g.Tp;
    const float *src = Mm + k * g.Tp + t;
    float m[A][A];
#pragma unroll
    for (int a = 0; a < A; a++)
#pragma unroll
        for (int b = 0; b < A; b++) m[a][b] = src[(a * A + b) * xs];
    float s[M][A];
#pragma unroll
    for (int b = 0; b < A; b++) {
        float col[A], o[M];
#pragma unroll
        for (int a = 0; a < A; a++) col[a] = m[a][b];
        wt<M>::out(col, o);
#pragma unroll
        for (int i = 0; i < M; i++) s[i][b] = o[i];
    }
    const float bv = bias ? __ldg(bias + k) : 0.f;
    int64_t q = t;
    const int64_t tw = q % g.TW; q /= g.TW;
    const int64_t th = q % g.TH; q /= g.TH;
    const int64_t od = q % g.out0;
    const int64_t n = q / g.out0;
    float *plane = y + ((n * g.K + k) * g.out0 + od) * g.out1 * g.out2;
#pragma unroll
    for (int i = 0; i < M; i++) {
        const int64_t oh = th * M + i;
        if (oh >= g.out1) break;
        float o[M];
        wt<M>::out(s[i], o);
        float *rp = plane + oh * g.out2 + tw * M;
#pragma unroll
        for (int j = 0; j < M; j++)
            if (tw * M + j < g.out2) rp[j] = o[j] + bv;
    }
}

/* ---- 3. batched GEMM: M[xi][g] = U[xi][g] V[xi][g] ---- */
#define WB_N 128
#define WB_K 16
#define WB_AP 20 /* A row pitch (floats): 16 + 4 */
#define WB_STAGES 4
template <int BM> struct wbm {
    static constexpr int threads = 2 * BM;
    static constexpr int stage = BM * WB_AP + WB_K * WB_N;
    static constexpr size_t smem = (size_t)WB_STAGES * stage * sizeof(float);
    static constexpr int minb = BM == 128 ? 2 : BM == 64 ? 4 : 8;
};

struct wgemm {
    int64_t m, n, k;         /* Kg, Tp, CR (A rows read to CRp) */
    int64_t lda, ldb;        /* CRp, Tp (= ldc) */
    int64_t a_xi, a_g;       /* A offsets per transform point, per group */
    int64_t b_xi, b_g;
    int64_t c_xi, c_g;
    int G;
};

__device__ __forceinline__ void wcp16(float *dst, const float *src, int bytes) {
    unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(bytes));
}
__device__ __forceinline__ void wcommit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void wwait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

template <int BM>
__device__ __forceinline__ void wg_load(float *st, const float *__restrict__ A,
                                        const float *__restrict__ B, const wgemm &g, int64_t m0,
                                        int64_t n0, int64_t k0, int tid) {
    constexpr int TH = wbm<BM>::threads;
    float *As = st, *Bs = st + BM * WB_AP;
#pragma unroll
    for (int i = 0; i < (BM * 4) / TH; i++) {
        int c = tid + i * TH;
        int row = c >> 2, kc = c & 3;
        int64_t gm = m0 + row, gk = k0 + kc * 4;
        /* gk < k: the chunk lies inside the CRp-long row (zeros past CR) */
        bool ok = gm < g.m && gk < g.k;
        const float *src = ok ? A + gm * g.lda + gk : A;
        wcp16(As + row * WB_AP + kc * 4, src, ok ? 16 : 0);
    }
#pragma unroll
    for (int i = 0; i < (WB_K * WB_N / 4) / TH; i++) {
        int c = tid + i * TH;
        int row = c >> 5, nc = c & 31;
        int64_t gk = k0 + row, gn = n0 + nc * 4;
        bool ok = gk < g.k && gn < g.n;
        const float *src = ok ? B + gk * g.ldb + gn : B;
        wcp16(Bs + row * WB_N + nc * 4, src, ok ? 16 : 0);
    }
}

template <int BM>
__global__ void __launch_bounds__(wbm<BM>::threads, wbm<BM>::minb)
k_wg_gemm(const float *__restrict__ U, const float *__restrict__ V, float *__restrict__ Mo,
          const wgemm g, int64_t gz0) {
    extern __shared__ float4 wsm4[];
    float *smem = reinterpret_cast<float *>(wsm4);
    constexpr int ST = wbm<BM>::stage;
    const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    const int64_t z = (int64_t)blockIdx.z + gz0;
    const int64_t xi = z / g.G, gr = z - xi * g.G;
    const float *A = U + xi * g.a_xi + gr * g.a_g;
    const float *B = V + xi * g.b_xi + gr * g.b_g;
    float *Cm = Mo + xi * g.c_xi + gr * g.c_g;
    const int64_t m0 = (int64_t)blockIdx.y * BM, n0 = (int64_t)blockIdx.x * WB_N;
    const int64_t KT = (g.k + WB_K - 1) / WB_K;

#pragma unroll
    for (int s = 0; s < WB_STAGES - 1; s++) {
        if (s < KT) wg_load<BM>(smem + s * ST, A, B, g, m0, n0, s * WB_K, tid);
        wcommit();
    }
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = 0.f;

    for (int64_t kt = 0; kt < KT; kt++) {
        wwait<WB_STAGES - 2>();
        __syncthreads();
        const int64_t nk = kt + WB_STAGES - 1;
        if (nk < KT) wg_load<BM>(smem + (nk % WB_STAGES) * ST, A, B, g, m0, n0, nk * WB_K, tid);
        wcommit();
        const float *As = smem + (kt % WB_STAGES) * ST;
        const float *Bs = As + BM * WB_AP;
#pragma unroll
        for (int kc = 0; kc < WB_K / 4; kc++) {
            float a[8][4];
#pragma unroll
            for (int i = 0; i < 8; i++) {
                int row = (i < 4 ? 0 : BM / 2) + ty * 4 + (i & 3);
                float4 q = *reinterpret_cast<const float4 *>(As + row * WB_AP + kc * 4);
                a[i][0] = q.x; a[i][1] = q.y; a[i][2] = q.z; a[i][3] = q.w;
            }
#pragma unroll
            for (int kk = 0; kk < 4; kk++) {
                const float *br = Bs + (kc * 4 + kk) * WB_N;
                float4 b0 = *reinterpret_cast<const float4 *>(br + tx * 4);
                float4 b1 = *reinterpret_cast<const float4 *>(br + 64 + tx * 4);
                float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
                for (int i = 0; i < 8; i++)
#pragma unroll
                    for (int j = 0; j < 8; j++) acc[i][j] = fmaf(a[i][kk], b[j], acc[i][j]);
            }
        }
    }
    wwait<0>();

#pragma unroll
    for (int i = 0; i < 8; i++) {
        int64_t row = m0 + (i < 4 ? 0 : BM / 2) + ty * 4 + (i & 3);
        if (row >= g.m) continue;
        float *crow = Cm + row * g.ldb;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            int64_t col = n0 + h * 64 + tx * 4;
            if (col < g.n) /* n = Tp, a multiple of 4 */
                *reinterpret_cast<float4 *>(crow + col) =
                    make_float4(acc[i][h * 4], acc[i][h * 4 + 1], acc[i][h * 4 + 2],
                                acc[i][h * 4 + 3]);
        }
    }
}

/* ---- host side ---- */
/* tight: the reduction rows unpadded (CRp = CR), as the implicit GEMM
 * takes them; else padded to 4 for the own GEMM's 16-byte copies. */
static wgeo wg_geo(const tc__problem *p, int m, int tight) {
    wgeo g;
    g.N = p->N; g.C = p->C; g.K = p->K; g.G = p->G;
    g.Cg = p->C / p->G; g.Kg = p->K / p->G;
    g.KD = p->msk[0];
    g.CR = g.Cg * g.KD;
    g.CRp = tight ? g.CR : (g.CR + 3) / 4 * 4;
    g.in0 = p->in[0]; g.in1 = p->in[1]; g.in2 = p->in[2];
    g.out0 = p->out[0]; g.out1 = p->out[1]; g.out2 = p->out[2];
    g.s0 = p->stride[0]; g.d0 = p->dil[0];
    g.p0 = p->pad_lo[0]; g.p1 = p->pad_lo[1]; g.p2 = p->pad_lo[2];
    g.TH = tc__cu_div_up(g.out1, m);
    g.TW = tc__cu_div_up(g.out2, m);
    g.T = g.N * g.out0 * g.TH * g.TW;
    g.Tp = (g.T + 3) / 4 * 4;
    g.mode = (int)p->mode;
    g.cval = (float)p->cval;
    return g;
}

/* scratch floats: U, V, M */
static void wg_sizes(const wgeo &g, int m, double *u, double *v, double *mm) {
    const double A2 = (double)(m + 2) * (m + 2);
    *u = A2 * (double)g.K * (double)g.CRp;
    *v = A2 * (double)g.C * (double)g.KD * (double)g.Tp;
    *mm = A2 * (double)g.K * (double)g.Tp;
}

static int wg_sms(void) {
    const tc__cu_device *d = tc__cu_dev();
    return d && d->sms > 0 ? d->sms : 132;
}

/* GEMM time model for tile height bm, in units of one block-k-step of a
 * 128-row tile: whole waves of (blocks per SM x SMs) blocks, each wave as
 * long as one block's k loop; a BM-row block does BM/128 of the work of a
 * 128-row one in about that fraction of the time when the SM holds
 * proportionally more of them. */
static double wg_gemm_waves(const wgeo &g, int m, int bm) {
    const int A2 = (m + 2) * (m + 2);
    const double blocks = (double)tc__cu_div_up(g.Tp, WB_N) * (double)tc__cu_div_up(g.Kg, bm) *
                          (double)A2 * (double)g.G;
    const int per_sm = bm == 128 ? 2 : bm == 64 ? 4 : 8;
    const double slots = (double)per_sm * wg_sms();
    return ceil(blocks / slots) * (double)bm / 128.0;
}

static int wg_pick_bm(const wgeo &g, int m) {
    const char *ev = tc__knob_get(TC__KNOB_CUDA_WINO_BM);
    if (ev) {
        int v = atoi(ev);
        if (v == 128 || v == 64 || v == 32) return v;
    }
    int best = 128;
    double bt = wg_gemm_waves(g, m, 128);
    const int cand[2] = {64, 32};
    for (int i = 0; i < 2; i++) {
        /* smaller tiles reload more B per FMA: ~10% slower per FLOP */
        double t = wg_gemm_waves(g, m, cand[i]) * (cand[i] == 64 ? 1.1 : 1.25);
        if (t < bt * 0.98) { bt = t; best = cand[i]; }
    }
    return best;
}

/* The A*A x G batched GEMMs as one grouped 1x1 conv for the implicit GEMM
 * (tc__cu_conv_igemm): batch 1, A*A*G groups, group (xi, g) with CR input
 * channels (V[xi][g], CR x Tp: the input transform's rows of group g at
 * point xi), Kg output channels (M[xi][g]) and the weights U[xi][g] (Kg x
 * CR, tight); the tiles are a 1D axis of length Tp. */
static tc__problem wg_gemm_problem(const wgeo &g, int m) {
    const int64_t A2 = (int64_t)(m + 2) * (m + 2);
    tc__problem q;
    memset(&q, 0, sizeof q);
    q.op = TC_OP_CONV;
    q.dtype = TC_FLOAT32;
    q.esize = sizeof(float);
    q.nsp = 1;
    q.N = 1;
    q.G = A2 * g.G;
    q.C = q.G * g.CR;
    q.K = q.G * g.Kg;
    for (int i = 0; i < 3; i++) {
        q.in[i] = q.out[i] = q.msk[i] = q.stride[i] = q.dil[i] = 1;
        q.pad_lo[i] = q.pad_hi[i] = 0;
    }
    q.in[2] = q.out[2] = g.Tp;
    q.mode = TC_MODE_CONSTANT;
    q.cval = 0;
    q.has_bias = 0;
    return q;
}

/* Which GEMM runs the batched products: 1 the implicit GEMM (TF32 always;
 * fp32 only under TILECONV_CUDA_WINO_GEMM=igemm, a tuning switch: in fp32 the two
 * measured within 5% of each other on the H100), 0 this file's
 * own kernel. Where the implicit GEMM's 32-bit ranges do not take the
 * grouped problem: 0 (the TF32 solver is then not applicable). */
static int wg_route(const tc__problem *p, int m, int tf32) {
    const char *ev = tc__knob_get(TC__KNOB_CUDA_WINO_GEMM);
    if (!tf32 && !(ev && strcmp(ev, "igemm") == 0)) return 0;
    const wgeo g = wg_geo(p, m, 1);
    const tc__problem q = wg_gemm_problem(g, m);
    if ((double)q.G > 65535 || !tc__cu_conv_igemm_fast(&q)) return 0;
    return 1;
}

template <int BM>
static tc_status wg_gemm_launch(const float *U, const float *V, float *Mo, const wgemm &w,
                                int64_t nz, cudaStream_t s) {
    const size_t smem = wbm<BM>::smem;
    TC_CU(cudaFuncSetAttribute(k_wg_gemm<BM>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)smem));
    const unsigned gx = (unsigned)tc__cu_div_up(w.n, WB_N), gy = (unsigned)tc__cu_div_up(w.m, BM);
    for (int64_t gz0 = 0; gz0 < nz; gz0 += TC__CU_GRID_MAX) {
        const unsigned gnz = (unsigned)(nz - gz0 < TC__CU_GRID_MAX ? nz - gz0 : TC__CU_GRID_MAX);
        k_wg_gemm<BM><<<dim3(gx, gy, gnz), wbm<BM>::threads, smem, s>>>(U, V, Mo, w, gz0);
        TC_CU_LAUNCH("cuda.conv.winograd gemm");
    }
    return TC_OK;
}

template <int M>
static tc_status wg_run(const tc__args *a, const tc__cu_bufs *b, int tf32) {
    constexpr int A2 = (M + 2) * (M + 2);
    const tc__problem *p = a->p;
    const int route = wg_route(p, M, tf32);
    if (tf32 && !route)
        return tc__error(TC_ERR_UNSUPPORTED, "cuda.conv.winograd-tf32: GEMM beyond the implicit "
                                             "GEMM's 32-bit ranges");
    const wgeo g = wg_geo(p, M, route);
    cudaStream_t s = b->s;
    double nu, nv, nm;
    wg_sizes(g, M, &nu, &nv, &nm);
    void *U = NULL, *V = NULL, *Mo = NULL, *own = NULL;
    const float *db = NULL;
    const char *sv = tc__knob_get(TC__KNOB_CUDA_WINO_STAGES);
    const int stages = sv ? atoi(sv) : 15;
    tc_status st = tc__cu_conv_bias(a, s, &db, &own);
    /* U, V and M in one allocation (one pool call and one free on the
     * host's path, not three), each at a 256-byte boundary */
    const size_t ub = ((size_t)nu * sizeof(float) + 255) / 256 * 256,
                 vb = ((size_t)nv * sizeof(float) + 255) / 256 * 256;
    if (st == TC_OK) st = tc__cu_alloc(&U, ub + vb + (size_t)nm * sizeof(float), s);
    if (st == TC_OK) {
        V = (char *)U + ub;
        Mo = (char *)U + ub + vb;
    }
    if (st == TC_OK && (stages & 1)) {
        const int64_t nw = g.K * g.CRp;
        k_wg_wtrans<M><<<(unsigned)tc__cu_div_up(nw, 256), 256, 0, s>>>(
            (const float *)b->w, (float *)U, g);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) st = tc__cu_fail(e, "launch cuda.conv.winograd weights", __FILE__, __LINE__);
    }
    if (st == TC_OK && (stages & 2)) {
        const unsigned gx = (unsigned)tc__cu_div_up(g.Tp, 256);
        TC__CU_FOR_GRID(g.C * g.KD, 1, {
            if (st == TC_OK) {
                k_wg_itrans<M><<<dim3(gx, gny), 256, 0, s>>>((const float *)b->x, (float *)V, g, gy0);
                cudaError_t e = cudaGetLastError();
                if (e != cudaSuccess) st = tc__cu_fail(e, "launch cuda.conv.winograd input", __FILE__, __LINE__);
            }
        })
    }
    if (st == TC_OK && (stages & 4) && route) {
        const tc__problem q = wg_gemm_problem(g, M);
        st = tc__cu_conv_igemm(&q, V, U, Mo, s, tf32);
    } else if (st == TC_OK && (stages & 4)) {
        wgemm w;
        w.m = g.Kg; w.n = g.Tp; w.k = g.CR;
        w.lda = g.CRp; w.ldb = g.Tp;
        w.a_xi = g.K * g.CRp; w.a_g = g.Kg * g.CRp;
        w.b_xi = g.C * g.KD * g.Tp; w.b_g = g.CR * g.Tp;
        w.c_xi = g.K * g.Tp; w.c_g = g.Kg * g.Tp;
        w.G = (int)g.G;
        const int64_t nz = (int64_t)A2 * g.G;
        const int bm = wg_pick_bm(g, M);
        st = bm == 128 ? wg_gemm_launch<128>((const float *)U, (const float *)V, (float *)Mo, w, nz, s)
           : bm == 64  ? wg_gemm_launch<64>((const float *)U, (const float *)V, (float *)Mo, w, nz, s)
                       : wg_gemm_launch<32>((const float *)U, (const float *)V, (float *)Mo, w, nz, s);
    }
    if (st == TC_OK && (stages & 8)) {
        const unsigned gx = (unsigned)tc__cu_div_up(g.T, 256);
        TC__CU_FOR_GRID(g.K, 1, {
            if (st == TC_OK) {
                k_wg_otrans<M><<<dim3(gx, gny), 256, 0, s>>>((const float *)Mo, db, (float *)b->y, g, gy0);
                cudaError_t e = cudaGetLastError();
                if (e != cudaSuccess) st = tc__cu_fail(e, "launch cuda.conv.winograd output", __FILE__, __LINE__);
            }
        })
    }
    if (U) tc__cu_free(U, s); /* V and M with it */
    if (own) tc__cu_free(own, s);
    return st;
}

/* the kernels of all three solvers (their shared `report`) */
template <int M> static void wg_report_transforms(tc__cu_report *r) {
    char name[64];
    snprintf(name, sizeof name, "cuda.conv.winograd-f%d weights", M);
    tc__cu_report_kernel(r, name, (const void *)k_wg_wtrans<M>, 256, 0);
    snprintf(name, sizeof name, "cuda.conv.winograd-f%d input", M);
    tc__cu_report_kernel(r, name, (const void *)k_wg_itrans<M>, 256, 0);
    snprintf(name, sizeof name, "cuda.conv.winograd-f%d output", M);
    tc__cu_report_kernel(r, name, (const void *)k_wg_otrans<M>, 256, 0);
}
template <int BM> static void wg_report_gemm(tc__cu_report *r) {
    (void)cudaFuncSetAttribute(k_wg_gemm<BM>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)wbm<BM>::smem);
    (void)cudaGetLastError();
    char name[64];
    snprintf(name, sizeof name, "cuda.conv.winograd gemm %dx%d", BM, WB_N);
    tc__cu_report_kernel(r, name, (const void *)k_wg_gemm<BM>, wbm<BM>::threads, wbm<BM>::smem);
}
static void wg_report(tc__cu_report *r) {
    wg_report_transforms<4>(r);
    wg_report_transforms<2>(r);
    wg_report_gemm<128>(r);
    wg_report_gemm<64>(r);
    wg_report_gemm<32>(r);
}

static tc_status launch_wg4(const tc__args *a, const tc__cu_bufs *b) { return wg_run<4>(a, b, 0); }
static tc_status launch_wg2(const tc__args *a, const tc__cu_bufs *b) { return wg_run<2>(a, b, 0); }
static tc_status launch_wg2t(const tc__args *a, const tc__cu_bufs *b) { return wg_run<2>(a, b, 1); }

static int wg_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n, int m) {
    const char *r = NULL;
    if (p->op != TC_OP_CONV) r = "convolution layers only";
    else if (p->dtype != TC_FLOAT32) r = "float32 only";
    else if (p->msk[1] != 3 || p->msk[2] != 3)
        r = "3x3 kernels in the last two axes only (2D 3x3, 3D kd x 3 x 3)";
    else if (p->stride[1] != 1 || p->stride[2] != 1 || p->dil[1] != 1 || p->dil[2] != 1)
        r = "stride 1 and dilation 1 in the last two axes only";
    else if ((int64_t)(m + 2) * (m + 2) * p->G > 65535 * 64)
        r = "too many groups for the batched GEMM grid";
    if (!r) {
        const wgeo g = wg_geo(p, m, 0);
        double nu, nv, nm;
        wg_sizes(g, m, &nu, &nv, &nm);
        if (nv > 4e11 || nm > 4e11 || nu > 4e11 || g.Kg > 65535 * 32 || g.CR > INT32_MAX)
            r = "transformed arrays beyond the scratch limits";
    }
    if (r) {
        if (why) snprintf(why, n, "%s", r);
        return 0;
    }
    return 1;
}
static int wg4_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    return wg_applicable(p, e, why, n, 4);
}
static int wg2_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    return wg_applicable(p, e, why, n, 2);
}
/* TF32: under TC_PLAN_ALLOW_TF32, where the implicit GEMM takes the
 * batched products */
static int wgt_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n, int m) {
    if (!wg_applicable(p, e, why, n, m)) return 0;
    const char *r = NULL;
    if (!e || !(e->flags & TC_PLAN_ALLOW_TF32))
        r = "TF32 only when the plan flags include TC_PLAN_ALLOW_TF32";
    else if (!wg_route(p, m, 1))
        r = "the batched GEMM beyond the implicit GEMM's 32-bit ranges";
    if (r) {
        if (why) snprintf(why, n, "%s", r);
        return 0;
    }
    return 1;
}
static int wg2t_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    return wgt_applicable(p, e, why, n, 2);
}

/* Cost model, fitted on the H100 (the ResNet-50 3x3 layers at
 * batch 32 and the 3D layer of gpu_layers.py; TILECONV_PLAN_TRACE=1 prints the
 * estimates). `bytes`: the layer's input (once per depth tap), output and
 * weights, and U, V, M each written once and read once.
 *  - own GEMM kernel (fp32): bytes at 2.05x the nominal bandwidth (V and M
 *    mostly stay in the 50 MB L2 between the stages), the GEMM's FLOPs at
 *    0.31 of the nominal FP32 peak (~21 TFLOP/s measured; a wave model
 *    counting ~100 put the fp32 Winograd under
 *    cuda.conv.igemm-tf32 in TF32 plans where it is 1.15x slower), and
 *    ~2 us per GEMM block over the resident slots (the depthwise layer's
 *    36 x 256 groups of one row). Fit: 0.150 / 0.130 / 0.152 / 0.155 /
 *    0.30 ms against 0.150 / 0.126-0.135 / 0.131 / 0.156 / 0.279 measured
 *    (F(4x4); F(2x2) 1.0-1.5x pessimistic at 14 and 7).
 *  - through the implicit GEMM (TF32; fp32 under TILECONV_CUDA_WINO_GEMM=igemm):
 *    bytes at 0.7 of the bandwidth, FLOPs at WG_IG_RATE(_TF) of the peak:
 *    0.237 / 0.139 / 0.094 / 0.095 / 0.574 ms against 0.236-0.241 / 0.135
 *    / 0.091-0.094 / 0.083-0.088 / 0.468 measured for winograd2-tf32 (the
 *    grouped 1x1 GEMM reads V and writes M itself, so its traffic is in the
 *    bytes term).
 * plus four launches. */
#define WG_IG_RATE 0.5
#define WG_IG_RATE_TF 2.5
static double wg_estimate(const tc__problem *p, int m, int tf32) {
    const tc__cu_device *d = tc__cu_dev();
    if (!d) return 1e30;
    const int route = wg_route(p, m, tf32);
    const wgeo g = wg_geo(p, m, route);
    double nu, nv, nm;
    wg_sizes(g, m, &nu, &nv, &nm);
    const double bytes = 4.0 * ((double)tc__x_count(p) * (double)g.KD + (double)tc__y_count(p) +
                                (double)tc__w_count(p) + 2.0 * (nu + nv + nm));
    const double A2 = (double)(m + 2) * (m + 2);
    const double fl = 2.0 * A2 * (double)g.K * (double)g.CR * (double)g.Tp;
    double t;
    if (route) {
        t = bytes / (0.7 * d->bandwidth) + fl / ((tf32 ? WG_IG_RATE_TF : WG_IG_RATE) * d->peak_flops32);
    } else {
        const int bm = wg_pick_bm(g, m);
        const double blocks = (double)tc__cu_div_up(g.Tp, WB_N) * (double)tc__cu_div_up(g.Kg, bm) *
                              A2 * (double)g.G;
        const int per_sm = bm == 128 ? 2 : bm == 64 ? 4 : 8;
        t = bytes / (2.05 * d->bandwidth) + fl / (0.31 * d->peak_flops32) +
            blocks * 2e-6 / ((double)per_sm * wg_sms());
    }
    return t + 4 * 5e-6;
}
static double wg4_estimate(const tc__problem *p, const tc__env *e) { return wg_estimate(p, 4, 0); }
static double wg2_estimate(const tc__problem *p, const tc__env *e) { return wg_estimate(p, 2, 0); }
static double wg2t_estimate(const tc__problem *p, const tc__env *e) { return wg_estimate(p, 2, 1); }

/* device scratch, at most (the device_workspace bound): the staged bias,
 * U, V and M as wg_run allocates them, and the implicit GEMM's own scratch
 * on the grouped problem where it runs the products */
static size_t wg_scratch(const tc__problem *p, int m, int tf32) {
    const int route = wg_route(p, m, tf32);
    const wgeo g = wg_geo(p, m, route);
    double nu, nv, nm;
    wg_sizes(g, m, &nu, &nv, &nm);
    const size_t ub = ((size_t)nu * sizeof(float) + 255) / 256 * 256,
                 vb = ((size_t)nv * sizeof(float) + 255) / 256 * 256;
    size_t t = (p->has_bias ? (size_t)p->K * sizeof(float) : 0) + ub + vb +
               (size_t)nm * sizeof(float);
    if (route) {
        const tc__problem q = wg_gemm_problem(g, m);
        t += tc__cu_conv_igemm_scratch(&q, tf32);
    }
    return t;
}
static size_t wg4_device_ws(const tc__problem *p, const tc__env *e, const void *s) {
    return wg_scratch(p, 4, 0);
}
static size_t wg2_device_ws(const tc__problem *p, const tc__env *e, const void *s) {
    return wg_scratch(p, 2, 0);
}
static size_t wg2t_device_ws(const tc__problem *p, const tc__env *e, const void *s) {
    return wg_scratch(p, 2, 1);
}

static tc_status wg4_execute(const tc__args *a) { return tc__cu_run(a, NULL, 1, launch_wg4); }
static tc_status wg2_execute(const tc__args *a) { return tc__cu_run(a, NULL, 1, launch_wg2); }
static tc_status wg2t_execute(const tc__args *a) { return tc__cu_run(a, NULL, 1, launch_wg2t); }

} // namespace

TC__CU_SOLVER(tc__solver_cuda_conv_winograd) = {
    .name = "cuda.conv.winograd-f4",
    .backend = TC_BACKEND_CUDA,
    .ops = TC_OP_CONV,
    .summary = "Winograd F(4x4,3x3) conv layer (fp32, CUDA cores, non-fused): weight and input transforms, 36 x groups batched GEMMs (cp.async 128/64/32 x 128 tiles), output transform + bias; 3x3 stride 1 (3D: kd x 3 x 3, the depth taps a longer reduction), groups, every padding mode.",
    .available = tc__cu_available,
    .applicable = wg4_applicable,
    .estimate = wg4_estimate,
    .execute = wg4_execute,
    .device_workspace = wg4_device_ws,
    .report = wg_report,
};

TC__CU_SOLVER(tc__solver_cuda_conv_winograd2) = {
    .name = "cuda.conv.winograd-f2",
    .backend = TC_BACKEND_CUDA,
    .ops = TC_OP_CONV,
    .summary = "Winograd F(2x2,3x3) conv layer (fp32, CUDA cores, non-fused): as cuda.conv.winograd-f4 with 4x4 input tiles and 16 batched GEMMs (2.25x fewer multiplies than direct, ~10x less rounding than F(4x4)).",
    .available = tc__cu_available,
    .applicable = wg2_applicable,
    .estimate = wg2_estimate,
    .execute = wg2_execute,
    .device_workspace = wg2_device_ws,
    .report = wg_report,
};

TC__CU_SOLVER(tc__solver_cuda_conv_winograd2_tf32) = {
    .name = "cuda.conv.winograd-f2-tf32",
    .backend = TC_BACKEND_CUDA,
    .ops = TC_OP_CONV,
    .summary = "cuda.conv.winograd-f2 (F(2x2,3x3)) with the 16 x groups batched GEMMs on the TF32 tensor cores (cuda.conv.igemm-tf32's kernel on the products as one grouped 1x1 conv); only under TC_PLAN_ALLOW_TF32. (F(4x4,3x3) in TF32 measured 7e-3 to 2e-2 error: not offered.)",
    .available = tc__cu_available,
    .applicable = wg2t_applicable,
    .estimate = wg2t_estimate,
    .execute = wg2t_execute,
    .device_workspace = wg2t_device_ws,
    .report = wg_report,
};
