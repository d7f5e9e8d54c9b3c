/*
 * cuda_direct.cu - cuda.filter.direct: single-channel filters (1D/2D/3D) on the GPU.
 *
 * Fast path (float32, masks up to 63 taps in 1D, 15x15 in 2D, 7x7x7 in 3D):
 * the tap counts (R,S,T) are compile-time, and the mask is passed as a
 * __grid_constant__ kernel parameter, which lives in the
 * constant bank: every FFMA takes its weight straight from c[0x0][...], no
 * register and no __constant__ symbol shared between concurrent plans.
 * Each block owns an output tile of TH x TW (TW = 4*TX, TH = BY*RY; TX x BY threads) and
 * walks a chunk of output planes along z (2.5D streaming): a ring of R
 * input planes (tile + halo) sits in shared memory, one new plane is loaded
 * per output plane. Each thread computes RY rows x 4 columns; for every
 * input row of its window it reads 4+T-1 values with 16-byte shared loads
 * and feeds RY*4*T FFMAs, so shared traffic per FFMA stays ~0.1-0.3 floats.
 * Interior blocks load their halo with plain coalesced loads; only blocks
 * touching an edge map each index through the boundary mode (tc__cu_bidx),
 * so every mode costs about what constant costs.
 *
 * Generic path (float64, and masks beyond the buckets): one output per
 * thread, runtime tap loops, mask in global memory (read-only cache).
 *
 * Plans with TC_PLAN_MASK_AT_EXECUTE take the call's mask as a device
 * pointer (args->w): the two-barrier tiles and the 3D ring (the NG 0 forms)
 * have a "_dm" kernel of the same body whose threads read the mask from
 * global memory at block start, into the same padded maskp layout in
 * registers (or straight into the shared weight rows of the rolled form),
 * reversing it there for convolve (args->wflip): no host copy, no wait,
 * no extra launch. The lean tiles and the register z window (NG >= 1) have
 * no such kernel: those masks take the NG 0 variant of their size. The
 * generic path reads the mask where it is, reversed when asked.
 *
 * Masks whose sizes match a variant exactly run it unguarded; any other
 * mask runs the smallest "guarded" variant that covers it, where each tap
 * beyond the mask's true extent (r >= mr, s >= ms, t >= mt; uniform over
 * the launch) is skipped, not multiplied by zero: an Inf or NaN just
 * outside the true footprint must not reach the output (0 * Inf = NaN).
 */
#include "cuda/cuda_common.h"
#include "cuda/cuda_direct_tile.h"

#include <stdlib.h>
#include <string.h>

namespace {

struct dgeom {
    int64_t N;            /* batch */
    int64_t D, H, W;      /* input */
    int64_t P, Q, O;      /* output */
    int64_t pad0, pad1, pad2;
    int64_t zc, nzc;      /* output planes per block, chunks per batch item */
    float cval;
    int mode;
    int vec_out;          /* O % 4 == 0 and y 16-byte aligned */
    int vec_in;           /* W % 4 == 0 and x 16-byte aligned: 16-byte loads */
    int64_t A;            /* pad2 rounded up to 4: shared column 0 = x0 - A */
    int off;              /* A - pad2, 0..3 */
    int mr, ms, mt;       /* the mask's true extent (guarded variants) */
    int i32;              /* every extent and offset fits 32-bit index math */
};

/* tc__cu_bidx in 32-bit arithmetic (n < 2^29): the edge loads' hot path */
__device__ __forceinline__ int bidx32(int i, int n, int mode) {
    if ((unsigned)i < (unsigned)n) return i;
    int m;
    switch (mode) {
    case TC_MODE_CONSTANT: return -1;
    case TC_MODE_NEAREST: return i < 0 ? 0 : n - 1;
    case TC_MODE_WRAP: m = i % n; return m < 0 ? m + n : m;
    case TC_MODE_REFLECT:
        m = i % (2 * n); if (m < 0) m += 2 * n;
        return m < n ? m : 2 * n - 1 - m;
    case TC_MODE_MIRROR:
        if (n == 1) return 0;
        m = i % (2 * n - 2); if (m < 0) m += 2 * n - 2;
        return m < n ? m : 2 * n - 2 - m;
    }
    return -1;
}

template <int N> struct maskp { float w[N]; };

/* A per-call device mask (TC_PLAN_MASK_AT_EXECUTE): mr x ms x mt floats in
 * correlation order, or reversed (flip: convolve). Masks of up to
 * DM_REG_TAPS taps go into registers and run the variant's own compute;
 * larger ones into the shared weight rows of the rolled compute (ptxas -v,
 * sm_90a: in registers, 1D 49 and 63 taps took 100 and 156 registers, 2D
 * 7x7 spilled 52 bytes, 2D 11x11-15x15 took 203-254 registers and the 3D
 * 7^3 ring spilled 652 bytes; up to 32 taps stayed within 80 registers). */
constexpr int DM_REG_TAPS = 32;
template <int R, int S, int T, bool RL>
__host__ __device__ constexpr bool dm_rolled() { return RL || R * S * T > DM_REG_TAPS; }
struct gmask {
    const float *w;
    int flip;
};
/* Weight (r, s, t) of the variant's padded R x S x T layout: 0 beyond the
 * mask's true extent (as the host fills maskp). */
__device__ __forceinline__ float gmask_at(const gmask &q, const dgeom &g, int r, int s, int t) {
    if (r >= g.mr || s >= g.ms || t >= g.mt) return 0.f;
    int i = (r * g.ms + s) * g.mt + t;
    if (q.flip) i = g.mr * g.ms * g.mt - 1 - i;
    return __ldg(q.w + i);
}
/* The whole mask into a thread's maskp (registers once the taps are
 * unrolled), at block start. */
template <int R, int S, int T>
__device__ __forceinline__ void gmask_load(maskp<R * S * T> &m, const gmask &q, const dgeom &g) {
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int s = 0; s < S; s++)
#pragma unroll
            for (int t = 0; t < T; t++) m.w[(r * S + s) * T + t] = gmask_at(q, g, r, s, t);
}

__device__ __forceinline__ void cp4(float *dst, const float *src) {
    unsigned sa = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(sa), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void cp16(float *dst, const float *src) {
    unsigned sa = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sa), "l"(src) : "memory");
}

/* Starts the asynchronous load of input plane iz (any integer; mapped by
 * the mode) of a window of ROWS rows from row iy0 and WINA columns from
 * column xa (a multiple of 4, so that shared and global addresses agree
 * modulo 16 bytes) into a shared slot of row pitch SP. cp.async: nothing
 * waits here and no register holds the data, so the whole window is in
 * flight at once. Interior blocks of arrays whose rows are 16-byte aligned
 * use 16-byte copies; other interior blocks 4-byte copies; only blocks
 * that touch an edge map each index through the boundary mode. */
template <int ROWS, int WINA, int SP, int NT>
__device__ __forceinline__ void issue_plane(float *slot, const float *__restrict__ xn,
                                            const dgeom &g, int64_t iz, int64_t iy0,
                                            int64_t xa, int tid) {
    constexpr int NQ = (WINA + 3) / 4;
    int64_t zi = tc__cu_bidx(iz, g.D, g.mode);
    if (zi < 0) {
        for (int idx = tid; idx < ROWS * WINA; idx += NT)
            slot[(idx / WINA) * SP + idx % WINA] = g.cval;
        return;
    }
    const float *xp = xn + zi * g.H * g.W;
    const bool rows_in = iy0 >= 0 && iy0 + ROWS <= g.H;
    if (rows_in && g.vec_in && xa >= 0 && xa + 4 * NQ <= g.W) {
        const float *base = xp + iy0 * g.W + xa;
#pragma unroll 4
        for (int idx = tid; idx < ROWS * NQ; idx += NT) {
            int r = idx / NQ, q = idx - r * NQ;
            cp16(slot + r * SP + 4 * q, base + (int64_t)r * g.W + 4 * q);
        }
        return;
    }
    if (rows_in && xa >= 0 && xa + WINA <= g.W) {
        const float *base = xp + iy0 * g.W + xa;
#pragma unroll 4
        for (int idx = tid; idx < ROWS * WINA; idx += NT) {
            int r = idx / WINA, c = idx - r * WINA;
            cp4(slot + r * SP + c, base + (int64_t)r * g.W + c);
        }
        return;
    }
    if (g.i32) {
        const int y0 = (int)iy0, x0 = (int)xa, H = (int)g.H, W = (int)g.W;
        for (int idx = tid; idx < ROWS * WINA; idx += NT) {
            int r = idx / WINA, c = idx - r * WINA;
            int ri = bidx32(y0 + r, H, g.mode), ci = bidx32(x0 + c, W, g.mode);
            if ((ri | ci) < 0) slot[r * SP + c] = g.cval;
            else cp4(slot + r * SP + c, xp + (int64_t)(ri * W + ci));
        }
        return;
    }
    for (int idx = tid; idx < ROWS * WINA; idx += NT) {
        int r = idx / WINA, c = idx - r * WINA;
        int64_t ri = tc__cu_bidx(iy0 + r, g.H, g.mode);
        int64_t ci = tc__cu_bidx(xa + c, g.W, g.mode);
        if (ri < 0 || ci < 0) slot[r * SP + c] = g.cval;
        else cp4(slot + r * SP + c, xp + ri * g.W + ci);
    }
}

/* Stores a thread's RY rows x 4 columns of a tile at (y0, x0): 16-byte
 * streaming stores where the row allows, else element by element; rows
 * and columns past the output are skipped. */
template <int RY>
__device__ __forceinline__ void store_tile(const float (&acc)[RY][4], float *yp, const dgeom &g,
                                           int64_t y0, int64_t x0) {
    const int ty = threadIdx.y, tx = threadIdx.x;
#pragma unroll
    for (int j = 0; j < RY; j++) {
        const int64_t py = y0 + ty * RY + j, px = x0 + 4 * tx;
        if (py >= g.Q) continue;
        float *row = yp + py * g.O;
        if (g.vec_out && px + 3 < g.O) {
            __stcs(reinterpret_cast<float4 *>(row + px),
                   make_float4(acc[j][0], acc[j][1], acc[j][2], acc[j][3]));
        } else {
#pragma unroll
            for (int i = 0; i < 4; i++)
                if (px + i < g.O) __stcs(row + px + i, acc[j][i]);
        }
    }
}

/* Accumulates one output tile from R shared slots and stores it. The
 * window of output column x starts at shared column x - x0 + OFF. */
template <int R, int S, int T, int RY, int SP, int OFF, bool EX>
__device__ __forceinline__ void compute_store_off(const float *smem, const int *slot_of, int SLOT,
                                                  const maskp<R * S * T> &m, float *yp,
                                                  const dgeom &g, int64_t y0, int64_t x0) {
    constexpr int NV = (OFF + 4 + T - 1 + 3) / 4; /* float4 per window row */
    const int ty = threadIdx.y, tx = threadIdx.x;
    float acc[RY][4];
#pragma unroll
    for (int j = 0; j < RY; j++)
#pragma unroll
        for (int i = 0; i < 4; i++) acc[j][i] = 0.f;
#pragma unroll
    for (int r = 0; r < R; r++) {
        if (!EX && r >= g.mr) break;
        const float *sl = smem + slot_of[r] * SLOT + (ty * RY) * SP + 4 * tx;
#pragma unroll
        for (int iy = 0; iy < RY + S - 1; iy++) {
            float v[NV * 4];
#pragma unroll
            for (int k = 0; k < NV; k++) {
                float4 q = *reinterpret_cast<const float4 *>(sl + iy * SP + 4 * k);
                v[4 * k] = q.x; v[4 * k + 1] = q.y; v[4 * k + 2] = q.z; v[4 * k + 3] = q.w;
            }
#pragma unroll
            for (int j = 0; j < RY; j++) {
                const int s = iy - j;
                if (s >= 0 && s < S && (EX || s < g.ms)) {
#pragma unroll
                    for (int t = 0; t < T; t++) {
                        if (!EX && t >= g.mt) break;
                        const float wv = m.w[(r * S + s) * T + t];
#pragma unroll
                        for (int i = 0; i < 4; i++) acc[j][i] = fmaf(wv, v[OFF + i + t], acc[j][i]);
                    }
                }
            }
        }
    }
    store_tile<RY>(acc, yp, g, y0, x0);
}

template <int R, int S, int T, int RY, int SP, bool EX>
__device__ __forceinline__ void compute_store(const float *smem, const int *slot_of, int SLOT,
                                              const maskp<R * S * T> &m, float *yp,
                                              const dgeom &g, int64_t y0, int64_t x0) {
    switch (g.off) { /* uniform: one case per launch */
    case 0: compute_store_off<R, S, T, RY, SP, 0, EX>(smem, slot_of, SLOT, m, yp, g, y0, x0); break;
    case 1: compute_store_off<R, S, T, RY, SP, 1, EX>(smem, slot_of, SLOT, m, yp, g, y0, x0); break;
    case 2: compute_store_off<R, S, T, RY, SP, 2, EX>(smem, slot_of, SLOT, m, yp, g, y0, x0); break;
    default: compute_store_off<R, S, T, RY, SP, 3, EX>(smem, slot_of, SLOT, m, yp, g, y0, x0); break;
    }
}

/* Rolled form of compute_store_off for large masks: the planes (r) and the
 * input rows (iy) are run-time loops, so the code of one iteration (one
 * input row: NV 16-byte loads, then for each of the RY output rows whose
 * mask row s = iy - j exists, T weights as broadcast loads from shared
 * memory and 4*T FFMAs) stays a few KB and fits the instruction cache; the
 * fully unrolled body of a 15x15 mask is ~57 KB and stalls on instruction
 * fetch (ncu, docs/solvers/cuda-direct.md). The weights sit in shared memory
 * (wsh, rows padded to TP floats), copied from the kernel parameter once per
 * block. Each input row is still loaded once and used by all RY rows.
 * Plane r of this output plane is in slot (sb + r) % nslot. */
template <int R, int S, int T, int RY, int SP, int OFF, bool EX>
__device__ __forceinline__ void compute_store_rolled(const float *smem, int sb, int nslot,
                                                     int SLOT, const float *wsh, float *yp,
                                                     const dgeom &g, int64_t y0, int64_t x0) {
    constexpr int NV = (OFF + 4 + T - 1 + 3) / 4;
    constexpr int TP = (T + 3) / 4 * 4;
    const int ty = threadIdx.y, tx = threadIdx.x;
    const int nr = EX ? R : g.mr, ns = EX ? S : g.ms;
    float acc[RY][4];
#pragma unroll
    for (int j = 0; j < RY; j++)
#pragma unroll
        for (int i = 0; i < 4; i++) acc[j][i] = 0.f;
#pragma unroll 1
    for (int r = 0; r < nr; r++) {
        const float *sl = smem + ((sb + r) % nslot) * SLOT + (ty * RY) * SP + 4 * tx;
        const float *wr = wsh + r * S * TP;
#pragma unroll 1
        for (int iy = 0; iy < RY + ns - 1; iy++) {
            float v[NV * 4];
#pragma unroll
            for (int k = 0; k < NV; k++) {
                float4 q = *reinterpret_cast<const float4 *>(sl + iy * SP + 4 * k);
                v[4 * k] = q.x; v[4 * k + 1] = q.y; v[4 * k + 2] = q.z; v[4 * k + 3] = q.w;
            }
#pragma unroll
            for (int j = 0; j < RY; j++) {
                const int s = iy - j;
                if (s >= 0 && s < ns) {
                    float w[TP];
#pragma unroll
                    for (int k = 0; k < TP / 4; k++) {
                        float4 q = *reinterpret_cast<const float4 *>(wr + s * TP + 4 * k);
                        w[4 * k] = q.x; w[4 * k + 1] = q.y; w[4 * k + 2] = q.z; w[4 * k + 3] = q.w;
                    }
#pragma unroll
                    for (int t = 0; t < T; t++) {
                        if (!EX && t >= g.mt) break;
#pragma unroll
                        for (int i = 0; i < 4; i++) acc[j][i] = fmaf(w[t], v[OFF + i + t], acc[j][i]);
                    }
                }
            }
        }
    }
    store_tile<RY>(acc, yp, g, y0, x0);
}

template <int R, int S, int T, int RY, int SP, bool EX>
__device__ __forceinline__ void compute_store_r(const float *smem, int sb, int nslot, int SLOT,
                                                const float *wsh, float *yp, const dgeom &g,
                                                int64_t y0, int64_t x0) {
    switch (g.off) {
    case 0: compute_store_rolled<R, S, T, RY, SP, 0, EX>(smem, sb, nslot, SLOT, wsh, yp, g, y0, x0); break;
    case 1: compute_store_rolled<R, S, T, RY, SP, 1, EX>(smem, sb, nslot, SLOT, wsh, yp, g, y0, x0); break;
    case 2: compute_store_rolled<R, S, T, RY, SP, 2, EX>(smem, sb, nslot, SLOT, wsh, yp, g, y0, x0); break;
    default: compute_store_rolled<R, S, T, RY, SP, 3, EX>(smem, sb, nslot, SLOT, wsh, yp, g, y0, x0); break;
    }
}

/* The mask into shared memory, rows padded to TP floats with zeros (the
 * rolled compute never multiplies the padding: t < T, and t < mt when
 * guarded). */
template <int R, int S, int T, int NT>
__device__ __forceinline__ void load_weights(float *wsh, const maskp<R * S * T> &m, int tid) {
    constexpr int TP = (T + 3) / 4 * 4;
    for (int idx = tid; idx < R * S * TP; idx += NT) {
        int t = idx % TP, rs = idx / TP;
        wsh[idx] = t < T ? m.w[rs * T + t] : 0.f;
    }
}
/* The same rows from a per-call device mask. */
template <int R, int S, int T, int NT>
__device__ __forceinline__ void load_weights_g(float *wsh, const gmask &q, const dgeom &g, int tid) {
    constexpr int TP = (T + 3) / 4 * 4;
    for (int idx = tid; idx < R * S * TP; idx += NT) {
        int t = idx % TP, rs = idx / TP;
        wsh[idx] = t < T ? gmask_at(q, g, rs / S, rs % S, t) : 0.f;
    }
}

/* Shared-memory geometry of a variant. */
template <int S, int T, int RY, int TX, int BY> struct tileg {
    static constexpr int TW = TC_CU_DIRECT_TW(TX), TH = TC_CU_DIRECT_TH(BY, RY);
    /* WINA: the window (TW + T - 1) plus up to 3 columns of alignment */
    static constexpr int ROWS = TC_CU_DIRECT_ROWS(S, BY, RY), WINA = TC_CU_DIRECT_WINA(T, TX);
    static constexpr int SP = TC_CU_DIRECT_SP(T, TX);
    static constexpr int SLOT = ROWS * SP;
};
/* floats of the rolled form's weight copy */
template <int R, int S, int T> constexpr int wsh_floats() { return R * S * ((T + 3) / 4 * 4); }

/* R == 1 (1D and 2D masks): persistent blocks walk the tiles (x, y, plane)
 * with a stride of gridDim.x; NST shared slots, NST-1 tiles in flight
 * while one is computed. */
template <int S, int T, int RY, int TX, int BY, int NST, bool EX, bool RL, bool DM>
__device__ __forceinline__ void tiles_body(const float *__restrict__ x, float *__restrict__ y,
                                           const maskp<S * T> &m, const gmask &q,
                                           const dgeom &g) {
    typedef tileg<S, T, RY, TX, BY> G;
    constexpr int NT = TX * BY;
    extern __shared__ float4 smem4[];
    float *smem = reinterpret_cast<float *>(smem4);
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    const int64_t tx_n = (g.O + G::TW - 1) / G::TW, ty_n = (g.Q + G::TH - 1) / G::TH;
    const int64_t ntiles = tx_n * ty_n * g.N * g.P;
    const int64_t step = gridDim.x;
    float *wsh = smem + NST * G::SLOT;
    if (RL) { /* visible after the loop's first barrier */
        if (DM) load_weights_g<1, S, T, NT>(wsh, q, g, tid);
        else load_weights<1, S, T, NT>(wsh, m, tid);
    }
    /* tile index -> (x tile, y tile, plane); 32-bit division when every
     * index fits (64-bit division is a long software sequence) */
    const bool small = ntiles + (NST + 1) * step < (1LL << 31);
    auto decode = [&](int64_t t, int64_t &bxi, int64_t &byi, int64_t &pl) {
        if (small) {
            unsigned u = (unsigned)t, tx = (unsigned)tx_n, ty = (unsigned)ty_n;
            unsigned r = u / tx;
            bxi = u - r * tx;
            unsigned q = r / ty;
            byi = r - q * ty;
            pl = q;
        } else {
            bxi = t % tx_n;
            int64_t rest = t / tx_n;
            byi = rest % ty_n;
            pl = rest / ty_n;
        }
    };
    for (int p = 0; p < NST - 1; p++) {
        int64_t t = blockIdx.x + p * step;
        if (t < ntiles) {
            int64_t bxi, byi, pl;
            decode(t, bxi, byi, pl);
            int64_t n = pl / g.P, z = pl % g.P;
            issue_plane<G::ROWS, G::WINA, G::SP, NT>(smem + p * G::SLOT, x + n * g.D * g.H * g.W, g,
                                                     z - g.pad0, byi * G::TH - g.pad1,
                                                     bxi * G::TW - g.A, tid);
        }
        cp_commit();
    }
    for (int64_t i = 0;; i++) {
        const int64_t t = blockIdx.x + i * step;
        if (t >= ntiles) break;
        const int64_t tn = t + (NST - 1) * step;
        if (tn < ntiles) {
            int64_t bxi, byi, pl;
            decode(tn, bxi, byi, pl);
            int64_t n = pl / g.P, z = pl % g.P;
            issue_plane<G::ROWS, G::WINA, G::SP, NT>(smem + ((i + NST - 1) % NST) * G::SLOT,
                                                     x + n * g.D * g.H * g.W, g, z - g.pad0,
                                                     byi * G::TH - g.pad1, bxi * G::TW - g.A, tid);
        }
        cp_commit();
        cp_wait<NST - 1>();
        __syncthreads();
        int64_t bxi, byi, pl;
        decode(t, bxi, byi, pl);
        if (RL) {
            compute_store_r<1, S, T, RY, G::SP, EX>(smem, (int)(i % NST), NST, G::SLOT, wsh,
                                                    y + pl * g.Q * g.O, g, byi * G::TH, bxi * G::TW);
        } else {
            const int slot_of[1] = {(int)(i % NST)};
            compute_store<1, S, T, RY, G::SP, EX>(smem, slot_of, G::SLOT, m, y + pl * g.Q * g.O, g,
                                                  byi * G::TH, bxi * G::TW);
        }
        __syncthreads(); /* the slot is refilled NST-1 steps later */
    }
    cp_wait<0>();
}

template <int S, int T, int RY, int TX, int BY, int NST, bool EX, bool RL>
__global__ void __launch_bounds__(TX * BY)
direct_f32_tiles(const float *__restrict__ x, float *__restrict__ y,
                 const __grid_constant__ maskp<S * T> m, const dgeom g) {
    tiles_body<S, T, RY, TX, BY, NST, EX, RL, false>(x, y, m, gmask{nullptr, 0}, g);
}

/* The same tiles with the call's mask in device memory (DM). */
template <int S, int T, int RY, int TX, int BY, int NST, bool EX, bool RL>
__global__ void __launch_bounds__(TX * BY)
direct_f32_tiles_dm(const float *__restrict__ x, float *__restrict__ y,
                    const float *__restrict__ w, int flip, const dgeom g) {
    constexpr bool RLD = dm_rolled<1, S, T, RL>();
    const gmask q = {w, flip};
    maskp<S * T> m; /* not read by the rolled compute */
    if (!RLD) gmask_load<1, S, T>(m, q, g);
    tiles_body<S, T, RY, TX, BY, NST, EX, RLD, true>(x, y, m, q, g);
}

/* R > 1 (3D masks): a block owns an xy tile and a chunk of zc output
 * planes; a ring of R+1 plane slots, the next input plane in flight while
 * the current output plane is computed (2.5D streaming). */
template <int R, int S, int T, int RY, int TX, int BY, bool EX, bool RL, bool DM>
__device__ __forceinline__ void ring_body(const float *__restrict__ x, float *__restrict__ y,
                                          const maskp<R * S * T> &m, const gmask &q,
                                          const dgeom &g, int64_t gy0, int64_t gz0) {
    typedef tileg<S, T, RY, TX, BY> G;
    constexpr int NT = TX * BY, NSLOT = R + 1;
    extern __shared__ float4 smem4[];
    float *smem = reinterpret_cast<float *>(smem4);
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    const int64_t x0 = (int64_t)blockIdx.x * G::TW;
    const int64_t y0 = ((int64_t)blockIdx.y + gy0) * G::TH;
    const int64_t bz = (int64_t)blockIdx.z + gz0;
    const int64_t n = bz / g.nzc;
    const int64_t zs = (bz % g.nzc) * g.zc;
    const int64_t ze = zs + g.zc < g.P ? zs + g.zc : g.P;
    const float *xn = x + n * g.D * g.H * g.W;
    const int64_t iy0 = y0 - g.pad1, xa = x0 - g.A;
    const int steps = (int)(ze - zs);
    float *wsh = smem + NSLOT * G::SLOT;
    if (RL) {
        if (DM) load_weights_g<R, S, T, NT>(wsh, q, g, tid);
        else load_weights<R, S, T, NT>(wsh, m, tid);
    }

    for (int li = 0; li < R; li++)
        issue_plane<G::ROWS, G::WINA, G::SP, NT>(smem + li * G::SLOT, xn, g, zs - g.pad0 + li,
                                                 iy0, xa, tid);
    cp_commit();
    for (int s = 0; s < steps; s++) {
        if (s + 1 < steps)
            issue_plane<G::ROWS, G::WINA, G::SP, NT>(smem + ((s + R) % NSLOT) * G::SLOT, xn, g,
                                                     zs - g.pad0 + s + R, iy0, xa, tid);
        cp_commit();
        cp_wait<1>();
        __syncthreads();
        if (RL) {
            compute_store_r<R, S, T, RY, G::SP, EX>(smem, s % NSLOT, NSLOT, G::SLOT, wsh,
                                                    y + ((n * g.P + zs + s) * g.Q) * g.O, g, y0, x0);
        } else {
            int slot_of[R];
#pragma unroll
            for (int r = 0; r < R; r++) slot_of[r] = (s + r) % NSLOT;
            compute_store<R, S, T, RY, G::SP, EX>(smem, slot_of, G::SLOT, m,
                                                  y + ((n * g.P + zs + s) * g.Q) * g.O, g, y0, x0);
        }
        __syncthreads();
    }
    cp_wait<0>();
}

template <int R, int S, int T, int RY, int TX, int BY, bool EX, bool RL>
__global__ void __launch_bounds__(TX * BY)
direct_f32_ring(const float *__restrict__ x, float *__restrict__ y,
                const __grid_constant__ maskp<R * S * T> m, const dgeom g, int64_t gy0,
                int64_t gz0) {
    ring_body<R, S, T, RY, TX, BY, EX, RL, false>(x, y, m, gmask{nullptr, 0}, g, gy0, gz0);
}

/* The same ring with the call's mask in device memory (DM). */
template <int R, int S, int T, int RY, int TX, int BY, bool EX, bool RL>
__global__ void __launch_bounds__(TX * BY)
direct_f32_ring_dm(const float *__restrict__ x, float *__restrict__ y,
                   const float *__restrict__ w, int flip, const dgeom g, int64_t gy0,
                   int64_t gz0) {
    constexpr bool RLD = dm_rolled<R, S, T, RL>();
    const gmask q = {w, flip};
    maskp<R * S * T> m; /* not read by the rolled compute */
    if (!RLD) gmask_load<R, S, T>(m, q, g);
    ring_body<R, S, T, RY, TX, BY, EX, RLD, true>(x, y, m, q, g, gy0, gz0);
}

/* Lean persistent tiles (R == 1, NG >= 1): each thread NG groups of RY
 * rows x 4 columns, group q at columns 4 TX q of the 4 TX NG wide tile, so
 * a warp still reads 32 consecutive float4 (no bank conflict) while the
 * tile's fixed costs (decode, the copy loop's set-up, the barrier) are
 * shared by NG times more outputs. One barrier a tile: wait for tile i,
 * barrier (every thread has finished tile i - 1), issue tile i + NST - 1
 * into tile i - 1's slot, compute tile i. For R == 1 the output plane
 * pl = n P + z reads input plane n D + z = pl (P = D, pad0 = 0), so no
 * 64-bit division. cap > 0: at most cap blocks (the test's hook that walks
 * several tiles a block on small arrays). */
template <int S, int T, int RY, int TX, int BY, int NG, int SP, int OFF>
__device__ __forceinline__ void compute_lean_off(const float *slot, const maskp<S * T> &m,
                                                 float *yp, const dgeom &g, int64_t y0, int64_t x0) {
    constexpr int NV = (OFF + 4 + T - 1 + 3) / 4;
    const int ty = threadIdx.y, tx = threadIdx.x;
#pragma unroll
    for (int q = 0; q < NG; q++) {
        float acc[RY][4];
#pragma unroll
        for (int j = 0; j < RY; j++)
#pragma unroll
            for (int i = 0; i < 4; i++) acc[j][i] = 0.f;
        const float *sl = slot + (ty * RY) * SP + 4 * TX * q + 4 * tx;
#pragma unroll
        for (int iy = 0; iy < RY + S - 1; iy++) {
            float v[NV * 4];
#pragma unroll
            for (int k = 0; k < NV; k++) {
                float4 w4 = *reinterpret_cast<const float4 *>(sl + iy * SP + 4 * k);
                v[4 * k] = w4.x; v[4 * k + 1] = w4.y; v[4 * k + 2] = w4.z; v[4 * k + 3] = w4.w;
            }
#pragma unroll
            for (int j = 0; j < RY; j++) {
                const int s = iy - j;
                if (s >= 0 && s < S) {
#pragma unroll
                    for (int t = 0; t < T; t++) {
                        const float wv = m.w[s * T + t];
#pragma unroll
                        for (int i = 0; i < 4; i++) acc[j][i] = fmaf(wv, v[OFF + i + t], acc[j][i]);
                    }
                }
            }
        }
        store_tile<RY>(acc, yp, g, y0, x0 + 4 * TX * q);
    }
}

/* Blocks per SM the NG >= 1 forms' launch bounds ask ptxas for: as many as
 * the shared memory of the variant lets an sm_90 SM hold (228 KiB, 1 KiB
 * reserved a block; H100 and H200 alike), but never fewer than regs
 * registers a thread (65536 / (regs NT) blocks): 64 for the lean tiles,
 * 128 for the register z window (R RY 4 sums, and ptxas issues all of a
 * plane's shared loads at once: ~126 registers at RY 2, ~155 at RY 4
 * unbounded; 64 spilled 0.2-1 KB). */
constexpr int ng_minb(int smem_bytes, int nt, int regs) {
    int b = 233472 / (smem_bytes + 1024), r = 65536 / (regs * nt);
    b = b < r ? b : r;
    return b < 1 ? 1 : b;
}

template <int S, int T, int RY, int TX, int BY, int NG, int NST>
__global__ void __launch_bounds__(TX * BY, ng_minb(NST * tileg<S, T, RY, TX * NG, BY>::SLOT * 4, TX * BY, 64))
direct_f32_lean(const float *__restrict__ x, float *__restrict__ y,
                const __grid_constant__ maskp<S * T> m, const dgeom g) {
    static_assert(NST >= 2, "one slot computed, at least one in flight");
    typedef tileg<S, T, RY, TX * NG, BY> G; /* TW = 4 TX NG */
    constexpr int NT = TX * BY;
    extern __shared__ float4 smem4[];
    float *smem = reinterpret_cast<float *>(smem4);
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    const int64_t tx_n = (g.O + G::TW - 1) / G::TW, ty_n = (g.Q + G::TH - 1) / G::TH;
    const int64_t ntiles = tx_n * ty_n * g.N * g.P;
    const int64_t step = gridDim.x;
    const int64_t hw_in = g.H * g.W, hw_out = g.Q * g.O;
    const bool small = ntiles + (int64_t)NST * step < (1LL << 31);
    auto decode = [&](int64_t t, int64_t &bxi, int64_t &byi, int64_t &pl) {
        if (small) {
            unsigned u = (unsigned)t, txn = (unsigned)tx_n, tyn = (unsigned)ty_n;
            unsigned r = u / txn;
            bxi = u - r * txn;
            unsigned q = r / tyn;
            byi = r - q * tyn;
            pl = q;
        } else {
            bxi = t % tx_n;
            int64_t rest = t / tx_n;
            byi = rest % ty_n;
            pl = rest / ty_n;
        }
    };
    /* starts tile t (if any) into slot sl; one commit group either way */
    auto issue = [&](int64_t t, int sl) {
        if (t < ntiles) {
            int64_t bxi, byi, pl;
            decode(t, bxi, byi, pl);
            issue_plane<G::ROWS, G::WINA, G::SP, NT>(smem + sl * G::SLOT, x + pl * hw_in, g, 0,
                                                     byi * G::TH - g.pad1, bxi * G::TW - g.A, tid);
        }
        cp_commit();
    };
#pragma unroll 1
    for (int p = 0; p < NST - 1; p++) issue(blockIdx.x + p * step, p);
    int sl = 0;
#pragma unroll 1
    for (int64_t t = blockIdx.x; t < ntiles; t += step) {
        cp_wait<NST - 2>(); /* tile t's group: NST - 2 younger ones may pend */
        __syncthreads();    /* its slot visible; the previous slot free */
        issue(t + (NST - 1) * step, sl == 0 ? NST - 1 : sl - 1);
        int64_t bxi, byi, pl;
        decode(t, bxi, byi, pl);
        const float *slot = smem + sl * G::SLOT;
        float *yp = y + pl * hw_out;
        const int64_t y0 = byi * G::TH, x0 = bxi * G::TW;
        switch (g.off) { /* uniform: one case per launch */
        case 0: compute_lean_off<S, T, RY, TX, BY, NG, G::SP, 0>(slot, m, yp, g, y0, x0); break;
        case 1: compute_lean_off<S, T, RY, TX, BY, NG, G::SP, 1>(slot, m, yp, g, y0, x0); break;
        case 2: compute_lean_off<S, T, RY, TX, BY, NG, G::SP, 2>(slot, m, yp, g, y0, x0); break;
        default: compute_lean_off<S, T, RY, TX, BY, NG, G::SP, 3>(slot, m, yp, g, y0, x0); break;
        }
        sl = sl == NST - 1 ? 0 : sl + 1;
    }
    cp_wait<0>();
}

/* Register z window (R > 1, exact masks): a block owns an xy tile and a
 * chunk of output planes [zs, ze); it streams the input planes
 * zs - pad0 .. ze - 1 - pad0 + R - 1 through NST shared slots (NST - 1 in
 * flight, one barrier a plane). Input plane l (of the chunk) is read from
 * shared memory once and added, with mask plane r, into output plane l - r,
 * whose sums stay in registers: during plane l, acc[k] holds output plane
 * l - R + 1 + k, so mask plane r adds into acc[R - 1 - r]. Output plane
 * l - R + 1 (acc[0]) is then complete: stored, and the registers shift down
 * one plane ((R - 1) RY 4 moves a plane, against R S T RY 4 FFMAs). The
 * first R - 1 planes also add into the registers of output planes below
 * the chunk and the last R - 1 into those past it: never stored, shifted
 * out (never multiplied by zero), so no branch in the taps. */
template <int R, int S, int T, int RY, int SP, int OFF>
__device__ __forceinline__ void zreg_plane_off(const float *slot, float (&acc)[R][RY][4],
                                               const maskp<R * S * T> &m) {
    constexpr int NV = (OFF + 4 + T - 1 + 3) / 4;
    const int ty = threadIdx.y, tx = threadIdx.x;
    const float *sl = slot + (ty * RY) * SP + 4 * tx;
#pragma unroll
    for (int iy = 0; iy < RY + S - 1; iy++) {
        float v[NV * 4];
#pragma unroll
        for (int k = 0; k < NV; k++) {
            float4 w4 = *reinterpret_cast<const float4 *>(sl + iy * SP + 4 * k);
            v[4 * k] = w4.x; v[4 * k + 1] = w4.y; v[4 * k + 2] = w4.z; v[4 * k + 3] = w4.w;
        }
#pragma unroll
        for (int r = 0; r < R; r++) {
#pragma unroll
            for (int j = 0; j < RY; j++) {
                const int s = iy - j;
                if (s >= 0 && s < S) {
#pragma unroll
                    for (int t = 0; t < T; t++) {
                        const float wv = m.w[(r * S + s) * T + t];
#pragma unroll
                        for (int i = 0; i < 4; i++)
                            acc[R - 1 - r][j][i] = fmaf(wv, v[OFF + i + t], acc[R - 1 - r][j][i]);
                    }
                }
            }
        }
    }
}

/* The register z window's block for column offset OFF (one copy of the
 * plane loop per offset). */
template <int R, int S, int T, int RY, int TX, int BY, int NST, int OFF>
__device__ __forceinline__ void zreg_run(const float *__restrict__ x, float *__restrict__ y,
                                         const maskp<R * S * T> &m, const dgeom &g, int64_t gy0,
                                         int64_t gz0) {
    typedef tileg<S, T, RY, TX, BY> G;
    constexpr int NT = TX * BY;
    extern __shared__ float4 smem4[];
    float *smem = reinterpret_cast<float *>(smem4);
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    const int64_t x0 = (int64_t)blockIdx.x * G::TW;
    const int64_t y0 = ((int64_t)blockIdx.y + gy0) * G::TH;
    const int64_t bz = (int64_t)blockIdx.z + gz0;
    const int64_t n = bz / g.nzc;
    const int64_t zs = (bz % g.nzc) * g.zc;
    const int64_t ze = zs + g.zc < g.P ? zs + g.zc : g.P;
    const float *xn = x + n * g.D * g.H * g.W;
    const int64_t qo = g.Q * g.O;
    float *yb = y + (n * g.P + zs) * qo; /* output plane zs */
    const int64_t iy0 = y0 - g.pad1, xa = x0 - g.A, iz0 = zs - g.pad0;
    const int L = (int)(ze - zs) + R - 1; /* input planes of the chunk */
#pragma unroll 1
    for (int p = 0; p < NST - 1; p++) {
        if (p < L)
            issue_plane<G::ROWS, G::WINA, G::SP, NT>(smem + p * G::SLOT, xn, g, iz0 + p, iy0, xa,
                                                     tid);
        cp_commit();
    }
    float acc[R][RY][4];
#pragma unroll
    for (int a = 0; a < R; a++)
#pragma unroll
        for (int j = 0; j < RY; j++)
#pragma unroll
            for (int i = 0; i < 4; i++) acc[a][j][i] = 0.f;
    int sl = 0;
#pragma unroll 1
    for (int l = 0; l < L; l++) {
        cp_wait<NST - 2>(); /* plane l's group: NST - 2 younger ones may pend */
        __syncthreads();    /* plane l visible; plane l - 1's slot free */
        const int ln = l + NST - 1;
        if (ln < L)
            issue_plane<G::ROWS, G::WINA, G::SP, NT>(smem + (sl == 0 ? NST - 1 : sl - 1) * G::SLOT,
                                                     xn, g, iz0 + ln, iy0, xa, tid);
        cp_commit();
        zreg_plane_off<R, S, T, RY, G::SP, OFF>(smem + sl * G::SLOT, acc, m);
        if (l >= R - 1) store_tile<RY>(acc[0], yb + (int64_t)(l - (R - 1)) * qo, g, y0, x0);
#pragma unroll
        for (int a = 0; a + 1 < R; a++)
#pragma unroll
            for (int j = 0; j < RY; j++)
#pragma unroll
                for (int i = 0; i < 4; i++) acc[a][j][i] = acc[a + 1][j][i];
#pragma unroll
        for (int j = 0; j < RY; j++)
#pragma unroll
            for (int i = 0; i < 4; i++) acc[R - 1][j][i] = 0.f;
        sl = sl == NST - 1 ? 0 : sl + 1;
    }
    cp_wait<0>();
}

template <int R, int S, int T, int RY, int TX, int BY, int NST>
__global__ void __launch_bounds__(TX * BY, ng_minb(NST * tileg<S, T, RY, TX, BY>::SLOT * 4, TX * BY, 128))
direct_f32_zreg(const float *__restrict__ x, float *__restrict__ y,
                const __grid_constant__ maskp<R * S * T> m, const dgeom g, int64_t gy0,
                int64_t gz0) {
    static_assert(NST >= 2, "one slot computed, at least one in flight");
    switch (g.off) { /* uniform: one case per launch */
    case 0: zreg_run<R, S, T, RY, TX, BY, NST, 0>(x, y, m, g, gy0, gz0); break;
    case 1: zreg_run<R, S, T, RY, TX, BY, NST, 1>(x, y, m, g, gy0, gz0); break;
    case 2: zreg_run<R, S, T, RY, TX, BY, NST, 2>(x, y, m, g, gy0, gz0); break;
    default: zreg_run<R, S, T, RY, TX, BY, NST, 3>(x, y, m, g, gy0, gz0); break;
    }
}

/* Generic: one output per thread, any mask, float or double. FL: the mask
 * is read reversed (a per-call convolve mask, TC_PLAN_MASK_AT_EXECUTE). */
template <typename E, bool FL>
__global__ void __launch_bounds__(256)
direct_generic(const E *__restrict__ x, E *__restrict__ y, const E *__restrict__ w,
               const dgeom g, int64_t R, int64_t S, int64_t T, E cval,
               int64_t gy0, int64_t gz0) {
    const int64_t px = (int64_t)blockIdx.x * 32 + threadIdx.x;
    const int64_t py = ((int64_t)blockIdx.y + gy0) * 8 + threadIdx.y;
    const int64_t bz = (int64_t)blockIdx.z + gz0;
    const int64_t n = bz / g.P, pz = bz % g.P;
    const int64_t bx0 = (int64_t)blockIdx.x * 32 - g.pad2;
    const int64_t by0 = ((int64_t)blockIdx.y + gy0) * 8 - g.pad1;
    const int64_t bz0 = pz - g.pad0;
    /* interior block: every tap of every thread lands inside the input */
    const bool inner = bz0 >= 0 && bz0 + R <= g.D && by0 >= 0 && by0 + 8 + S - 1 <= g.H &&
                       bx0 >= 0 && bx0 + 32 + T - 1 <= g.W;
    if (px >= g.O || py >= g.Q) return;
    const E *xn = x + n * g.D * g.H * g.W;
    E acc = 0;
    for (int64_t r = 0; r < R; r++) {
        int64_t iz = inner ? bz0 + r : tc__cu_bidx(bz0 + r, g.D, g.mode);
        for (int64_t s = 0; s < S; s++) {
            int64_t iy = inner ? py - g.pad1 + s : tc__cu_bidx(py - g.pad1 + s, g.H, g.mode);
            /* FL: weight (r, s, t) is w[R S T - 1 - ((r S + s) T + t)] */
            const E *wr = FL ? w + (R * S * T - 1) - (r * S + s) * T : w + (r * S + s) * T;
            if (inner) {
                const E *xr = xn + (iz * g.H + iy) * g.W + px - g.pad2;
                for (int64_t t = 0; t < T; t++) acc += wr[FL ? -t : t] * __ldg(xr + t);
            } else {
                for (int64_t t = 0; t < T; t++) {
                    int64_t ix = tc__cu_bidx(px - g.pad2 + t, g.W, g.mode);
                    E v = (iz < 0 || iy < 0 || ix < 0) ? cval : __ldg(xn + (iz * g.H + iy) * g.W + ix);
                    acc += wr[FL ? -t : t] * v;
                }
            }
        }
    }
    y[((n * g.P + pz) * g.Q + py) * g.O + px] = acc;
}

/* ---------------- dispatch ---------------- */
typedef tc_status (*launch_t)(const tc__args *a, const tc__cu_bufs *b);

struct variant {
    int R, S, T, RY, TX, BY, NST; /* TX x BY threads */
    /* NST: slots (R == 1) */
    int ex;                       /* 1: exact sizes only; 0: guarded taps */
    int alt;                      /* 1: a tuning alternative, used only when
                                     TILECONV_CUDA_DIRECT_VARIANT names it */
    int roll;                     /* rolled compute (weights in shared memory) */
    int ng;                       /* the form (cuda_direct_tile.h): 0 the two-barrier
                                     tiles / plane ring; >= 1 lean tiles of NG groups
                                     (R == 1), the register z window (R > 1) */
    launch_t launch;
    const void *kernel;
    /* the per-call device mask's launch and kernel (NG 0 forms), or NULL */
    launch_t launch_dm;
    const void *kernel_dm;
};

static dgeom make_geom(const tc__problem *p) {
    dgeom g;
    g.N = p->N;
    g.D = p->in[0]; g.H = p->in[1]; g.W = p->in[2];
    g.P = p->out[0]; g.Q = p->out[1]; g.O = p->out[2];
    g.pad0 = p->pad_lo[0]; g.pad1 = p->pad_lo[1]; g.pad2 = p->pad_lo[2];
    g.cval = (float)p->cval;
    g.mode = (int)p->mode;
    g.zc = 1; g.nzc = g.P;
    g.vec_out = 0;
    g.vec_in = 0;
    g.A = (g.pad2 + 3) / 4 * 4;
    if (g.A < 0) g.A = 0; /* pad2 < 0 (crop) cannot happen for filters */
    g.off = (int)(g.A - g.pad2);
    g.mr = (int)p->msk[0]; g.ms = (int)p->msk[1]; g.mt = (int)p->msk[2];
    const int64_t lim = (int64_t)1 << 29;
    g.i32 = g.D < lim && g.H < lim && g.W < lim && g.P < lim && g.Q < lim && g.O < lim &&
            g.pad0 < lim && g.pad1 < lim && g.pad2 < lim && g.H * g.W < ((int64_t)1 << 31);
    return g;
}

template <int R, int S, int T, int RY, int TX, int BY, int NST, bool RL>
static size_t smem_of() {
    typedef tileg<S, T, RY, TX, BY> G;
    return ((size_t)(R == 1 ? NST : R + 1) * G::SLOT + (RL ? wsh_floats<R, S, T>() : 0)) *
           sizeof(float);
}

static int forced_cap(void);

/* TILECONV_CUDA_DIRECT_ZC=n (tuning): n output planes a block of the 3D
 * ring and the register z window, in place of their rule's chunks. */
static void zc_knob(dgeom *g) {
    const char *zk = tc__knob_get(TC__KNOB_CUDA_DIRECT_ZC);
    const long long zn = zk ? atoll(zk) : 0;
    if (zn > 0) {
        g->zc = zn < g->P ? zn : g->P;
        g->nzc = (g->P + g->zc - 1) / g->zc;
    }
}

/* Blocks per SM of a kernel, cached (host-side cost on small problems). */
static int occupancy(const void *k, int threads, size_t smem, int *cache) {
    int v = __atomic_load_n(cache, __ATOMIC_RELAXED);
    if (v > 0) return v;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&v, k, threads, smem) != cudaSuccess || v < 1) {
        (void)cudaGetLastError();
        v = 1;
    }
    __atomic_store_n(cache, v, __ATOMIC_RELAXED);
    return v;
}

/* DM: the call's mask in device memory (b->w, reversed when a->wflip),
 * read by the _dm kernels; otherwise the host copy (b->hw) goes into the
 * kernel parameter. */
/* The plan's host mask (msk[0] x msk[1] x msk[2]) into an R x S x T
 * kernel parameter, zeros past its extent (the guarded variants) */
template <int R, int S, int T>
static void host_maskp(maskp<R * S * T> *m, const tc__problem *p, const float *hw) {
    memset(m, 0, sizeof *m);
    for (int64_t r = 0; r < p->msk[0]; r++)
        for (int64_t s = 0; s < p->msk[1]; s++)
            for (int64_t t = 0; t < p->msk[2]; t++)
                m->w[(r * S + s) * T + t] = hw[(r * p->msk[1] + s) * p->msk[2] + t];
}

template <int R, int S, int T, int RY, int TX, int BY, int NST, bool EX, bool RL, bool DM>
static tc_status launch_fast(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    typedef tileg<S, T, RY, TX, BY> G;
    /* DM: large masks take the rolled compute (dm_rolled) */
    const size_t smem = smem_of<R, S, T, RY, TX, BY, NST, DM ? dm_rolled<R, S, T, RL>() : RL>();
    static int attr_set = 0, occ_cache = 0;
    maskp<R * S * T> m;
    if constexpr (!DM) host_maskp<R, S, T>(&m, p, (const float *)b->hw);
    [[maybe_unused]] const float *dw = (const float *)b->w;
    [[maybe_unused]] const int flip = a->wflip;
    dgeom g = make_geom(p);
    g.vec_out = (p->out[2] % 4 == 0) && ((uintptr_t)b->y % 16 == 0);
    g.vec_in = (p->in[2] % 4 == 0) && ((uintptr_t)b->x % 16 == 0);
    const tc__cu_device *d = tc__cu_dev();
    const int sms = d ? d->sms : 132;
    const int64_t gx = tc__cu_div_up(g.O, G::TW), gyn = tc__cu_div_up(g.Q, G::TH);
    if constexpr (R == 1) {
        const void *k = DM ? (const void *)direct_f32_tiles_dm<S, T, RY, TX, BY, NST, EX, RL>
                           : (const void *)direct_f32_tiles<S, T, RY, TX, BY, NST, EX, RL>;
        if (!__atomic_load_n(&attr_set, __ATOMIC_RELAXED)) {
            TC_CU(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
            __atomic_store_n(&attr_set, 1, __ATOMIC_RELAXED);
        }
        const int64_t ntiles = gx * gyn * p->N * g.P;
        const int64_t blocks = tc_cu_direct_grid(occupancy(k, TX * BY, smem, &occ_cache),
                                                 sms, ntiles);
        if constexpr (DM)
            direct_f32_tiles_dm<S, T, RY, TX, BY, NST, EX, RL>
                <<<(unsigned)blocks, dim3(TX, BY), smem, b->s>>>((const float *)b->x,
                                                                 (float *)b->y, dw, flip, g);
        else
            direct_f32_tiles<S, T, RY, TX, BY, NST, EX, RL>
                <<<(unsigned)blocks, dim3(TX, BY), smem, b->s>>>((const float *)b->x,
                                                                 (float *)b->y, m, g);
        TC_CU_LAUNCH("cuda.filter.direct");
        return TC_OK;
    } else {
    const void *k = DM ? (const void *)direct_f32_ring_dm<R, S, T, RY, TX, BY, EX, RL>
                       : (const void *)direct_f32_ring<R, S, T, RY, TX, BY, EX, RL>;
    if (!__atomic_load_n(&attr_set, __ATOMIC_RELAXED)) {
        TC_CU(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        __atomic_store_n(&attr_set, 1, __ATOMIC_RELAXED);
    }
    /* about two waves of blocks, each streaming zc planes along z */
    const int64_t slots = (int64_t)occupancy(k, TX * BY, smem, &occ_cache) * sms;
    tc_cu_direct_zchunk(g.P, gx * gyn * p->N, slots, &g.zc, &g.nzc);
    zc_knob(&g); /* a 256^3 volume gets 6 by the rule: 8 input planes for 6 outputs */
    const int64_t gzn = p->N * g.nzc;
    TC__CU_FOR_GRID(gyn, gzn, {
        if constexpr (DM)
            direct_f32_ring_dm<R, S, T, RY, TX, BY, EX, RL>
                <<<dim3((unsigned)gx, gny, gnz), dim3(TX, BY), smem, b->s>>>(
                    (const float *)b->x, (float *)b->y, dw, flip, g, gy0, gz0);
        else
            direct_f32_ring<R, S, T, RY, TX, BY, EX, RL>
                <<<dim3((unsigned)gx, gny, gnz), dim3(TX, BY), smem, b->s>>>(
                    (const float *)b->x, (float *)b->y, m, g, gy0, gz0);
        TC_CU_LAUNCH("cuda.filter.direct");
    })
    return TC_OK;
    }
}

/* The NG >= 1 forms: lean persistent tiles (R == 1) and the register z
 * window (R > 1). */
template <int R, int S, int T, int RY, int TX, int BY, int NST, int NG>
static tc_status launch_ng(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    typedef tileg<S, T, RY, (R == 1 ? TX * NG : TX), BY> G;
    const size_t smem = (size_t)NST * G::SLOT * sizeof(float);
    static int attr_set = 0, occ_cache = 0;
    maskp<R * S * T> m;
    host_maskp<R, S, T>(&m, p, (const float *)b->hw);
    dgeom g = make_geom(p);
    g.vec_out = (p->out[2] % 4 == 0) && ((uintptr_t)b->y % 16 == 0);
    g.vec_in = (p->in[2] % 4 == 0) && ((uintptr_t)b->x % 16 == 0);
    const tc__cu_device *d = tc__cu_dev();
    const int sms = d ? d->sms : 132;
    const int cap = forced_cap();
    const int64_t gx = tc__cu_div_up(g.O, G::TW), gyn = tc__cu_div_up(g.Q, G::TH);
    if constexpr (R == 1) {
        if (g.P != g.D || g.pad0 != 0) /* a 1-plane mask: output plane = input plane */
            return tc__error(TC_ERR_INTERNAL, "cuda.filter.direct: lean tiles need P == D, pad 0 on z");
        auto k = direct_f32_lean<S, T, RY, TX, BY, NG, NST>;
        if (!__atomic_load_n(&attr_set, __ATOMIC_RELAXED)) {
            TC_CU(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
            __atomic_store_n(&attr_set, 1, __ATOMIC_RELAXED);
        }
        const int64_t ntiles = gx * gyn * p->N * g.P;
        int64_t blocks = tc_cu_direct_grid(occupancy((const void *)k, TX * BY, smem, &occ_cache),
                                           sms, ntiles);
        if (cap > 0 && blocks > cap) blocks = cap;
        k<<<(unsigned)blocks, dim3(TX, BY), smem, b->s>>>((const float *)b->x, (float *)b->y, m, g);
        TC_CU_LAUNCH("cuda.filter.direct");
        return TC_OK;
    } else {
        auto k = direct_f32_zreg<R, S, T, RY, TX, BY, NST>;
        if (!__atomic_load_n(&attr_set, __ATOMIC_RELAXED)) {
            TC_CU(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
            __atomic_store_n(&attr_set, 1, __ATOMIC_RELAXED);
        }
        /* the window's chunks (tc_cu_direct_zchunk_cap: 16 (R - 1) planes
         * where they give every SM a block, else the ring's two-wave
         * chunks capped there; its measurements with it); cap: one chunk
         * of the whole depth per xy tile */
        const int64_t slots = (int64_t)occupancy((const void *)k, TX * BY, smem, &occ_cache) * sms;
        tc_cu_direct_zchunk(g.P, gx * gyn * p->N, slots, &g.zc, &g.nzc);
        tc_cu_direct_zchunk_cap(g.P, R, gx * gyn * p->N, sms, &g.zc, &g.nzc);
        zc_knob(&g);
        if (cap > 0) { g.zc = g.P; g.nzc = 1; }
        const int64_t gzn = p->N * g.nzc;
        TC__CU_FOR_GRID(gyn, gzn, {
            k<<<dim3((unsigned)gx, gny, gnz), dim3(TX, BY), smem, b->s>>>(
                (const float *)b->x, (float *)b->y, m, g, gy0, gz0);
            TC_CU_LAUNCH("cuda.filter.direct");
        })
        return TC_OK;
    }
}

template <typename E, bool FL>
static tc_status launch_generic(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    dgeom g = make_geom(p);
    const int64_t gx = tc__cu_div_up(g.O, 32), gyn = tc__cu_div_up(g.Q, 8);
    const int64_t gzn = p->N * g.P;
    TC__CU_FOR_GRID(gyn, gzn, {
        direct_generic<E, FL><<<dim3((unsigned)gx, gny, gnz), dim3(32, 8), 0, b->s>>>(
            (const E *)b->x, (E *)b->y, (const E *)b->w, g, p->msk[0], p->msk[1],
            p->msk[2], (E)p->cval, gy0, gz0);
        TC_CU_LAUNCH("cuda.filter.direct generic");
    })
    return TC_OK;
}

/* The kernel of a variant: 1D/2D persistent tiles (R == 1) or the 3D ring
 * (NG 0); lean tiles (R == 1) or the register z window (NG >= 1). */
template <int R, int S, int T, int RY, int TX, int BY, int NST, bool EX, bool RL, int NG>
static const void *kernel_of() {
    if constexpr (NG > 0) {
        static_assert(EX && !RL, "the NG >= 1 forms are exact and unrolled");
        if constexpr (R == 1) return (const void *)direct_f32_lean<S, T, RY, TX, BY, NG, NST>;
        else return (const void *)direct_f32_zreg<R, S, T, RY, TX, BY, NST>;
    } else if constexpr (R == 1) return (const void *)direct_f32_tiles<S, T, RY, TX, BY, NST, EX, RL>;
    else return (const void *)direct_f32_ring<R, S, T, RY, TX, BY, EX, RL>;
}
template <int R, int S, int T, int RY, int TX, int BY, int NST, bool EX, bool RL, int NG>
static launch_t launch_of() {
    if constexpr (NG > 0) return launch_ng<R, S, T, RY, TX, BY, NST, NG>;
    else return launch_fast<R, S, T, RY, TX, BY, NST, EX, RL, false>;
}
/* The per-call device mask's forms: the NG 0 kernels only. */
template <int R, int S, int T, int RY, int TX, int BY, int NST, bool EX, bool RL, int NG>
static launch_t launch_dm_of() {
    if constexpr (NG > 0) return NULL;
    else return launch_fast<R, S, T, RY, TX, BY, NST, EX, RL, true>;
}
template <int R, int S, int T, int RY, int TX, int BY, int NST, bool EX, bool RL, int NG>
static const void *kernel_dm_of() {
    if constexpr (NG > 0) return NULL;
    else if constexpr (R == 1) return (const void *)direct_f32_tiles_dm<S, T, RY, TX, BY, NST, EX, RL>;
    else return (const void *)direct_f32_ring_dm<R, S, T, RY, TX, BY, EX, RL>;
}
/* The table of cuda_direct_tile.h (TC_CU_DIRECT_VARIANTS, where the choices
 * are explained), with each entry's launch and kernel: variants[i] is
 * tc_cu_direct_shapes[i]. */
#define KV(R, S, T, RY, TX, BY, NST, EX, ALT, RL, NG)                                           \
    {R, S, T, RY, TX, BY, NST, EX, ALT, RL, NG, launch_of<R, S, T, RY, TX, BY, NST, EX, RL, NG>(), \
     kernel_of<R, S, T, RY, TX, BY, NST, EX, RL, NG>(),                                            \
     launch_dm_of<R, S, T, RY, TX, BY, NST, EX, RL, NG>(), kernel_dm_of<R, S, T, RY, TX, BY, NST, EX, RL, NG>()}
static const variant variants[] = {TC_CU_DIRECT_VARIANTS(KV)};
#define NVARIANTS (int)(sizeof variants / sizeof variants[0])
static_assert(NVARIANTS == TC_CU_DIRECT_NSHAPES, "variants[i] is tc_cu_direct_shapes[i]");

static size_t variant_smem(const variant *v) {
    return tc_cu_direct_smem(&tc_cu_direct_shapes[v - variants]);
}

static int covers(const variant *v, int64_t R, int64_t S, int64_t T) {
    return tc_cu_direct_covers(&tc_cu_direct_shapes[v - variants], R, S, T);
}

/* TILECONV_CUDA_DIRECT_VARIANT=i (tuning and benchmarks): variant i of the
 * table (the order of tc_cuda_kernel_report's cuda.filter.direct lines), -1
 * when unset. "i:b" (tests) also caps the NG >= 1 forms' grid: at most b
 * blocks of lean tiles, one chunk of the whole depth per xy tile of the
 * register z window, so that small arrays walk several tiles or planes a
 * block. */
static int forced_parse(int *cap) {
    const char *e = tc__knob_get(TC__KNOB_CUDA_DIRECT_VARIANT);
    *cap = 0;
    if (!e || !*e) return -1;
    char *end;
    long i = strtol(e, &end, 10);
    if (end == e) return -2; /* no index (":2" is not variant 0) */
    if (*end == ':') {
        long c = strtol(end + 1, &end, 10);
        if (c < 1 || c > (1L << 30)) return -2;
        *cap = (int)c;
    }
    return (*end || i < 0 || i >= NVARIANTS) ? -2 : (int)i;
}
static int forced_variant(void) {
    int cap;
    return forced_parse(&cap);
}
static int forced_cap(void) {
    int cap;
    return forced_parse(&cap) >= 0 ? cap : 0;
}

/* The bucket for a mask (tc_cu_direct_pick), or NULL for the generic path. */
static const variant *pick(const tc__problem *p) {
    if (p->dtype != TC_FLOAT32) return NULL;
    const int i = tc_cu_direct_pick(p->msk[0], p->msk[1], p->msk[2], p->out[2], forced_variant());
    return i >= 0 ? &variants[i] : NULL;
}

/* The bucket for a per-call device mask (TC_PLAN_MASK_AT_EXECUTE): pick's,
 * unless that is an NG >= 1 form (no _dm kernel); then the variant pick
 * would take without those forms (an exact NG 0 match, else the smallest
 * guarded bucket), or NULL (generic). A forced NG >= 1 variant does not
 * apply (d_applicable). */
static const variant *pick_dm(const tc__problem *p) {
    const variant *v = pick(p);
    if (!v || v->launch_dm) return v;
    if (forced_variant() >= 0) return NULL;
    const int narrow = p->out[2] <= 64;
    for (int pass = narrow ? 0 : 1; pass < 2; pass++)
        for (int i = 0; i < NVARIANTS; i++) {
            const variant *u = &variants[i];
            if (u->ex && !u->alt && u->launch_dm && (u->TX < 32) == (pass == 0) &&
                covers(u, p->msk[0], p->msk[1], p->msk[2]))
                return u;
        }
    for (int i = 0; i < NVARIANTS; i++)
        if (!variants[i].ex && variants[i].launch_dm &&
            covers(&variants[i], p->msk[0], p->msk[1], p->msk[2]))
            return &variants[i];
    return NULL;
}

/* ---------------- solver ---------------- */
struct dstate {
    const variant *v;
    void *dmask; /* generic path */
    int mexec;   /* TC_PLAN_MASK_AT_EXECUTE: the call's mask, on the device */
};

static int d_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (p->op != TC_OP_FILTER) {
        if (why) snprintf(why, n, "filters only");
        return 0;
    }
    int fv = forced_variant();
    if (fv == -2) {
        if (why) snprintf(why, n, "TILECONV_CUDA_DIRECT_VARIANT=%s is not i or i:b (variant i 0..%d, "
                          "at most b blocks, 1..2^30)", tc__knob_get(TC__KNOB_CUDA_DIRECT_VARIANT), NVARIANTS - 1);
        return 0;
    }
    if (fv != -1 && (fv < 0 || !covers(&variants[fv], p->msk[0], p->msk[1], p->msk[2]) ||
                     p->dtype != TC_FLOAT32)) {
        if (why) snprintf(why, n, "TILECONV_CUDA_DIRECT_VARIANT=%s does not take this mask",
                          tc__knob_get(TC__KNOB_CUDA_DIRECT_VARIANT));
        return 0;
    }
    if (fv >= 0 && (e->flags & TC_PLAN_MASK_AT_EXECUTE) && !variants[fv].launch_dm) {
        if (why) snprintf(why, n, "TILECONV_CUDA_DIRECT_VARIANT=%s has no per-call mask form "
                          "(TC_PLAN_MASK_AT_EXECUTE: NG 0 variants only)",
                          tc__knob_get(TC__KNOB_CUDA_DIRECT_VARIANT));
        return 0;
    }
    if (p->C != 1 || p->K != 1 || p->G != 1 || p->stride[0] * p->stride[1] * p->stride[2] != 1 ||
        p->dil[0] * p->dil[1] * p->dil[2] != 1) {
        if (why) snprintf(why, n, "single channel, stride 1, dilation 1 only");
        return 0;
    }
    return 1;
}

static double d_estimate(const tc__problem *p, const tc__env *e) {
    const variant *v = (e->flags & TC_PLAN_MASK_AT_EXECUTE) ? pick_dm(p) : pick(p);
    double bytes = tc__problem_bytes(p);
    if (!v) {
        double eff = p->dtype == TC_FLOAT32 ? 0.12 : 0.06;
        return tc__cu_estimate(bytes, tc__problem_flops(p), eff);
    }
    double taps = (double)v->R * v->S * v->T;
    double fl = 2.0 * (double)tc__y_count(p) * taps;
    return tc__cu_estimate(bytes * 1.05, fl, 0.7);
}

static tc_status d_plan(const tc__problem *p, const tc__env *e, void **state) {
    dstate *s = (dstate *)calloc(1, sizeof *s);
    if (!s) return tc__error(TC_ERR_OUT_OF_MEMORY, "cuda.filter.direct: out of memory");
    s->mexec = (e->flags & TC_PLAN_MASK_AT_EXECUTE) != 0;
    s->v = s->mexec ? pick_dm(p) : pick(p);
    tc_status st = TC_OK;
    if (!s->v && !s->mexec) st = tc__cu_mask_upload(p, &s->dmask);
    if (st) { free(s); return st; }
    *state = s;
    return TC_OK;
}

static void d_destroy(void *state) {
    dstate *s = (dstate *)state;
    if (!s) return;
    tc__cu_mask_free(s->dmask);
    free(s);
}

static tc_status d_launch(const tc__args *a, const tc__cu_bufs *b) {
    const dstate *s = (const dstate *)a->state;
    const variant *v = s ? s->v : pick(a->p);
    if (s && s->mexec) { /* the call's mask: b->w on the device */
        if (v) return v->launch_dm(a, b);
        if (a->p->dtype == TC_FLOAT32)
            return a->wflip ? launch_generic<float, true>(a, b) : launch_generic<float, false>(a, b);
        return a->wflip ? launch_generic<double, true>(a, b) : launch_generic<double, false>(a, b);
    }
    if (v) return v->launch(a, b);
    return a->p->dtype == TC_FLOAT32 ? launch_generic<float, false>(a, b)
                                     : launch_generic<double, false>(a, b);
}

static tc_status d_execute(const tc__args *a) {
    const dstate *s = (const dstate *)a->state;
    /* the fast path takes the weights from the host copy (b->hw); a
     * per-call mask stays on the device (b->w only) */
    if (s && s->mexec) return tc__cu_run(a, NULL, TC__CU_W_DEVICE, d_launch);
    const variant *v = s ? s->v : pick(a->p);
    return tc__cu_run(a, s ? s->dmask : NULL, v == NULL, d_launch);
}

} // namespace

TC__CU_SOLVER(tc__solver_cuda_direct) = {
    "cuda.filter.direct", TC_BACKEND_CUDA, TC_OP_FILTER,
    "GPU direct filter: register-tiled, mask in the constant bank, halo in shared memory, 2.5D z-streaming.",
    tc__cu_available, d_applicable, d_estimate, NULL, d_plan, d_destroy, d_execute,
    NULL, NULL, NULL, TC__CAP_MASK_AT_EXECUTE, tc__cu_report_direct,
};

void tc__cu_report_direct(tc__cu_report *r) {
    for (int i = 0; i < NVARIANTS; i++) {
        const variant *v = &variants[i];
        char name[96];
        snprintf(name, sizeof name, "cuda.filter.direct #%d f32 R%dS%dT%d RY%d TX%d%s%s%s", i, v->R, v->S,
                 v->T, v->RY, v->TX, v->ex ? "" : " guarded", v->alt ? " alt" : "",
                 v->roll ? " rolled" : "");
        if (v->ng && v->R == 1)
            snprintf(name + strlen(name), sizeof name - strlen(name), " lean NG%d BY%d NST%d", v->ng,
                     v->BY, v->NST);
        else if (v->ng)
            snprintf(name + strlen(name), sizeof name - strlen(name), " zreg BY%d NST%d", v->BY, v->NST);
        else if (v->R == 1 && v->S > 1)
            snprintf(name + strlen(name), sizeof name - strlen(name), " NST%d", v->NST);
        size_t sm = variant_smem(v);
        if (sm > 48 * 1024)
            cudaFuncSetAttribute(v->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm);
        tc__cu_report_kernel(r, name, v->kernel, v->TX * v->BY, sm);
        if (v->kernel_dm) { /* the per-call device mask's form (TC_PLAN_MASK_AT_EXECUTE) */
            if (!v->roll && v->R * v->S * v->T > DM_REG_TAPS) /* its rolled weight rows */
                sm += (size_t)v->R * v->S * ((v->T + 3) / 4 * 4) * sizeof(float);
            char dm[104];
            snprintf(dm, sizeof dm, "cuda.filter.direct devmask%s", name + strlen("cuda.filter.direct"));
            if (sm > 48 * 1024)
                cudaFuncSetAttribute(v->kernel_dm, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm);
            tc__cu_report_kernel(r, dm, v->kernel_dm, v->TX * v->BY, sm);
        }
    }
    tc__cu_report_kernel(r, "cuda.filter.direct generic f32", (const void *)direct_generic<float, false>, 256, 0);
    tc__cu_report_kernel(r, "cuda.filter.direct generic f64", (const void *)direct_generic<double, false>, 256, 0);
}
