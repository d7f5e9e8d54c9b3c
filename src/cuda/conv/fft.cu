/*
 * fft.cu - cuda.conv.fft: convolution layers through cuFFT, or
 * for 2D planes up to 64 x 64 through its own fused transforms (float32;
 * seed 002's FFT algorithm, for layers with large masks).
 *
 * The lowered problem (internal.h): y[n,k,o] = bias[k] + sum_c sum_r
 * w[k,c,r] X(n, c, o*stride + r*dil - pad_lo), X read through the padding
 * mode. As cpu.conv.fft (src/cpu/conv_fft.c): per axis the outputs need
 * the extended input e[i] = X(i - pad_lo) for i < E = (out-1)*stride + span,
 * span = (m-1)*dil + 1; with a 2,3,5,7-smooth length L >= E the circular
 * correlation of e with the dilated mask does not wrap at any j = o*stride,
 * so with v[q] = wd[(-q) mod L] / prod(L) (the flipped, dilated, scaled
 * mask)
 *
 *   Y[n,k] = sum_{c in k's group} r2c(e[n,c]) * r2c(v[k,c]),
 *   y[n,k,o] = c2r(Y[n,k])[o*stride] + bias[k].
 *
 * One call: the K*Cg weight spectra (a zeroed buffer, the flipped mask
 * scattered, one batched in-place R2C), then per chunk of images (the
 * chunk set at plan time so that its spectra stay within CF_CHUNK_BYTES):
 * the extended inputs with the padding mode applied (one kernel over all
 * planes of the chunk), one batched in-place R2C, the frequency-domain sum
 * (a complex GEMM per frequency: k_cf_mul's shared-memory tiles, or the
 * direct form where the channels are few; see "The product's forms"),
 * one batched in-place C2R, and the strided
 * crop with the bias. The weight spectra are rebuilt on every call (the
 * weights are an execute argument); their cost is K*Cg transforms beside
 * the chunk's N*(C + K).
 *
 * cuFFT's plans (made at plan time, for the chunk's batch) belong to the
 * plan state; their work area (the largest of the three) comes from the
 * device pool with the spectra on every call, so the plan holds no device
 * memory between calls and tc_plan_device_workspace_size counts all of
 * it. On device arrays a call only enqueues (no stream synchronisation):
 * concurrent executes of one plan take a mutex only while they set the
 * handles' stream and work area and enqueue the transforms. Accuracy as cpu.conv.fft: about
 * eps * log2(prod L) of max|x| * sum|w| per output (docs/semantics.md).
 *
 * The fused form: 2D layers whose E is 49..64 on both axes
 * take L = 64 x 64 and no cuFFT. One kernel a transform, a block a plane
 * with the plane in shared memory (src/cuda/cuda_fft64.h): k_cf_fx64
 * reads the inputs through the padding mode and writes their spectra,
 * k_cf_fw64 scatters the taps and writes the weight spectra (no memset,
 * no scatter pass), k_cf_inv64 inverts and crops with the stride and the
 * bias. The spectra keep cuFFT's R2C layout, so the product is the same.
 * On the H200 it took the 5x5 64 @56 b32 layer from 0.369 to 0.231 ms
 * and 7x7 b16 from 0.267 to 0.162 (docs/solvers/cuda-conv-fft.md). TILECONV_CUDA_CONV_FFT_FUSED=0
 * keeps cuFFT; =1 takes the fused form wherever E <= 64 (tests).
 */
#include "cuda/cuda_common.h"
#include "cuda/cuda_fft64.h"
#include "cuda/cuda_hopper.h"

#include <cufft.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace {

#define CF_CHUNK_BYTES ((int64_t)1 << 30) /* input + output spectra of a chunk */
#define CF_W_BYTES ((int64_t)1 << 30)     /* the weight spectra */

#define CF_FFT(call) TC__CU_FFT("cuda.conv.fft", call)

/* k_cf_mul's tile: FT frequencies x NT = NG NI images x KT = KG KJ output
 * channels, CT input channels a stage */
template <int FT, int NG, int KG, int NI, int KJ, int CT, int S> struct cfmul {
    static constexpr int F = FT, NG_ = NG, KG_ = KG, NI_ = NI, KJ_ = KJ, CT_ = CT, S_ = S;
    static constexpr int NT = NG * NI, KT = KG * KJ;
    static constexpr int XS = CT * NT * FT, WS = CT * KT * FT; /* complex a stage */
    static constexpr size_t SMEM = S * (size_t)(XS + WS) * sizeof(float2);
    static_assert(FT * NG * KG == 256, "256 threads a block");
};

/* The product's forms (cf_geometry picks one):
 *   0 "big"    8 frequencies x 16 images x 64 output channels a block, 4
 *              channels a stage, 4 stages (most layers);
 *   1 "small"  32 frequencies x 4 images x 32 output channels, 2 channels
 *              a stage, 4 stages (few images or few channels a group);
 *   2 "direct" k_cf_mul_direct: a thread one frequency of CF_NB images x
 *              CF_KB output channels, operands from global memory (X read
 *              Kg / CF_KB times and W N / CF_NB times: the least traffic
 *              where both are small).
 * Between 0 and 1 the one with fewer padded multiply-adds; 2 where its
 * traffic is within 1.25x of that one's. TILECONV_CUDA_CONV_FFT_TILE=big|small|
 * direct forces one (tests). */
typedef cfmul<8, 4, 8, 4, 8, 4, 4> cf_t0;
typedef cfmul<32, 2, 4, 2, 8, 2, 4> cf_t1;
#define CF_TILES(X) X(0, cf_t0) X(1, cf_t1)
#define CF_NB 4 /* images a thread in k_cf_mul_direct */
#define CF_KB 8 /* output channels a thread */
static const char *const cf_tile_names[3] = {"big", "small", "direct"};

/* the geometry, shared by host and kernels */
struct cfg {
    int64_t in[3], out[3], msk[3], str[3], dil[3], pad[3], E[3], L[3];
    int64_t ld; /* reals along a buffer's last axis: 2 * (L2 / 2 + 1) */
    int64_t nr; /* reals a plane: L0 * L1 * ld, rounded up to 2 FT (nr / 2 complex) */
    int64_t N, C, K, G, Cg, Kg;
    int64_t nb; /* images a chunk */
    int tile;   /* the product's form: 0 big, 1 small (k_cf_mul), 2 direct */
    int ft, nt, kt; /* its frequencies (direct: 8, the planes' padding), images and
                     * output channels a block or thread */
    int mode;
    float cval;
    int fused; /* the 64 x 64 transforms in shared memory (k_cf_*64), not cuFFT */
};

/* 0 where a size overflows or passes the caps (reason in why); fuse: the
 * fused 64 x 64 transforms may be chosen */
static int cf_geometry(const tc__problem *p, cfg *g, char *why, size_t n, int fuse) {
    memset(g, 0, sizeof *g);
    for (int a = 0; a < 3; a++) {
        g->in[a] = p->in[a];
        g->out[a] = p->out[a];
        g->msk[a] = p->msk[a];
        g->str[a] = p->stride[a];
        g->dil[a] = p->dil[a];
        g->pad[a] = p->pad_lo[a];
        int64_t span;
        if (!tc__mul_ok(p->msk[a] - 1, p->dil[a], &span) || span >= (1 << 24) ||
            p->out[a] >= (1 << 24) || p->stride[a] >= (1 << 24)) {
            if (why) snprintf(why, n, "axis %d too long for one FFT", a);
            return 0;
        }
        g->E[a] = (p->out[a] - 1) * p->stride[a] + span + 1;
        g->L[a] = g->E[a] > 1 ? tc__fft_smooth_length(g->E[a], 0) : 1;
    }
    if (g->L[2] == 1 && g->L[0] * g->L[1] > 1) {
        if (why) snprintf(why, n, "last axis of length 1");
        return 0;
    }
    /* 2D layers whose extended planes are 49..64 on both axes: one kernel
     * a transform on 64 x 64 planes in shared memory (k_cf_fx64, k_cf_fw64,
     * k_cf_inv64), which builds, transforms and crops in one pass each;
     * TILECONV_CUDA_CONV_FFT_FUSED=0 keeps cuFFT, =1 takes the fused form on
     * every 2D layer whose planes fit 64 x 64 (tests) */
    {
        const int fits = p->in[0] == 1 && g->E[0] == 1 && g->E[1] > 1 && g->E[1] <= 64 &&
                         g->E[2] <= 64;
        const char *fe = tc__knob_get(TC__KNOB_CUDA_CONV_FFT_FUSED);
        g->fused = fuse && fits && (fe && (fe[0] == '0' || fe[0] == '1') && !fe[1]
                                        ? fe[0] == '1'
                                        : g->E[1] > 48 && g->E[2] > 48);
        if (g->fused) g->L[1] = g->L[2] = 64;
    }
    g->ld = 2 * (g->L[2] / 2 + 1);
    g->N = p->N;
    g->C = p->C;
    g->K = p->K;
    g->G = p->G;
    g->Cg = p->C / p->G;
    g->Kg = p->K / p->G;
    g->mode = (int)p->mode;
    g->cval = (float)p->cval;
    /* the product's tiling: the one with fewer padded multiply-adds */
    const int64_t pb = tc__cu_div_up(g->N, cf_t0::NT) * cf_t0::NT *
                       (tc__cu_div_up(g->Kg, cf_t0::KT) * cf_t0::KT),
                  ps = tc__cu_div_up(g->N, cf_t1::NT) * cf_t1::NT *
                       (tc__cu_div_up(g->Kg, cf_t1::KT) * cf_t1::KT);
    g->tile = pb <= ps ? 0 : 1;
    {
        /* traffic in planes: X N C, W K Cg, Y N K, each read as often as
         * the form re-reads it */
        const double X = (double)g->N * g->C, W = (double)g->K * g->Cg, Y = (double)g->N * g->K;
        const double kt = g->tile ? cf_t1::KT : cf_t0::KT;
        const double tiled = X * ceil(g->Kg / kt) + W + Y,
                     direct = X * ceil(g->Kg / (double)CF_KB) + W * ceil(g->N / (double)CF_NB) + Y;
        if (direct <= 1.25 * tiled) g->tile = 2;
    }
    const char *te = tc__knob_get(TC__KNOB_CUDA_CONV_FFT_TILE);
    for (int t = 0; te && t < 3; t++)
        if (!strcmp(te, cf_tile_names[t])) g->tile = t;
    g->ft = 8, g->nt = CF_NB, g->kt = CF_KB; /* direct: 256 frequencies a block */
#define CF_DIMS(i, M)                                                                              \
    if (g->tile == i) g->ft = M::F, g->nt = M::NT, g->kt = M::KT;
    CF_TILES(CF_DIMS)
#undef CF_DIMS
    const int64_t ft = g->ft, nt = g->nt, kt = g->kt;
    /* planes padded to whole frequency tiles of the product */
    int64_t t, tw, ti;
    const int fits = tc__mul_ok(g->L[0] * g->L[1], g->ld, &g->nr) && g->nr <= INT32_MAX - 64;
    if (fits) g->nr = tc__cu_div_up(g->nr, 2 * ft) * 2 * ft;
    if (!fits || !tc__mul_ok(g->nr * 4, g->K * g->Cg, &tw) || tw > CF_W_BYTES ||
        !tc__mul_ok(g->nr * 4, g->C + g->K, &ti) || ti > CF_CHUNK_BYTES) {
        if (why)
            snprintf(why, n, "spectra beyond %lld MiB (weights) or %lld MiB (one image)",
                     (long long)(CF_W_BYTES >> 20), (long long)(CF_CHUNK_BYTES >> 20));
        return 0;
    }
    g->nb = CF_CHUNK_BYTES / ti;
    /* TILECONV_CUDA_CONV_FFT_NB=n: chunks of at most n images (tests) */
    const char *fe = tc__knob_get(TC__KNOB_CUDA_CONV_FFT_NB);
    if (fe && atoi(fe) >= 1 && atoi(fe) < g->nb) g->nb = atoi(fe);
    if (g->nb > g->N) g->nb = g->N;
    /* cuFFT's batch counts and the product kernel's grid (one dimension) */
    if (!tc__mul_ok(g->nb, g->C + g->K, &t) || t > INT32_MAX || g->K * g->Cg > INT32_MAX ||
        !tc__mul_ok(tc__cu_div_up(g->nb, nt) * tc__cu_div_up(g->nr / 2, g->tile == 2 ? 256 : ft),
                    tc__cu_div_up(g->Kg, kt) * g->G, &t) ||
        t > INT32_MAX) {
        if (why) snprintf(why, n, "too many channels for one batched transform");
        return 0;
    }
    return 1;
}

/* a grid-stride loop's block count for n items */
static unsigned cf_blocks(int64_t n) {
    const tc__cu_device *d = tc__cu_dev();
    const int64_t cap = 16LL * (d ? d->sms : 132), b = tc__cu_div_up(n, 256);
    return (unsigned)(b < cap ? (b > 0 ? b : 1) : cap);
}

/* the flipped, dilated, scaled mask of (k, c) at plane k * Cg + c of a
 * zeroed buffer: v[(L - r*dil) mod L] = w[r] * scale per axis */
__global__ void k_cf_scatter(const float *__restrict__ w, float *__restrict__ V, const cfg g,
                             float scale) {
    const int64_t R = g.msk[0] * g.msk[1] * g.msk[2], n = g.K * g.Cg * R;
    for (int64_t i = (int64_t)blockIdx.x * 256 + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * 256) {
        const int64_t kc = i / R, r = i - kc * R;
        const int64_t r0 = r / (g.msk[1] * g.msk[2]), r1 = (r / g.msk[2]) % g.msk[1],
                      r2 = r % g.msk[2];
        const int64_t a = (g.L[0] - r0 * g.dil[0] % g.L[0]) % g.L[0],
                      b = (g.L[1] - r1 * g.dil[1] % g.L[1]) % g.L[1],
                      c = (g.L[2] - r2 * g.dil[2] % g.L[2]) % g.L[2];
        V[kc * g.nr + (a * g.L[1] + b) * g.ld + c] = __ldg(w + i) * scale;
    }
}

/* the extended inputs of images n0 .. n0 + nbc - 1: e[i] = X(i - pad)
 * through the padding mode for i < E on every axis, 0 elsewhere (up to L
 * and in the last axis' padding to ld) */
#define CF_ROWS 32 /* rows a block in k_cf_build and k_cf_crop: 8 warps x 4 */
__global__ void __launch_bounds__(256) k_cf_build(const float *__restrict__ x,
                                                  float *__restrict__ Xs, const cfg g, int64_t n0,
                                                  int chunks) {
    /* a block CF_ROWS rows of one plane (image, channel) of the chunk, a
     * warp 4 rows at once, lanes along the last axis */
    const int64_t pc = blockIdx.x / chunks, plane = g.in[0] * g.in[1] * g.in[2];
    const int ch = (int)(blockIdx.x % chunks), tx = threadIdx.x & 31;
    const int r0 = ch * CF_ROWS + (threadIdx.x >> 5) * 4, ld = (int)g.ld, L1 = (int)g.L[1];
    const int rows = (int)(g.L[0] * g.L[1]), e2 = (int)g.E[2];
    const float *xp = x + (n0 * g.C + pc) * plane;
    float *dst = Xs + pc * g.nr;
    /* each row's source once (recomputing the row's division and two
     * index maps for every element ran at ~1 TB/s, a third of the copy
     * ceiling): src null where the row lies past E (zeros) or maps outside
     * the input (the constant) */
    const float *src[4];
    float rv[4];
#pragma unroll
    for (int u = 0; u < 4; u++) {
        const int r = r0 + u, i0 = r / L1, i1 = r - i0 * L1;
        const bool in = r < rows && i0 < g.E[0] && i1 < g.E[1];
        const int64_t a = in ? tc__cu_bidx(i0 - g.pad[0], g.in[0], g.mode) : -1,
                      b = in ? tc__cu_bidx(i1 - g.pad[1], g.in[1], g.mode) : -1;
        src[u] = a >= 0 && b >= 0 ? xp + (a * g.in[1] + b) * g.in[2] : nullptr;
        rv[u] = in ? g.cval : 0.f;
    }
    /* two column chunks of the four rows at once: eight loads in flight */
    for (int c0 = tx; c0 < ld; c0 += 64) {
        float v[2][4];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int c = c0 + 32 * h;
            const int64_t cc = c < e2 ? tc__cu_bidx(c - g.pad[2], g.in[2], g.mode) : -1;
#pragma unroll
            for (int u = 0; u < 4; u++)
                v[h][u] = c >= e2 ? 0.f : src[u] && cc >= 0 ? __ldg(src[u] + cc) : rv[u];
        }
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int u = 0; u < 4; u++)
                if (r0 + u < rows && c0 + 32 * h < ld) dst[(int64_t)(r0 + u) * ld + c0 + 32 * h] = v[h][u];
    }
    /* the plane's padding to whole frequency tiles */
    if (ch == 0)
        for (int64_t t = (int64_t)rows * ld + threadIdx.x; t < g.nr; t += 256) dst[t] = 0.f;
}

/* acc[i][j] += x[i] w[j] (complex), the product kernels' inner step */
template <int NI, int KJ>
__device__ __forceinline__ void cf_cmac(float2 (&acc)[NI][KJ], const float2 (&x)[NI],
                                        const float2 (&w)[KJ]) {
#pragma unroll
    for (int i = 0; i < NI; i++)
#pragma unroll
        for (int j = 0; j < KJ; j++) {
            acc[i][j].x = fmaf(x[i].x, w[j].x, fmaf(-x[i].y, w[j].y, acc[i][j].x));
            acc[i][j].y = fmaf(x[i].x, w[j].y, fmaf(x[i].y, w[j].x, acc[i][j].y));
        }
}

/* The frequency-domain sum as a batched complex GEMM, one per frequency:
 * Y[n, k, f] = sum_c X[n, g Cg + c, f] W[k, c, f] (complex, nc = nr / 2
 * a plane). A block owns FT consecutive frequencies of an NT-image x
 * KT-channel tile of one group and steps through the group's channels CT
 * at a time: each step copies the X and W rows of its CT channels
 * (cp.async, 16-byte pieces, FT complex a row, zero-filled past the last
 * image, channel or output channel) into shared memory S - 1 steps ahead
 * of the step that computes (S stages). A thread holds NI images x KJ output
 * channels at one frequency (f = tid % FT, images ng + NG i, channels
 * kg + KG j); a warp's X reads are one row (a broadcast) and its W reads
 * consecutive rows, so neither conflicts. Blocks of one frequency tile and
 * output-channel tile run next to each other (image tile fastest), so the
 * weight spectra come from DRAM about once, the inputs once per KT output
 * channels, and Y is written once. nc is a multiple of FT (cf_geometry
 * pads the planes), so no frequency tail. */
template <typename M>
__global__ void __launch_bounds__(256, 2) k_cf_mul(const float2 *__restrict__ X,
                                                   const float2 *__restrict__ W,
                                                   float2 *__restrict__ Y, const cfg g, int64_t nbc) {
    constexpr int FT = M::F, NG = M::NG_, KG = M::KG_, NI = M::NI_, KJ = M::KJ_, CT = M::CT_,
                  S = M::S_;
    constexpr int RP = FT / 2; /* 16-byte pieces a row */
    extern __shared__ float4 cf_smem[];
    float2 *sm = (float2 *)cf_smem;
    const int64_t nc = g.nr / 2, ntiles = (nbc + M::NT - 1) / M::NT, ftiles = nc / FT,
                  ktiles = (g.Kg + M::KT - 1) / M::KT;
    int64_t b = blockIdx.x;
    const int64_t n0 = (b % ntiles) * M::NT;
    b /= ntiles;
    const int64_t f0 = (b % ftiles) * FT;
    b /= ftiles;
    const int64_t k0 = (b % ktiles) * M::KT, grp = b / ktiles;
    const int tid = threadIdx.x, f = tid % FT, kg = (tid / FT) % KG, ng = tid / (FT * KG);
    const float2 *Xg = X + grp * g.Cg * nc + f0, *Wg = W + grp * g.Kg * g.Cg * nc + f0;
    const int64_t steps = (g.Cg + CT - 1) / CT;
    auto load = [&](int stage, int64_t c0) {
        float2 *xs = sm + stage * (M::XS + M::WS), *ws = xs + M::XS;
        for (int id = tid; id < CT * M::NT * RP; id += 256) {
            const int row = id / RP, p = id % RP, c = row / M::NT, n = row % M::NT;
            const bool ok = n0 + n < nbc && c0 + c < g.Cg;
            const float2 *src = ok ? Xg + ((n0 + n) * g.C + c0 + c) * nc + 2 * p : X;
            ig_cp16((float *)(xs + row * FT + 2 * p), (const float *)src, ok ? 16 : 0);
        }
        for (int id = tid; id < CT * M::KT * RP; id += 256) {
            const int row = id / RP, p = id % RP, c = row / M::KT, k = row % M::KT;
            const bool ok = k0 + k < g.Kg && c0 + c < g.Cg;
            const float2 *src = ok ? Wg + ((k0 + k) * g.Cg + c0 + c) * nc + 2 * p : W;
            ig_cp16((float *)(ws + row * FT + 2 * p), (const float *)src, ok ? 16 : 0);
        }
        ig_commit();
    };
    float2 acc[NI][KJ];
#pragma unroll
    for (int i = 0; i < NI; i++)
#pragma unroll
        for (int j = 0; j < KJ; j++) acc[i][j] = make_float2(0.f, 0.f);
    /* S stages: S - 1 steps in flight while one computes; one barrier a
     * step (the slot refilled at step s was computed at step s - 1) */
#pragma unroll
    for (int s0 = 0; s0 < S - 1; s0++)
        if (s0 < steps) load(s0, (int64_t)s0 * CT);
        else ig_commit();
    for (int64_t s = 0; s < steps; s++) {
        ig_wait<S - 2>();
        __syncthreads();
        if (s + S - 1 < steps) load((int)((s + S - 1) % S), (s + S - 1) * CT);
        else ig_commit();
        const float2 *xs = sm + (s % S) * (M::XS + M::WS), *ws = xs + M::XS;
#pragma unroll
        for (int c = 0; c < CT; c++) {
            float2 xv[NI], wv[KJ];
#pragma unroll
            for (int i = 0; i < NI; i++) xv[i] = xs[(c * M::NT + ng + NG * i) * FT + f];
#pragma unroll
            for (int j = 0; j < KJ; j++) wv[j] = ws[(c * M::KT + kg + KG * j) * FT + f];
            cf_cmac(acc, xv, wv);
        }
    }
#pragma unroll
    for (int i = 0; i < NI; i++)
#pragma unroll
        for (int j = 0; j < KJ; j++) {
            const int64_t n = n0 + ng + NG * i, k = k0 + kg + KG * j;
            if (n < nbc && k < g.Kg) Y[(n * g.K + grp * g.Kg + k) * nc + f0 + f] = acc[i][j];
        }
}

/* the direct form: a thread one frequency f of CF_NB images x CF_KB
 * output channels of one group, operands straight from global memory
 * (consecutive threads, consecutive frequencies); blocks: 256 frequencies,
 * then output-channel blocks x groups, then image blocks */
__global__ void __launch_bounds__(256) k_cf_mul_direct(const float2 *__restrict__ X,
                                                       const float2 *__restrict__ W,
                                                       float2 *__restrict__ Y, const cfg g,
                                                       int64_t nbc) {
    const int64_t nc = g.nr / 2, fbs = (nc + 255) / 256, kbs = (g.Kg + CF_KB - 1) / CF_KB;
    int64_t b = blockIdx.x;
    const int64_t f = (b % fbs) * 256 + threadIdx.x;
    b /= fbs;
    const int64_t k0 = (b % kbs) * CF_KB;
    b /= kbs;
    const int64_t grp = b % g.G, nb0 = (b / g.G) * CF_NB;
    if (f >= nc) return;
    float2 acc[CF_NB][CF_KB];
#pragma unroll
    for (int i = 0; i < CF_NB; i++)
#pragma unroll
        for (int j = 0; j < CF_KB; j++) acc[i][j] = make_float2(0.f, 0.f);
    for (int64_t c = 0; c < g.Cg; c++) {
        float2 xv[CF_NB], wv[CF_KB];
#pragma unroll
        for (int i = 0; i < CF_NB; i++)
            xv[i] = nb0 + i < nbc ? __ldg(X + ((nb0 + i) * g.C + grp * g.Cg + c) * nc + f)
                                  : make_float2(0.f, 0.f);
#pragma unroll
        for (int j = 0; j < CF_KB; j++)
            wv[j] = k0 + j < g.Kg ? __ldg(W + ((grp * g.Kg + k0 + j) * g.Cg + c) * nc + f)
                                  : make_float2(0.f, 0.f);
        cf_cmac(acc, xv, wv);
    }
#pragma unroll
    for (int i = 0; i < CF_NB; i++)
#pragma unroll
        for (int j = 0; j < CF_KB; j++)
            if (nb0 + i < nbc && k0 + j < g.Kg)
                Y[((nb0 + i) * g.K + grp * g.Kg + k0 + j) * nc + f] = acc[i][j];
}

/* k_cf_mul on a chunk of nbc images (cf_geometry bounds the grid) */
template <typename M>
static tc_status cf_mul_launch(const cfg &g, const float2 *X, const float2 *W, float2 *Y,
                               int64_t nbc, cudaStream_t st) {
    TC_CU(cudaFuncSetAttribute(k_cf_mul<M>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)M::SMEM));
    const unsigned blocks = (unsigned)(tc__cu_div_up(nbc, M::NT) * (g.nr / 2 / M::F) *
                                       tc__cu_div_up(g.Kg, M::KT) * g.G);
    k_cf_mul<M><<<blocks, 256, M::SMEM, st>>>(X, W, Y, g, nbc);
    return TC_OK;
}

/* y[n0 + n, k, o] = c2r(Y[n, k])[o * stride] + bias[k]: a block CF_ROWS
 * output rows of one plane (image, channel) of the chunk, a warp 4 rows at
 * once, lanes along the last axis */
__global__ void __launch_bounds__(256) k_cf_crop(const float *__restrict__ Ys,
                                                 float *__restrict__ y,
                                                 const float *__restrict__ bias, const cfg g,
                                                 int64_t n0, int chunks) {
    const int64_t nk = blockIdx.x / chunks, P = g.out[0] * g.out[1] * g.out[2];
    const int r0 = (int)(blockIdx.x % chunks) * CF_ROWS + (threadIdx.x >> 5) * 4,
              tx = threadIdx.x & 31;
    const float add = bias ? __ldg(bias + nk % g.K) : 0.f;
    const float *src = Ys + nk * g.nr;
    float *dst = y + (n0 * g.K + nk) * P;
    const int o1n = (int)g.out[1], rows = (int)(g.out[0] * g.out[1]), o2n = (int)g.out[2];
    const float *sr[4];
#pragma unroll
    for (int u = 0; u < 4; u++) {
        const int r = r0 + u < rows ? r0 + u : rows - 1, o0 = r / o1n, o1 = r - o0 * o1n;
        sr[u] = src + (o0 * g.str[0] * g.L[1] + o1 * g.str[1]) * g.ld;
    }
    for (int o2 = tx; o2 < o2n; o2 += 32) {
        float v[4];
#pragma unroll
        for (int u = 0; u < 4; u++) v[u] = sr[u][o2 * g.str[2]];
#pragma unroll
        for (int u = 0; u < 4; u++)
            if (r0 + u < rows) dst[(int64_t)(r0 + u) * o2n + o2] = v[u] + add;
    }
}

struct cfstate {
    pthread_mutex_t mu;
    cfg g;
    cufftHandle fx, fw, inv; /* the chunk's inputs, the weights, the chunk's outputs */
    int have_fx, have_fw, have_inv;
    size_t work; /* the largest cuFFT work area of the three (taken from the pool a call) */
};

static int cf_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (!tc__cu_conv_fp32_layer(p, why, n)) return 0;
    cfg g;
    return cf_geometry(p, &g, why, n, 1);
}

/* The fused form's seconds: its three transform kernels move each plane
 * once (the inputs and their spectra, N*C planes; the taps and the weight
 * spectra, K*Cg; the output spectra and the outputs, N*K) at CF_FUSED_BW of
 * the modelled bandwidth, and the product is priced as its own bytes or
 * its multiply-adds at CF_FUSED_MUL of the FP32 peak; plus 5 us a launch.
 * Fitted on the H200 (the kernels' times): the transform
 * kernels moved 190 MB (5x5 64 @56 b32) and 90 MB (7x7 b16) at 1.2-1.8
 * TB/s, the product ran its 2.2 and 1.1 GFLOP at 24.6 and 22.8 TFLOP/s
 * (0.37 and 0.34 of the peak). */
#define CF_FUSED_BW 0.36
#define CF_FUSED_MUL 0.33
static double cf_estimate_fused(const cfg &g) {
    const double nr = (double)g.nr, nc = nr / 2;
    const double N = (double)g.N, C = (double)g.C, K = (double)g.K, Cg = (double)g.Cg;
    const double in = (double)(g.in[1] * g.in[2]), out = (double)(g.out[1] * g.out[2]),
                 taps = (double)(g.msk[1] * g.msk[2]);
    const double tbytes = 4.0 * (N * C * (in + nr) + K * Cg * (taps + nr) + N * K * (nr + out));
    const double ktiles = ceil((double)g.Kg / g.kt);
    const double pflops = 8.0 * ceil(N / g.nt) * g.nt * ktiles * g.kt * g.G * Cg * nc;
    const double pbytes =
        4.0 * nr * (N * C * ktiles + K * Cg * (g.tile == 2 ? ceil(N / CF_NB) : 1) + N * K);
    const double chunks = ceil(N / (double)g.nb);
    return tc__cu_estimate(tbytes / CF_FUSED_BW, 0, 1) +
           tc__cu_estimate(pbytes, pflops, CF_FUSED_MUL) + (1 + 3 * chunks) * 5e-6;
}

/* Seconds: the product's complex multiply-adds (8 flops each, over the
 * form's padded image and channel tiles) and the transforms (~2.5 n log2 n
 * flops a real transform of n points) at a quarter of the FP32 peak, and
 * the bytes of every pass (build, ~4 passes a transform, the product's
 * reads of X once per output-channel tile and of W once, or once per CF_NB
 * images in the direct form, the crop), plus ~5 us a launch; that sum
 * times 1.4, plus 2.5 ns a transform. Fitted on the H200: eleven layers
 * (the forced solver's CUDA-event times) set 1.6 (the sum alone was
 * 1.23-1.87x below the measured time, and 3.0x on 3x3 512 @7, whose 262144
 * weight transforms of 9 x 9 points cost ~2.2 ns each beyond it); with
 * the current product and build/crop kernels the layers ran 0.78-0.95x of
 * that estimate on the five large- and mid-mask layers (median 0.86), so
 * 1.4. With it the planner keeps cuda.conv.igemm-tf32 on
 * an 11x11 layer in TF32 plans (0.258 ms against the FFT's 0.312) and takes
 * the FFT in fp32 there (0.312 against 0.800 for cuda.conv.igemm). The
 * fused form has its own model (cf_estimate_fused). */
static double cf_estimate(const tc__problem *p, const tc__env *e) {
    cfg g;
    if (!cf_geometry(p, &g, NULL, 0, 1)) return 1e30;
    if (g.fused) return cf_estimate_fused(g);
    const double nr = (double)g.nr, nc = nr / 2, Lp = (double)(g.L[0] * g.L[1] * g.L[2]);
    const double lg = Lp > 2 ? log2(Lp) : 1.0;
    const double N = (double)g.N, C = (double)g.C, K = (double)g.K, Cg = (double)g.Cg;
    const double transforms = N * (C + K) + K * Cg;
    const double nt = g.nt, kt = g.kt;
    const double ktiles = ceil((double)g.Kg / kt);
    const double flops = 8.0 * ceil(N / nt) * nt * ktiles * kt * g.G * Cg * nc +
                         2.5 * transforms * Lp * lg;
    const double bytes =
        4.0 * nr *
            (N * C * (1 + 4 + ktiles) + K * Cg * (2 + 4 + (g.tile == 2 ? ceil(N / CF_NB) : 1)) +
             N * K * (1 + 4 + 1)) +
        (double)tc__problem_bytes(p);
    const double chunks = ceil(N / (double)g.nb);
    return 1.4 * (tc__cu_estimate(bytes, flops, 0.25) + (4 + 5 * chunks) * 5e-6) +
           2.5e-9 * transforms;
}

static void cf_destroy(void *state) {
    cfstate *s = (cfstate *)state;
    if (!s) return;
    if (s->have_fx) cufftDestroy(s->fx);
    if (s->have_fw) cufftDestroy(s->fw);
    if (s->have_inv) cufftDestroy(s->inv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* a batched in-place transform over planes of L0 x L1 x L2 (leading axes
 * of length 1 dropped: rank 1-3), its work area left to the caller
 * (*work: its bytes); *have once *h exists */
static cufftResult cf_plan_many(cufftHandle *h, int *have, const cfg &g, cufftType t,
                                int64_t batch, size_t *work) {
    int first = 0;
    while (first < 2 && g.L[first] == 1) first++;
    const int rank = 3 - first;
    int dims[3], re[3], ce[3];
    for (int a = first; a < 3; a++) {
        dims[a - first] = re[a - first] = ce[a - first] = (int)g.L[a];
    }
    re[rank - 1] = (int)g.ld;            /* reals: the last axis padded */
    ce[rank - 1] = (int)(g.L[2] / 2 + 1); /* complex */
    const int nr = (int)g.nr, nc = (int)(g.nr / 2);
    cufftResult r = cufftCreate(h);
    if (r != CUFFT_SUCCESS) return r;
    *have = 1;
    if ((r = cufftSetAutoAllocation(*h, 0)) != CUFFT_SUCCESS) return r;
    if (t == CUFFT_R2C)
        return cufftMakePlanMany(*h, rank, dims, re, 1, nr, ce, 1, nc, t, (int)batch, work);
    return cufftMakePlanMany(*h, rank, dims, ce, 1, nc, re, 1, nr, t, (int)batch, work);
}

static tc_status cf_plan(const tc__problem *p, const tc__env *e, void **state) {
    cfstate *s = (cfstate *)calloc(1, sizeof *s);
    if (!s) return tc__error(TC_ERR_OUT_OF_MEMORY, "cuda.conv.fft: out of memory");
    pthread_mutex_init(&s->mu, NULL);
    char why[160] = "";
    if (!cf_geometry(p, &s->g, why, sizeof why, 1)) {
        cf_destroy(s);
        return tc__error(TC_ERR_NOT_APPLICABLE, "cuda.conv.fft: %s", why);
    }
    const cfg &g = s->g;
    if (g.fused) { /* no cuFFT plans, no work area */
        *state = s;
        return TC_OK;
    }
    size_t w[3] = {0, 0, 0};
    cufftResult r = cf_plan_many(&s->fx, &s->have_fx, g, CUFFT_R2C, g.nb * g.C, &w[0]);
    if (r == CUFFT_SUCCESS) r = cf_plan_many(&s->fw, &s->have_fw, g, CUFFT_R2C, g.K * g.Cg, &w[1]);
    if (r == CUFFT_SUCCESS) r = cf_plan_many(&s->inv, &s->have_inv, g, CUFFT_C2R, g.nb * g.K, &w[2]);
    s->work = w[0] > w[1] ? w[0] : w[1];
    if (w[2] > s->work) s->work = w[2];
    if (r != CUFFT_SUCCESS) {
        cf_destroy(s);
        return tc__error(r == CUFFT_ALLOC_FAILED ? TC_ERR_OUT_OF_MEMORY : TC_ERR_BACKEND,
                         "cuda.conv.fft: cufftPlanMany failed: %s (%d)", tc__cu_cufft_str((int)r), (int)r);
    }
    *state = s;
    return TC_OK;
}

/* the frequency-domain sum of a chunk of nbc images, in the form g.tile */
static tc_status cf_product(const cfg &g, const float *Xs, const float *V, float *Ys, int64_t nbc,
                            cudaStream_t st) {
    tc_status ms = TC_OK;
#define CF_MUL(i, M)                                                                               \
    if (g.tile == i) ms = cf_mul_launch<M>(g, (const float2 *)Xs, (const float2 *)V, (float2 *)Ys, nbc, st);
    CF_TILES(CF_MUL)
#undef CF_MUL
    if (g.tile == 2) {
        const int64_t blocks = tc__cu_div_up(g.nr / 2, 256) * tc__cu_div_up(g.Kg, CF_KB) * g.G *
                               tc__cu_div_up(nbc, CF_NB);
        k_cf_mul_direct<<<(unsigned)blocks, 256, 0, st>>>((const float2 *)Xs, (const float2 *)V,
                                                           (float2 *)Ys, g, nbc);
    }
    if (ms != TC_OK) return ms;
    TC_CU_LAUNCH("cuda.conv.fft multiply");
    return TC_OK;
}

/* ---- the fused form: one block a 64 x 64 plane, its transform in shared
 * memory (cuda_fft64.h), the boundary extension, the weights' scatter and
 * the crop in the same kernel; 34 KB of shared memory a block ---- */
#define CF64_PHASE(call)                                                                           \
    call;                                                                                          \
    __syncthreads()
__device__ __forceinline__ void cf64_forward(int tid, float2 *P, float2 *Q, const float2 *w) {
    F64_FORWARD(CF64_PHASE, P, Q, w);
}
/* the half spectrum (Q, cuFFT's R2C layout) to a plane of nc complex (the
 * padding past 64 x 33 zeroed) */
__device__ __forceinline__ void cf64_store(int tid, const float2 *Q, float2 *dst, int64_t nc) {
    for (int64_t i = tid; i < nc; i += F64_T) dst[i] = i < F64_NC ? Q[i] : make_float2(0.f, 0.f);
}

/* the input planes of images n0 .. n0 + nbc - 1 (block: image x channel):
 * e(r, c) = X(r - pad) through the padding mode for r < E, 0 elsewhere;
 * rows 2p and 2p + 1 packed as one complex row */
__global__ void __launch_bounds__(F64_T) k_cf_fx64(const float *__restrict__ x,
                                                   float2 *__restrict__ Xs, const cfg g, int64_t n0) {
    __shared__ float2 P[F64_NC], Q[F64_NC], w[64];
    const int tid = threadIdx.x;
    const int64_t pc = blockIdx.x, in1 = g.in[1], in2 = g.in[2];
    if (tid < 64) w[tid] = f64_twiddle(tid);
    const float *xp = x + (n0 * g.C + pc) * in1 * in2;
    const int e1 = (int)g.E[1], e2 = (int)g.E[2];
    for (int it = tid; it < 32 * 64; it += F64_T) {
        const int c = it & 63, p = it >> 6;
        const int64_t b = c < e2 ? tc__cu_bidx(c - g.pad[2], in2, g.mode) : -1;
        float v[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int r = 2 * p + h;
            v[h] = 0.f;
            if (r < e1 && c < e2) {
                const int64_t a = tc__cu_bidx(r - g.pad[1], in1, g.mode);
                v[h] = a < 0 || b < 0 ? g.cval : __ldg(xp + a * in2 + b);
            }
        }
        P[p * F64_ZP + c] = make_float2(v[0], v[1]);
    }
    __syncthreads();
    cf64_forward(tid, P, Q, w);
    cf64_store(tid, Q, Xs + pc * (g.nr / 2), g.nr / 2);
}

/* the weight spectra (block: output channel x input channel of its group):
 * the flipped, dilated, scaled taps at ((64 - r dil) mod 64) per axis */
__global__ void __launch_bounds__(F64_T) k_cf_fw64(const float *__restrict__ wt,
                                                   float2 *__restrict__ V, const cfg g, float scale) {
    __shared__ float2 P[F64_NC], Q[F64_NC], w[64];
    const int tid = threadIdx.x;
    const int64_t kc = blockIdx.x;
    if (tid < 64) w[tid] = f64_twiddle(tid);
    for (int i = tid; i < 32 * F64_ZP; i += F64_T) P[i] = make_float2(0.f, 0.f);
    __syncthreads();
    const int m1 = (int)g.msk[1], m2 = (int)g.msk[2];
    f64_taps(tid, P, wt + kc * m1 * m2, m1, m2, g.dil[1], g.dil[2], scale);
    __syncthreads();
    cf64_forward(tid, P, Q, w);
    cf64_store(tid, Q, V + kc * (g.nr / 2), g.nr / 2);
}

/* y[n0 + n, k, o] = c2r(Y[n, k])[o * stride] + bias[k] (block: image x
 * output channel) */
__global__ void __launch_bounds__(F64_T) k_cf_inv64(const float2 *__restrict__ Ys,
                                                    float *__restrict__ y,
                                                    const float *__restrict__ bias, const cfg g,
                                                    int64_t n0) {
    __shared__ float2 P[F64_NC], Q[F64_NC], w[64];
    const int tid = threadIdx.x;
    const int64_t nk = blockIdx.x;
    if (tid < 64) w[tid] = f64_twiddle(tid);
    const float2 *src = Ys + nk * (g.nr / 2);
    for (int i = tid; i < F64_NC; i += F64_T) P[i] = src[i];
    __syncthreads();
    F64_INVERSE(CF64_PHASE, P, Q, w);
    const float add = bias ? __ldg(bias + nk % g.K) : 0.f;
    const int o1n = (int)g.out[1], o2n = (int)g.out[2], s1 = (int)g.str[1], s2 = (int)g.str[2];
    float *dst = y + (n0 * g.K + nk) * (int64_t)o1n * o2n;
    for (int it = tid; it < o1n * o2n; it += F64_T) {
        const int o1 = it / o2n, o2 = it - o1 * o2n, r = o1 * s1;
        const float2 z = Q[(r >> 1) * F64_ZP + o2 * s2];
        dst[it] = ((r & 1) ? z.y : z.x) + add;
    }
}

/* the fused form's call: weight spectra, then per chunk the input
 * spectra, the product and the inverse with the crop */
static tc_status cf_run_fused(const tc__cu_bufs *b, const cfg &g, float *V, float *Xs, float *Ys,
                              const float *db) {
    k_cf_fw64<<<(unsigned)(g.K * g.Cg), F64_T, 0, b->s>>>((const float *)b->w, (float2 *)V, g,
                                                          (float)(1.0 / 4096.0));
    TC_CU_LAUNCH("cuda.conv.fft weights (fused)");
    for (int64_t n0 = 0; n0 < g.N; n0 += g.nb) {
        const int64_t nbc = g.N - n0 < g.nb ? g.N - n0 : g.nb;
        k_cf_fx64<<<(unsigned)(nbc * g.C), F64_T, 0, b->s>>>((const float *)b->x, (float2 *)Xs, g, n0);
        TC_CU_LAUNCH("cuda.conv.fft inputs (fused)");
        tc_status ms = cf_product(g, Xs, V, Ys, nbc, b->s);
        if (ms != TC_OK) return ms;
        k_cf_inv64<<<(unsigned)(nbc * g.K), F64_T, 0, b->s>>>((const float2 *)Ys, (float *)b->y, db, g,
                                                               n0);
        TC_CU_LAUNCH("cuda.conv.fft outputs (fused)");
    }
    return TC_OK;
}

static tc_status cf_run(const tc__args *a, const tc__cu_bufs *b, cfstate *s, float *V, float *Xs,
                        float *Ys, void *work, const float *db) {
    const cfg &g = s->g;
    if (g.fused) return cf_run_fused(b, g, V, Xs, Ys, db);
    CF_FFT(cufftSetStream(s->fx, b->s));
    CF_FFT(cufftSetStream(s->fw, b->s));
    CF_FFT(cufftSetStream(s->inv, b->s));
    /* one work area for the three: their transforms run one after
     * another on the stream */
    CF_FFT(cufftSetWorkArea(s->fx, work));
    CF_FFT(cufftSetWorkArea(s->fw, work));
    CF_FFT(cufftSetWorkArea(s->inv, work));
    /* the weight spectra */
    const int64_t nw = g.K * g.Cg * g.nr;
    TC_CU(cudaMemsetAsync(V, 0, (size_t)nw * sizeof(float), b->s));
    const double Lp = (double)(g.L[0] * g.L[1] * g.L[2]);
    k_cf_scatter<<<cf_blocks(g.K * g.Cg * g.msk[0] * g.msk[1] * g.msk[2]), 256, 0, b->s>>>(
        (const float *)b->w, V, g, (float)(1.0 / Lp));
    TC_CU_LAUNCH("cuda.conv.fft scatter");
    CF_FFT(cufftExecR2C(s->fw, V, (cufftComplex *)V));
    for (int64_t n0 = 0; n0 < g.N; n0 += g.nb) {
        const int64_t nbc = g.N - n0 < g.nb ? g.N - n0 : g.nb;
        /* a short last chunk (N > nb) runs the chunk's batch: its extra
         * planes hold an earlier chunk's data, never read (k_cf_mul and
         * k_cf_crop stop at nbc images) */
        const int bch = (int)tc__cu_div_up(g.L[0] * g.L[1], CF_ROWS),
                  cch = (int)tc__cu_div_up(g.out[0] * g.out[1], CF_ROWS);
        k_cf_build<<<(unsigned)(nbc * g.C * bch), 256, 0, b->s>>>((const float *)b->x, Xs, g, n0,
                                                                   bch);
        TC_CU_LAUNCH("cuda.conv.fft build");
        CF_FFT(cufftExecR2C(s->fx, Xs, (cufftComplex *)Xs));
        tc_status ms = cf_product(g, Xs, V, Ys, nbc, b->s);
        if (ms != TC_OK) return ms;
        CF_FFT(cufftExecC2R(s->inv, (cufftComplex *)Ys, Ys));
        k_cf_crop<<<(unsigned)(nbc * g.K * cch), 256, 0, b->s>>>(Ys, (float *)b->y, db, g, n0,
                                                                  cch);
        TC_CU_LAUNCH("cuda.conv.fft crop");
    }
    return TC_OK;
}

/* bytes of a call's spectra, rounded up to 256 */
static size_t cf_spectra(const cfg &g) {
    const size_t n = (size_t)((g.K * g.Cg + g.nb * (g.C + g.K)) * g.nr) * sizeof(float);
    return (n + 255) / 256 * 256;
}
/* device scratch, exactly (cf_plan always makes the state): the staged
 * bias, the spectra, the work area */
static size_t cf_device_ws(const tc__problem *p, const tc__env *e, const void *state) {
    const cfstate *s = (const cfstate *)state;
    if (!s) return 0;
    return (p->has_bias ? (size_t)p->K * sizeof(float) : 0) + cf_spectra(s->g) + s->work;
}

static tc_status cf_launch(const tc__args *a, const tc__cu_bufs *b) {
    cfstate *s = (cfstate *)a->state;
    const cfg &g = s->g;
    const float *db = NULL;
    void *own = NULL, *ws = NULL;
    tc_status st = tc__cu_conv_bias(a, b->s, &db, &own);
    /* the weight spectra, a chunk's input and output spectra, then the
     * cuFFT work area at a 256-byte boundary (cf_spectra) */
    const size_t nv = (size_t)(g.K * g.Cg * g.nr), nx = (size_t)(g.nb * g.C * g.nr);
    if (st == TC_OK) st = tc__cu_alloc(&ws, cf_spectra(g) + s->work, b->s);
    if (st == TC_OK) {
        /* Every buffer a call writes (the spectra, the cuFFT work area) is
         * its own, from the pool on its stream, so a call only enqueues.
         * The cuFFT form's handles are the plan's: their stream and work
         * area are set and the transforms enqueued under the mutex, so
         * that concurrent callers do not interleave those settings; what
         * a transform reads of its plan once enqueued is read-only. The
         * fused form holds no handle and takes no lock. */
        float *V = (float *)ws;
        if (!g.fused) pthread_mutex_lock(&s->mu);
        st = cf_run(a, b, s, V, V + nv, V + nv + nx, (char *)ws + cf_spectra(g), db);
        if (!g.fused) pthread_mutex_unlock(&s->mu);
    }
    tc__cu_free(ws, b->s);
    tc__cu_free(own, b->s);
    return st;
}

static tc_status cf_execute(const tc__args *a) {
    if (!a->state) return tc__error(TC_ERR_INTERNAL, "cuda.conv.fft: executed without a plan");
    return tc__cu_run(a, NULL, 1, cf_launch);
}

} // namespace

TC__CU_SOLVER(tc__solver_cuda_conv_fft) = {
    "cuda.conv.fft", TC_BACKEND_CUDA, TC_OP_CONV,
    "FFT conv layer through cuFFT (fp32): batched in-place R2C of the boundary-extended inputs and of the flipped, dilated weights, a frequency-domain sum over each group's channels (a complex GEMM per frequency: shared-memory tiles of 16 images x 64 output channels or 4 x 32, or a thread a frequency where the channels are few), batched C2R, strided crop with bias; any stride, dilation, groups, padding mode, 1D-3D; for large masks.",
    tc__cu_available, cf_applicable, cf_estimate, NULL, cf_plan, cf_destroy, cf_execute,
    NULL, NULL, cf_device_ws, 0, tc__cu_report_conv_fft,
};

void tc__cu_report_conv_fft(tc__cu_report *r) {
    tc__cu_report_kernel(r, "cuda.conv.fft scatter", (const void *)k_cf_scatter, 256, 0);
    tc__cu_report_kernel(r, "cuda.conv.fft build", (const void *)k_cf_build, 256, 0);
    tc__cu_report_kernel(r, "cuda.conv.fft multiply (16 images x 64 channels)",
                         (const void *)k_cf_mul<cf_t0>, 256, cf_t0::SMEM);
    tc__cu_report_kernel(r, "cuda.conv.fft multiply (4 images x 32 channels)",
                         (const void *)k_cf_mul<cf_t1>, 256, cf_t1::SMEM);
    tc__cu_report_kernel(r, "cuda.conv.fft multiply (direct)", (const void *)k_cf_mul_direct, 256,
                         0);
    tc__cu_report_kernel(r, "cuda.conv.fft crop", (const void *)k_cf_crop, 256, 0);
    tc__cu_report_kernel(r, "cuda.conv.fft fused 64x64 inputs", (const void *)k_cf_fx64, F64_T, 0);
    tc__cu_report_kernel(r, "cuda.conv.fft fused 64x64 weights", (const void *)k_cf_fw64, F64_T, 0);
    tc__cu_report_kernel(r, "cuda.conv.fft fused 64x64 outputs", (const void *)k_cf_inv64, F64_T, 0);
}
