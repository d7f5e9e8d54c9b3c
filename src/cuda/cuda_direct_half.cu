/*
 * cuda_direct_half.cu - cuda.filter.direct-half: single-channel 1D/2D/3D
 * filters on float16 / bfloat16 arrays, read and written in 16 bits (the
 * core does not stage them: caps TC__CAP_HALF).
 *
 * Every value is read exactly (a 16-bit value is a float32), the products
 * are summed in float32 and each output is rounded once, to nearest even,
 * when stored (docs/semantics.md "Element types"): the function of the
 * staged float32 path with half the bytes moved.
 *
 * Fast path (masks of an exact bucket: 1D 3/5/7/9/15/31 taps, 2D 3x3, 5x5,
 * 7x7, 3D 3x3x3): the float32 mask (converted from the plan's 16-bit mask
 * on the host) is a __grid_constant__ kernel parameter, so each FFMA takes
 * its weight from the constant bank. A block's window (tile + halo) of an
 * input plane is copied raw (16-bit) into shared memory by 16-byte
 * cp.async, the shared rows aligned to the global ones: the window starts
 * at x0 - A, A = pad rounded up to 8 elements, so each thread reads its 8
 * columns' window as 16-byte shared loads and the 0-7 element offset
 * (A - pad) is a compile-time case of the unrolled compute. Each thread
 * converts each window row once and feeds RY rows x 8 columns of float32
 * sums; its 8 outputs of a row are rounded and stored as one 16-byte
 * streaming store where the row allows.
 *  - 1D / 2D (R == 1): persistent blocks walk the tiles (x, y, plane) with
 *    a stride of gridDim.x, NST = 3 shared slots, two tiles in flight
 *    while one is computed. 2D tiles 256 x 32 (32 x 8 threads, RY 4); 1D
 *    (1-row masks) 2048 x 1 (256 threads, RY 1).
 *  - 3D (R > 1): an xy tile walks a chunk of output planes along z with a
 *    ring of R + 1 plane windows (2.5D streaming), about two waves of
 *    blocks; two blocks an SM (at three, 80 registers spilled).
 *  Boundary modes are index maps of the window loader: a 16-byte chunk
 *  inside the row is copied from the mapped row (every mode costs what
 *  constant costs away from the left and right edges); where rows are not
 *  16-byte aligned (odd widths, offset arrays) a chunk inside the row takes
 *  4-byte loads (re-paired by byte permutes when it starts on an odd
 *  element); chunks that cross an edge map each element. cval is stored in the dtype, so the fast
 *  path takes CONSTANT only where cval is exactly representable.
 *
 * Generic path (every other mask, a cval the dtype does not hold, a
 * negative pad on the last axis): one output per thread, runtime tap
 * loops, the 16-bit mask on the device, cval in float32. It never fails
 * where the solver applies.
 */
#include "cuda/cuda_common.h"

extern "C" {
#include "core/half.h"
}

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdlib.h>
#include <string.h>

/* The planner picks the solver by its cost model (h_estimate: 2 (x + y)
 * bytes at 0.8 of the device bandwidth, scaled by what an H100 measured). */

namespace {

typedef unsigned short u16;

struct hgeom {
    int64_t N;            /* batch */
    int64_t D, H, W;      /* input */
    int64_t P, Q, O;      /* output */
    int64_t pad0, pad1, pad2;
    int64_t A;            /* pad2 rounded up to 8: shared column 0 = x0 - A */
    int64_t zc, nzc;      /* 3D: output planes per block, chunks per batch item */
    float cval;           /* generic path */
    unsigned cvb;         /* cval in the dtype (bits): fast path */
    int mode;
    int off;              /* A - pad2, 0..7 */
    int vec_in;           /* W % 8 == 0 and x 16-byte aligned */
    int vec_out;          /* O % 8 == 0 and y 16-byte aligned */
};

template <int N> struct wts { float w[N]; };

/* ---- 16-bit <-> float32 ---- */
template <bool BF> __device__ __forceinline__ float lo_f(unsigned w) {
    if constexpr (BF) return __uint_as_float(w << 16);
    else return __half2float(__ushort_as_half((u16)(w & 0xffffu)));
}
template <bool BF> __device__ __forceinline__ float hi_f(unsigned w) {
    if constexpr (BF) return __uint_as_float(w & 0xffff0000u);
    else return __half2float(__ushort_as_half((u16)(w >> 16)));
}
template <bool BF> __device__ __forceinline__ float to_f(u16 h) {
    if constexpr (BF) return __uint_as_float((unsigned)h << 16);
    else return __half2float(__ushort_as_half(h));
}
template <bool BF> __device__ __forceinline__ u16 from_f(float a) {
    if constexpr (BF) return __bfloat16_as_ushort(__float2bfloat16_rn(a));
    else return __half_as_ushort(__float2half_rn(a));
}
/* a in the low half (the lower address), b in the high half: one
 * F2FP.PACK_AB instruction on sm_90 */
template <bool BF> __device__ __forceinline__ unsigned pack2(float a, float b) {
    unsigned u;
    if constexpr (BF) {
        const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
        memcpy(&u, &h, 4);
    } else {
        const __half2 h = __floats2half2_rn(a, b);
        memcpy(&u, &h, 4);
    }
    return u;
}

__device__ __forceinline__ void cp16(void *dst, const void *src) {
    unsigned sa = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sa), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* Tile geometry of a bucket (R, S, T); RYF: output rows a thread of the 3D
 * ring (4, or 2 where TILECONV_CUDA_HALF_RING_RY=2 asks: tuning); AH: input
 * planes the 3D ring loads ahead (1, or 2 where
 * TILECONV_CUDA_HALF_RING_AHEAD=2 asks: tuning) */
template <int R, int S, int T, int RYF = 4, int AH = 1> struct cfg {
    static constexpr bool ROW = R == 1 && S == 1; /* 1-row masks: 1D tiles */
    static constexpr int TX = ROW ? 256 : 32, BY = ROW ? 1 : 8, RY = ROW ? 1 : R > 1 ? RYF : 4;
    static constexpr int NT = TX * BY;
    static constexpr int TW = 8 * TX, TH = BY * RY;
    static constexpr int ROWS = TH + S - 1;
    /* 16-byte chunks of a window row: TW + T - 1 columns after an offset
     * of up to 7 */
    static constexpr int NQ = TX + (T + 13) / 8;
    static constexpr int SP = 8 * NQ; /* row pitch, elements */
    static constexpr int SLOT = ROWS * SP;
    static constexpr int NSL = R == 1 ? 3 : R + AH;
    static constexpr size_t SMEM = (size_t)NSL * SLOT * sizeof(u16);
};

/* Starts loading the window of input plane iz (any integer; mapped by the
 * mode) of ROWS rows from row iy0 and NQ 16-byte chunks from column xa (a
 * multiple of 8) into a shared slot of row pitch 8 NQ. A chunk inside its
 * row of a 16-byte aligned array is one cp.async from the mapped row (no
 * register holds it, nothing waits here); chunks across an edge, and every
 * chunk of an unaligned array, are read element by element through the
 * mode; rows and planes outside the input under CONSTANT are cval.
 * EDGE (the 3D ring's tuning form TILECONV_CUDA_HALF_RING_EDGE=1, modes
 * other than CONSTANT): a chunk wholly outside an aligned row maps only
 * the elements a 1-column halo reads (column -1 or W; the others are
 * zeros no output reads), and the first such element a thread meets is
 * loaded into *pv and stored at *pd by the caller after its compute
 * (ring_flush), so that the load's latency is not waited for here. */
template <int ROWS, int NQ, int NT, bool EDGE = false>
__device__ __forceinline__ void issue_window(u16 *slot, const u16 *__restrict__ xn, const hgeom &g,
                                             int64_t iz, int64_t iy0, int64_t xa, int tid,
                                             u16 *pv = nullptr, u16 **pd = nullptr) {
    constexpr int SP = 8 * NQ;
    const unsigned cv2 = g.cvb | (g.cvb << 16);
    const uint4 fill = make_uint4(cv2, cv2, cv2, cv2);
    const int64_t zi = tc__cu_bidx_t<int64_t>(iz, g.D, g.mode);
    if (zi < 0) {
        for (int idx = tid; idx < ROWS * NQ; idx += NT)
            *reinterpret_cast<uint4 *>(slot + (idx / NQ) * SP + 8 * (idx % NQ)) = fill;
        return;
    }
    const u16 *xp = xn + zi * g.H * g.W;
    if (g.vec_in && iy0 >= 0 && iy0 + ROWS <= g.H && xa >= 0 && xa + 8 * NQ <= g.W) {
        /* the whole window inside the plane (uniform over the block): no
         * index map, one cp.async a chunk */
        const u16 *base = xp + iy0 * g.W + xa;
#pragma unroll 4
        for (int idx = tid; idx < ROWS * NQ; idx += NT) {
            const int r = idx / NQ, q = idx - r * NQ;
            cp16(slot + r * SP + 8 * q, base + r * g.W + 8 * q);
        }
        return;
    }
#pragma unroll 2
    for (int idx = tid; idx < ROWS * NQ; idx += NT) {
        const int r = idx / NQ, q = idx - r * NQ;
        u16 *dst = slot + r * SP + 8 * q;
        const int64_t ri = tc__cu_bidx_t<int64_t>(iy0 + r, g.H, g.mode);
        if (ri < 0) {
            *reinterpret_cast<uint4 *>(dst) = fill;
            continue;
        }
        const u16 *row = xp + ri * g.W;
        const int64_t c0 = xa + 8 * q;
        if (g.vec_in && c0 >= 0 && c0 + 8 <= g.W) {
            cp16(dst, row + c0);
            continue;
        }
        /* inside the row but not 16-byte aligned (odd widths, offset
         * arrays): four 4-byte loads, or five from one element earlier
         * with the halves re-paired, where those stay inside the row */
        const u16 *src = row + c0;
        if (c0 >= 0 && c0 + 8 <= g.W && ((uintptr_t)src & 3) == 0) {
            const unsigned *w = reinterpret_cast<const unsigned *>(src);
            *reinterpret_cast<uint4 *>(dst) = make_uint4(__ldg(w), __ldg(w + 1), __ldg(w + 2), __ldg(w + 3));
            continue;
        }
        if (c0 >= 1 && c0 + 9 <= g.W && ((uintptr_t)src & 3) == 2) {
            const unsigned *w = reinterpret_cast<const unsigned *>(src - 1);
            const unsigned w0 = __ldg(w), w1 = __ldg(w + 1), w2 = __ldg(w + 2), w3 = __ldg(w + 3),
                           w4 = __ldg(w + 4);
            /* element e is the high half of word e / 2 ... : bytes 2-3 of one
             * word, then bytes 0-1 of the next */
            *reinterpret_cast<uint4 *>(dst) =
                make_uint4(__byte_perm(w0, w1, 0x5432), __byte_perm(w1, w2, 0x5432),
                           __byte_perm(w2, w3, 0x5432), __byte_perm(w3, w4, 0x5432));
            continue;
        }
        /* a chunk wholly outside the row under CONSTANT (every x edge tile
         * of an aligned array has one a row): cval, one store */
        if (g.mode == TC_MODE_CONSTANT && (c0 + 8 <= 0 || c0 >= g.W)) {
            *reinterpret_cast<uint4 *>(dst) = fill;
            continue;
        }
        if constexpr (EDGE) {
            if (g.vec_in && (c0 + 8 <= 0 || c0 >= g.W)) {
                /* the one column a 1-column halo reads: -1 (element 7 of
                 * the chunk ending at 0) or W (element 0 of the chunk
                 * starting there); zeros elsewhere */
                *reinterpret_cast<uint4 *>(dst) = make_uint4(0u, 0u, 0u, 0u);
                const int e = c0 + 8 == 0 ? 7 : c0 == g.W ? 0 : -1;
                if (e < 0) continue;
                const int64_t ci = tc__cu_bidx_t<int64_t>(c0 + e, g.W, g.mode);
                if (ci < 0) continue; /* not under these modes */
                if (*pd == nullptr) {
                    *pv = __ldg(row + ci);
                    *pd = dst + e;
                } else {
                    dst[e] = __ldg(row + ci); /* a second one: at once */
                }
                continue;
            }
        }
        u16 v[8];
        if (g.W < ((int64_t)1 << 30)) { /* 32-bit index arithmetic: |c0| < 2^30 + 2^16 */
            const int c032 = (int)c0, W32 = (int)g.W;
#pragma unroll
            for (int e = 0; e < 8; e++) {
                const int ci = tc__cu_bidx_t<int>(c032 + e, W32, g.mode);
                v[e] = ci < 0 ? (u16)g.cvb : __ldg(row + ci);
            }
        } else {
#pragma unroll
            for (int e = 0; e < 8; e++) {
                const int64_t ci = tc__cu_bidx_t<int64_t>(c0 + e, g.W, g.mode);
                v[e] = ci < 0 ? (u16)g.cvb : __ldg(row + ci);
            }
        }
        *reinterpret_cast<uint4 *>(dst) =
            make_uint4(v[0] | ((unsigned)v[1] << 16), v[2] | ((unsigned)v[3] << 16),
                       v[4] | ((unsigned)v[5] << 16), v[6] | ((unsigned)v[7] << 16));
    }
}

/* One output tile from R plane windows pl[r]: each thread RY rows x 8
 * columns; the window of output column x0 + c starts at shared column
 * c + OFF. Each window row is loaded (16-byte shared loads) and converted
 * once and used by every output row it touches. */
template <bool BF, int R, int S, int T, int OFF, int RYF>
__device__ __forceinline__ void compute_store_off(const u16 *const (&pl)[R], const wts<R * S * T> &m,
                                                  u16 *__restrict__ yp, const hgeom &g, int64_t y0,
                                                  int64_t x0) {
    typedef cfg<R, S, T, RYF> C;
    constexpr int NC = (OFF + 8 + T - 1 + 7) / 8; /* 16-byte chunks a window row */
    const int tx = threadIdx.x, ty = threadIdx.y;
    float acc[C::RY][8];
#pragma unroll
    for (int j = 0; j < C::RY; j++)
#pragma unroll
        for (int i = 0; i < 8; i++) acc[j][i] = 0.f;
#pragma unroll
    for (int r = 0; r < R; r++) {
        const u16 *sl = pl[r] + (ty * C::RY) * C::SP + 8 * tx;
#pragma unroll
        for (int iy = 0; iy < C::RY + S - 1; iy++) {
            float v[8 * NC];
#pragma unroll
            for (int k = 0; k < NC; k++) {
                const uint4 q = *reinterpret_cast<const uint4 *>(sl + iy * C::SP + 8 * k);
                v[8 * k + 0] = lo_f<BF>(q.x); v[8 * k + 1] = hi_f<BF>(q.x);
                v[8 * k + 2] = lo_f<BF>(q.y); v[8 * k + 3] = hi_f<BF>(q.y);
                v[8 * k + 4] = lo_f<BF>(q.z); v[8 * k + 5] = hi_f<BF>(q.z);
                v[8 * k + 6] = lo_f<BF>(q.w); v[8 * k + 7] = hi_f<BF>(q.w);
            }
#pragma unroll
            for (int j = 0; j < C::RY; j++) {
                const int s = iy - j;
                if (s >= 0 && s < S) {
#pragma unroll
                    for (int t = 0; t < T; t++) {
                        const float wv = m.w[(r * S + s) * T + t];
#pragma unroll
                        for (int i = 0; i < 8; i++) acc[j][i] = fmaf(wv, v[OFF + i + t], acc[j][i]);
                    }
                }
            }
        }
    }
#pragma unroll
    for (int j = 0; j < C::RY; j++) {
        const int64_t py = y0 + ty * C::RY + j, px = x0 + 8 * tx;
        if (py >= g.Q) continue;
        u16 *row = yp + py * g.O;
        if (g.vec_out && px + 8 <= g.O) {
            __stcs(reinterpret_cast<uint4 *>(row + px),
                   make_uint4(pack2<BF>(acc[j][0], acc[j][1]), pack2<BF>(acc[j][2], acc[j][3]),
                              pack2<BF>(acc[j][4], acc[j][5]), pack2<BF>(acc[j][6], acc[j][7])));
        } else {
#pragma unroll
            for (int i = 0; i < 8; i++)
                if (px + i < g.O) row[px + i] = from_f<BF>(acc[j][i]);
        }
    }
}

template <bool BF, int R, int S, int T, int RYF = 4>
__device__ __forceinline__ void compute_store(const u16 *const (&pl)[R], const wts<R * S * T> &m,
                                              u16 *__restrict__ yp, const hgeom &g, int64_t y0,
                                              int64_t x0) {
    switch (g.off) { /* uniform: one case per launch */
    case 0: compute_store_off<BF, R, S, T, 0, RYF>(pl, m, yp, g, y0, x0); break;
    case 1: compute_store_off<BF, R, S, T, 1, RYF>(pl, m, yp, g, y0, x0); break;
    case 2: compute_store_off<BF, R, S, T, 2, RYF>(pl, m, yp, g, y0, x0); break;
    case 3: compute_store_off<BF, R, S, T, 3, RYF>(pl, m, yp, g, y0, x0); break;
    case 4: compute_store_off<BF, R, S, T, 4, RYF>(pl, m, yp, g, y0, x0); break;
    case 5: compute_store_off<BF, R, S, T, 5, RYF>(pl, m, yp, g, y0, x0); break;
    case 6: compute_store_off<BF, R, S, T, 6, RYF>(pl, m, yp, g, y0, x0); break;
    default: compute_store_off<BF, R, S, T, 7, RYF>(pl, m, yp, g, y0, x0); break;
    }
}

/* Tile t -> (x tile, y tile, batch item, output plane); 32-bit division
 * where the tile count allows. */
__device__ __forceinline__ void decode(int64_t t, int64_t gx, int64_t gy, int64_t P, bool small,
                                      int64_t *xt, int64_t *yt, int64_t *n, int64_t *z) {
    if (small) {
        const unsigned u = (unsigned)t, ugx = (unsigned)gx, ugy = (unsigned)gy, uP = (unsigned)P;
        const unsigned a = u / ugx, b = a / ugy, c = b / uP;
        *xt = u - a * ugx; *yt = a - b * ugy; *n = c; *z = b - c * uP;
    } else {
        const int64_t a = t / gx, b = a / gy, c = b / P;
        *xt = t - a * gx; *yt = a - b * gy; *n = c; *z = b - c * P;
    }
}

/* R == 1 (1D, 2D, and 3D problems with a one-plane mask): persistent tiles. */
template <bool BF, int S, int T>
__global__ void __launch_bounds__(cfg<1, S, T>::NT, 3)
    k_tiles(const u16 *__restrict__ x, u16 *__restrict__ y, const __grid_constant__ wts<S * T> m,
            const hgeom g) {
    typedef cfg<1, S, T> C;
    extern __shared__ uint4 smem4[];
    u16 *sm = reinterpret_cast<u16 *>(smem4);
    const int tid = threadIdx.y * C::TX + threadIdx.x;
    const int64_t gx = (g.O + C::TW - 1) / C::TW, gy = (g.Q + C::TH - 1) / C::TH;
    const int64_t nt = gx * gy * g.N * g.P;
    const bool small = nt < ((int64_t)1 << 31);
    const int64_t step = gridDim.x;
    const int64_t xin = g.D * g.H * g.W;
#pragma unroll
    for (int s = 0; s < C::NSL - 1; s++) {
        const int64_t t = blockIdx.x + s * step;
        if (t < nt) {
            int64_t xt, yt, n, z;
            decode(t, gx, gy, g.P, small, &xt, &yt, &n, &z);
            issue_window<C::ROWS, C::NQ, C::NT>(sm + s * C::SLOT, x + n * xin, g, z - g.pad0,
                                                yt * C::TH - g.pad1, xt * C::TW - g.A, tid);
        }
        cp_commit();
    }
    int k = 0;
    for (int64_t t = blockIdx.x; t < nt; t += step, k++) {
        const int64_t tn = t + (C::NSL - 1) * step;
        if (tn < nt) {
            int64_t xt, yt, n, z;
            decode(tn, gx, gy, g.P, small, &xt, &yt, &n, &z);
            issue_window<C::ROWS, C::NQ, C::NT>(sm + ((k + C::NSL - 1) % C::NSL) * C::SLOT, x + n * xin,
                                                g, z - g.pad0, yt * C::TH - g.pad1,
                                                xt * C::TW - g.A, tid);
        }
        cp_commit();
        cp_wait<C::NSL - 1>();
        __syncthreads();
        int64_t xt, yt, n, z;
        decode(t, gx, gy, g.P, small, &xt, &yt, &n, &z);
        const u16 *const pl[1] = {sm + (k % C::NSL) * C::SLOT};
        compute_store<BF, 1, S, T>(pl, m, y + (n * g.P + z) * g.Q * g.O, g, yt * C::TH, xt * C::TW);
        __syncthreads(); /* the slot is loaded again next iteration */
    }
}

/* R > 1: an xy tile (blockIdx.x, y) walks output planes z0 .. z0 + zc - 1
 * of a batch item (blockIdx.z: item x chunk) with a ring of R + 1 input
 * plane windows, one plane loaded ahead. */
template <bool BF, int R, int S, int T, int RYF, int AH, bool EDGE = false>
__global__ void __launch_bounds__(cfg<R, S, T, RYF, AH>::NT, RYF == 2 ? 3 : 2)
    k_ring(const u16 *__restrict__ x, u16 *__restrict__ y, const __grid_constant__ wts<R * S * T> m,
           const hgeom g, int64_t gy0, int64_t gz0) {
    typedef cfg<R, S, T, RYF, AH> C;
    extern __shared__ uint4 smem4[];
    u16 *sm = reinterpret_cast<u16 *>(smem4);
    const int tid = threadIdx.y * C::TX + threadIdx.x;
    const int64_t xt = blockIdx.x, yt = blockIdx.y + gy0, bz = blockIdx.z + gz0;
    const int64_t n = bz / g.nzc, z0 = (bz - n * g.nzc) * g.zc;
    const int64_t nz = g.P - z0 < g.zc ? g.P - z0 : g.zc;
    if (nz <= 0) return;
    const u16 *xn = x + n * g.D * g.H * g.W;
    u16 *yn = y + n * g.P * g.Q * g.O;
    const int64_t iy0 = yt * C::TH - g.pad1, xa = xt * C::TW - g.A;
    /* the first output plane's R input planes, and (AH 2) the next one's
     * last; one commit group a plane */
#pragma unroll
    for (int r = 0; r < R + AH - 1; r++) {
        if (r < R || r - R + 1 < nz)
            issue_window<C::ROWS, C::NQ, C::NT>(sm + r * C::SLOT, xn, g, z0 - g.pad0 + r, iy0, xa, tid);
        cp_commit();
    }
    int base = 0; /* slot of plane r = 0 */
    for (int64_t q = 0; q < nz; q++) {
        /* output plane q + AH's last input plane, into the slot that output
         * plane q - 1's first plane left (free since the barrier closing
         * iteration q - 1) */
        u16 pv = 0, *pd = nullptr; /* EDGE: an edge element loaded, stored after the compute */
        if (q + AH < nz) {
            int sn = base + R + AH - 1;
            if (sn >= C::NSL) sn -= C::NSL;
            issue_window<C::ROWS, C::NQ, C::NT, EDGE>(sm + sn * C::SLOT, xn, g,
                                                      z0 + q + R + AH - 1 - g.pad0, iy0, xa, tid, &pv, &pd);
        }
        cp_commit();
        cp_wait<AH>(); /* every group but the AH newest: this plane's R windows */
        __syncthreads();
        const u16 *pl[R];
#pragma unroll
        for (int r = 0; r < R; r++) {
            int s = base + r;
            if (s >= C::NSL) s -= C::NSL;
            pl[r] = sm + s * C::SLOT;
        }
        compute_store<BF, R, S, T, RYF>(pl, m, yn + (z0 + q) * g.Q * g.O, g, yt * C::TH, xt * C::TW);
        if constexpr (EDGE)
            if (pd) *pd = pv; /* before the barrier that hands the slot to the next plane */
        __syncthreads(); /* plane r = 0's slot is loaded next */
        base = base + 1 == C::NSL ? 0 : base + 1;
    }
}

/* Every other problem: one output per thread, runtime taps, the 16-bit
 * mask in global memory, cval in float32. */
template <bool BF>
__global__ void __launch_bounds__(256)
    k_generic(const u16 *__restrict__ x, u16 *__restrict__ y, const u16 *__restrict__ w, const hgeom g,
              int64_t R, int64_t S, int64_t T, int64_t gy0, int64_t gz0) {
    const int64_t o = (int64_t)blockIdx.x * 32 + threadIdx.x;
    const int64_t q = (int64_t)(blockIdx.y + gy0) * 8 + threadIdx.y;
    const int64_t pz = blockIdx.z + gz0;
    if (o >= g.O || q >= g.Q) return;
    const int64_t n = pz / g.P, z = pz - n * g.P;
    const u16 *xn = x + n * g.D * g.H * g.W;
    float acc = 0.f;
    for (int64_t r = 0; r < R; r++) {
        const int64_t zi = tc__cu_bidx(z - g.pad0 + r, g.D, g.mode);
        for (int64_t s = 0; s < S; s++) {
            const int64_t yi = tc__cu_bidx(q - g.pad1 + s, g.H, g.mode);
            const bool out = zi < 0 || yi < 0;
            const u16 *row = xn + (zi * g.H + yi) * g.W;
            const u16 *wr = w + (r * S + s) * T;
            for (int64_t t = 0; t < T; t++) {
                const int64_t xi = tc__cu_bidx(o - g.pad2 + t, g.W, g.mode);
                const float v = out || xi < 0 ? g.cval : to_f<BF>(__ldg(row + xi));
                acc = fmaf(to_f<BF>(__ldg(wr + t)), v, acc);
            }
        }
    }
    y[((n * g.P + z) * g.Q + q) * g.O + o] = from_f<BF>(acc);
}

/* ---------------- host side ---------------- */
static hgeom make_geom(const tc__problem *p, const tc__cu_bufs *b) {
    hgeom g;
    memset(&g, 0, sizeof g);
    g.N = p->N;
    g.D = p->in[0]; g.H = p->in[1]; g.W = p->in[2];
    g.P = p->out[0]; g.Q = p->out[1]; g.O = p->out[2];
    g.pad0 = p->pad_lo[0]; g.pad1 = p->pad_lo[1]; g.pad2 = p->pad_lo[2];
    g.A = g.pad2 > 0 ? (g.pad2 + 7) / 8 * 8 : 0;
    g.off = (int)(g.A - g.pad2); /* 0..7 on the fast path (pad2 >= 0) */
    g.mode = (int)p->mode;
    g.cval = (float)p->cval;
    g.cvb = p->dtype == TC_BFLOAT16 ? tc__f32_to_bf16(g.cval) : tc__f32_to_f16(g.cval);
    g.vec_in = g.W % 8 == 0 && (uintptr_t)b->x % 16 == 0;
    g.vec_out = g.O % 8 == 0 && (uintptr_t)b->y % 16 == 0;
    return g;
}

/* Blocks per SM of a kernel, cached. */
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

static tc_status smem_attr(const void *k, size_t smem, int *done) {
    if (smem > 48 * 1024 && !__atomic_load_n(done, __ATOMIC_RELAXED)) {
        TC_CU(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        __atomic_store_n(done, 1, __ATOMIC_RELAXED);
    }
    return TC_OK;
}

/* the float32 mask of a bucket from the plan's 16-bit one (host) */
template <bool BF, int R, int S, int T> static wts<R * S * T> m_of(const tc__cu_bufs *b) {
    wts<R * S * T> m;
    const u16 *hm = (const u16 *)b->hw;
    for (int i = 0; i < R * S * T; i++) m.w[i] = BF ? tc__bf16_to_f32(hm[i]) : tc__f16_to_f32(hm[i]);
    return m;
}

template <bool BF, int R, int S, int T> static const void *kernel_of() {
    if constexpr (R == 1) return (const void *)k_tiles<BF, S, T>;
    else return (const void *)k_ring<BF, R, S, T, 4, 1>;
}

/* The 3D ring (RYF rows a thread, AH planes ahead): about two waves of
 * blocks, each streaming zc output planes */
template <bool BF, int R, int S, int T, int RYF, int AH, bool EDGE = false>
static tc_status launch_ring(hgeom g, int sms, const tc__cu_bufs *b) {
    typedef cfg<R, S, T, RYF, AH> C;
    static int attr_done = 0, occ_cache = 0;
    const void *kp = (const void *)k_ring<BF, R, S, T, RYF, AH, EDGE>;
    tc_status st = smem_attr(kp, C::SMEM, &attr_done);
    if (st) return st;
    const int64_t slots = (int64_t)occupancy(kp, C::NT, C::SMEM, &occ_cache) * sms;
    const int64_t gx = tc__cu_div_up(g.O, C::TW), gy = tc__cu_div_up(g.Q, C::TH);
    const int64_t xy = gx * gy * g.N;
    int64_t nch = (2 * slots + xy - 1) / xy;
    if (nch > g.P) nch = g.P;
    if (nch < 1) nch = 1;
    g.zc = (g.P + nch - 1) / nch;
    g.nzc = (g.P + g.zc - 1) / g.zc;
    const int64_t gzn = g.N * g.nzc;
    const wts<R * S * T> m = m_of<BF, R, S, T>(b);
    TC__CU_FOR_GRID(gy, gzn, {
        k_ring<BF, R, S, T, RYF, AH, EDGE><<<dim3((unsigned)gx, gny, gnz), dim3(C::TX, C::BY), C::SMEM, b->s>>>(
            (const u16 *)b->x, (u16 *)b->y, m, g, gy0, gz0);
        TC_CU_LAUNCH("cuda.filter.direct-half");
    })
    return TC_OK;
}

template <bool BF, int R, int S, int T>
static tc_status launch_fast(const tc__args *a, const tc__cu_bufs *b) {
    const hgeom g = make_geom(a->p, b);
    const tc__cu_device *d = tc__cu_dev();
    const int sms = d ? d->sms : 132;
    if constexpr (R == 1) {
        typedef cfg<R, S, T> C;
        static int attr_done = 0, occ_cache = 0;
        const void *kp = kernel_of<BF, R, S, T>();
        tc_status st = smem_attr(kp, C::SMEM, &attr_done);
        if (st) return st;
        const int64_t slots = (int64_t)occupancy(kp, C::NT, C::SMEM, &occ_cache) * sms;
        const int64_t nt = tc__cu_div_up(g.O, C::TW) * tc__cu_div_up(g.Q, C::TH) * g.N * g.P;
        const int64_t blocks = nt < slots ? nt : slots;
        k_tiles<BF, S, T><<<(unsigned)blocks, dim3(C::TX, C::BY), C::SMEM, b->s>>>(
            (const u16 *)b->x, (u16 *)b->y, m_of<BF, R, S, T>(b), g);
        TC_CU_LAUNCH("cuda.filter.direct-half");
        return TC_OK;
    } else {
        /* the tuning forms (TILECONV_CUDA_HALF_RING_RY=2, _AHEAD=2), else the default; the
         * deferred edge column (modes other than CONSTANT) by default (H100, 512^3 float16:
         * 1.36-1.58x the full map in the four modes; bfloat16 reflect 0.683 ms); _EDGE=0:
         * the full map */
        const char *ry = tc__knob_get(TC__KNOB_CUDA_HALF_RING_RY);
        if (ry && ry[0] == '2' && !ry[1]) return launch_ring<BF, R, S, T, 2, 1>(g, sms, b);
        const char *ah = tc__knob_get(TC__KNOB_CUDA_HALF_RING_AHEAD);
        if (ah && ah[0] == '2' && !ah[1]) return launch_ring<BF, R, S, T, 4, 2>(g, sms, b);
        const char *ed = tc__knob_get(TC__KNOB_CUDA_HALF_RING_EDGE);
        const bool edge = !(ed && ed[0] == '0' && !ed[1]);
        if (edge && g.mode != TC_MODE_CONSTANT && g.vec_in && g.pad2 == 1)
            return launch_ring<BF, R, S, T, 4, 1, true>(g, sms, b);
        return launch_ring<BF, R, S, T, 4, 1>(g, sms, b);
    }
}

template <bool BF>
static tc_status launch_generic(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    hgeom g = make_geom(p, b);
    const int64_t gx = tc__cu_div_up(g.O, 32), gyn = tc__cu_div_up(g.Q, 8), gzn = g.N * g.P;
    TC__CU_FOR_GRID(gyn, gzn, {
        k_generic<BF><<<dim3((unsigned)gx, gny, gnz), dim3(32, 8), 0, b->s>>>(
            (const u16 *)b->x, (u16 *)b->y, (const u16 *)b->w, g, p->msk[0], p->msk[1], p->msk[2],
            gy0, gz0);
        TC_CU_LAUNCH("cuda.filter.direct-half generic");
    })
    return TC_OK;
}

typedef tc_status (*launch_t)(const tc__args *, const tc__cu_bufs *);
struct bucket {
    int R, S, T;
    launch_t launch[2];   /* float16, bfloat16 */
    const void *kernel[2];
    int threads;
    size_t smem;
};
#define HB(R, S, T)                                                                               \
    {R, S, T, {launch_fast<false, R, S, T>, launch_fast<true, R, S, T>},                           \
     {kernel_of<false, R, S, T>(), kernel_of<true, R, S, T>()}, cfg<R, S, T>::NT, cfg<R, S, T>::SMEM}
static const bucket buckets[] = {
    HB(1, 1, 3), HB(1, 1, 5), HB(1, 1, 7), HB(1, 1, 9), HB(1, 1, 15), HB(1, 1, 31),
    HB(1, 3, 3), HB(1, 5, 5), HB(1, 7, 7), HB(3, 3, 3),
};
#undef HB
#define NBUCKETS (int)(sizeof buckets / sizeof buckets[0])

static int cval_exact(const tc__problem *p) {
    const float c = (float)p->cval;
    if (c != c) return 1; /* NaN stays NaN */
    if ((double)c != p->cval) return 0;
    const float back = p->dtype == TC_BFLOAT16 ? tc__bf16_to_f32(tc__f32_to_bf16(c))
                                               : tc__f16_to_f32(tc__f32_to_f16(c));
    return back == c;
}

/* The fast bucket for the problem, or -1 for the generic kernel. */
static int pick(const tc__problem *p) {
    if (!tc__dtype_is_half(p->dtype) || p->pad_lo[2] < 0) return -1;
    if (p->mode == TC_MODE_CONSTANT && !cval_exact(p)) return -1;
    for (int i = 0; i < NBUCKETS; i++)
        if (buckets[i].R == p->msk[0] && buckets[i].S == p->msk[1] && buckets[i].T == p->msk[2])
            return i;
    return -1;
}

/* ---------------- solver ---------------- */
struct hstate {
    int b;       /* bucket, -1 generic */
    void *dmask; /* generic: the plan's 16-bit mask on the device */
};

static int h_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    (void)e;
    if (p->op != TC_OP_FILTER) {
        if (why) snprintf(why, n, "filters only");
        return 0;
    }
    if (!tc__dtype_is_half(p->dtype)) {
        if (why) snprintf(why, n, "float16 / bfloat16 only");
        return 0;
    }
    if (p->C != 1 || p->K != 1 || p->G != 1 || p->stride[0] * p->stride[1] * p->stride[2] != 1 ||
        p->dil[0] * p->dil[1] * p->dil[2] != 1) {
        if (why) snprintf(why, n, "single channel, stride 1, dilation 1 only");
        return 0;
    }
    return 1;
}

static double h_estimate(const tc__problem *p, const tc__env *e) {
    (void)e;
    const tc__cu_device *d = tc__cu_dev();
    if (!d) return 1e30;
    const int b = pick(p);
    const double bytes = 2.0 * ((double)tc__x_count(p) + (double)tc__y_count(p));
    if (b < 0) return tc__cu_estimate(bytes, tc__problem_flops(p), 0.06);
    /* the tile's halo read again from L2: ~1.1x the input. Measured on an
     * H100 (float16, bench/gpu_bench.cu "half" rows, 2996 GB/s copy):
     * 8192^2 k3 0.140 ms constant (this model: 0.123), 0.150-0.211 in the
     * other modes; 8191^2 (rows not 16-byte aligned) 0.376; 512^3 k3 the
     * plane ring 0.338 ms constant (model 0.246), nearest 0.855, reflect,
     * mirror and wrap 1.07-1.12 (the x edge chunks' element loads, every
     * block of a 512-wide ring being an edge block); the staged float32
     * path 0.689 and 1.378 ms. Those factors scale the model, so that the
     * staged path would take a case where it is faster. */
    double f = 1.0;
    if (buckets[b].R > 1) f = p->mode == TC_MODE_CONSTANT ? 1.4 : p->mode == TC_MODE_NEAREST ? 3.5 : 4.5;
    else if (p->mode != TC_MODE_CONSTANT && p->mode != TC_MODE_NEAREST) f = 1.6;
    if (p->in[2] % 8) f *= 2.7;
    const double tm = f * 1.1 * bytes / (0.8 * d->bandwidth);
    const double taps = (double)buckets[b].R * buckets[b].S * buckets[b].T;
    const double tf = 2.0 * (double)tc__y_count(p) * taps / (0.5 * d->peak_flops32);
    return (tm > tf ? tm : tf) + 5e-6;
}

static tc_status h_plan(const tc__problem *p, const tc__env *e, void **state) {
    (void)e;
    hstate *s = (hstate *)calloc(1, sizeof *s);
    if (!s) return tc__error(TC_ERR_OUT_OF_MEMORY, "cuda.filter.direct-half: out of memory");
    s->b = pick(p);
    if (s->b < 0) {
        tc_status st = tc__cu_mask_upload(p, &s->dmask); /* NULL when swapped: staged per call */
        if (st) { free(s); return st; }
    }
    *state = s;
    return TC_OK;
}

static void h_destroy(void *state) {
    hstate *s = (hstate *)state;
    if (!s) return;
    tc__cu_mask_free(s->dmask);
    free(s);
}

static tc_status h_launch(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    if (tc__y_count(p) == 0) return TC_OK;
    const hstate *s = (const hstate *)a->state;
    const int bi = s ? s->b : pick(p);
    const int bf = p->dtype == TC_BFLOAT16;
    if (bi >= 0) return buckets[bi].launch[bf](a, b);
    return bf ? launch_generic<true>(a, b) : launch_generic<false>(a, b);
}

static tc_status h_execute(const tc__args *a) {
    const hstate *s = (const hstate *)a->state;
    const int bi = s ? s->b : pick(a->p);
    /* the fast path takes the weights from the host mask (b->hw) */
    return tc__cu_run(a, s ? s->dmask : NULL, bi < 0, h_launch);
}

static void h_report(tc__cu_report *r) {
    for (int i = 0; i < NBUCKETS; i++) {
        const bucket *v = &buckets[i];
        for (int bf = 0; bf < 2; bf++) {
            char name[96];
            snprintf(name, sizeof name, "cuda.filter.direct-half %s R%dS%dT%d%s", bf ? "bf16" : "f16", v->R,
                     v->S, v->T, v->R > 1 ? " ring" : v->S == 1 ? " 1D tiles" : " tiles");
            if (v->smem > 48 * 1024)
                cudaFuncSetAttribute(v->kernel[bf], cudaFuncAttributeMaxDynamicSharedMemorySize, (int)v->smem);
            tc__cu_report_kernel(r, name, v->kernel[bf], v->threads, v->smem);
        }
    }
    tc__cu_report_kernel(r, "cuda.filter.direct-half generic f16", (const void *)k_generic<false>, 256, 0);
    tc__cu_report_kernel(r, "cuda.filter.direct-half generic bf16", (const void *)k_generic<true>, 256, 0);
}

} // namespace

TC__CU_SOLVER(tc__solver_cuda_direct_half) = {
    "cuda.filter.direct-half", TC_BACKEND_CUDA, TC_OP_FILTER,
    "GPU direct filter in float16 / bfloat16: 16-bit loads and stores, float32 sums, one rounding.",
    tc__cu_available, h_applicable, h_estimate, NULL, h_plan, h_destroy, h_execute,
    NULL, NULL, NULL, TC__CAP_HALF, h_report,
};
