/*
 * cuda_filter_tc.cu - cuda.filter.tc-3xtf32: single-channel float32 filters
 * with large masks (2D from 9x9 taps, 3D from 5x5x5) on the TF32 tensor
 * cores at about float32 accuracy (docs/solvers/cuda-filter-tc.md).
 *
 * Stencil to matrix. For mask row s (and plane r) and a tile of output rows,
 *   out[y, x0 + n] += sum_c in[y + s, x0 + c] * T_s[c, n],
 *   T_s[c, n] = w[s, c - n] (0 <= c - n < T, else 0),
 * a banded Toeplitz matrix of K = T + 7 input columns (rounded up to KB
 * k-blocks of 8) by 8 output columns: one mma.sync m16n8k8 per (16 output
 * rows, 8 output columns, k-block). The A operand is the input window
 * itself, read straight from shared memory with ldmatrix (A for mask row s
 * is the window shifted down by s rows; A for the n-tile nt and k-block kb
 * is column block nt + kb, so each A fragment serves up to KB n-tiles). No
 * im2col buffer. The B fragments (the Toeplitz blocks) are built on the host
 * at plan time, in fragment order, already split into TF32 hi and lo parts:
 * one float4 {hi b0, hi b1, lo b0, lo b1} per lane, per (plane, row,
 * k-block), read with one 16-byte load a warp-wide (L1-resident).
 *
 * Split precision (3xTF32). Each input plane's window (tile + halo) is
 * copied to shared memory once (cp.async, the boundary mode mapping each
 * index on edge tiles) and split there once, in place, into hi =
 * cvt.rna.tf32(x) and lo = cvt.rna.tf32(x - hi); each k-step sums
 * a_lo b_hi + a_hi b_lo + a_hi b_hi (the small products first) into the
 * float32 accumulators. a_lo b_lo (below 2^-22 of the product) is dropped.
 * Promotion: each mask row's products (3 KB mmas a tile) are summed from
 * zero in the tensor cores, and that sum is added into the output's
 * float32 sum with an ordinary round-to-nearest add: the tensor cores'
 * accumulation may truncate (as found on V100 / A100), and one accumulator
 * over all S R KB 3 mmas (135 at 15x15) would then drift. A numpy model of
 * this kernel (truncating accumulation) gave 4-8x cuda.filter.direct's
 * error without promotion and below it with it
 * (docs/solvers/cuda-filter-tc.md).
 *
 * 3D: the register z window. A block owns an output tile (BM x BN) and a
 * chunk of output planes; it streams the chunk's input planes through two
 * shared slots (the next plane's copy in flight while one is computed) and
 * adds each plane into the R output planes it touches, whose accumulators
 * stay in registers; the oldest is stored once complete. 2D masks are the
 * R = 1 case (one plane, one slot).
 *
 * Non-finite data. A Toeplitz zero times an Inf or NaN outside an output's
 * true footprint would give NaN (0 * Inf), and the split turns Inf into
 * Inf and NaN. So the split flags a window that holds a non-finite value
 * (or one whose hi part overflows); the output planes that read it are
 * recomputed for that tile by a plain float32 sum over the mask, read from
 * global memory through the boundary mode (exact IEEE behaviour, slow, rare).
 * A mask with a non-finite or huge value is refused at plan time.
 *
 * Limits: float32, one channel, stride and dilation 1, masks with T (the
 * last axis) of 5..33 taps (KB 2..5), S of 5..64 rows, 2D masks of at least
 * 81 taps, 3D masks of R = 5..7 planes (the accumulator window is
 * compile-time); every boundary mode. Not per-call masks.
 */
#include "cuda/cuda_common.h"
#include "cuda/cuda_direct_tile.h" /* tc_cu_direct_zchunk: the same z chunks */

#include <math.h>
#include <stdlib.h>
#include <string.h>

namespace {

struct tgeom {
    int64_t D, H, W;        /* input */
    int64_t P, Q, O;        /* output */
    int64_t pad0, pad1, pad2;
    int64_t zc, nzc;        /* output planes per block, chunks per batch item */
    float cval;
    int mode;
    int S, T;               /* mask rows and columns (R is the template's) */
    int rows, wcn, pitch;   /* window rows (BM + S - 1), columns read (BN + T - 1), row pitch */
    int vec_out;            /* O even and y 8-byte aligned: float2 stores */
};

/* ---- device helpers ---- */
__device__ __forceinline__ unsigned tf32_rna(float v) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(v));
    return r;
}
__device__ __forceinline__ void mma_tf32(float *c, const unsigned *a, unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
/* A 16 x 8 float32 fragment (a0: rows 0-7 cols 0-3, a1: rows 8-15 cols
 * 0-3, a2: rows 0-7 cols 4-7, a3: rows 8-15 cols 4-7): four 8 x 4 float32
 * matrices, read as 8 x 8 b16 ones; addr is this lane's row address */
__device__ __forceinline__ void ldsm_x4(unsigned *a, unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
                 : "r"(addr));
}
__device__ __forceinline__ void cp4(float *dst, const float *src) {
    unsigned sa = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(sa), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void cp_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

/* Starts the copy of input plane iz (any integer: mapped by the mode) of
 * batch item xn: g.rows rows from iy0, g.wcn columns from ix0, raw float32
 * into the slot's hi array (pitch g.pitch). Edge tiles map each index;
 * cval where the mode says so. */
template <int NT>
__device__ __forceinline__ void issue_plane(float *hi, const float *__restrict__ xn, const tgeom &g,
                                            int64_t iz, int64_t iy0, int64_t ix0) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    constexpr int NW = NT / 32;
    const int64_t zi = tc__cu_bidx(iz, g.D, g.mode);
    if (zi < 0) {
        for (int r = warp; r < g.rows; r += NW)
            for (int c = lane; c < g.wcn; c += 32) hi[r * g.pitch + c] = g.cval;
        return;
    }
    const float *xp = xn + zi * g.H * g.W;
    if (iy0 >= 0 && iy0 + g.rows <= g.H && ix0 >= 0 && ix0 + g.wcn <= g.W) {
        for (int r = warp; r < g.rows; r += NW) {
            const float *src = xp + (iy0 + r) * g.W + ix0;
            for (int c = lane; c < g.wcn; c += 32) cp4(hi + r * g.pitch + c, src + c);
        }
        return;
    }
    for (int r = warp; r < g.rows; r += NW) {
        const int64_t ri = tc__cu_bidx(iy0 + r, g.H, g.mode);
        for (int c = lane; c < g.wcn; c += 32) {
            const int64_t ci = tc__cu_bidx(ix0 + c, g.W, g.mode);
            if (ri < 0 || ci < 0) hi[r * g.pitch + c] = g.cval;
            else cp4(hi + r * g.pitch + c, xp + ri * g.W + ci);
        }
    }
}

/* The exact fallback for a tile whose inputs hold a non-finite value:
 * output plane o of batch item xn / yn, rows y0.., columns x0.., a float32
 * sum over the R x S x T mask wm (correlation order), read from global
 * memory through the boundary mode. */
__device__ __forceinline__ void exact_tile(const float *__restrict__ xn, float *__restrict__ yo,
                                           const float *__restrict__ wm, const tgeom &g, int R,
                                           int64_t o, int64_t y0, int64_t x0, int BM, int BN) {
    for (int idx = threadIdx.x; idx < BM * BN; idx += blockDim.x) {
        const int64_t py = y0 + idx / BN, px = x0 + idx % BN;
        if (py >= g.Q || px >= g.O) continue;
        float acc = 0.f;
        for (int r = 0; r < R; r++) {
            const int64_t iz = tc__cu_bidx(o - g.pad0 + r, g.D, g.mode);
            for (int s = 0; s < g.S; s++) {
                const int64_t iy = tc__cu_bidx(py - g.pad1 + s, g.H, g.mode);
                const float *wr = wm + ((int64_t)r * g.S + s) * g.T;
                for (int t = 0; t < g.T; t++) {
                    const int64_t ix = tc__cu_bidx(px - g.pad2 + t, g.W, g.mode);
                    const float v = (iz < 0 || iy < 0 || ix < 0)
                                        ? g.cval
                                        : __ldg(xn + (iz * g.H + iy) * g.W + ix);
                    acc = fmaf(__ldg(wr + t), v, acc);
                }
            }
        }
        yo[py * g.O + px] = acc;
    }
}

/* The kernel. R mask planes (1: 2D), KB k-blocks of 8 input columns
 * (T + 7 <= 8 KB), warp tile MW m-tiles (16 rows) x NW n-tiles (8
 * columns), WM x WN warps: block tile BM = 16 MW WM rows x BN = 8 NW WN
 * columns. Accumulators: R x MW x NW x 4 registers a thread. */
template <int R, int KB, int MW, int NW, int WM, int WN, int MINB>
__global__ void __launch_bounds__(32 * WM * WN, MINB)
tcf_kernel(const float *__restrict__ x, float *__restrict__ y, const float4 *__restrict__ bt,
           const float *__restrict__ wm, const tgeom g, int64_t gy0, int64_t gz0) {
    constexpr int NT = 32 * WM * WN;
    constexpr int BM = 16 * MW * WM, BN = 8 * NW * WN;
    constexpr int WC = BN + 8 * (KB - 1); /* columns the A fragments read */
    extern __shared__ float4 smem4[];
    float *smem = reinterpret_cast<float *>(smem4);
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int wr0 = (warp / WN) * (16 * MW), wc0 = (warp % WN) * (8 * NW);
    const int P = g.pitch;
    const int arr = g.rows * P;  /* floats of one hi (or lo) array */
    const int slotf = 2 * arr;   /* hi then lo */

    const int64_t x0 = (int64_t)blockIdx.x * BN;
    const int64_t y0 = ((int64_t)blockIdx.y + gy0) * BM;
    const int64_t bz = (int64_t)blockIdx.z + gz0;
    const int64_t n = bz / g.nzc;
    const int64_t zs = (bz % g.nzc) * g.zc;
    const int64_t ze = zs + g.zc < g.P ? zs + g.zc : g.P;
    const int nout = (int)(ze - zs);
    const int L = nout + R - 1; /* input planes of the chunk */
    const int nsl = L > 1 ? 2 : 1;
    const float *xn = x + n * g.D * g.H * g.W;
    float *yn = y + n * g.P * g.Q * g.O;
    const int64_t iy0 = y0 - g.pad1, ix0 = x0 - g.pad2, iz0 = zs - g.pad0;

    /* columns the copies never write (wcn..WC) are zero in both parts */
    for (int s = 0; s < 2 * nsl; s++)
        for (int r = warp; r < g.rows; r += NT / 32)
            for (int c = g.wcn + lane; c < WC; c += 32) smem[s * arr + r * P + c] = 0.f;
    issue_plane<NT>(smem, xn, g, iz0, iy0, ix0);
    cp_commit();

    float acc[R][MW][NW][4];
#pragma unroll
    for (int a = 0; a < R; a++)
#pragma unroll
        for (int i = 0; i < MW; i++)
#pragma unroll
            for (int j = 0; j < NW; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) acc[a][i][j][e] = 0.f;

    /* this lane's ldmatrix row: matrix lane / 8 of the fragment */
    const int lrow = (lane & 7) + 8 * ((lane >> 3) & 1), lcol = 4 * (lane >> 4);
    const unsigned sbase = (unsigned)__cvta_generic_to_shared(smem);
    const int g4 = lane >> 2, t4 = lane & 3;
    unsigned badm = 0; /* bit i: input plane l - i held a non-finite value */

#pragma unroll 1
    for (int l = 0; l < L; l++) {
        const int cur = nsl == 2 ? (l & 1) : 0;
        cp_wait_all();
        __syncthreads(); /* plane l in its slot; the other slot's compute done */
        if (l + 1 < L) issue_plane<NT>(smem + (cur ^ 1) * slotf, xn, g, iz0 + l + 1, iy0, ix0);
        cp_commit();
        /* split plane l in place: hi over x, lo beside it */
        float *hi = smem + cur * slotf;
        int nonfin = 0;
        for (int r = warp; r < g.rows; r += NT / 32)
            for (int c = lane; c < g.wcn; c += 32) {
                const float v = hi[r * P + c];
                const unsigned h = tf32_rna(v);
                const float hf = __uint_as_float(h);
                hi[r * P + c] = hf;
                hi[arr + r * P + c] = __uint_as_float(tf32_rna(v - hf));
                nonfin |= !(fabsf(hf) <= 3.0e38f);
            }
        const int bad = __syncthreads_or(nonfin);
        badm = (badm << 1) | (bad ? 1u : 0u);
        if (!bad) {
            const unsigned shi = sbase + (unsigned)(cur * slotf) * 4u;
            const unsigned slo = shi + (unsigned)arr * 4u;
#pragma unroll
            for (int r = 0; r < R; r++) {
                const int j = l - r; /* output plane of the chunk this plane meets with mask plane r */
                if (j < 0 || j >= nout) continue;
#pragma unroll 1
                for (int s = 0; s < g.S; s++) {
                    const float4 *bp = bt + ((int64_t)(r * g.S + s) * KB) * 32 + lane;
                    unsigned bh0[KB], bh1[KB], bl0[KB], bl1[KB];
#pragma unroll
                    for (int kb = 0; kb < KB; kb++) {
                        const float4 q = __ldg(bp + kb * 32);
                        bh0[kb] = __float_as_uint(q.x);
                        bh1[kb] = __float_as_uint(q.y);
                        bl0[kb] = __float_as_uint(q.z);
                        bl1[kb] = __float_as_uint(q.w);
                    }
                    /* this row's products from zero, then added into acc with
                     * round-to-nearest adds (promotion: see the header) */
                    float tmp[MW][NW][4];
#pragma unroll
                    for (int i = 0; i < MW; i++)
#pragma unroll
                        for (int jj = 0; jj < NW; jj++)
#pragma unroll
                            for (int e = 0; e < 4; e++) tmp[i][jj][e] = 0.f;
#pragma unroll
                    for (int mw = 0; mw < MW; mw++) {
                        const unsigned roff =
                            (unsigned)(((wr0 + mw * 16 + s + lrow) * P + wc0 + lcol) * 4);
#pragma unroll
                        for (int cb = 0; cb < NW + KB - 1; cb++) {
                            unsigned ah[4], al[4];
                            ldsm_x4(ah, shi + roff + cb * 32u);
                            ldsm_x4(al, slo + roff + cb * 32u);
#pragma unroll
                            for (int kb = 0; kb < KB; kb++) {
                                const int nw = cb - kb;
                                if (nw < 0 || nw >= NW) continue;
                                float *c = tmp[mw][nw];
                                mma_tf32(c, al, bh0[kb], bh1[kb]);
                                mma_tf32(c, ah, bl0[kb], bl1[kb]);
                                mma_tf32(c, ah, bh0[kb], bh1[kb]);
                            }
                        }
                    }
#pragma unroll
                    for (int i = 0; i < MW; i++)
#pragma unroll
                        for (int jj = 0; jj < NW; jj++)
#pragma unroll
                            for (int e = 0; e < 4; e++) acc[R - 1 - r][i][jj][e] += tmp[i][jj][e];
                }
            }
        }
        if (l >= R - 1) { /* output plane zs + l - (R - 1) is complete */
            const int64_t o = zs + l - (R - 1);
            float *yo = yn + o * g.Q * g.O;
            if (badm & ((1u << R) - 1u)) {
                exact_tile(xn, yo, wm, g, R, o, y0, x0, BM, BN);
            } else {
#pragma unroll
                for (int mw = 0; mw < MW; mw++)
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        const int64_t py = y0 + wr0 + mw * 16 + g4 + 8 * h;
                        if (py >= g.Q) continue;
                        float *row = yo + py * g.O;
#pragma unroll
                        for (int nw = 0; nw < NW; nw++) {
                            const int64_t px = x0 + wc0 + nw * 8 + 2 * t4;
                            const float v0 = acc[0][mw][nw][2 * h], v1 = acc[0][mw][nw][2 * h + 1];
                            if (g.vec_out && px + 1 < g.O) {
                                __stcs(reinterpret_cast<float2 *>(row + px), make_float2(v0, v1));
                            } else {
                                if (px < g.O) __stcs(row + px, v0);
                                if (px + 1 < g.O) __stcs(row + px + 1, v1);
                            }
                        }
                    }
            }
        }
        /* acc[a] is output plane l + 1 - (R - 1) + a of the chunk for the next plane */
#pragma unroll
        for (int a = 0; a + 1 < R; a++)
#pragma unroll
            for (int i = 0; i < MW; i++)
#pragma unroll
                for (int jj = 0; jj < NW; jj++)
#pragma unroll
                    for (int e = 0; e < 4; e++) acc[a][i][jj][e] = acc[a + 1][i][jj][e];
#pragma unroll
        for (int i = 0; i < MW; i++)
#pragma unroll
            for (int jj = 0; jj < NW; jj++)
#pragma unroll
                for (int e = 0; e < 4; e++) acc[R - 1][i][jj][e] = 0.f;
    }
    cp_wait_all();
}

/* ---------------- variants ---------------- */
/* 2D (R = 1): 8 warps of 16 x 32 outputs (MW 1, NW 4), block tile 64 x 64,
 * 16 accumulators (and 16 for a row's products), at most 128 registers
 * (two blocks an SM; ptxas, sm_90: 116-128, no spills); one shared slot of
 * (64 + S - 1) x (8 KB + 60) floats, twice (hi, lo): 52 KB at 15x15. 3D
 * (R = 5..7): 16 warps of 16 x 16 (MW 1, NW 2), block tile 64 x 64, 8 R
 * accumulators, one block an SM (115-126 registers, no spills); two slots:
 * 83 KB at 5x5x5. A warp tile of 4 n-tiles (fewer A fragment loads per
 * mma) for 3D needs 16 R + 16 accumulators: past 128 registers at 16 warps
 * (spills at 5^3, measured with ptxas), or 8 warps an SM. */
typedef tc_status (*launch_t)(const tc__args *a, const tc__cu_bufs *b);

struct tstate;

struct variant {
    int R, KB, MW, NW, WM, WN;
    launch_t launch;
    const void *kernel;
};

struct tstate {
    const variant *v;
    float4 *bt;  /* device: the Toeplitz fragments, R S KB x 32 float4 */
    float *wm;   /* device: the mask (correlation order), for the exact fallback */
};

static size_t smem_bytes(int rows, int pitch, int nsl) {
    return (size_t)nsl * 2 * (size_t)rows * (size_t)pitch * sizeof(float);
}

template <int R, int KB, int MW, int NW, int WM, int WN>
constexpr int minb() { return R == 1 ? 2 : 1; }

template <int R, int KB, int MW, int NW, int WM, int WN>
static tc_status launch_tc(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    const tstate *st = (const tstate *)a->state;
    constexpr int BM = 16 * MW * WM, BN = 8 * NW * WN, NT = 32 * WM * WN;
    constexpr int WC = BN + 8 * (KB - 1);
    auto k = tcf_kernel<R, KB, MW, NW, WM, WN, minb<R, KB, MW, NW, WM, WN>()>;
    tgeom g;
    g.D = p->in[0]; g.H = p->in[1]; g.W = p->in[2];
    g.P = p->out[0]; g.Q = p->out[1]; g.O = p->out[2];
    g.pad0 = p->pad_lo[0]; g.pad1 = p->pad_lo[1]; g.pad2 = p->pad_lo[2];
    g.cval = (float)p->cval;
    g.mode = (int)p->mode;
    g.S = (int)p->msk[1]; g.T = (int)p->msk[2];
    g.rows = BM + g.S - 1;
    g.wcn = BN + g.T - 1;
    g.pitch = WC + 4; /* a multiple of 4, odd in 16-byte units: conflict-free ldmatrix */
    g.vec_out = (p->out[2] % 2 == 0) && ((uintptr_t)b->y % 8 == 0);
    const int64_t gx = tc__cu_div_up(g.O, BN), gyn = tc__cu_div_up(g.Q, BM);
    /* z chunks as cuda.filter.direct's ring: about two waves of blocks */
    const tc__cu_device *d = tc__cu_dev();
    const int sms = d ? d->sms : 132;
    const size_t smem2 = smem_bytes(g.rows, g.pitch, R == 1 ? 1 : 2);
    static int attr_max = 0;
    if ((int)smem2 > __atomic_load_n(&attr_max, __ATOMIC_RELAXED)) {
        TC_CU(cudaFuncSetAttribute((const void *)k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)smem2));
        __atomic_store_n(&attr_max, (int)smem2, __ATOMIC_RELAXED);
    }
    if (R == 1) { /* one plane a block, one slot (the kernel's nsl: L == 1) */
        g.zc = 1;
        g.nzc = g.P;
    } else {
        static int occ_cache = 0;
        int occ = __atomic_load_n(&occ_cache, __ATOMIC_RELAXED);
        if (occ < 1) {
            if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, (const void *)k, NT, smem2) !=
                    cudaSuccess ||
                occ < 1) {
                (void)cudaGetLastError();
                occ = 1;
            }
            __atomic_store_n(&occ_cache, occ, __ATOMIC_RELAXED);
        }
        tc_cu_direct_zchunk(g.P, gx * gyn * p->N, (int64_t)occ * sms, &g.zc, &g.nzc);
    }
    const size_t smem = smem_bytes(g.rows, g.pitch, R == 1 ? 1 : 2);
    const int64_t gzn = p->N * g.nzc;
    TC__CU_FOR_GRID(gyn, gzn, {
        k<<<dim3((unsigned)gx, gny, gnz), NT, smem, b->s>>>((const float *)b->x, (float *)b->y,
                                                           st->bt, st->wm, g, gy0, gz0);
        TC_CU_LAUNCH("cuda.filter.tc-3xtf32");
    })
    return TC_OK;
}

#define TV(R, KB, MW, NW, WM, WN)                                                                  \
    {R, KB, MW, NW, WM, WN, launch_tc<R, KB, MW, NW, WM, WN>,                                       \
     (const void *)tcf_kernel<R, KB, MW, NW, WM, WN, minb<R, KB, MW, NW, WM, WN>()>}
#define TV2D(KB) TV(1, KB, 1, 4, 4, 2)
#define TV3D(R, KB) TV(R, KB, 1, 2, 4, 4)
static const variant variants[] = {
    TV2D(2), TV2D(3), TV2D(4), TV2D(5),
    TV3D(5, 2), TV3D(5, 3), TV3D(5, 4), TV3D(5, 5),
    TV3D(6, 2), TV3D(6, 3), TV3D(6, 4), TV3D(6, 5),
    TV3D(7, 2), TV3D(7, 3), TV3D(7, 4), TV3D(7, 5),
};
#define NVARIANTS (int)(sizeof variants / sizeof variants[0])

static int kb_of(int64_t T) { return (int)((T + 7 + 7) / 8); }

static const variant *pick(const tc__problem *p) {
    const int R = (int)p->msk[0], KB = kb_of(p->msk[2]);
    for (int i = 0; i < NVARIANTS; i++)
        if (variants[i].R == R && variants[i].KB == KB) return &variants[i];
    return NULL;
}

/* ---------------- solver ---------------- */
static int t_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    (void)e;
    if (p->op != TC_OP_FILTER || p->dtype != TC_FLOAT32) {
        if (why) snprintf(why, n, "float32 filters only");
        return 0;
    }
    if (p->C != 1 || p->K != 1 || p->G != 1 || p->stride[0] * p->stride[1] * p->stride[2] != 1 ||
        p->dil[0] * p->dil[1] * p->dil[2] != 1) {
        if (why) snprintf(why, n, "single channel, stride 1, dilation 1 only");
        return 0;
    }
    const int64_t R = p->msk[0], S = p->msk[1], T = p->msk[2];
    const int ok2 = R == 1 && S >= 5 && T >= 5 && S * T >= 81;
    const int ok3 = R >= 5 && R <= 7 && S >= 5 && T >= 5;
    if (!(ok2 || ok3) || S > 64 || T > 33) {
        if (why)
            snprintf(why, n, "masks of 2D 81+ taps (each axis 5..64 rows, 5..33 columns) or 3D "
                             "5..7 planes of at least 5x5; this one is %lldx%lldx%lld",
                     (long long)R, (long long)S, (long long)T);
        return 0;
    }
    /* 32-bit shared offsets and window sizes; 64-bit global indexing */
    if (p->in[1] > ((int64_t)1 << 40) || p->in[2] > ((int64_t)1 << 40)) {
        if (why) snprintf(why, n, "array too large");
        return 0;
    }
    if (p->mask) { /* the split turns Inf into NaN: refuse such masks */
        const float *w = (const float *)p->mask;
        for (int64_t i = 0; i < R * S * T; i++)
            if (!(fabsf(w[i]) <= 3.0e38f)) {
                if (why) snprintf(why, n, "mask value %lld is not finite (or near FLT_MAX)",
                                  (long long)i);
                return 0;
            }
    }
    return 1;
}

/* untimed; the estimate keeps it forced-only until measured: 4x the
 * mask's FLOPs at cuda.filter.direct's generic-path efficiency (0.12 of
 * the FP32 peak; its tiled variants are estimated at 0.7 with at most ~3x
 * the true taps), plus 50 us: never the best estimate (ESTIMATE) and
 * outside MEASURE's 4x window of cuda.filter.direct's */
static double t_estimate(const tc__problem *p, const tc__env *e) {
    (void)e;
    const double taps = (double)p->msk[0] * p->msk[1] * p->msk[2];
    const double fl = 2.0 * (double)tc__y_count(p) * taps;
    return 4.0 * tc__cu_estimate(tc__problem_bytes(p) * 1.05, fl, 0.12) + 50e-6;
}

/* Round to TF32 (10 mantissa bits), to nearest, ties away from zero: the
 * host's cvt.rna.tf32.f32 for finite values */
static float tf32_host(float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    u = (u + 0x1000u) & 0xffffe000u;
    float r;
    memcpy(&r, &u, 4);
    return r;
}

static tc_status t_plan(const tc__problem *p, const tc__env *e, void **state) {
    (void)e;
    if (!p->mask) return tc__error(TC_ERR_INTERNAL, "cuda.filter.tc-3xtf32: no mask at plan time");
    const variant *v = pick(p);
    if (!v) return tc__error(TC_ERR_INTERNAL, "cuda.filter.tc-3xtf32: no kernel for this mask");
    const int R = (int)p->msk[0], S = (int)p->msk[1], T = (int)p->msk[2], KB = v->KB;
    const float *w = (const float *)p->mask;
    const size_t nf = (size_t)R * S * KB * 32;
    float4 *h = (float4 *)malloc(nf * sizeof(float4));
    tstate *s = (tstate *)calloc(1, sizeof *s);
    if (!h || !s) {
        free(h);
        free(s);
        return tc__error(TC_ERR_OUT_OF_MEMORY, "cuda.filter.tc-3xtf32: out of memory");
    }
    s->v = v;
    /* B fragment of lane (g = lane / 4, t = lane % 4) for (plane r, row rs,
     * k-block kb): b0 = T[8 kb + t][g], b1 = T[8 kb + t + 4][g], T[c][n] =
     * w[rs][c - n] inside the band, else 0 */
    for (int rs = 0; rs < R * S; rs++)
        for (int kb = 0; kb < KB; kb++)
            for (int lane = 0; lane < 32; lane++) {
                const int gq = lane >> 2, tq = lane & 3;
                float bv[2];
                for (int hh = 0; hh < 2; hh++) {
                    const int t = 8 * kb + tq + 4 * hh - gq;
                    bv[hh] = t >= 0 && t < T ? w[(size_t)rs * T + t] : 0.f;
                }
                const float h0 = tf32_host(bv[0]), h1 = tf32_host(bv[1]);
                h[((size_t)rs * KB + kb) * 32 + lane] =
                    make_float4(h0, h1, tf32_host(bv[0] - h0), tf32_host(bv[1] - h1));
            }
    tc_status st = TC_OK;
    cudaError_t ce = cudaMalloc((void **)&s->bt, nf * sizeof(float4));
    if (ce == cudaSuccess) ce = cudaMemcpy(s->bt, h, nf * sizeof(float4), cudaMemcpyHostToDevice);
    if (ce != cudaSuccess) st = tc__cu_fail(ce, "cuda.filter.tc-3xtf32: Toeplitz fragments", __FILE__, __LINE__);
    free(h);
    if (!st) st = tc__cu_mask_upload(p, (void **)&s->wm);
    if (st) {
        if (s->bt) cudaFree(s->bt);
        free(s);
        return st;
    }
    *state = s;
    return TC_OK;
}

static void t_destroy(void *state) {
    tstate *s = (tstate *)state;
    if (!s) return;
    if (s->bt) cudaFree(s->bt);
    tc__cu_mask_free(s->wm);
    free(s);
}

static tc_status t_launch(const tc__args *a, const tc__cu_bufs *b) {
    const tstate *s = (const tstate *)a->state;
    if (!s || !s->v) return tc__error(TC_ERR_INTERNAL, "cuda.filter.tc-3xtf32: no plan state");
    return s->v->launch(a, b);
}

/* the weights come from the plan (Toeplitz fragments, device mask): b->w unused */
static tc_status t_execute(const tc__args *a) { return tc__cu_run(a, NULL, 0, t_launch); }

static void t_report(tc__cu_report *r) {
    for (int i = 0; i < NVARIANTS; i++) {
        const variant *v = &variants[i];
        const int BM = 16 * v->MW * v->WM, BN = 8 * v->NW * v->WN;
        /* shared memory at a 15-row (2D) or 5-row (3D) mask, two slots for 3D */
        const int S = v->R == 1 ? 15 : 5;
        const size_t sm = smem_bytes(BM + S - 1, BN + 8 * (v->KB - 1) + 4, v->R == 1 ? 1 : 2);
        cudaFuncSetAttribute(v->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm);
        char name[96];
        snprintf(name, sizeof name, "cuda.filter.tc-3xtf32 R%d KB%d %dx%d S%d", v->R, v->KB, BM, BN, S);
        tc__cu_report_kernel(r, name, v->kernel, 32 * v->WM * v->WN, sm);
    }
}

} // namespace

TC__CU_SOLVER(tc__solver_cuda_filter_tc_3xtf32) = {
    "cuda.filter.tc-3xtf32", TC_BACKEND_CUDA, TC_OP_FILTER,
    "GPU filter on TF32 tensor cores at float32 accuracy (3xTF32 split): stencil as banded Toeplitz "
    "GEMM tiles (mma.sync m16n8k8), window split once in shared memory; 2D from 81 taps, 3D 5-7 "
    "planes; forced by name only (untimed).",
    tc__cu_available, t_applicable, t_estimate, NULL, t_plan, t_destroy, t_execute,
    NULL, NULL, NULL, 0, t_report,
};
