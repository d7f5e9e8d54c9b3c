/*
 * igemm_tiled.cu - the tiled implicit GEMM of cuda.conv.igemm and
 * cuda.conv.igemm-tf32: no im2col buffer; a BM x 128 block tile of
 * C[k][q] (BM = 128, or 64 when K/G <= 64, or 32 when K/G <= 32), BK = 16,
 * a 4-stage cp.async pipeline.
 *
 * A (the weights) is copied row-major into shared memory (16-byte copies
 * when C/G*R % 4 == 0). B (the im2col matrix) is gathered with 4-byte
 * cp.async: each thread owns one column q for the whole block (its image
 * pointer and window origin decomposed once), the reduction row l = (c,
 * tap) is split once per k tile, and each tap's (dr0, dr1, dr2, offset)
 * comes from a per-block tap table in shared memory (gather.cuh). With
 * zero padding and R < 64 taps a second table holds every reduction row's
 * (channel + tap offset, tap bit) and each thread its column's in-bounds
 * taps as a bit mask: an element is a table load, an AND, a select and a
 * zero-filling cp.async. Otherwise in-bounds elements are one unsigned
 * compare per axis and one cp.async; the rest take the edge path: cval
 * (zeros) stored directly, or the index remapped per axis for reflect /
 * replicate / circular and copied. 1x1 stride-1 layers with P % 4 == 0
 * are a plain GEMM per image: 16-byte copies of 4 consecutive columns.
 * Layers with too few output tiles to fill the GPU (3x3 512 @7) split the
 * reduction over blockIdx.z (split-K: partial sums in a pooled device
 * buffer, then k_igemm_splitk_sum adds them and the bias and writes NCHW;
 * deterministic).
 *
 * The inner product (template F, conv_internal.h):
 *  IG_F_FFMA    fp32 FFMA, 8 x 8 outputs per thread (two 4-wide quadrants
 *               BM/2 and 64 apart), A pitch 20.
 *  IG_F_MMA     TF32 mma.sync m16n8k8 (operands rounded to TF32 by an
 *               integer add, fp32 accumulation), warp tile 64 x 32 (32 x
 *               32 for the 32-row tile); the reduction rows permuted
 *               within each k8 step so that the A fragments are LDS.64 and
 *               all fragment loads are conflict-free (A pitch 24, B pitch
 *               132).
 *  IG_F_MMA_RS  as IG_F_MMA; with zero padding and the single-bit row
 *               table (R <= 32) B is register-staged: a thread loads four
 *               consecutive columns of its rows with predicated LDG (one
 *               table entry per row for the four), one k tile ahead,
 *               rounds them to TF32 and stores them with one STS.128 (the
 *               B fragments need no rounding). The other loaders are
 *               IG_F_MMA's.
 *  IG_F_WGMMA   TF32 on Hopper's wgmma (the file's sm_90a image): the
 *               warpgroup's M is 64 output positions, its N the BM output
 *               channels; both operands are read by the tensor cores from
 *               shared memory stored as 8 x 4 core matrices (cv_cm), the
 *               im2col tile position-major. The weights are truncated to
 *               TF32 rather than rounded; with zero padding and the
 *               single-bit row table the im2col tile is register-staged
 *               and rounded (else gathered as IG_F_MMA's), with reflect /
 *               replicate / circular gathered by cp.async and truncated.
 *               wgmma.wait_group 1: a tile's MMAs run while the next tile
 *               is loaded, two of the four stages in flight. It measured
 *               0.88-1.13x of IG_F_MMA_RS on the H100, faster only on the
 *               32-row tile (3D 3x3x3 32 @32); the register-staged gather,
 *               one tile ahead, bounds both, not the MMA. A variant with
 *               every B loader by cp.async and 6 stages (B truncated) ran
 *               0.73-0.97x of IG_F_MMA_RS.
 *  X3 (cuda.conv.igemm-3xtf32, with IG_F_MMA / IG_F_MMA_RS): the same
 *               loaders with B stored unrounded; each A and B fragment is
 *               split once as it is loaded (ig_tf32_split, cuda_hopper.h)
 *               into TF32 hi and lo parts, then used for all its products:
 *               three m16n8k8 MMAs (lo hi, hi lo, hi hi) where TF32 has
 *               one. A k tile's MMAs sum into their own accumulators from
 *               zero, added into the tile's fp32 sums after each k tile
 *               (cuda.gemm.wgmma-3xtf32's promotion: a model of truncating
 *               tensor-core accumulation, docs/solvers/cuda-gemm.md). The
 *               128-row tile at one block an SM (128 + 64 accumulators),
 *               the 64-row one (the same warp tile, so the same registers) at
 *               two: at three (168 registers) ptxas spilled 88 bytes in
 *               the register-staged form.
 * BK 32 with 3 stages, and A rounded in shared memory once per stage, were
 * measured too and lost (docs/solvers/cuda-conv-igemm.md); BK and the stage count stay
 * parameters (ig_layout).
 */
#include "cuda/conv/gather.cuh"

namespace {

using namespace tc_conv;

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

template <bool B> struct ig_bool {
    static constexpr bool value = B;
};

template <int BM, bool TF32, int LM, int F, bool X3 = false>
__global__ void __launch_bounds__(BM == 32 ? 128 : 2 * BM,
                                  BM == 128 ? (X3 ? 1 : 2) : BM == 64 ? (X3 ? 2 : 3) : 4)
    k_igemm_tiled(const float *__restrict__ x, const float *__restrict__ w,
                  const float *__restrict__ bias, float *__restrict__ y,
                  float *__restrict__ part, const igp a) {
    constexpr bool VEC1 = LM == IG_1X1;
    constexpr int NT = BM == 32 ? 128 : 2 * BM;
    constexpr int TR = BM == 32 ? 4 : 8;            /* fp32: rows per thread */
    constexpr int MI = BM >= 64 ? 4 : BM / 16;      /* TF32: m16 tiles per warp */
    constexpr bool WG = F == IG_F_WGMMA;            /* the wgmma kernel */
    constexpr int BK = ig_layout<F>::BK, NST = ig_layout<F>::ST, AP = ig_layout<F>::AP,
                  BP = ig_layout<F>::BP;
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
        cv_fill_taps(taps, a, tid, NT);
        __syncthreads();
    }
    /* zero padding: the taps inside the input for this thread's column, a
     * bit each (tin below; R <= 64; a column past the end has b0 far out:
     * none); with a.ltab the reduction-row table (cv_fill_rows), so one
     * element costs a table load, a bit test, a select and the copy */
    int2 *ltab = reinterpret_cast<int2 *>(taps + a.R);
    if (LM == IG_ZEROS && a.ltab) {
        cv_fill_rows(ltab, taps, a, KT * BK, tid, NT);
        __syncthreads();
    }
    /* IG_F_MMA_RS: B register-staged (TF32, zero padding, a.ltab set by
     * the host): columns q0 + 4*lane .. +3, rows warp*RW .. +RW-1 of each
     * tile; per column the image pointer at the window origin and the
     * in-bounds taps */
    constexpr bool RS = F == IG_F_MMA_RS && LM == IG_ZEROS;
    /* IG_F_WGMMA: B (im2col) stored transposed, position-major, as core
     * matrices: element (reduction row r, position p) of a stage at
     * ig_bt(r, p); with zero padding register-staged (RSW: one position a
     * thread, a quad of rows at a time, rounded, STS.128) */
    constexpr bool RSW = F == IG_F_WGMMA && LM == IG_ZEROS;
    auto ig_bt = [](int r, int p) { return cv_cm<BK>(p, r); };
    constexpr int RW = BK / (NT / 32);
    const float *rp[RS ? 4 : 1];
    unsigned long long rt[RS ? 4 : 1];
    /* register staging (RS, RSW): column q's image pointer at its window
     * origin (*cp; x past the end) and its in-bounds taps, a bit each */
    auto col_taps = [&](int q, const float **cp) -> unsigned long long {
        *cp = x;
        if (q >= a.NP) return 0;
        const int n = q / a.P, p = q - n * a.P;
        const int o2 = p % a.out2, u = p / a.out2;
        const int o1 = u % a.out1, o0 = u / a.out1;
        const int c0 = o0 * a.s0 - a.p0, c1 = o1 * a.s1 - a.p1, c2 = o2 * a.s2 - a.p2;
        *cp = x + ((int64_t)n * a.C + (int64_t)g * a.Cg) * a.plane + ((c0 * a.in1 + c1) * a.in2 + c2);
        return cv_tap_mask(taps, a, c0, c1, c2);
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
            /* X3: unrounded (split as the fragments are loaded) */
            uint4 u = X3 ? make_uint4(__float_as_uint(rv[i][0]), __float_as_uint(rv[i][1]),
                                      __float_as_uint(rv[i][2]), __float_as_uint(rv[i][3]))
                         : make_uint4(ig_tf32(rv[i][0]), ig_tf32(rv[i][1]), ig_tf32(rv[i][2]),
                                      ig_tf32(rv[i][3]));
            *reinterpret_cast<uint4 *>(Bs + ((tid >> 5) * RW + i) * BP + (tid & 31) * 4) = u;
        }
    };
    /* RSW (wgmma, zero padding, the single-bit row table): position
     * q0 + tid % 128, quads of rows tid / 128 + j * (NT / 128) */
    constexpr int QN = RSW ? (BK / 4) / (NT / IG_BN) : 1;
    const float *rpw = x;
    /* R <= 32 (the single-bit table): the mask fits 32 bits */
    const unsigned rtw = RSW ? (unsigned)col_taps(q0 + tid % IG_BN, &rpw) : 0u;
    auto load_bw = [&](int kt, float (&rv)[QN][4]) {
        const int2 *lt = ltab + kt * BK + (tid / IG_BN) * 4;
#pragma unroll
        for (int j = 0; j < QN; j++)
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int2 e = lt[j * (NT / IG_BN) * 4 + i];
                const bool ok = (rtw & (unsigned)e.y) != 0;
                rv[j][i] = ig_ldg_if(rpw + e.x, ok);
            }
    };
    auto store_bw = [&](int st, const float (&rv)[QN][4]) {
        float *Bs = smem + st * STF + BM * AP;
#pragma unroll
        for (int j = 0; j < QN; j++) {
            const int kq = tid / IG_BN + j * (NT / IG_BN);
            *reinterpret_cast<uint4 *>(Bs + ig_bt(kq * 4, tid % IG_BN)) =
                make_uint4(ig_tf32(rv[j][0]), ig_tf32(rv[j][1]), ig_tf32(rv[j][2]), ig_tf32(rv[j][3]));
        }
    };
    unsigned long long tin = 0;
    if (LM == IG_ZEROS && a.R <= 64 && !RS) tin = cv_tap_mask(taps, a, b0, b1, b2);
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
    /* the wgmma form stores A as core matrices (ig_cm): 16-byte copies of row
     * tid%8 + 8*(tid/(8*QR)), quad (tid/8)%QR, so a warp fills 4 whole core
     * matrices (conflict-free) */
    const int arow = WG ? (a.avec ? (tid & 7) + 8 * (tid / (8 * QR)) : 0)
                            : a.avec ? tid / QR : tid / BK;
    const int akc = WG ? (a.avec ? ((tid >> 3) % QR) * 4 : 0)
                           : a.avec ? (tid % QR) * 4 : tid % BK;
    const int aoff = arow * a.Rl + akc;
    /* wgmma: element (row r, reduction k) of a stage's A tile */
    auto ig_cm = [&](int r, int k) { return cv_cm<BK>(r, k); };

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
        if (RS || RSW) {
            /* B: load_b / store_b, load_bw / store_bw */
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

    /* stages in flight: NST - 1, wgmma NST - 2 (the slot a load overwrites
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
        float rwv[QN][4];
        if (RSW && nkt > 0) {
            load_bw(kt0, rwv);
            store_bw(0, rwv);
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
            if (RSW && kt + 1 < nkt) load_bw(kt0 + kt + 1, rwv);
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
            if (RSW && kt + 1 < nkt) store_bw((kt + 1) % NST, rwv);
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
            if constexpr (X3) {
                /* 3xTF32: the k tile's products into tcc from zero, then
                 * into acc; B's fragments split once a k8 step, each A
                 * fragment once, the small products first */
                float tcc[MI][4][4];
#pragma unroll
                for (int i = 0; i < MI; i++)
#pragma unroll
                    for (int j = 0; j < 4; j++)
#pragma unroll
                        for (int e = 0; e < 4; e++) tcc[i][j][e] = 0.f;
#pragma unroll
                for (int k8 = 0; k8 < BK / 8; k8++) {
                    unsigned bh[4][2], bl[4][2];
#pragma unroll
                    for (int ni = 0; ni < 4; ni++) {
                        const float *bp = Bs + (k8 * 8 + 2 * tq) * BP + wn * 32 + ni * 8 + gq;
                        ig_tf32_split(bp[0], bh[ni][0], bl[ni][0]);
                        ig_tf32_split(bp[BP], bh[ni][1], bl[ni][1]);
                    }
#pragma unroll
                    for (int mi = 0; mi < MI; mi++) {
                        const float *ap = As + (wm * 64 + mi * 16 + gq) * AP + k8 * 8 + 2 * tq;
                        const float2 lo = *reinterpret_cast<const float2 *>(ap);
                        const float2 hi = *reinterpret_cast<const float2 *>(ap + 8 * AP);
                        unsigned ah[4], al[4];
                        ig_tf32_split(lo.x, ah[0], al[0]);
                        ig_tf32_split(hi.x, ah[1], al[1]);
                        ig_tf32_split(lo.y, ah[2], al[2]);
                        ig_tf32_split(hi.y, ah[3], al[3]);
#pragma unroll
                        for (int ni = 0; ni < 4; ni++) {
                            ig_mma(tcc[mi][ni], al, bh[ni]);
                            ig_mma(tcc[mi][ni], ah, bl[ni]);
                            ig_mma(tcc[mi][ni], ah, bh[ni]);
                        }
                    }
                }
#pragma unroll
                for (int i = 0; i < MI; i++)
#pragma unroll
                    for (int j = 0; j < 4; j++)
#pragma unroll
                        for (int e = 0; e < 4; e++) acc[i][j][e] += tcc[i][j][e];
            } else {
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
                        /* register-staged: rounded when stored */
                        bf[ni][0] = RS ? __float_as_uint(bp[0]) : ig_tf32(bp[0]);
                        bf[ni][1] = RS ? __float_as_uint(bp[BP]) : ig_tf32(bp[BP]);
                    }
                }
#pragma unroll
                for (int mi = 0; mi < MI; mi++)
#pragma unroll
                    for (int ni = 0; ni < 4; ni++) ig_mma(acc[mi][ni], af[mi], bf[ni]);
            }
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

/* split-K: y = bias + sum over splits, NCHW */
__global__ void __launch_bounds__(256)
    k_igemm_splitk_sum(const float *__restrict__ part, const float *__restrict__ bias,
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

} // namespace

namespace tc_conv {

const int ig_bm[3] = {128, 64, 32};
const int ig_kbk[IG_NKIND] = {ig_layout<0>::BK, ig_layout<1>::BK, ig_layout<2>::BK,
                              ig_layout<3>::BK};

/* a block's dynamic shared memory: the stages, then the tap table (and
 * the reduction-row table, added by the caller) */
static size_t ig_smem(int bm, int taps, int kind) {
    static const int st[IG_NKIND] = {ig_layout<0>::ST, ig_layout<1>::ST, ig_layout<2>::ST,
                                     ig_layout<3>::ST};
    static const int ap[IG_NKIND] = {ig_layout<0>::AP, ig_layout<1>::AP, ig_layout<2>::AP,
                                     ig_layout<3>::AP};
    static const int bp[IG_NKIND] = {ig_layout<0>::BP, ig_layout<1>::BP, ig_layout<2>::BP,
                                     ig_layout<3>::BP};
    return (size_t)st[kind] * (bm * ap[kind] + ig_kbk[kind] * bp[kind]) * sizeof(float) +
           (size_t)taps * sizeof(int4);
}

typedef void (*ig_kernel)(const float *, const float *, const float *, float *, float *, const igp);

/* kernel [tile: BM 128, 64, 32][kind][loader] */
#define IG_K3(BM, TF, F)                                                                       \
    {k_igemm_tiled<BM, TF, 0, F>, k_igemm_tiled<BM, TF, 1, F>, k_igemm_tiled<BM, TF, 2, F>}
/* IG_F_MMA_RS differs from IG_F_MMA only with zero padding (the other
 * loaders are IG_F_MMA's) */
#define IG_KRS(BM)                                                                             \
    {k_igemm_tiled<BM, true, 0, IG_F_MMA_RS>, k_igemm_tiled<BM, true, 1, IG_F_MMA>,            \
     k_igemm_tiled<BM, true, 2, IG_F_MMA>}
#define IG_K4(BM)                                                                              \
    {IG_K3(BM, false, IG_F_FFMA), IG_K3(BM, true, IG_F_MMA), IG_KRS(BM),                       \
     IG_K3(BM, true, IG_F_WGMMA)}
static const ig_kernel ig_tab[3][IG_NKIND][3] = {IG_K4(128), IG_K4(64), IG_K4(32)};
/* the 3xTF32 kernels (cuda.conv.igemm-3xtf32) [tile][IG_F_MMA, IG_F_MMA_RS][loader] */
#define IG_KX3(BM)                                                                             \
    {{k_igemm_tiled<BM, true, 0, IG_F_MMA, true>, k_igemm_tiled<BM, true, 1, IG_F_MMA, true>,  \
      k_igemm_tiled<BM, true, 2, IG_F_MMA, true>},                                             \
     {k_igemm_tiled<BM, true, 0, IG_F_MMA_RS, true>, k_igemm_tiled<BM, true, 1, IG_F_MMA, true>, \
      k_igemm_tiled<BM, true, 2, IG_F_MMA, true>}}
static const ig_kernel ig_tab3[3][2][3] = {IG_KX3(128), IG_KX3(64), IG_KX3(32)};
#undef IG_KX3
/* kernel [tile][kind][loader] of the TF32 (x3 = 0) or 3xTF32 solver (kind
 * IG_F_MMA or IG_F_MMA_RS there) */
static ig_kernel ig_kern(int bi, int kind, int lm, int x3) {
    return x3 ? ig_tab3[bi][kind == IG_F_MMA_RS][lm] : ig_tab[bi][kind][lm];
}
#undef IG_K4
#undef IG_KRS
#undef IG_K3

/* Resident blocks per SM of a kernel at the largest dynamic shared memory
 * it is launched with (the tap table at IG_TAPMAX), set up once. */
static int ig_occ_cache[IG_NDEV][2][3][IG_NKIND][3]; /* per device, as the attribute */
tc_status ig_prepare(int bi, int kind, int lm, int *occ, int x3) {
    int dev = 0;
    TC_CU(cudaGetDevice(&dev));
    int *slot = dev >= 0 && dev < IG_NDEV ? &ig_occ_cache[dev][x3 != 0][bi][kind][lm] : NULL;
    int v = slot ? __atomic_load_n(slot, __ATOMIC_ACQUIRE) : 0;
    if (v > 0) {
        *occ = v;
        return TC_OK;
    }
    const void *k = (const void *)ig_kern(bi, kind, lm, x3);
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

/* The tiled kernel for a layer: kind (the form) and loader lm chosen by
 * ig_run, g with its vector flags set */
tc_status ig_run_tiled(const tc__args *a, const tc__cu_bufs *b, igp g, int tf32, int kind,
                       int lm) {
    const float *x = (const float *)b->x, *w = (const float *)b->w;
    float *y = (float *)b->y;
    const int bk = ig_kbk[kind];
    int occ[3] = {0, 0, 0};
    ig_shape sh;
    tc_status st = ig_pick_shape(g, tf32, kind, lm, occ, &sh);
    if (st) return st;
    const tc__cu_device *d = tc__cu_dev();
    /* the wgmma form where it measured faster than the register-staged
     * mma.sync on the H100: the 32-row tile with zero padding (3D 3x3x3 32
     * @32 b8: 0.276-0.279 ms against 0.310-0.316 in four calls;
     * docs/solvers/cuda-conv-igemm.md); not when TILECONV_CUDA_CONV_TF32_KERNEL forces a kernel */
    const int x3 = tf32 == IG_3XTF32;
    if (!x3 && kind == IG_F_MMA_RS && sh.bi == 2 && lm == IG_ZEROS && !tc__knob_get(TC__KNOB_CUDA_CONV_TF32_KERNEL) &&
        cv_wgmma_ok()) {
        int ow = 0;
        if (ig_prepare(2, IG_F_WGMMA, lm, &ow) == TC_OK && ow > 0) kind = IG_F_WGMMA;
    }
    const int bm = ig_bm[sh.bi], S = sh.S;
    g.ktps = sh.ktps;
    ig_kernel k = ig_kern(sh.bi, kind, lm, x3);
    /* the reduction-row table (within the tap table's IG_TAPMAX room) */
    const int KTt = (int)tc__cu_div_up(g.Rl, bk);
    g.ltab = lm == IG_ZEROS && g.R < 64 && KTt * bk <= IG_LTMAX && !tc__knob_get(TC__KNOB_CUDA_CONV_NO_ROW_TABLE)
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
    /* the register-staged forms stage B through registers only with the
     * single-bit row table (R <= 32; with R < 64 it measured slower on
     * conv1); else IG_F_MMA, the same shared-memory layout (its attribute
     * set up here) */
    if (kind >= IG_F_MMA_RS && lm == IG_ZEROS && g.ltab != 1) {
        int o1 = 0;
        if ((st = ig_prepare(sh.bi, IG_F_MMA, lm, &o1, x3))) return st;
        k = ig_kern(sh.bi, IG_F_MMA, lm, x3);
        /* the wgmma form's stages are smaller than IG_F_MMA's: IG_F_MMA's
         * size (same BK) */
        smem = ig_smem(bm, g.R, IG_F_MMA) + (g.ltab ? (size_t)KTt * bk * 8 : 0);
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
        k_igemm_splitk_sum<<<(unsigned)tc__cu_div_up(total, 256), 256, 0, b->s>>>(
            (const float *)part, db, y, g, S);
        e = cudaGetLastError();
    }
    tc__cu_free(part, b->s);
    tc__cu_free(own, b->s);
    if (e != cudaSuccess) return tc__cu_fail(e, "launch k_igemm_tiled", __FILE__, __LINE__);
    return TC_OK;
}

/* the tiled kernels at their occupancy set-up's shared memory (ig_prepare):
 * fp32 the FFMA form and the split-K sum, TF32 the tensor-core forms */
void ig_report_tiled(tc__cu_report *r, int tf32) {
    static const char *const kn[IG_NKIND] = {"ffma", "mma", "mma-rs", "wgmma"};
    static const char *const ln[3] = {"zeros", "remap", "1x1"};
    const int x3 = tf32 == IG_3XTF32;
    for (int bi = 0; bi < 3; bi++)
        for (int kind = tf32 ? IG_F_MMA : IG_F_FFMA;
             kind <= (x3 ? IG_F_MMA_RS : tf32 ? IG_F_WGMMA : IG_F_FFMA); kind++)
            for (int lm = 0; lm < 3; lm++) {
                if (kind == IG_F_MMA_RS && lm != IG_ZEROS) continue; /* IG_F_MMA's */
                const void *k = (const void *)ig_kern(bi, kind, lm, x3);
                const int bm = ig_bm[bi];
                (void)cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)ig_smem(bm, lm == IG_1X1 ? 0 : IG_TAPMAX, kind));
                (void)cudaGetLastError();
                char name[96];
                snprintf(name, sizeof name, "%s tiled %dx128 %s %s",
                         x3 ? "cuda.conv.igemm-3xtf32" : tf32 ? "cuda.conv.igemm-tf32" : "cuda.conv.igemm",
                         bm, kn[kind], ln[lm]);
                tc__cu_report_kernel(r, name, k, ig_threads(bm),
                                     ig_smem(bm, lm == IG_1X1 ? 0 : 32, kind));
            }
    if (!tf32)
        tc__cu_report_kernel(r, "cuda.conv.igemm split-k sum", (const void *)k_igemm_splitk_sum,
                             256, 0);
}

} // namespace tc_conv
