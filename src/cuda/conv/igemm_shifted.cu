/*
 * igemm_shifted.cu - cuda.conv.igemm-tf32 on stride-1 layers as shifted
 * views of a shared-memory patch, on Hopper's wgmma (the sm_90a image).
 *
 * The call copies x into xT (N, spatial, C) and the weights into wT (K,
 * tap, CKP), CKP = Cg rounded up to 32 with zeros, both rounded to TF32
 * (k_igemm_channels_last, one launch). A block computes TH output rows of
 * one output plane (of one image) over the whole padded width PW, M = TH *
 * PW <= 64 * MT positions (the columns past the output width are computed
 * and dropped), for BM output channels. For each chunk of 32 channels it
 * loads the input patch those rows read, (m0-1)*d0+1 planes x TH+(m1-1)*d1
 * rows x PW columns, once, one pixel's 32 channels a 128-byte row in the
 * 128-byte swizzled layout (TILECONV_CUDA_CONV_SHIFTED_SWIZZLE=0: no-swizzle core
 * matrices, [channel quad][pixel][4]): the im2col tile of tap t is then
 * the same patch shifted by the tap's offset in pixels, so its wgmma
 * descriptor is the patch's plus 128 bytes a pixel. Every input pixel
 * crosses L2 once per block instead of once per tap; every padding mode is
 * a per-pixel map (zeros: zero-fill).
 *
 * Two forms of the copies (template TMA):
 *  cp.async (TILECONV_CUDA_CONV_TF32_KERNEL=7): weights through a ring of 4 stages
 *    (TILECONV_CUDA_CONV_SHIFTED_STAGES), two in flight; the patch in two buffers, the
 *    next chunk's loaded with the first weight stage of that chunk. On the
 *    H100 (docs/solvers/cuda-conv-igemm.md) at 0.5-1.15x of the tiled kernel: faster
 *    only at 3x3 256 @14, where cuda.conv.winograd-f2-tf32 is faster still;
 *    ncu at 128 @28: one block per SM, 6% occupancy, no eligible warp 75%
 *    of the cycles.
 *  TMA (the default where sv_default takes the layer; TILECONV_CUDA_CONV_TF32_KERNEL=8
 *    forces it): the copies issued by a producer warp as tensor-memory-
 *    accelerator boxes (the patch a 5D box of xT with zeros outside, the
 *    weight stage a 2D box of wT, both 128-byte swizzled by the copy
 *    engine into the same layout) and mbarriers in place of cp.async
 *    groups and block barriers: the consumer warpgroups wait only for
 *    their stage's bytes and free it when its wgmmas are done. Zero
 *    padding, groups == 1 or Cg % 32 == 0 (a box reads 32 channels); other
 *    layers take the cp.async form.
 *
 * The 3xTF32 form (template X3, cuda.conv.igemm-3xtf32; TMA copies, zero
 * padding, the swizzled layout): the copies hold x and w split once into
 * TF32 hi and lo parts (ig_tf32_split, cuda_hopper.h), the lo parts after
 * the hi ones (xT's lo image n at image N + n, wT's lo row k at row K + k,
 * so the same two tensor maps reach both); a weight stage and a patch
 * buffer each hold a hi and a lo tile (twice the shared memory, one block
 * an SM), and every k8 step is three wgmmas (patch lo x weights hi, hi x
 * lo, hi x hi) where TF32 has one. A stage's wgmmas sum into their own
 * accumulators from zero, added into the fp32 sums once they are done
 * (wgmma.wait_group 0 every stage, then the slot is freed): the promotion
 * of cuda.gemm.wgmma-3xtf32 (docs/solvers/cuda-gemm.md).
 */
#include "cuda/conv/gather.cuh"

#include <math.h>

namespace {

using namespace tc_conv;

#define SV_ST_CPASYNC 4 /* the cp.async form's weight stages */
/* the TMA form's stages: three where the grid has more blocks than SMs
 * (two blocks then share an SM: 3x3 128 @28 0.072 ms against 0.081 with
 * four stages and one block an SM), else four (256 @14, 128 blocks: 0.071
 * against 0.075 with three) */
#define SV_ST_TMA_MANY 3
#define SV_ST_TMA_FEW 4
#define SV_PPT 8 /* patch pixels a thread at most: NPIXA <= 128 * SV_PPT */

/* The channels-last copies in one launch (one launch less on the host's
 * path before the main kernel): blocks below nxb copy x (N, C, S) -> xt
 * (N, S, C) by 32 x 32 tiles (tx tiles along S, ty along C), rounded to
 * TF32; the blocks after them repack w (rows, Cg, R) -> wt (rows, R, CKP),
 * zeros for c >= Cg, rounded: one thread a (row, channel), its R taps */
/* xlo, wlo (3xTF32): the lo parts' offsets from xt and wt, each value
 * split into hi (at xt, wt) and lo (ig_tf32_split); 0: one copy rounded to TF32 */
__global__ void __launch_bounds__(256) k_igemm_channels_last(const float *__restrict__ x,
                                                             float *__restrict__ xt, int C, int S,
                                                             int tx, int ty, int64_t nxb,
                                                             const float *__restrict__ w,
                                                             float *__restrict__ wt, int64_t rows,
                                                             int Cg, int R, int CKP, int64_t xlo,
                                                             int64_t wlo) {
    __shared__ float tile[32][33];
    const int64_t bid = blockIdx.x;
    if (bid >= nxb) {
        const int64_t i = (bid - nxb) * 256 + threadIdx.x;
        if (i >= rows * CKP) return;
        const int c = (int)(i % CKP);
        const int64_t k = i / CKP;
        for (int t = 0; t < R; t++) {
            const float v = c < Cg ? w[(k * Cg + c) * R + t] : 0.f;
            const int64_t o = (k * R + t) * CKP + c;
            if (wlo) {
                unsigned h, l;
                ig_tf32_split(v, h, l);
                wt[o] = __uint_as_float(h);
                wt[o + wlo] = __uint_as_float(l);
            } else {
                wt[o] = c < Cg ? __uint_as_float(ig_tf32(v)) : 0.f;
            }
        }
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
        if (s0 + j < S && c0 + lx < C) {
            const int64_t o = base + (int64_t)(s0 + j) * C + c0 + lx;
            if (xlo) {
                unsigned h, l;
                ig_tf32_split(tile[lx][j], h, l);
                xt[o] = __uint_as_float(h);
                xt[o + xlo] = __uint_as_float(l);
            } else {
                xt[o] = __uint_as_float(ig_tf32(tile[lx][j]));
            }
        }
}
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

template <int BM, int MT, int LM, int TMA, int X3 = 0>
__global__ void __launch_bounds__((BM == 128 && !(TMA && MT == 1) ? 256 : 128) + 32 * TMA,
                                  TMA && !X3 ? 2 : 1)
    k_igemm_shifted(const float *__restrict__ x, const float *__restrict__ w,
                    const float *__restrict__ bias, float *__restrict__ y, const svp q,
                    const __grid_constant__ sv_maps tm) {
    const igp &a = q.a;
    /* two warpgroups for the 128-channel tile, each taking 64 of them
     * (on the H100: 0.118 against 0.134 ms at 3x3 128 @28, 0.151
     * against 0.25 at 512 @7; at 64 channels two warpgroups of 32 lost:
     * 0.19-0.27 against 0.15 ms at 64 @56) */
    /* the TMA form's 128-channel tile with one row tile: one warpgroup of
     * m64n128 wgmmas (two of m64n64 move 128 shared bytes a clock:
     * sv_default) */
    constexpr int NT = BM == 128 && !(TMA && MT == 1) ? 256 : 128, NWG = NT / 128, BN = BM / NWG;
    constexpr int BK = SV_BK, QR = BK / 4;
    const int NST = q.nst, PD = NST - 2;
    constexpr int WS = BM * BK;          /* a weight stage (floats) */
    constexpr int WPT = BM * QR / NT;    /* weight copies a thread */
    constexpr int PPT = (SV_PPT * 128 + NT - 1) / NT; /* patch pixels a thread at most */
    extern __shared__ float4 ig_smem4[];
    float *smem = reinterpret_cast<float *>(ig_smem4);
    /* a 1024-byte boundary (the swizzle's period; the host adds 1 KiB) */
    smem += ((1024 - ((unsigned)__cvta_generic_to_shared(smem) & 1023)) & 1023) / 4;
    const bool SW = X3 || q.swz != 0;
    /* X3: a weight slot and a patch buffer each a hi then a lo tile */
    constexpr int XS = X3 ? 2 : 1;
    static_assert(!X3 || (TMA && LM == IG_ZEROS), "3xTF32: the TMA form with zero padding");
    float *patch = smem + NST * WS * XS; /* two buffers of XS x NPIXA * BK floats */
    /* TMA: full[SV_MAXST], empty[SV_MAXST] */
    uint64_t *full = reinterpret_cast<uint64_t *>(patch + 2 * XS * q.NPIXA * BK), *empty = full + SV_MAXST;
    int *toff = reinterpret_cast<int *>(full + 2 * SV_MAXST);
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
     * zero); TMA: unused */
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
        for (int i = q.NPIX * BK + tid; i < q.NPIXA * BK; i += NT + 32)
#pragma unroll
            for (int r = 0; r < 2 * XS; r++) patch[r * q.NPIXA * BK + i] = 0.f;
        ig_proxy_fence();
        __syncthreads();
        if (tid >= NT) { /* the producer warp: one lane issues every copy */
            /* step s: slot s % NST of phase (s / NST) & 1, chunk cc = s / R,
             * tap t = s % R, all counted (no division in the loop) */
            if (tid == NT) {
                int slot = 0, cc = 0, t = 0;
                unsigned ph = 0;
                const int NI = (int)gridDim.x / (q.out0 * q.nrb); /* images (X3: lo at NI + n) */
                for (int s = 0; s < CK * R; s++) {
                    if (s >= NST) ig_mbar_wait(empty + slot, ph ^ 1u);
                    ig_mbar_expect(full + slot,
                                   (unsigned)(XS * (WS + (t == 0 ? q.NPIX * BK : 0))) * 4u);
                    ig_tma2(smem + slot * WS * XS, &tm.w, t * q.CKP + cc * BK, g * a.Kg + k0, full + slot);
                    if (X3)
                        ig_tma2(smem + slot * WS * XS + WS, &tm.w, t * q.CKP + cc * BK,
                                a.K + g * a.Kg + k0, full + slot);
                    if (t == 0)
                        ig_tma5(patch + (cc & 1) * XS * q.NPIXA * BK, &tm.x, g * a.Cg + cc * BK, -a.p2,
                                oy0 - a.p1, oz - a.p0, n, full + slot);
                    if (X3 && t == 0)
                        ig_tma5(patch + ((cc & 1) * XS + 1) * q.NPIXA * BK, &tm.x, g * a.Cg + cc * BK,
                                -a.p2, oy0 - a.p1, oz - a.p0, NI + n, full + slot);
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
    /* TMA with two warpgroups over two 64-position row tiles: each takes
     * one row tile and all BM channels. An m64nNk8 wgmma reads 2 KiB of
     * patch and 32N bytes of weights from shared memory: two m64n64 per
     * warpgroup (the channel split) move 128 bytes a clock at the tensor
     * cores' rate, all the shared memory gives; one m64n128, 96. */
    constexpr bool SPM = TMA && NWG == 2 && MT == 2;
    constexpr int MTW = SPM ? 1 : MT, BNW = SPM ? BM : BN, ND = BNW / 2;
    const int warp = (tid >> 5) & 3, wgi = tid >> 7, lane = tid & 31, gq = lane >> 2, tq = lane & 3;
    const int mt0 = SPM ? wgi : 0, nb0 = SPM ? 0 : wgi * BN; /* this warpgroup's tiles */
    float acc[MTW][ND];
    float tcc[X3 ? MTW : 1][X3 ? ND : 1]; /* X3: a stage's sums */
#pragma unroll
    for (int i = 0; i < MTW; i++)
#pragma unroll
        for (int j = 0; j < ND; j++) {
            acc[i][j] = 0.f;
            /* defined here, not inside the first wgmma stage (ptxas C7515) */
            asm volatile("" : "+f"(acc[i][j]));
            if constexpr (X3) {
                tcc[i][j] = 0.f;
                asm volatile("" : "+f"(tcc[i][j]));
            }
        }
    const unsigned lbo = (unsigned)q.NPIXA * 16;
    /* stage s: slot s % NST of phase (s / NST) & 1, chunk cc = s / R, tap
     * t = s % R, counted, and the swizzled descriptors as bases plus
     * offsets (16-byte units: a slot WS / 4, a patch buffer NPIXA * BK / 4,
     * a pixel row 8, a 64-row tile 512, a k8 step 2): with integer
     * divisions by R and NST between one stage's wgmmas and the next's,
     * ncu's source view put the consumers' stalls on them */
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
        if constexpr (X3) {
            /* hi and lo tiles of the slot and the patch buffer (16-byte
             * units: a lo tile WS / 4 or NPIXA * BK / 4 after its hi one) */
            const unsigned wh = dw0 + (unsigned)(slot * (XS * WS / 4)), wl = wh + (unsigned)(WS / 4);
            const unsigned ph0 = dp0 + (unsigned)((cc & 1) * (XS * q.NPIXA * BK / 4) + ot * 8),
                           pl0 = ph0 + (unsigned)(q.NPIXA * BK / 4);
            ig_wg_fence();
#pragma unroll
            for (int k8 = 0; k8 < BK / 8; k8++)
#pragma unroll
                for (int mt = 0; mt < MTW; mt++) {
                    const unsigned o = (unsigned)(mt * 512 + 2 * k8);
                    ig_wgmma<BNW>(tcc[mt], DHI | (pl0 + o), DHI | (wh + 2 * k8)); /* lo hi */
                    ig_wgmma<BNW>(tcc[mt], DHI | (ph0 + o), DHI | (wl + 2 * k8)); /* hi lo */
                    ig_wgmma<BNW>(tcc[mt], DHI | (ph0 + o), DHI | (wh + 2 * k8)); /* hi hi */
                }
            ig_wg_commit();
            ig_wg_wait<0>();
            /* this stage's wgmmas are done: its slot is free; their sums
             * into acc (round to nearest) */
            if (lane == 0) ig_mbar_arrive(empty + slot);
#pragma unroll
            for (int i = 0; i < MTW; i++)
#pragma unroll
                for (int j = 0; j < ND; j++) {
                    acc[i][j] += tcc[i][j];
                    tcc[i][j] = 0.f;
                }
            if (++slot == NST) slot = 0, ph ^= 1u;
            if (++t == R) t = 0, ++cc;
            continue;
        }
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
        /* TMA: the previous stage's wgmmas are done: its slot is free */
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

} // namespace

namespace tc_conv {

/* The kernels [BM 128, 64, 32][MT 1, 2][zeros, remap, zeros with TMA] */
typedef void (*sv_kernel)(const float *, const float *, const float *, float *, const svp,
                          const sv_maps);
#define SV_K(BM)                                                                               \
    {{k_igemm_shifted<BM, 1, IG_ZEROS, 0>, k_igemm_shifted<BM, 1, IG_REMAP, 0>,                \
      k_igemm_shifted<BM, 1, IG_ZEROS, 1>},                                                    \
     {k_igemm_shifted<BM, 2, IG_ZEROS, 0>, k_igemm_shifted<BM, 2, IG_REMAP, 0>,                \
      k_igemm_shifted<BM, 2, IG_ZEROS, 1>}}
static const sv_kernel sv_tab[3][2][3] = {SV_K(128), SV_K(64), SV_K(32)};
static int sv_attr_set[IG_NDEV][3][2][3]; /* per device: the smem attribute set */
#undef SV_K
/* the 3xTF32 kernels [BM][MT] (zeros, TMA) */
static const sv_kernel sv_tab3[3][2] = {
    {k_igemm_shifted<128, 1, IG_ZEROS, 1, 1>, k_igemm_shifted<128, 2, IG_ZEROS, 1, 1>},
    {k_igemm_shifted<64, 1, IG_ZEROS, 1, 1>, k_igemm_shifted<64, 2, IG_ZEROS, 1, 1>},
    {k_igemm_shifted<32, 1, IG_ZEROS, 1, 1>, k_igemm_shifted<32, 2, IG_ZEROS, 1, 1>}};
static int sv_attr_set3[IG_NDEV][3][2];

/* The plan: 0, or MT (1 or 2 row tiles) with *q, the block's shared
 * memory and the tile index filled in (tma: the TMA form's stages; x3: the
 * 3xTF32 form's, hi and lo tiles, swizzled) */
static int sv_plan(const tc__problem *p, const igp &g, int lm, svp *q, size_t *smem, int *bi,
                   int tma, int x3 = 0) {
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
    if (q->NPIXA > 128 * SV_PPT) return 0;
    q->CKP = (int)tc__cu_div_up(g.Cg, SV_BK) * SV_BK;
    q->a.Rl = g.R * q->CKP;
    q->nrb = (int)tc__cu_div_up(g.out1, q->TH);
    q->out0 = g.P / (g.out1 * g.out2);
    *bi = g.Kg > 64 ? 0 : g.Kg > 32 ? 1 : 2;
    const char *fb = tc__knob_get(TC__KNOB_CUDA_CONV_SHAPE); /* "bm,S": tuning only (S ignored) */
    int fbm = 0;
    if (fb && sscanf(fb, "%d", &fbm) == 1 && (fbm == 128 || fbm == 64 || fbm == 32))
        *bi = fbm == 128 ? 0 : fbm == 64 ? 1 : 2;
    const int bm = ig_bm[*bi];
    const char *sw = tc__knob_get(TC__KNOB_CUDA_CONV_SHIFTED_SWIZZLE), *ns = tc__knob_get(TC__KNOB_CUDA_CONV_SHIFTED_STAGES);
    q->swz = x3 || !(sw && sw[0] == '0' && !sw[1]);
    const tc__cu_device *d = tc__cu_dev();
    q->blocks = (double)p->N * q->out0 * q->nrb * (double)tc__cu_div_up(g.Kg, bm) * g.G;
    const int many = q->blocks > (d && d->sms > 0 ? d->sms : 132);
    q->nst = ns && ns[0] >= '3' && ns[0] <= '8' && !ns[1] ? ns[0] - '0'
             : tma                                        ? (many ? SV_ST_TMA_MANY : SV_ST_TMA_FEW)
                                                          : SV_ST_CPASYNC;
    /* a patch buffer is reloaded nst - 2 stages before the chunk after next
     * starts: the taps of a chunk must outlast that (R >= nst - 1) */
    if (g.R < q->nst - 1) return 0;
    *smem = ((size_t)q->nst * bm * SV_BK + 2 * (size_t)q->NPIXA * SV_BK) * (x3 ? 2 : 1) * sizeof(float) +
            2 * SV_MAXST * sizeof(uint64_t) + (size_t)g.R * sizeof(int) +
            1024; /* + the alignment to 1 KiB */
    const size_t lim = d && d->smem_optin ? d->smem_optin : 227 * 1024;
    if (*smem > lim) return 0;
    const int64_t nb = (int64_t)p->N * q->out0 * q->nrb;
    if (nb > INT32_MAX || p->N > 65535 || g.G > 65535 || tc__cu_div_up(g.Kg, bm) > 65535)
        return 0;
    /* k_igemm_channels_last's one-dimensional grid */
    if (tc__cu_div_up(g.plane, 32) * tc__cu_div_up(g.C, 32) * p->N +
            tc__cu_div_up((int64_t)g.K * q->CKP, 256) > INT32_MAX)
        return 0;
    return mt;
}
/* The TMA form's two tensor maps over the call's copies: 0 on success */
/* (x3: over hi and lo, 2N images and 2K weight rows) */
int sv_tensor_maps(const svp &q, int bm, const void *xt, const void *wt, int64_t N, sv_maps *tm,
                   int x3) {
    PFN_cuTensorMapEncodeTiled_v12000 enc = ig_tma_encoder();
    const igp &g = q.a;
    if (!enc) return 1;
    const cuuint64_t C = (cuuint64_t)g.C;
    const cuuint64_t xd[5] = {C, (cuuint64_t)g.in2, (cuuint64_t)g.in1, (cuuint64_t)g.in0,
                              (cuuint64_t)N * (x3 ? 2 : 1)};
    const cuuint64_t xs[4] = {C * 4, C * 4 * g.in2, C * 4 * g.in2 * g.in1,
                              C * 4 * g.in2 * g.in1 * g.in0};
    const cuuint32_t xb[5] = {SV_BK, (cuuint32_t)q.PW, (cuuint32_t)q.PH, (cuuint32_t)q.PD0, 1};
    const cuuint32_t one[5] = {1, 1, 1, 1, 1};
    const cuuint64_t wd[2] = {(cuuint64_t)g.Rl, (cuuint64_t)g.K * (x3 ? 2 : 1)};
    const cuuint64_t ws[1] = {(cuuint64_t)g.Rl * 4};
    const cuuint32_t wb[2] = {SV_BK, (cuuint32_t)bm};
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
/* The TMA form takes a layer planned (q) where its boxes fit: zero
 * padding, whole 32-channel boxes within a group, box sides <= 256 */
static int sv_tma_fits(const svp &q, int lm) {
    const igp &g = q.a;
    return lm == IG_ZEROS && (g.G == 1 || g.Cg % SV_BK == 0) && q.PH <= 256 && q.PD0 <= 256 &&
           ig_tma_encoder() != NULL;
}
/* The TMA form by default in TF32 plans (no TILECONV_CUDA_CONV_TF32_KERNEL): 2D layers
 * with stride 1 and zero padding whose tile has 64 or 128 channels, on a
 * device running the sm_90a image, with blocks for at least 0.9 of a wave
 * (the shifted views have no split-K; the tiled kernel splits small
 * layers). Measured on the H100 (batch 32, against the tiled kernel's
 * register-staged mma.sync): 3x3 128 @28 0.082 ms against 0.112, 256 @14
 * 0.073 / 0.124, 512 @7 0.106 / 0.115, 64 @56 0.118 / 0.120; the 3D layer
 * (32-channel tile) 0.45 against the tiled wgmma form's 0.27, so not
 * there.
 * *est (may be NULL): seconds, as waves of blocks (one per SM) times a
 * block's MACs (its whole tile, dropped positions included) at a rate per
 * SM in units of the nominal FP32 peak per SM, fitted to the single-call
 * times (the copies and the host's time in the call folded in, as the
 * Winograd model is): 3.0 for the 128-channel tile (two warpgroups on two
 * row tiles: 128 @28 0.056 ms, two blocks an SM, 256 @14 0.048; one
 * warpgroup on one row tile: 512 @7 0.054) and 1.55 for the 64-channel
 * tile (one warpgroup, m64n64: 64 @56 0.089). With integer divisions in
 * the consumers' loop the rates were 2.2 / 1.6 / 1.15. Those rates hold at
 * R = 9 taps; a block's time is a fixed part (its patch, pipeline fill,
 * epilogue) plus one per tap, fitted as R / 9 x (5.83 + 0.352 R) / 9 of
 * the 3x3 time (on the H200 an 11x11 64 @56 b8 layer, TH = 1 row a block,
 * ran 0.256 ms where the R-proportional model said 0.651, and the planner
 * took cuda.conv.fft at 0.348): the rate scales by R / (5.83 + 0.352 R),
 * 1 at R = 9, 2.5 at R = 121. */

/* The cp.async form (tma = 0) or the TMA form planned for the layer, the
 * cp.async form where the TMA form's boxes do not fit: 0 where neither
 * takes it */
int sv_select(const tc__problem *p, const igp &g, int lm, int tma, sv_sel *s) {
    s->mt = sv_plan(p, g, lm, &s->q, &s->smem, &s->bi, tma);
    if (s->mt && tma && !sv_tma_fits(s->q, lm)) { /* cp.async then, with its own stages */
        tma = 0;
        s->mt = sv_plan(p, g, lm, &s->q, &s->smem, &s->bi, 0);
    }
    s->tma = tma;
    s->x3 = 0;
    return s->mt > 0;
}
/* The 3xTF32 form for cuda.conv.igemm-3xtf32: 2D stride-1 zero-padded
 * layers that the TMA form's boxes and the doubled shared memory take, on
 * a device running the sm_90a image; not where TILECONV_CUDA_CONV_TF32_KERNEL forces
 * a form other than 8 (the tiled 3xTF32 kernel then, for A/B and tests) */
int sv_select3(const tc__problem *p, const igp &g, sv_sel *s) {
    const char *f = tc__knob_get(TC__KNOB_CUDA_CONV_TF32_KERNEL);
    if ((f && strcmp(f, "8")) || g.m0 != 1 || g.in0 != 1 || g.m1 < 2) return 0;
    s->tma = 1;
    s->x3 = 1;
    s->mt = sv_plan(p, g, IG_ZEROS, &s->q, &s->smem, &s->bi, 1, 1);
    return s->mt > 0 && sv_tma_fits(s->q, IG_ZEROS) && cv_wgmma_ok();
}
int sv_default(const tc__problem *p, const igp &g, int lm, double *est, sv_sel *sel) {
    if (lm != IG_ZEROS || g.m0 != 1 || g.in0 != 1 || g.m1 < 2 || tc__knob_get(TC__KNOB_CUDA_CONV_TF32_KERNEL))
        return 0;
    sv_sel s; /* the TMA form as planned, without sv_select's cp.async fallback plan */
    s.tma = 1;
    s.x3 = 0;
    s.mt = sv_plan(p, g, lm, &s.q, &s.smem, &s.bi, 1);
    if (!s.mt || s.bi == 2 || !sv_tma_fits(s.q, lm)) return 0;
    const int64_t bm = ig_bm[s.bi];
    const tc__cu_device *d = tc__cu_dev();
    const double sms = d && d->sms > 0 ? d->sms : 132;
    if (s.q.blocks < 0.9 * sms || !cv_wgmma_ok()) return 0;
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
/* The channels-last copies of the shifted-view and depth-ring forms: xT
 * (N, spatial, C), then wT (K, tap, CKP) at a 1 KiB boundary (TMA: 16-byte
 * aligned bases), in one scratch allocation (*xt, freed by the caller) by
 * one k_igemm_channels_last launch (g.Rl = R * CKP) */
tc_status sv_copies(const tc__problem *p, const tc__cu_bufs *b, const igp &g, int CKP, void **xt,
                    float **wt, int x3) {
    /* x3: hi and lo, each lo part after its hi one */
    const int64_t nx = p->N * (int64_t)g.plane * g.C, nw = (int64_t)g.K * g.Rl;
    const size_t xs = x3 ? 2 : 1;
    const size_t woff = (xs * (size_t)nx * sizeof(float) + 1023) / 1024 * 1024;
    tc_status st = tc__cu_alloc(xt, woff + xs * (size_t)nw * sizeof(float), b->s);
    if (st) return st;
    *wt = (float *)((char *)*xt + woff);
    const int tx = (int)tc__cu_div_up(g.plane, 32), ty = (int)tc__cu_div_up(g.C, 32);
    const int64_t nxb = (int64_t)tx * ty * p->N, nwb = tc__cu_div_up((int64_t)g.K * CKP, 256);
    k_igemm_channels_last<<<(unsigned)(nxb + nwb), 256, 0, b->s>>>(
        (const float *)b->x, (float *)*xt, g.C, g.plane, tx, ty, nxb, (const float *)b->w, *wt,
        g.K, g.Cg, g.R, CKP, x3 ? nx : 0, x3 ? nw : 0);
    return TC_OK;
}
/* The launch of a layer planned by sv_select: the copies of x and w into
 * one scratch allocation by one k_igemm_channels_last launch, then the
 * kernel */
tc_status sv_run(const tc__args *a, const tc__cu_bufs *b, const sv_sel &sel, int lm) {
    const tc__problem *p = a->p;
    const svp &q = sel.q;
    const igp &g = q.a;
    const int bi = sel.bi, mt = sel.mt;
    const size_t smem = sel.smem;
    int tma = sel.tma;
    const int li = lm == IG_ZEROS ? 0 : 1;
    const float *db;
    void *own, *xt = NULL;
    tc_status st = cv_bias(a, b->s, &db, &own);
    if (st) return st;
    float *wt;
    const int x3 = sel.x3;
    if ((st = sv_copies(p, b, g, q.CKP, &xt, &wt, x3))) {
        tc__cu_free(own, b->s);
        return st;
    }
    /* while the copies run: the kernels' shared-memory limit, raised to the
     * device's opt-in maximum once per device (sv_plan checked smem
     * against it): the cp.async form's, and the TMA form's where it may
     * run */
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    for (int v = x3 ? 1 : 0; v <= tma && e == cudaSuccess; v++) {
        const int kl = v ? 2 : li;
        int *slot = dev >= 0 && dev < IG_NDEV ? x3 ? &sv_attr_set3[dev][bi][mt - 1]
                                                   : &sv_attr_set[dev][bi][mt - 1][kl]
                                              : NULL;
        if (!slot || !__atomic_load_n(slot, __ATOMIC_ACQUIRE)) {
            const tc__cu_device *d = tc__cu_dev();
            const size_t lim = d && d->smem_optin ? d->smem_optin : smem;
            e = cudaFuncSetAttribute(x3 ? (const void *)sv_tab3[bi][mt - 1]
                                        : (const void *)sv_tab[bi][mt - 1][kl],
                                     cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     (int)(lim > smem ? lim : smem));
            if (e == cudaSuccess && slot && d && d->smem_optin)
                __atomic_store_n(slot, 1, __ATOMIC_RELEASE);
        }
    }
    if (e == cudaSuccess) {
        dim3 grid((unsigned)((int64_t)p->N * q.out0 * q.nrb),
                  (unsigned)tc__cu_div_up(g.Kg, ig_bm[bi]), (unsigned)g.G);
        sv_maps tm;
        memset(&tm, 0, sizeof tm);
        if (tma && sv_tensor_maps(q, ig_bm[bi], xt, wt, p->N, &tm, x3)) tma = 0; /* cp.async then */
        sv_kernel k = sv_tab[bi][mt - 1][tma ? 2 : li];
        if (x3 && !tma) /* no cp.async 3xTF32 form: the encoder failed */
            e = cudaErrorNotSupported;
        if (x3) k = sv_tab3[bi][mt - 1];
        if (e == cudaSuccess) {
            k<<<grid, (ig_bm[bi] == 128 && !(tma && mt == 1) ? 256 : 128) + (tma ? 32 : 0), smem,
                b->s>>>((const float *)xt, wt, db, (float *)b->y, q, tm);
            e = cudaGetLastError();
        }
    }
    tc__cu_free(xt, b->s);
    tc__cu_free(own, b->s);
    if (e != cudaSuccess) return tc__cu_fail(e, "launch k_igemm_shifted", __FILE__, __LINE__);
    return TC_OK;
}

/* the shifted-view kernels with no dynamic shared memory (a layer's
 * depends on its patch: sv_plan), and the channels-last copy */
void sv_report(tc__cu_report *r) {
    static const char *const ln[3] = {"zeros", "remap", "zeros tma"};
    for (int bi = 0; bi < 3; bi++)
        for (int mt = 1; mt <= 2; mt++)
            for (int kl = 0; kl < 3; kl++) {
                const int tma = kl == 2;
                char name[96];
                snprintf(name, sizeof name, "cuda.conv.igemm-tf32 shifted %dx128 mt%d %s", ig_bm[bi],
                         mt, ln[kl]);
                tc__cu_report_kernel(r, name, (const void *)sv_tab[bi][mt - 1][kl],
                                     (ig_bm[bi] == 128 && !(tma && mt == 1) ? 256 : 128) +
                                         (tma ? 32 : 0), 0);
            }
    tc__cu_report_kernel(r, "cuda.conv.igemm-tf32 channels-last copy",
                         (const void *)k_igemm_channels_last, 256, 0);
}
/* the 3xTF32 shifted-view kernels (TMA, zeros) */
void sv_report3(tc__cu_report *r) {
    for (int bi = 0; bi < 3; bi++)
        for (int mt = 1; mt <= 2; mt++) {
            char name[96];
            snprintf(name, sizeof name, "cuda.conv.igemm-3xtf32 shifted %dx128 mt%d zeros tma",
                     ig_bm[bi], mt);
            tc__cu_report_kernel(r, name, (const void *)sv_tab3[bi][mt - 1],
                                 (ig_bm[bi] == 128 && mt == 2 ? 256 : 128) + 32, 0);
        }
    tc__cu_report_kernel(r, "cuda.conv.igemm-3xtf32 channels-last copy",
                         (const void *)k_igemm_channels_last, 256, 0);
}

} // namespace tc_conv
