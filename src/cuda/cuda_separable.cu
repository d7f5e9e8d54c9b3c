/*
 * cuda_separable.cu - cuda.filter.separable: rank-1 masks (w[r][s][t] = a[r] b[s]
 * c[t], found at plan time within float tolerance) as one 1D pass per axis
 * whose mask is longer than 1: x first, then y, then z. R+S+T taps per
 * output instead of R*S*T.
 *
 * Boundary modes survive the split because the extension of the input is a
 * per-axis index map: a pass along y reads rows of the x-filtered array at
 * mapped row indices, which equals filtering the extended input. In
 * constant mode a row outside the input is cval everywhere, so after the x
 * pass it is cval * sum(c): each later pass uses cval times the sums of the
 * factors already applied.
 *
 * float32 and float64; up to 256 taps per axis (mask in the kernel's
 * parameter space, i.e. the constant bank).
 *
 * Fused x + y (the default where it applies: both last axes' masks 2..33
 * taps; TILECONV_CUDA_SEPARABLE_FUSED=0 forces the per-axis passes): a
 * block owns a strip of FX output columns and ly output rows of one plane
 * and walks down it FY rows at a time. Each step copies the FY new input
 * rows (FX + Tx - 1 columns, boundary index map applied at the copy,
 * 16-byte cp.async on interior strips of aligned rows; two stages, the
 * next step's copies in flight while this one computes) into shared
 * memory, runs the x pass on them into a buffer of FY + Ty - 1 x-filtered rows
 * whose first Ty - 1 rows are the previous step's last ones, then the y
 * pass from that buffer to registers and stores FY x FX outputs: the
 * array is read once (plus the x halo, (FX + Tx - 1) / FX, and Ty - 1 rows
 * per strip) and written once. The x and y sums are the per-axis passes'
 * sums in the same order (tap 0 first, one fused multiply-add a tap, the
 * x-filtered row rounded to the element type in between); in constant
 * mode a row outside the input is x-filtered from cval instead of taking
 * cval * sum(c) rounded once, the one difference. A z mask (3D) runs in
 * sep_fused_xyz (below) where its ring fits, else (or with the knob at 2)
 * as the per-axis z pass over the fused kernel's output (2 reads and 2
 * writes in all instead of 3 and 3). By default (and with the knob at 3)
 * float32 3D masks up to 17 taps run in sep_zreg (the register z window,
 * below); other 3D masks take the fused x + y kernel and then the z pass
 * (the knob at 1 asks for the x + y + z ring, at 2 for x + y then z).
 * The knob at 4 takes the stream forms: the row stream x + y
 * (sep_stream_xy, below: a warp streams a column strip down its rows, the
 * y window in registers) where both masks have 2..17 taps, and for float32
 * 3D masks of at most 17 taps the register z window with the near form of
 * the boundary map.
 */
#include "cuda/cuda_common.h"
#include "cuda/cuda_direct_tile.h"

#include <cuda_pipeline_primitives.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SEP_MAX 256

namespace {

template <typename E> struct taps { E w[SEP_MAX]; };

struct pgeom {
    int64_t L, Lo, pad, inner; /* axis length in/out, pad_lo, elements after the axis */
    int T, mode;
};

/* Pass along an axis with inner > 1: threads along inner (coalesced), rows
 * along the axis; outer in blockIdx.z. */
template <typename E>
__global__ void __launch_bounds__(256)
sep_pass_inner(const E *__restrict__ x, E *__restrict__ y, const __grid_constant__ taps<E> w,
               const pgeom g, E cval, int64_t gy0, int64_t gz0) {
    int64_t ii = (int64_t)blockIdx.x * 32 + threadIdx.x;
    int64_t o = ((int64_t)blockIdx.y + gy0) * 8 + threadIdx.y;
    int64_t outer = (int64_t)blockIdx.z + gz0;
    if (ii >= g.inner || o >= g.Lo) return;
    const E *xp = x + outer * g.L * g.inner + ii;
    int64_t i0 = o - g.pad;
    E acc = 0;
    if (i0 >= 0 && i0 + g.T <= g.L) {
        for (int t = 0; t < g.T; t++) acc += w.w[t] * __ldg(xp + (i0 + t) * g.inner);
    } else {
        for (int t = 0; t < g.T; t++) {
            int64_t k = tc__cu_bidx(i0 + t, g.L, g.mode);
            acc += w.w[t] * (k < 0 ? cval : __ldg(xp + k * g.inner));
        }
    }
    y[(outer * g.Lo + o) * g.inner + ii] = acc;
}

/* Pass along the contiguous axis: a block filters 256 outputs of one row
 * from a shared-memory copy of its window. */
template <typename E>
__global__ void __launch_bounds__(256)
sep_pass_x(const E *__restrict__ x, E *__restrict__ y, const __grid_constant__ taps<E> w,
           const pgeom g, E cval, int64_t gy0) {
    __shared__ E win[256 + SEP_MAX];
    int64_t row = (int64_t)blockIdx.y + gy0;
    int64_t o0 = (int64_t)blockIdx.x * 256;
    const E *xr = x + row * g.L;
    int64_t i0 = o0 - g.pad;
    int n = 256 + g.T - 1;
    if (i0 >= 0 && i0 + n <= g.L) {
        for (int c = threadIdx.x; c < n; c += 256) win[c] = __ldg(xr + i0 + c);
    } else {
        for (int c = threadIdx.x; c < n; c += 256) {
            int64_t k = tc__cu_bidx(i0 + c, g.L, g.mode);
            win[c] = k < 0 ? cval : __ldg(xr + k);
        }
    }
    __syncthreads();
    int64_t o = o0 + threadIdx.x;
    if (o >= g.Lo) return;
    E acc = 0;
    for (int t = 0; t < g.T; t++) acc += w.w[t] * win[threadIdx.x + t];
    y[row * g.Lo + o] = acc;
}


/* ---- fused x + y ---- */
#define SEP_FMAX 33 /* taps per axis the fused kernel takes */

template <typename E> struct ftaps { E x[SEP_FMAX], y[SEP_FMAX]; };

struct fgeom {
    int64_t W, H, Wo, Ho, padx, pady; /* plane in / out, pad_lo along x and y */
    int64_t ly;                       /* output rows a block (a multiple of FY) */
    int Tx, Ty, mode, vec_ok;         /* vec_ok: rows start 16-byte aligned */
};

template <typename E> struct fcfg {
    static constexpr int THREADS = 256;
    static constexpr int FX = sizeof(E) == 4 ? 128 : 64; /* output columns a strip */
    static constexpr int FY = 32;                         /* output rows a step */
    static constexpr int VEC = 16 / (int)sizeof(E);       /* elements a 16-byte access */
    static constexpr int RX = 8;                          /* x-pass outputs a thread item */
    static constexpr int GY = THREADS / FX;               /* y-pass row groups */
    static constexpr int RY = FY / GY;                    /* y-pass outputs a thread */
};
/* shared layout of bucket MT: two stages (FY rows of SP elements each),
 * then the x-filtered rows (FY + MT - 1 rows of FX) */
template <typename E, int MT> struct flay {
    typedef fcfg<E> C;
    static constexpr int NV = (C::RX + MT - 1 + C::VEC - 1) / C::VEC; /* x window vectors */
    static constexpr int SP = C::FX - C::RX + NV * C::VEC;            /* >= FX + MT - 1 */
    static constexpr size_t BYTES = ((size_t)2 * C::FY * SP + (size_t)(C::FY + MT - 1) * C::FX) * sizeof(E);
};

template <typename E> struct vec16;
template <> struct vec16<float> { typedef float4 T; };
template <> struct vec16<double> { typedef double2 T; };
__device__ __forceinline__ void vsplit(const float4 &q, float *d) { d[0] = q.x; d[1] = q.y; d[2] = q.z; d[3] = q.w; }
__device__ __forceinline__ void vsplit(const double2 &q, double *d) { d[0] = q.x; d[1] = q.y; }
__device__ __forceinline__ float4 vjoin(const float *d) { return make_float4(d[0], d[1], d[2], d[3]); }
__device__ __forceinline__ double2 vjoin(const double *d) { return make_double2(d[0], d[1]); }
__device__ __forceinline__ float4 vfill(float c) { return make_float4(c, c, c, c); }
__device__ __forceinline__ double2 vfill(double c) { return make_double2(c, c); }

/* Issues the copies of input rows [r0, r0 + n) (n <= FY) of the plane into
 * the stage st: cp.async, 16 bytes a copy on interior strips of aligned
 * rows, else one element a copy from its boundary-mapped index; cval
 * stored directly where the index falls outside (constant mode), and
 * everywhere when xp is NULL (a plane outside the input). The caller
 * commits the group and waits for it. */
template <typename E, int MT>
__device__ __forceinline__ void stage_rows(const E *__restrict__ xp, E *st, const fgeom &g, E cval,
                                           int64_t ix0, int64_t r0, int n) {
    typedef fcfg<E> C;
    typedef flay<E, MT> L;
    typedef typename vec16<E>::T V;
    const int tid = threadIdx.x;
    const int sc = C::FX + g.Tx - 1;
    const int nvec = (sc + C::VEC - 1) / C::VEC;
    const bool xin = ix0 >= 0 && ix0 + sc <= g.W;
    if (g.vec_ok && ix0 >= 0 && ix0 % C::VEC == 0 && ix0 + (int64_t)nvec * C::VEC <= g.W) {
        const int tot = n * nvec;
        for (int e = tid; e < tot; e += C::THREADS) {
            const int r = e / nvec, cv = e - r * nvec;
            const int64_t k = xp ? tc__cu_bidx(r0 + r, g.H, g.mode) : -1;
            V *d = (V *)(st + r * L::SP) + cv;
            if (k < 0) *d = vfill(cval);
            else __pipeline_memcpy_async(d, (const V *)(xp + k * g.W + ix0) + cv, sizeof(V));
        }
    } else {
        const int tot = n * sc;
        for (int e = tid; e < tot; e += C::THREADS) {
            const int r = e / sc, c = e - r * sc;
            const int64_t k = xp ? tc__cu_bidx(r0 + r, g.H, g.mode) : -1;
            const E *src = NULL;
            if (k >= 0) {
                if (xin) src = xp + k * g.W + ix0 + c;
                else {
                    const int64_t kc = tc__cu_bidx(ix0 + c, g.W, g.mode);
                    if (kc >= 0) src = xp + k * g.W + kc;
                }
            }
            if (src) __pipeline_memcpy_async(st + r * L::SP + c, src, sizeof(E));
            else st[r * L::SP + c] = cval;
        }
    }
}

/* x pass of stage rows [0, n) into xb rows [d0, d0 + n): a thread item is
 * RX outputs from a window of NV 16-byte shared loads. */
template <typename E, int MT>
__device__ __forceinline__ void xpass_rows(const E *st, E *xb, const ftaps<E> &w, const fgeom &g,
                                           int n, int d0) {
    typedef fcfg<E> C;
    typedef flay<E, MT> L;
    typedef typename vec16<E>::T V;
    constexpr int IR = C::FX / C::RX; /* items a row */
    for (int it = threadIdx.x; it < n * IR; it += C::THREADS) {
        const int r = it / IR, c0 = (it % IR) * C::RX;
        E v[L::NV * C::VEC];
        const V *sv = (const V *)(st + r * L::SP + c0);
#pragma unroll
        for (int i = 0; i < L::NV; i++) vsplit(sv[i], v + i * C::VEC);
        E acc[C::RX];
#pragma unroll
        for (int j = 0; j < C::RX; j++) acc[j] = 0;
#pragma unroll
        for (int t = 0; t < MT; t++) {
            if (t < g.Tx) {
#pragma unroll
                for (int j = 0; j < C::RX; j++) acc[j] = fma(w.x[t], v[t + j], acc[j]);
            }
        }
        V *dv = (V *)(xb + (d0 + r) * C::FX + c0);
#pragma unroll
        for (int i = 0; i < C::RX / C::VEC; i++) dv[i] = vjoin(acc + i * C::VEC);
    }
}

/* One block: output columns [bx FX, +FX) x rows [by ly, +ly) of plane
 * blockIdx.z + gz0, FY rows a step; the copies of step s + 1 fly while
 * step s computes (two stages). */
template <typename E, int MT>
__global__ void __launch_bounds__(256, 2)
sep_fused_xy(const E *__restrict__ x, E *__restrict__ y, const __grid_constant__ ftaps<E> w,
             const fgeom g, E cval, int64_t gz0) {
    typedef fcfg<E> C;
    typedef flay<E, MT> L;
    extern __shared__ __align__(16) unsigned char fsm[];
    E *const st0 = (E *)fsm, *const st1 = st0 + C::FY * L::SP;
    E *const xb = st1 + C::FY * L::SP;
    const int64_t plane = (int64_t)blockIdx.z + gz0;
    const int64_t ox0 = (int64_t)blockIdx.x * C::FX, ix0 = ox0 - g.padx;
    const int64_t oyb = (int64_t)blockIdx.y * g.ly;
    const int64_t oye = oyb + g.ly < g.Ho ? oyb + g.ly : g.Ho;
    const E *xp = x + plane * g.H * g.W;
    E *yp = y + plane * g.Ho * g.Wo;
    const int h = g.Ty - 1; /* rows carried from step to step (Ty >= 2) */
    /* the strip's first Ty - 1 input rows (st1), then step 0's rows (st0) */
    stage_rows<E, MT>(xp, st1, g, cval, ix0, oyb - g.pady, h);
    __pipeline_commit();
    stage_rows<E, MT>(xp, st0, g, cval, ix0, oyb - g.pady + h,
                      oye - oyb < C::FY ? (int)(oye - oyb) : C::FY);
    __pipeline_commit();
    __pipeline_wait_prior(1);
    __syncthreads();
    xpass_rows<E, MT>(st1, xb, w, g, h, 0);
    const int c = threadIdx.x % C::FX, r0 = (threadIdx.x / C::FX) * C::RY;
    int step = 0;
    for (int64_t oy = oyb; oy < oye; oy += C::FY, step++) {
        const int n = oye - oy < C::FY ? (int)(oye - oy) : C::FY;
        const bool more = oy + C::FY < oye;
        E *cur = step & 1 ? st1 : st0, *nxt = step & 1 ? st0 : st1;
        __syncthreads(); /* nxt and xb rows [h, h + FY) are free again */
        if (more) {
            const int64_t left = oye - oy - C::FY;
            stage_rows<E, MT>(xp, nxt, g, cval, ix0, oy + C::FY - g.pady + h,
                              left < C::FY ? (int)left : C::FY);
        }
        __pipeline_commit();
        __pipeline_wait_prior(1); /* this step's rows have landed */
        __syncthreads();
        xpass_rows<E, MT>(cur, xb, w, g, n, h);
        __syncthreads();
        /* y pass: RY outputs of column c from xb rows r0 .. r0 + RY + Ty - 2 */
        E v[C::RY + MT - 1];
#pragma unroll
        for (int k = 0; k < C::RY + MT - 1; k++)
            if (k < C::RY + h) v[k] = xb[(r0 + k) * C::FX + c];
        E acc[C::RY];
#pragma unroll
        for (int j = 0; j < C::RY; j++) acc[j] = 0;
#pragma unroll
        for (int t = 0; t < MT; t++) {
            if (t < g.Ty) {
#pragma unroll
                for (int j = 0; j < C::RY; j++) acc[j] = fma(w.y[t], v[t + j], acc[j]);
            }
        }
        if (ox0 + c < g.Wo) {
            E *yo = yp + (oy + r0) * g.Wo + ox0 + c;
#pragma unroll
            for (int j = 0; j < C::RY; j++)
                if (r0 + j < n) yo[(int64_t)j * g.Wo] = acc[j];
        }
        if (!more) break;
        /* carry xb rows [FY, FY + h) to [0, h) (n == FY >= h here) */
        __syncthreads();
        E keep[(MT - 1) * C::FX / C::THREADS + 1];
#pragma unroll
        for (int i = 0; i < (MT - 1) * C::FX / C::THREADS + 1; i++) {
            const int e = threadIdx.x + i * C::THREADS;
            if (e < h * C::FX) keep[i] = xb[C::FY * C::FX + e];
        }
#pragma unroll
        for (int i = 0; i < (MT - 1) * C::FX / C::THREADS + 1; i++) {
            const int e = threadIdx.x + i * C::THREADS;
            if (e < h * C::FX) xb[e] = keep[i];
        }
    }
}

/* the fused kernel's mask buckets (taps a side, the larger of x and y) */
static constexpr int fused_mt[] = {5, 9, 13, 17, 25, 33};
#define SEP_NMT (int)(sizeof fused_mt / sizeof fused_mt[0])

/* A fused kernel's launch set-up, once: its dynamic shared-memory limit
 * raised to smem (*attr_set) and its resident blocks an SM at smem
 * (*occ, at least 1) into *o */
static cudaError_t sep_prepare(const void *k, size_t smem, int threads, int *attr_set, int *occ,
                               int *o) {
    if (!__atomic_load_n(attr_set, __ATOMIC_RELAXED)) {
        cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        if (e != cudaSuccess) return e;
        __atomic_store_n(attr_set, 1, __ATOMIC_RELAXED);
    }
    *o = __atomic_load_n(occ, __ATOMIC_RELAXED);
    if (*o < 1) {
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(o, k, threads, smem) != cudaSuccess || *o < 1) {
            (void)cudaGetLastError();
            *o = 1;
        }
        __atomic_store_n(occ, *o, __ATOMIC_RELAXED);
    }
    return cudaSuccess;
}

template <typename E, int MT>
static tc_status launch_fused_mt(const E *x, E *y, const ftaps<E> &w, fgeom g, int64_t planes,
                                 E cval, cudaStream_t s) {
    typedef fcfg<E> C;
    typedef flay<E, MT> L;
    static int attr_set, occ;
    auto k = sep_fused_xy<E, MT>;
    const size_t smem = L::BYTES;
    int o;
    TC_CU(sep_prepare((const void *)k, smem, C::THREADS, &attr_set, &occ, &o));
    const tc__cu_device *d = tc__cu_dev();
    const int64_t slots = (int64_t)o * (d ? d->sms : 132);
    /* one wave: split the strips along y until the blocks fill the
     * resident slots, each at least FY rows (and at most 65535 pieces) */
    const int64_t gx = tc__cu_div_up(g.Wo, C::FX), steps = tc__cu_div_up(g.Ho, C::FY);
    if (gx <= 0 || steps <= 0 || planes <= 0) return TC_OK;
    int64_t ny = slots / (gx * planes);
    if (ny < 1) ny = 1;
    if (ny > steps) ny = steps;
    g.ly = tc__cu_div_up(steps, ny) * C::FY;
    ny = tc__cu_div_up(g.Ho, g.ly);
    if (ny > 65535) {
        g.ly = tc__cu_div_up(g.Ho, 65535 * (int64_t)C::FY) * C::FY;
        ny = tc__cu_div_up(g.Ho, g.ly);
    }
    for (int64_t gz0 = 0; gz0 < planes; gz0 += TC__CU_GRID_MAX) {
        const unsigned gnz = (unsigned)(planes - gz0 < TC__CU_GRID_MAX ? planes - gz0 : TC__CU_GRID_MAX);
        k<<<dim3((unsigned)gx, (unsigned)ny, gnz), C::THREADS, smem, s>>>(x, y, w, g, cval, gz0);
    }
    return TC_OK;
}

template <typename E, int I = 0>
static tc_status launch_fused(int mt, const E *x, E *y, const ftaps<E> &w, const fgeom &g,
                              int64_t planes, E cval, cudaStream_t s) {
    if constexpr (I < SEP_NMT) {
        constexpr int MT = fused_mt[I];
        if (mt <= MT) return launch_fused_mt<E, MT>(x, y, w, g, planes, cval, s);
        return launch_fused<E, I + 1>(mt, x, y, w, g, planes, cval, s);
    } else {
        return tc__error(TC_ERR_INTERNAL, "cuda.filter.separable: no fused kernel for %d taps", mt);
    }
}


/* ---- fused x + y + z (3D) ----
 * A block owns FX output columns x ZY output rows of every output plane of
 * a z chunk and marches along z: per input plane, the ZY + Ty - 1 rows it
 * needs are copied (cp.async, the next plane's copies in flight), x- and
 * y-filtered into a ring of Tz planes of ZY x FX values in shared memory,
 * and once Tz planes are there the z pass sums the ring (tap 0 first) into
 * one output plane. A thread's y outputs and z sums are the same (row,
 * column) places of the ring, so the ring needs no barrier. */
template <typename E> struct zcfg {
    typedef fcfg<E> C;
    static constexpr int ZY = 8;            /* output rows a block */
    static constexpr int RZ = ZY / C::GY;   /* y/z outputs a thread */
};
template <typename E, int MT> static size_t xyz_bytes(int tz) {
    typedef fcfg<E> C;
    typedef flay<E, MT> L;
    constexpr int ZY = zcfg<E>::ZY;
    return ((size_t)2 * (ZY + MT - 1) * L::SP + (size_t)(ZY + MT - 1) * C::FX + (size_t)tz * ZY * C::FX) *
           sizeof(E);
}
struct zgeom {
    int64_t D, Do, padz, zc; /* input / output depth, pad_lo along z, output planes a block */
    int64_t nzc;             /* z chunks an item */
    int Tz;
};

template <typename E, int MT>
__global__ void __launch_bounds__(256, 1)
sep_fused_xyz(const E *__restrict__ x, E *__restrict__ y, const __grid_constant__ ftaps<E> w,
              const __grid_constant__ taps<E> wz, const fgeom g, const zgeom z, E cval, int64_t gz0) {
    typedef fcfg<E> C;
    typedef flay<E, MT> L;
    constexpr int ZY = zcfg<E>::ZY, RZ = zcfg<E>::RZ;
    extern __shared__ __align__(16) unsigned char zsm[];
    const int nr = ZY + g.Ty - 1; /* stage rows a plane */
    E *const st0 = (E *)zsm, *const st1 = st0 + (ZY + MT - 1) * L::SP;
    E *const xb = st1 + (ZY + MT - 1) * L::SP;
    E *const ring = xb + (ZY + MT - 1) * C::FX;
    const int64_t bz = (int64_t)blockIdx.z + gz0, item = bz / z.nzc;
    const int64_t oz0 = (bz % z.nzc) * z.zc;
    const int64_t oz1 = oz0 + z.zc < z.Do ? oz0 + z.zc : z.Do;
    const int64_t ox0 = (int64_t)blockIdx.x * C::FX, ix0 = ox0 - g.padx;
    const int64_t oy0 = (int64_t)blockIdx.y * ZY, iy0 = oy0 - g.pady;
    const E *xi = x + item * z.D * g.H * g.W;
    E *yi = y + item * z.Do * g.Ho * g.Wo;
    const int64_t np = oz1 - oz0 + z.Tz - 1; /* input planes */
    const int c = threadIdx.x % C::FX, r0 = (threadIdx.x / C::FX) * RZ;
    const int h = g.Ty - 1;
    {
        const int64_t kz = tc__cu_bidx(oz0 - z.padz, z.D, g.mode);
        stage_rows<E, MT>(kz < 0 ? NULL : xi + kz * g.H * g.W, st0, g, cval, ix0, iy0, nr);
        __pipeline_commit();
    }
    for (int64_t q = 0; q < np; q++) {
        E *cur = q & 1 ? st1 : st0, *nxt = q & 1 ? st0 : st1;
        __syncthreads(); /* nxt and xb are free again */
        if (q + 1 < np) {
            const int64_t kz = tc__cu_bidx(oz0 - z.padz + q + 1, z.D, g.mode);
            stage_rows<E, MT>(kz < 0 ? NULL : xi + kz * g.H * g.W, nxt, g, cval, ix0, iy0, nr);
        }
        __pipeline_commit();
        __pipeline_wait_prior(1); /* plane q's rows have landed */
        __syncthreads();
        xpass_rows<E, MT>(cur, xb, w, g, nr, 0);
        __syncthreads();
        /* y pass: RZ outputs of column c into ring slot q % Tz */
        E v[RZ + MT - 1];
#pragma unroll
        for (int k = 0; k < RZ + MT - 1; k++)
            if (k < RZ + h) v[k] = xb[(r0 + k) * C::FX + c];
        E acc[RZ];
#pragma unroll
        for (int j = 0; j < RZ; j++) acc[j] = 0;
#pragma unroll
        for (int t = 0; t < MT; t++) {
            if (t < g.Ty) {
#pragma unroll
                for (int j = 0; j < RZ; j++) acc[j] = fma(w.y[t], v[t + j], acc[j]);
            }
        }
        E *rs = ring + (int)(q % z.Tz) * (ZY * C::FX) + r0 * C::FX + c;
#pragma unroll
        for (int j = 0; j < RZ; j++) rs[j * C::FX] = acc[j];
        if (q < z.Tz - 1) continue;
        /* z pass: output plane oz0 + q - (Tz - 1) from ring slots
         * q - Tz + 1 .. q (mod Tz), tap 0 first */
        const int64_t oz = oz0 + q - (z.Tz - 1);
#pragma unroll
        for (int j = 0; j < RZ; j++) acc[j] = 0;
        int slot = (int)((q + 1) % z.Tz);
        for (int t = 0; t < z.Tz; t++) {
            const E *rp = ring + slot * (ZY * C::FX) + r0 * C::FX + c;
#pragma unroll
            for (int j = 0; j < RZ; j++) acc[j] = fma(wz.w[t], rp[j * C::FX], acc[j]);
            slot = slot + 1 == z.Tz ? 0 : slot + 1;
        }
        if (ox0 + c < g.Wo) {
            E *yo = yi + (oz * g.Ho + oy0 + r0) * g.Wo + ox0 + c;
#pragma unroll
            for (int j = 0; j < RZ; j++)
                if (oy0 + r0 + j < g.Ho) yo[(int64_t)j * g.Wo] = acc[j];
        }
    }
}

template <typename E, int MT>
static tc_status launch_xyz_mt(const E *x, E *y, const ftaps<E> &w, const taps<E> &wz, const fgeom &g,
                               zgeom z, int64_t items, E cval, cudaStream_t s) {
    typedef fcfg<E> C;
    static int attr_max;
    auto k = sep_fused_xyz<E, MT>;
    const size_t smem = xyz_bytes<E, MT>(z.Tz);
    const tc__cu_device *d = tc__cu_dev();
    if (__atomic_load_n(&attr_max, __ATOMIC_RELAXED) < (int)smem) {
        /* the most the device takes, once */
        const int mx = d ? (int)d->smem_optin : (int)smem;
        TC_CU(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, mx));
        __atomic_store_n(&attr_max, mx, __ATOMIC_RELAXED);
    }
    int o = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&o, k, C::THREADS, smem) != cudaSuccess || o < 1) {
        (void)cudaGetLastError();
        o = 1;
    }
    const int64_t slots = (int64_t)o * (d ? d->sms : 132);
    const int64_t gx = tc__cu_div_up(g.Wo, C::FX), gy = tc__cu_div_up(g.Ho, zcfg<E>::ZY);
    if (gx <= 0 || gy <= 0 || z.Do <= 0 || items <= 0) return TC_OK;
    if (gy > 65535) return tc__error(TC_ERR_INTERNAL, "cuda.filter.separable: %lld row tiles", (long long)gy);
    /* one wave: z chunks until the blocks fill the resident slots */
    z.nzc = slots / (gx * gy * items);
    if (z.nzc < 1) z.nzc = 1;
    if (z.nzc > z.Do) z.nzc = z.Do;
    z.zc = tc__cu_div_up(z.Do, z.nzc);
    z.nzc = tc__cu_div_up(z.Do, z.zc);
    const int64_t nb = items * z.nzc;
    for (int64_t gz0 = 0; gz0 < nb; gz0 += TC__CU_GRID_MAX) {
        const unsigned gnz = (unsigned)(nb - gz0 < TC__CU_GRID_MAX ? nb - gz0 : TC__CU_GRID_MAX);
        k<<<dim3((unsigned)gx, (unsigned)gy, gnz), C::THREADS, smem, s>>>(x, y, w, wz, g, z, cval, gz0);
    }
    return TC_OK;
}

template <typename E, int I = 0>
static tc_status launch_xyz(int mt, const E *x, E *y, const ftaps<E> &w, const taps<E> &wz,
                            const fgeom &g, const zgeom &z, int64_t items, E cval, cudaStream_t s) {
    if constexpr (I < SEP_NMT) {
        constexpr int MT = fused_mt[I];
        if (mt <= MT) return launch_xyz_mt<E, MT>(x, y, w, wz, g, z, items, cval, s);
        return launch_xyz<E, I + 1>(mt, x, y, w, wz, g, z, items, cval, s);
    } else {
        return tc__error(TC_ERR_INTERNAL, "cuda.filter.separable: no fused kernel for %d taps", mt);
    }
}
/* shared bytes of the x + y + z kernel for the problem's masks */
static size_t xyz_smem(const tc__problem *p) {
    const int mt = (int)(p->msk[2] > p->msk[1] ? p->msk[2] : p->msk[1]), tz = (int)p->msk[0];
    size_t b = 0;
    for (int i = 0; i < SEP_NMT && !b; i++)
        if (mt <= fused_mt[i]) {
            switch (i) {
#define SEP_XYZ_B(I)                                                                           \
    case I: b = p->dtype == TC_FLOAT32 ? xyz_bytes<float, fused_mt[I]>(tz) : xyz_bytes<double, fused_mt[I]>(tz); break;
                SEP_XYZ_B(0) SEP_XYZ_B(1) SEP_XYZ_B(2) SEP_XYZ_B(3) SEP_XYZ_B(4) SEP_XYZ_B(5)
#undef SEP_XYZ_B
            }
        }
    return b;
}

/* ---- register z window (x + y + z, float32; TILECONV_CUDA_SEPARABLE_FUSED=3) ----
 * A block of 256 threads owns RF_FX (64) output columns x RF_TY (16) output
 * rows of every output plane of a z chunk and marches along z, one input
 * plane a step (NST = 4 shared stages: three planes' copies in flight):
 * - copy: the TY + Ty - 1 input rows of 16-byte vectors covering the
 *   columns ix0 - (ix0 mod 4) .. ix0 + FX + Tx - 2 (cp.async; a vector
 *   outside the row, or on unaligned rows, element by element through the
 *   boundary map; cval stored directly where the index falls outside, and
 *   for a whole plane outside the input in constant mode). Each thread's
 *   copies (at most NCP) are worked out once (the in-plane offset, or
 *   how to fill the vector), the same for every plane.
 * - y pass first: a thread item is 8 y outputs of one column of the FX +
 *   Tx - 1 columns the x pass needs (one 4-byte shared load a row, lanes
 *   on consecutive columns), into a buffer of TY rows; the y halo of the
 *   tile costs copies only, and the x halo Ty (FX + Tx - 1) / FX taps an
 *   output (x first would cost Tx (TY + Ty - 1) / TY).
 * - x pass: a thread's 4 consecutive outputs of one row from NV 16-byte
 *   loads of the buffer, to registers.
 * - z pass in registers: acc[MT][4] holds the partial sums of the output
 *   planes the thread's 4 (row, column) places feed. Output plane o
 *   (chunk-relative) lives in slot (o + Tz - 1) mod MT; input plane q adds
 *   tap t = Tz - 1 - u into slot (q + u) mod MT for u < Tz (the taps
 *   reversed on the host: wz[u] = tap Tz - 1 - u), so slot q mod MT has
 *   just taken its last tap: stored (once q >= Tz - 1) and zeroed. The slot
 *   indices are compile-time within each of the MT cases of q mod MT (one
 *   branch a plane), so that nothing need move between registers (the
 *   SASS not inspected: no disassembler in the toolkit here). Each sum takes
 *   its taps in plane order, tap 0 first.
 * Every plane's x sums (and y sums) are the per-axis passes' sums tap 0
 * first with one fused multiply-add a tap, but y before x: the rounding
 * differs from the per-axis passes (x, then y) by the order of the two 1D
 * filters only. float32 only (the window is MT x 4 registers a thread;
 * float64 takes knob 1's kernels); all three masks at most RF_MAXT taps.
 * Each bucket has a kernel with tap guards and one without (FULL: all
 * three masks of the bucket's size). */
#define RF_MAXT 17
template <int MT, int TYV = 16> struct rcfg {
    static constexpr int FX = 64;  /* output columns a tile */
    static constexpr int TY = TYV; /* output rows a tile: 16, or 32 (one block of 512 an SM; tuning) */
    static constexpr int THREADS = (FX / 4) * TY;
    static constexpr int RX = 4;   /* x/z outputs a thread: consecutive columns of one row */
    static constexpr int RYY = 8;  /* y outputs a y-pass item (one column) */
    static constexpr int NST = 4;  /* shared stages (NST - 1 planes in flight) */
    static constexpr int SR = TY + MT - 1;                          /* stage rows */
    static constexpr int NVS = (3 + FX + MT - 1 + 3) / 4;           /* 16-byte vectors a stage row */
    static constexpr int SPS = 4 * NVS;                             /* stage row pitch */
    static constexpr int NV = (RX + MT - 1 + 3) / 4;                /* x window vectors */
    static constexpr int SPY = FX - RX + 4 * NV;                    /* y buffer pitch, >= FX + MT - 1 */
    static constexpr int NCP = (SR * NVS + THREADS - 1) / THREADS;  /* stage copies a thread */
    static constexpr int YI = SPY * (TY / RYY);                     /* y-pass items */
    static constexpr int SLOT = SR * SPS;
    static constexpr size_t BYTES = ((size_t)NST * SLOT + (size_t)TY * SPY) * sizeof(float);
    static_assert(THREADS == (FX / RX) * TY, "one x item a thread");
    static_assert(YI <= THREADS, "one y item a thread");
};
struct rtaps { float x[RF_MAXT], y[RF_MAXT], zr[RF_MAXT]; /* zr[u]: z tap Tz - 1 - u */ };
struct rgeom {
    int64_t W, H, Wo, Ho, padx, pady; /* plane in / out, pad_lo along x and y */
    int64_t D, Do, padz;              /* depth in / out, pad_lo along z */
    int64_t zc, nzc;                  /* output planes a block, z chunks an item */
    int Tx, Ty, Tz, mode;
    int vin, vout; /* input rows / output rows 16-byte aligned (W, Wo multiples of 4) */
};

/* Copies of one input plane (xp; NULL: a plane outside the input in constant
 * mode) into a stage: code >= 0 a 16-byte vector at xp + code, -1 cval, -2
 * element by element (stage index e), -3 nothing. */
template <int MT, bool NEAR, int TYV = 16>
__device__ __forceinline__ void rz_issue(const float *xp, float *st, const int (&code)[rcfg<MT, TYV>::NCP],
                                         const rgeom &g, float cval, const int *cm) {
    typedef rcfg<MT, TYV> C;
#pragma unroll
    for (int k = 0; k < C::NCP; k++) {
        const int cd = code[k];
        if (cd == -3) continue;
        const int e = threadIdx.x + k * C::THREADS, r = e / C::NVS, cv = e - r * C::NVS;
        float *d = st + r * C::SPS + 4 * cv;
        if (cd >= 0 && xp) {
            __pipeline_memcpy_async((float4 *)d, (const float4 *)(xp + cd), sizeof(float4));
        } else if (NEAR && cd == -2 && xp) { /* the block's column and row maps */
            const int kr = cm[4 * C::NVS + r];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int kc = cm[4 * cv + i];
                if (kr >= 0 && kc >= 0) __pipeline_memcpy_async(d + i, xp + (int64_t)kr * g.W + kc, sizeof(float));
                else d[i] = cval;
            }
        } else if (cd == -2 && xp) {
            const int64_t ix0 = (int64_t)blockIdx.x * C::FX - g.padx, ixa = ix0 - (((ix0 % 4) + 4) % 4);
            const int64_t iy0 = (int64_t)blockIdx.y * C::TY - g.pady;
            const int64_t kr = tc__cu_bidx_t<int64_t, NEAR>(iy0 + r, g.H, g.mode);
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int64_t kc = tc__cu_bidx_t<int64_t, NEAR>(ixa + 4 * cv + i, g.W, g.mode);
                if (kr >= 0 && kc >= 0) __pipeline_memcpy_async(d + i, xp + kr * g.W + kc, sizeof(float));
                else d[i] = cval;
            }
        } else {
            *(float4 *)d = make_float4(cval, cval, cval, cval);
        }
    }
}

/* FULL: Tx = Ty = Tz = MT (no tap guards); NEAR: the boundary map's near form (no remainder within a
 * period), the stage's columns and rows mapped once a block into shared memory (after the y buffer),
 * where the element-by-element copies read them */
template <int MT, bool FULL, bool NEAR = false, int TYV = 16>
__global__ void __launch_bounds__(16 * TYV, 32 / TYV)
sep_zreg(const float *__restrict__ x, float *__restrict__ y, const __grid_constant__ rtaps w, const rgeom g,
         float cval, int64_t gz0) {
    typedef rcfg<MT, TYV> C;
    extern __shared__ __align__(16) unsigned char rsm[];
    float *const stg = (float *)rsm;          /* NST stages of SR x SPS */
    float *const yb = stg + C::NST * C::SLOT; /* TY x SPY y-filtered values */
    const int tid = threadIdx.x;
    const int64_t bz = (int64_t)blockIdx.z + gz0, item = bz / g.nzc;
    const int64_t oz0 = (bz % g.nzc) * g.zc;
    const int64_t oz1 = oz0 + g.zc < g.Do ? oz0 + g.zc : g.Do;
    const int64_t ox0 = (int64_t)blockIdx.x * C::FX, ix0 = ox0 - g.padx;
    const int off = (int)(((ix0 % 4) + 4) % 4); /* ix0 - ixa: stage vectors start 4-aligned */
    const int64_t ixa = ix0 - off;
    const int64_t oy0 = (int64_t)blockIdx.y * C::TY, iy0 = oy0 - g.pady;
    const float *xi = x + item * g.D * g.H * g.W;
    float *yi = y + item * g.Do * g.Ho * g.Wo;
    const int np = (int)(oz1 - oz0) + g.Tz - 1; /* input planes of the chunk */
    const int nrows = C::TY + g.Ty - 1, ncols = off + C::FX + g.Tx - 1;
    int code[C::NCP];
#pragma unroll
    for (int k = 0; k < C::NCP; k++) {
        const int e = tid + k * C::THREADS, r = e / C::NVS, cv = e - r * C::NVS;
        if (e >= C::SR * C::NVS || r >= nrows || 4 * cv >= ncols) { code[k] = -3; continue; }
        const int64_t kr = tc__cu_bidx_t<int64_t, NEAR>(iy0 + r, g.H, g.mode), gc = ixa + 4 * cv;
        if (kr < 0) code[k] = -1;
        else if (g.vin && gc >= 0 && gc + 4 <= g.W) code[k] = (int)(kr * g.W + gc);
        else code[k] = -2;
    }
    const int64_t plane = g.H * g.W;
    const int *cm = NULL;
    if constexpr (NEAR) { /* the boundary map of the stage's columns and rows, once */
        int *m = (int *)(yb + C::TY * C::SPY);
        for (int e = tid; e < 4 * C::NVS; e += C::THREADS) m[e] = (int)tc__cu_bidx_t<int64_t, true>(ixa + e, g.W, g.mode);
        for (int r = tid; r < C::SR; r += C::THREADS)
            m[4 * C::NVS + r] = (int)tc__cu_bidx_t<int64_t, true>(iy0 + r, g.H, g.mode);
        __syncthreads();
        cm = m;
    }
#pragma unroll 1
    for (int p = 0; p < C::NST - 1; p++) {
        if (p < np) {
            const int64_t kz = tc__cu_bidx_t<int64_t, NEAR>(oz0 - g.padz + p, g.D, g.mode);
            rz_issue<MT, NEAR, TYV>(kz < 0 ? NULL : xi + kz * plane, stg + p * C::SLOT, code, g, cval, cm);
        }
        __pipeline_commit();
    }
    float acc[MT][C::RX];
#pragma unroll
    for (int a = 0; a < MT; a++)
#pragma unroll
        for (int j = 0; j < C::RX; j++) acc[a][j] = 0.f;
    const int xr = tid / (C::FX / C::RX), xc = (tid % (C::FX / C::RX)) * C::RX; /* x item */
    const int yc = tid % C::SPY, yr0 = (tid / C::SPY) * C::RYY;                 /* y item */
    const bool yon = tid < C::YI && yc < C::FX + g.Tx - 1;
    const int h = FULL ? MT - 1 : g.Ty - 1, tz = FULL ? MT : g.Tz;
    const int64_t oy = oy0 + xr, ox = ox0 + xc;
    float *const yrow = yi + oy * g.Wo + ox; /* + output plane * Ho Wo */
    int sl = 0, s = 0;
#pragma unroll 1
    for (int q = 0; q < np; q++) {
        __pipeline_wait_prior(C::NST - 2); /* plane q has landed (NST - 2 younger may pend) */
        __syncthreads();                   /* ... for all; plane q - 1's stage and yb are free */
        if (q + C::NST - 1 < np) {
            const int64_t kz = tc__cu_bidx_t<int64_t, NEAR>(oz0 - g.padz + q + C::NST - 1, g.D, g.mode);
            rz_issue<MT, NEAR, TYV>(kz < 0 ? NULL : xi + kz * plane, stg + (sl == 0 ? C::NST - 1 : sl - 1) * C::SLOT,
                         code, g, cval, cm);
        }
        __pipeline_commit();
        if (yon) { /* y pass: RYY outputs of column yc */
            /* row k feeds output j with tap k - j (taps in order, tap 0
             * first); one row live at a time */
            const float *cs = stg + sl * C::SLOT + yr0 * C::SPS + off + yc;
            float a[C::RYY];
#pragma unroll
            for (int j = 0; j < C::RYY; j++) a[j] = 0.f;
#pragma unroll
            for (int k = 0; k < C::RYY + MT - 1; k++) {
                if (k < C::RYY + h) {
                    const float v = cs[k * C::SPS];
#pragma unroll
                    for (int j = 0; j < C::RYY; j++)
                        if (k - j >= 0 && k - j < MT && (FULL || k - j < h + 1)) a[j] = fmaf(w.y[k - j], v, a[j]);
                }
            }
#pragma unroll
            for (int j = 0; j < C::RYY; j++) yb[(yr0 + j) * C::SPY + yc] = a[j];
        }
        __syncthreads();
        float xo[C::RX];
        { /* x pass: RX outputs of row xr from NV 16-byte loads */
            float v[4 * C::NV];
            const float4 *sv = (const float4 *)(yb + xr * C::SPY + xc);
#pragma unroll
            for (int i = 0; i < C::NV; i++) vsplit(sv[i], v + 4 * i);
#pragma unroll
            for (int j = 0; j < C::RX; j++) xo[j] = 0.f;
#pragma unroll
            for (int t = 0; t < MT; t++) {
                if (FULL || t < g.Tx) {
#pragma unroll
                    for (int j = 0; j < C::RX; j++) xo[j] = fmaf(w.x[t], v[t + j], xo[j]);
                }
            }
        }
        /* z: into the window, case s = q mod MT */
        const bool st = q >= tz - 1 && oy < g.Ho;
        float *const yo = yrow + (oz0 + q - (tz - 1)) * g.Ho * g.Wo;
#pragma unroll
        for (int S = 0; S < MT; S++) {
            if (s == S) {
#pragma unroll
                for (int u = 0; u < MT; u++) {
                    if (u < tz) {
#pragma unroll
                        for (int j = 0; j < C::RX; j++)
                            acc[(S + u) % MT][j] = fmaf(w.zr[u], xo[j], acc[(S + u) % MT][j]);
                    }
                }
                if (st) {
                    if (g.vout && ox + C::RX <= g.Wo) {
                        *(float4 *)yo = make_float4(acc[S][0], acc[S][1], acc[S][2], acc[S][3]);
                    } else {
#pragma unroll
                        for (int j = 0; j < C::RX; j++)
                            if (ox + j < g.Wo) yo[j] = acc[S][j];
                    }
                }
#pragma unroll
                for (int j = 0; j < C::RX; j++) acc[S][j] = 0.f;
            }
        }
        s = s + 1 == MT ? 0 : s + 1;
        sl = sl + 1 == C::NST ? 0 : sl + 1;
    }
}
/* ---- end register z window ---- */

/* the register window's buckets (taps, the largest of x, y and z) */
static constexpr int zreg_mt[] = {5, 9, 13, 17};
#define SEP_NZT (int)(sizeof zreg_mt / sizeof zreg_mt[0])

template <int MT, bool FULL, bool NEAR, int TYV = 16>
static tc_status launch_zreg_mt(const float *x, float *y, const rtaps &w, rgeom g, int64_t items, float cval,
                                cudaStream_t s) {
    typedef rcfg<MT, TYV> C;
    static int attr_set, occ;
    auto k = sep_zreg<MT, FULL, NEAR, TYV>;
    /* NEAR: + the column and row maps */
    const size_t smem = C::BYTES + (NEAR ? (size_t)(4 * C::NVS + C::SR) * sizeof(int) : 0);
    int o;
    TC_CU(sep_prepare((const void *)k, smem, C::THREADS, &attr_set, &occ, &o));
    const tc__cu_device *d = tc__cu_dev();
    const int64_t slots = (int64_t)o * (d ? d->sms : 132);
    const int64_t gx = tc__cu_div_up(g.Wo, C::FX), gy = tc__cu_div_up(g.Ho, C::TY);
    if (gx <= 0 || gy <= 0 || g.Do <= 0 || items <= 0) return TC_OK;
    if (gx > 65535 || gy > 65535)
        return tc__error(TC_ERR_INTERNAL, "cuda.filter.separable: %lld x %lld tiles", (long long)gx, (long long)gy);
    /* one wave: z chunks until the blocks fill the resident slots */
    g.nzc = slots / (gx * gy * items);
    if (g.nzc < 1) g.nzc = 1;
    if (g.nzc > g.Do) g.nzc = g.Do;
    g.zc = tc__cu_div_up(g.Do, g.nzc);
    g.nzc = tc__cu_div_up(g.Do, g.zc);
    const int64_t nb = items * g.nzc;
    for (int64_t gz0 = 0; gz0 < nb; gz0 += TC__CU_GRID_MAX) {
        const unsigned gnz = (unsigned)(nb - gz0 < TC__CU_GRID_MAX ? nb - gz0 : TC__CU_GRID_MAX);
        k<<<dim3((unsigned)gx, (unsigned)gy, gnz), C::THREADS, smem, s>>>(x, y, w, g, cval, gz0);
    }
    return TC_OK;
}
template <int I = 0, bool NEAR = false, int TYV = 16>
static tc_status launch_zreg(int mt, const float *x, float *y, const rtaps &w, const rgeom &g, int64_t items,
                             float cval, cudaStream_t s) {
    if constexpr (I < SEP_NZT) {
        constexpr int MT = zreg_mt[I];
        if (mt <= MT) /* the bucket's own size along every axis: no tap guards */
            return g.Tx == MT && g.Ty == MT && g.Tz == MT
                       ? launch_zreg_mt<MT, true, NEAR, TYV>(x, y, w, g, items, cval, s)
                       : launch_zreg_mt<MT, false, NEAR, TYV>(x, y, w, g, items, cval, s);
        return launch_zreg<I + 1, NEAR, TYV>(mt, x, y, w, g, items, cval, s);
    } else {
        return tc__error(TC_ERR_INTERNAL, "cuda.filter.separable: no register-window kernel for %d taps", mt);
    }
}
/* the register window takes the problem: float32, 3D, every mask 2..RF_MAXT
 * taps along x and y and 2.. along z, planes of fewer than 2^31 elements */
static int zreg_applies(const tc__problem *p) {
    return p->dtype == TC_FLOAT32 && p->msk[0] > 1 && p->msk[0] <= RF_MAXT && p->msk[1] > 1 &&
           p->msk[1] <= RF_MAXT && p->msk[2] > 1 && p->msk[2] <= RF_MAXT && p->in[1] * p->in[2] < ((int64_t)1 << 31) &&
           tc__cu_div_up(p->out[1], rcfg<5>::TY) <= 65535 && tc__cu_div_up(p->out[2], rcfg<5>::FX) <= 65535;
}

/* ---- row stream x + y (TILECONV_CUDA_SEPARABLE_FUSED=4; both masks 2..SS_MAXT) ----
 * Each warp works alone (no block barrier): it owns a strip of WX output
 * columns (32 lanes x VEC, 128 float32 / 64 float64) of one segment of ly
 * output rows of one plane and streams down it one input row at a time:
 * - copy: the row's WX + Tx - 1 (+ alignment) input columns into a ring of
 *   D rows of the warp's own shared memory (16-byte cp.async from the
 *   VEC-aligned column at or below the strip's first input column, so that
 *   interior vectors are aligned whatever the padding; D - 1 rows in
 *   flight). The boundary map runs at the edges only: a row's (once a row,
 *   the near form: no remainder within one period of the edge), and the
 *   columns' once a warp into a column map in shared memory, read by the
 *   vectors across or beyond a row's end (element by element; in constant
 *   mode a vector wholly outside the row is cval, stored once in every
 *   ring row); interior vectors copy with no index map. Each lane's
 *   copies (NCP vectors a row) are worked out once.
 * - x pass: a lane's VEC consecutive outputs from NV 16-byte shared loads of
 *   the ring row (no bank conflict: lanes on consecutive vectors), the
 *   alignment offset (the same for every strip) a switch of VEC cases.
 * - y pass in registers: acc[MT][VEC] holds the partial sums of the output
 *   rows the lane's columns feed; input row q adds y tap Ty - 1 - u into
 *   slot (q + u) mod MT (the y taps reversed on the host), so slot q mod MT
 *   has just taken its last tap: stored as output row q - (Ty - 1) (one
 *   16-byte store a lane, 512 bytes a warp) and zeroed; one branch of MT a
 *   row makes every slot index a compile-time constant.
 * The x sums and y sums take their taps in order, tap 0 first, one fused
 * multiply-add a tap, the x-filtered value rounded to the element type in
 * between: the per-axis passes' sums (in constant mode a row outside the
 * input is x-filtered from cval, as in the other fused kernels).
 * Synchronisation: two __syncwarp a row. The segment's first Ty - 1 input
 * rows are its halo (ly chosen so that the warps fill the resident slots
 * once: 8192^2 float32, 17 taps: 64 strips x 33 segments of 249 rows,
 * 6.4% halo rows). */
#define SS_MAXT 17
template <typename E> struct scfg {
    static constexpr int THREADS = 256;
    static constexpr int WARPS = THREADS / 32; /* warps a block: adjacent strips */
    static constexpr int VEC = 16 / (int)sizeof(E);
    static constexpr int WX = 32 * VEC; /* output columns a warp */
    static constexpr int D = 8;         /* ring rows a warp (D - 1 rows in flight) */
};
template <typename E, int MT> struct slay {
    typedef scfg<E> C;
    static constexpr int NVR = (C::VEC - 1 + C::WX + MT - 1 + C::VEC - 1) / C::VEC; /* vectors a row copied */
    static constexpr int NCP = (NVR + 31) / 32;                                      /* copies a lane a row */
    static constexpr int NV = (C::VEC - 1 + C::VEC + MT - 1 + C::VEC - 1) / C::VEC;  /* x window vectors */
    static constexpr int PITCH = (NVR > 31 + NV ? NVR : 31 + NV) * C::VEC;           /* ring row, elements */
    static constexpr size_t RING = (size_t)C::WARPS * C::D * PITCH * sizeof(E);      /* the warps' rings */
    static constexpr size_t BYTES = RING + (size_t)C::WARPS * NVR * C::VEC * sizeof(int); /* + column maps */
};
template <typename E> struct staps { E x[SS_MAXT], yr[SS_MAXT]; /* yr[u]: y tap Ty - 1 - u */ };
struct sgeom {
    int64_t W, H, Wo, Ho, padx, pady; /* plane in / out, pad_lo along x and y */
    int64_t ly;                       /* output rows a segment */
    int Tx, Ty, mode;
    int vin, vout; /* input / output rows 16-byte aligned (W, Wo multiples of VEC) */
};

/* One input row (kr: its mapped index, < 0 outside in constant mode) into
 * the ring row d: code >= 0 a vector at column code, -2 element by element
 * (vector cv = lane + 32 k) from the warp's column map cm (the mapped
 * column of each ring element, < 0 outside in constant mode), -1 nothing
 * (cval, stored in every ring row once), -3 nothing. */
template <typename E, int MT>
__device__ __forceinline__ void ss_issue(const E *__restrict__ xp, E *d, const int (&code)[slay<E, MT>::NCP],
                                         int64_t kr, const int *cm, const sgeom &g, E cval, int lane) {
    typedef scfg<E> C;
    typedef slay<E, MT> L;
    typedef typename vec16<E>::T V;
    const E *src = xp + kr * g.W;
#pragma unroll
    for (int k = 0; k < L::NCP; k++) {
        const int cd = code[k], cv = lane + 32 * k;
        if (cd == -3 || cd == -1) continue;
        E *dv = d + cv * C::VEC;
        if (kr < 0) {
            *(V *)dv = vfill(cval);
        } else if (cd >= 0) {
            __pipeline_memcpy_async((V *)dv, (const V *)(src + cd), sizeof(V));
        } else {
#pragma unroll
            for (int i = 0; i < C::VEC; i++) {
                const int kc = cm[cv * C::VEC + i];
                if (kc >= 0) __pipeline_memcpy_async(dv + i, src + kc, sizeof(E));
                else dv[i] = cval;
            }
        }
    }
}

/* x pass of a lane: VEC outputs from the ring row's vectors sv[0 .. NV),
 * the window starting OFF elements in; each vector's elements go to the
 * outputs they feed as it arrives (output j takes window element k with
 * tap k - OFF - j: taps in order, tap 0 first), so that the window is not
 * held whole in registers */
template <typename E, int MT, bool FULL, int OFF>
__device__ __forceinline__ void ss_xpass(const typename vec16<E>::T *sv, const staps<E> &w, int tx,
                                         E (&xo)[scfg<E>::VEC]) {
    constexpr int VEC = scfg<E>::VEC;
#pragma unroll
    for (int j = 0; j < VEC; j++) xo[j] = 0;
#pragma unroll
    for (int i = 0; i < slay<E, MT>::NV; i++) {
        if (VEC * i + VEC - 1 < OFF || VEC * i > OFF + VEC - 1 + MT - 1) continue; /* feeds no output */
        E v[VEC];
        vsplit(sv[i], v);
#pragma unroll
        for (int e = 0; e < VEC; e++) {
#pragma unroll
            for (int j = 0; j < VEC; j++) {
                const int t = VEC * i + e - OFF - j;
                if (t >= 0 && t < MT && (FULL || t < tx)) xo[j] = fma(w.x[t], v[e], xo[j]);
            }
        }
    }
}

template <typename E, int MT, bool FULL> /* FULL: Tx = Ty = MT (no tap guards) */
__global__ void __launch_bounds__(256, 2)
sep_stream_xy(const E *__restrict__ x, E *__restrict__ y, const __grid_constant__ staps<E> w, const sgeom g,
              E cval, int64_t gz0) {
    typedef scfg<E> C;
    typedef slay<E, MT> L;
    typedef typename vec16<E>::T V;
    extern __shared__ __align__(16) unsigned char ssm[];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const int64_t ox0 = ((int64_t)blockIdx.x * C::WARPS + wid) * C::WX;
    if (ox0 >= g.Wo) return; /* the whole warp: no block barrier below */
    E *const ring = (E *)ssm + wid * (C::D * L::PITCH);
    const int64_t plane = (int64_t)blockIdx.z + gz0;
    const int64_t oy0 = (int64_t)blockIdx.y * g.ly;
    const int rows = (int)(g.Ho - oy0 < g.ly ? g.Ho - oy0 : g.ly);
    const int64_t iy0 = oy0 - g.pady, ix0 = ox0 - g.padx;
    const int off = (int)(((ix0 % C::VEC) + C::VEC) % C::VEC);
    const int64_t ixa = ix0 - off;
    const E *const xp = x + plane * g.H * g.W;
    const int tx = FULL ? MT : g.Tx, ty = FULL ? MT : g.Ty;
    const int nq = rows + ty - 1; /* input rows of the segment */
    /* the column map (the boundary map of every ring element, once) and
     * each lane's copies; in constant mode a vector wholly outside the row
     * is cval in every ring row, stored here once */
    int *const cm = (int *)(ssm + L::RING) + wid * (L::NVR * C::VEC);
    for (int e = lane; e < L::NVR * C::VEC; e += 32)
        cm[e] = (int)tc__cu_bidx_t<int64_t, true>(ixa + e, g.W, g.mode);
    int code[L::NCP];
#pragma unroll
    for (int k = 0; k < L::NCP; k++) {
        const int cv = lane + 32 * k;
        const int64_t gc = ixa + (int64_t)cv * C::VEC;
        if (cv >= L::NVR || cv * C::VEC >= off + C::WX + tx - 1) code[k] = -3;
        else if (g.vin && gc >= 0 && gc + C::VEC <= g.W) code[k] = (int)gc;
        else if (g.mode == TC_MODE_CONSTANT && (gc + C::VEC <= 0 || gc >= g.W)) {
            code[k] = -1;
            for (int r = 0; r < C::D; r++) *(V *)(ring + r * L::PITCH + cv * C::VEC) = vfill(cval);
        } else code[k] = -2;
    }
    __syncwarp(); /* the column map */
#pragma unroll 1
    for (int p = 0; p < C::D - 1; p++) {
        if (p < nq)
            ss_issue<E, MT>(xp, ring + p * L::PITCH, code, tc__cu_bidx_t<int64_t, true>(iy0 + p, g.H, g.mode), cm,
                            g, cval, lane);
        __pipeline_commit();
    }
    E acc[MT][C::VEC];
#pragma unroll
    for (int a = 0; a < MT; a++)
#pragma unroll
        for (int j = 0; j < C::VEC; j++) acc[a][j] = 0;
    const int64_t ox = ox0 + lane * C::VEC;
    E *yo = y + (plane * g.Ho + oy0) * g.Wo + ox; /* output row 0 of the segment */
    const bool vst = g.vout && ox + C::VEC <= g.Wo;
    int sl = 0, s = 0;
#pragma unroll 1
    for (int q = 0; q < nq; q++) {
        __syncwarp(); /* ring row q - 1 is free again */
        if (q + C::D - 1 < nq) {
            const int qn = q + C::D - 1;
            ss_issue<E, MT>(xp, ring + (sl == 0 ? C::D - 1 : sl - 1) * L::PITCH, code,
                            tc__cu_bidx_t<int64_t, true>(iy0 + qn, g.H, g.mode), cm, g, cval, lane);
        }
        __pipeline_commit();
        __pipeline_wait_prior(C::D - 1); /* row q has landed (this lane's copies) */
        __syncwarp();                     /* ... and every lane's */
        const V *sv = (const V *)(ring + sl * L::PITCH) + lane;
        E xo[C::VEC];
        if constexpr (C::VEC == 4) {
            switch (off) {
            case 0: ss_xpass<E, MT, FULL, 0>(sv, w, tx, xo); break;
            case 1: ss_xpass<E, MT, FULL, 1>(sv, w, tx, xo); break;
            case 2: ss_xpass<E, MT, FULL, 2>(sv, w, tx, xo); break;
            default: ss_xpass<E, MT, FULL, 3>(sv, w, tx, xo); break;
            }
        } else {
            if (off == 0) ss_xpass<E, MT, FULL, 0>(sv, w, tx, xo);
            else ss_xpass<E, MT, FULL, 1>(sv, w, tx, xo);
        }
        /* y: into the window, case s = q mod MT */
        const bool st = q >= ty - 1 && ox < g.Wo;
#pragma unroll
        for (int S = 0; S < MT; S++) {
            if (s == S) {
#pragma unroll
                for (int u = 0; u < MT; u++) {
                    if (FULL || u < ty) {
#pragma unroll
                        for (int j = 0; j < C::VEC; j++)
                            acc[(S + u) % MT][j] = fma(w.yr[u], xo[j], acc[(S + u) % MT][j]);
                    }
                }
                if (st) {
                    if (vst) {
                        *(V *)yo = vjoin(acc[S]);
                    } else {
#pragma unroll
                        for (int j = 0; j < C::VEC; j++)
                            if (ox + j < g.Wo) yo[j] = acc[S][j];
                    }
                }
#pragma unroll
                for (int j = 0; j < C::VEC; j++) acc[S][j] = 0;
            }
        }
        if (q >= ty - 1) yo += g.Wo;
        s = s + 1 == MT ? 0 : s + 1;
        sl = sl + 1 == C::D ? 0 : sl + 1;
    }
}

/* the row stream's buckets (taps, the larger of x and y) */
static constexpr int stream_mt[] = {5, 9, 13, 17};
#define SEP_NST (int)(sizeof stream_mt / sizeof stream_mt[0])

template <typename E, int MT, bool FULL>
static tc_status launch_stream_mt(const E *x, E *y, const staps<E> &w, sgeom g, int64_t planes, E cval,
                                  cudaStream_t s, int *declined) {
    typedef scfg<E> C;
    typedef slay<E, MT> L;
    static int attr_set, occ;
    auto k = sep_stream_xy<E, MT, FULL>;
    const size_t smem = L::BYTES;
    int o;
    TC_CU(sep_prepare((const void *)k, smem, C::THREADS, &attr_set, &occ, &o));
    const tc__cu_device *d = tc__cu_dev();
    const int64_t slots = (int64_t)o * C::WARPS * (d ? d->sms : 132); /* resident warps */
    const int64_t strips = tc__cu_div_up(g.Wo, C::WX), gx = tc__cu_div_up(strips, C::WARPS);
    if (strips <= 0 || g.Ho <= 0 || planes <= 0) return TC_OK;
    if (gx > 2147483647LL) return tc__error(TC_ERR_INTERNAL, "cuda.filter.separable: %lld strips", (long long)strips);
    /* one wave of warps (TILECONV_CUDA_SEPARABLE_STREAM_WAVES: n waves):
     * segments along y until the warps fill the resident slots, each at
     * least 4 (Ty - 1) rows (halo rows at most 1/4 of the copies), and at
     * most 65535 segments */
    const char *kw = tc__knob_get(TC__KNOB_CUDA_SEPARABLE_STREAM_WAVES);
    const int64_t waves = kw && atoi(kw) > 0 ? atoi(kw) : 1;
    int64_t ny = slots * waves / (strips * planes);
    const int64_t lmin = 4 * (int64_t)(g.Ty - 1) > 16 ? 4 * (int64_t)(g.Ty - 1) : 16;
    /* declined (the default form, not forced): segments of lmin rows or
     * more cannot give every resident warp slot one, so each warp would
     * stream its rows one after another with the device mostly idle (H100,
     * 17 taps: 1024^2 0.068 ms against the fused kernel's 0.021, 512^2
     * 0.061 against 0.017; 8192^2 0.269 against 0.539): the caller runs the
     * fused kernel instead */
    if (declined) {
        const int64_t segs = g.Ho / lmin > 1 ? g.Ho / lmin : 1;
        if (strips * planes * segs < slots) {
            *declined = 1;
            return TC_OK;
        }
    }
    if (ny > g.Ho / lmin) ny = g.Ho / lmin;
    if (ny < 1) ny = 1;
    g.ly = tc__cu_div_up(g.Ho, ny);
    ny = tc__cu_div_up(g.Ho, g.ly);
    if (ny > 65535) {
        g.ly = tc__cu_div_up(g.Ho, 65535);
        ny = tc__cu_div_up(g.Ho, g.ly);
    }
    if (g.ly + g.Ty > 2147483647LL) return tc__error(TC_ERR_INTERNAL, "cuda.filter.separable: %lld rows a segment", (long long)g.ly);
    for (int64_t gz0 = 0; gz0 < planes; gz0 += TC__CU_GRID_MAX) {
        const unsigned gnz = (unsigned)(planes - gz0 < TC__CU_GRID_MAX ? planes - gz0 : TC__CU_GRID_MAX);
        k<<<dim3((unsigned)gx, (unsigned)ny, gnz), C::THREADS, smem, s>>>(x, y, w, g, cval, gz0);
    }
    return TC_OK;
}
template <typename E, int I = 0>
static tc_status launch_stream(int mt, const E *x, E *y, const staps<E> &w, const sgeom &g, int64_t planes,
                               E cval, cudaStream_t s, int *declined) {
    if constexpr (I < SEP_NST) {
        constexpr int MT = stream_mt[I];
        if (mt <= MT) /* the bucket's own size along x and y: no tap guards */
            return g.Tx == MT && g.Ty == MT ? launch_stream_mt<E, MT, true>(x, y, w, g, planes, cval, s, declined)
                                            : launch_stream_mt<E, MT, false>(x, y, w, g, planes, cval, s, declined);
        return launch_stream<E, I + 1>(mt, x, y, w, g, planes, cval, s, declined);
    } else {
        return tc__error(TC_ERR_INTERNAL, "cuda.filter.separable: no row-stream kernel for %d taps", mt);
    }
}
/* the row stream takes the problem: x and y masks of 2..SS_MAXT taps, rows
 * of fewer than 2^31 elements */
static int stream_applies(const tc__problem *p) {
    return p->msk[2] > 1 && p->msk[2] <= SS_MAXT && p->msk[1] > 1 && p->msk[1] <= SS_MAXT &&
           p->in[2] < ((int64_t)1 << 30) && p->out[2] < ((int64_t)1 << 30);
}
/* ---- end row stream ---- */

struct sstate {
    int dtype;
    int fused; /* fused_on(): 1 x and y through sep_fused_xy, 2 x, y and z through sep_fused_xyz,
                * 3 x, y and z through sep_zreg, 4 x and y through sep_stream_xy, 5 x, y and z
                * through sep_zreg with the near boundary map */
    int stream_forced; /* the knob at 4: the row stream even where it would decline */
    int zreg_ty;       /* the register window's tile rows (32; 16: TILECONV_CUDA_SEPARABLE_ZREG_TY or outputs of <= 16 rows) */
    int64_t len[3];
    double f[3][SEP_MAX]; /* factor per axis */
};

/* Rank-1 factorisation of the plan's mask; 0 when it is not rank 1. */
template <typename E>
static int factor(const tc__problem *p, const E *m, sstate *s) {
    int64_t R = p->msk[0], S = p->msk[1], T = p->msk[2], n = R * S * T;
    int64_t piv = 0;
    double amax = 0;
    for (int64_t i = 0; i < n; i++)
        if (fabs((double)m[i]) > amax) { amax = fabs((double)m[i]); piv = i; }
    if (amax == 0 || !isfinite(amax)) return 0;
    int64_t pr = piv / (S * T), ps = (piv / T) % S, pt = piv % T;
    double pv = (double)m[piv];
    for (int64_t r = 0; r < R; r++) s->f[0][r] = (double)m[(r * S + ps) * T + pt];
    for (int64_t q = 0; q < S; q++) s->f[1][q] = (double)m[(pr * S + q) * T + pt] / pv;
    for (int64_t t = 0; t < T; t++) s->f[2][t] = (double)m[(pr * S + ps) * T + t] / pv;
    /* axes of length 1 get no pass: fold their factor (the pivot value
     * for the first of them) into the first axis that has one */
    double fold = 1;
    int first = -1;
    for (int a = 0; a < 3; a++) {
        if (p->msk[a] == 1) { fold *= s->f[a][0]; s->f[a][0] = 1; }
        else if (first < 0) first = a;
    }
    for (int64_t i = 0; first >= 0 && i < p->msk[first]; i++) s->f[first][i] *= fold;
    double tol = (sizeof(E) == 4 ? 2e-6 : 1e-12) * amax;
    for (int64_t r = 0; r < R; r++)
        for (int64_t q = 0; q < S; q++)
            for (int64_t t = 0; t < T; t++) {
                double v = s->f[0][r] * s->f[1][q] * s->f[2][t];
                if (fabs(v - (double)m[(r * S + q) * T + t]) > tol) return 0;
            }
    return 1;
}

/* the fused kernel takes the problem: x and y masks of 2..SEP_FMAX taps */
static int fused_applies(const tc__problem *p) {
    return p->msk[2] > 1 && p->msk[2] <= SEP_FMAX && p->msk[1] > 1 && p->msk[1] <= SEP_FMAX;
}
/* 0: per axis; 1: x + y fused (then the z pass, if any); 2: x + y + z
 * fused (3D, where the ring fits the device's shared memory); 3: x + y + z
 * with the register z window (float32 3D, masks up to RF_MAXT; the knob at 3
 * elsewhere acts as 1); 5, the register z window with the near boundary
 * map, where 3 applies, else 4, the row stream x + y (then the z pass, if
 * any) where it applies, else 1: the default, and the knob at 4 (which
 * forces the row stream on arrays too small to fill the device: the
 * default takes the fused kernel there, launch_stream_mt) */
static int fused_on(const tc__problem *p) {
    /* the stream forms by default. On an H100 (gaussian, float32, constant
     * mode): 8192^2 sigma 2 the row stream 0.269 ms against the fused
     * kernel's 0.539 and per axis 1.058 (float64 0.520 against 1.042);
     * 512^3 sigma 1.5 the register window with the near map 0.929 ms
     * against 1.582 with the full map, x + y fused then z 2.216, the x + y
     * + z ring 2.952, per axis 3.389; 128^3 0.044 against 0.068, 64^3 0.031
     * against 0.048 (docs/solvers/cuda-direct.md) */
    const char *k = tc__knob_get(TC__KNOB_CUDA_SEPARABLE_FUSED);
    if (!fused_applies(p)) return 0;
    if (!k || !k[0] || k[0] == '4') {
        if (p->msk[0] > 1 && zreg_applies(p)) return 5;
        return stream_applies(p) ? 4 : 1;
    }
    if (k[0] != '1' && k[0] != '2' && k[0] != '3') return 0;
    if (k[0] == '3' && zreg_applies(p)) return 3; /* else as 1 */
    if (p->msk[0] > 1 && !(k && k[0] == '2')) {
        const tc__cu_device *d = tc__cu_dev();
        if (d && xyz_smem(p) <= d->smem_optin && tc__cu_div_up(p->out[1], zcfg<float>::ZY) <= 65535) return 2;
    }
    return 1;
}

static int s_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (p->op != TC_OP_FILTER) {
        if (why) snprintf(why, n, "filters only");
        return 0;
    }
    int axes = (p->msk[0] > 1) + (p->msk[1] > 1) + (p->msk[2] > 1);
    /* one axis: only along a leading axis (a column or plane pass) where
     * cuda.filter.direct has no tiled kernel for the mask (e.g. 17 x 1,
     * float64): there it would run its one-output-a-thread kernel, and this
     * solver's strided pass reads each row once */
    const int one_lead = axes == 1 && p->msk[2] == 1 &&
                         (p->dtype != TC_FLOAT32 ||
                          tc_cu_direct_pick(p->msk[0], p->msk[1], p->msk[2], p->out[2], -1) < 0);
    if (axes < 2 && !one_lead) {
        if (why)
            snprintf(why, n, "mask has fewer than two axes longer than 1 (one only along a leading "
                             "axis where cuda.filter.direct has no tiled kernel)");
        return 0;
    }
    if (p->msk[0] > SEP_MAX || p->msk[1] > SEP_MAX || p->msk[2] > SEP_MAX) {
        if (why) snprintf(why, n, "mask side above %d", SEP_MAX);
        return 0;
    }
    if (!p->mask) {
        if (why) snprintf(why, n, "mask not known at plan time");
        return 0;
    }
    sstate s;
    int ok = p->dtype == TC_FLOAT32 ? factor(p, (const float *)p->mask, &s)
                                    : factor(p, (const double *)p->mask, &s);
    if (!ok && why) snprintf(why, n, "mask is not rank 1 (separable)");
    return ok;
}

/* Bytes x + y times what an H100 measured against that floor (gaussian,
 * float32, constant mode, at 0.9 of its copy rate: the units of
 * tc__cu_estimate): 8192^2 sigma 2 fused 0.573 ms = 2.9, per axis 1.055 =
 * 2.65 a pass; 512^3 sigma 1.5 the register z window 1.592 = 4.0, x + y
 * then z 2.220 = 5.6, the ring 2.974 = 7.5, per axis 3.396 = 2.85 a pass.
 * So cuda.filter.direct keeps the rank-1 masks it has a tiled kernel for
 * (its 2D k5 ran 0.23 ms on that 8192^2 array). */
static double s_estimate(const tc__problem *p, const tc__env *e) {
    (void)e;
    const int passes = (p->msk[0] > 1) + (p->msk[1] > 1) + (p->msk[2] > 1);
    const int f = fused_on(p);
    /* the stream forms (4, 5) at the units of the forms they replace (1, 3):
     * they measured 1.7-2.0x faster on large arrays (fused_on), but the
     * planner's choice between this solver and cuda.filter.direct's tiled
     * kernels for small rank-1 masks has not been measured against them */
    const double units = f == 3 || f == 5 ? 4.0 : f == 2 ? 7.5 : f == 1 || f == 4 ? (p->msk[0] > 1 ? 5.6 : 2.9) : 2.75 * passes;
    const double bytes = (double)p->esize * (tc__x_count(p) + tc__y_count(p)) * units;
    const double fl = 2.0 * tc__y_count(p) * (double)(p->msk[0] + p->msk[1] + p->msk[2]);
    return tc__cu_estimate(bytes, fl, p->dtype == TC_FLOAT32 ? 0.25 : 0.12);
}

static tc_status s_plan(const tc__problem *p, const tc__env *e, void **state) {
    sstate *s = (sstate *)calloc(1, sizeof *s);
    if (!s) return tc__error(TC_ERR_OUT_OF_MEMORY, "cuda.filter.separable: out of memory");
    int ok = p->dtype == TC_FLOAT32 ? factor(p, (const float *)p->mask, s)
                                    : factor(p, (const double *)p->mask, s);
    if (!ok) {
        free(s);
        return tc__error(TC_ERR_NOT_APPLICABLE, "cuda.filter.separable: mask is not rank 1");
    }
    s->fused = fused_on(p);
    const char *k = tc__knob_get(TC__KNOB_CUDA_SEPARABLE_FUSED), *ty = tc__knob_get(TC__KNOB_CUDA_SEPARABLE_ZREG_TY);
    s->stream_forced = k && k[0] == '4';
    /* the register window's tile rows: 32 (one block of 512 threads an SM;
     * H100, 512^3 sigma 1.5: 0.812 ms against 16 rows' 0.945, other modes
     * 0.886-0.916 against 1.03-1.06; 128^3 0.041 / 0.047; 64^3 0.030 /
     * 0.035), 16 where the output has at most 16 rows or the knob asks */
    s->zreg_ty = (ty && !strcmp(ty, "16")) || p->out[1] <= 16 ? 16 : 32;
    *state = s;
    return TC_OK;
}

template <typename E>
static tc_status run_passes(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    const sstate *s = (const sstate *)a->state;
    int64_t dims[3] = {p->in[0], p->in[1], p->in[2]};
    const E *src = (const E *)b->x;
    void *tmp[2] = {NULL, NULL};
    double cval = p->cval;
    int axes[3], na = 0;
    for (int ax = 2; ax >= 0; ax--)
        if (p->msk[ax] > 1) axes[na++] = ax;
    tc_status st = TC_OK;
    int k0 = 0;
    if (s->fused) { /* x and y (and z) in one kernel (axes[0] = 2, axes[1] = 1) */
        ftaps<E> fw;
        memset(&fw, 0, sizeof fw);
        double sx = 0, sy = 0;
        for (int t = 0; t < p->msk[2]; t++) { fw.x[t] = (E)s->f[2][t]; sx += s->f[2][t]; }
        for (int t = 0; t < p->msk[1]; t++) { fw.y[t] = (E)s->f[1][t]; sy += s->f[1][t]; }
        fgeom g;
        memset(&g, 0, sizeof g);
        g.W = dims[2];
        g.H = dims[1];
        g.Wo = p->out[2];
        g.Ho = p->out[1];
        g.padx = p->pad_lo[2];
        g.pady = p->pad_lo[1];
        g.Tx = (int)p->msk[2];
        g.Ty = (int)p->msk[1];
        g.mode = (int)p->mode;
        g.vec_ok = g.W % fcfg<E>::VEC == 0 && (uintptr_t)src % 16 == 0;
        const int64_t planes = p->N * dims[0];
        E *dst = (E *)b->y;
        const int mt = g.Tx > g.Ty ? g.Tx : g.Ty;
        if constexpr (sizeof(E) == 4) {
            if (s->fused == 3 || s->fused == 5) {
                rtaps rw;
                memset(&rw, 0, sizeof rw);
                const int tz = (int)p->msk[0];
                for (int t = 0; t < g.Tx; t++) rw.x[t] = (float)s->f[2][t];
                for (int t = 0; t < g.Ty; t++) rw.y[t] = (float)s->f[1][t];
                for (int u = 0; u < tz; u++) rw.zr[u] = (float)s->f[0][tz - 1 - u];
                rgeom rg;
                memset(&rg, 0, sizeof rg);
                rg.W = g.W; rg.H = g.H; rg.Wo = g.Wo; rg.Ho = g.Ho; rg.padx = g.padx; rg.pady = g.pady;
                rg.D = dims[0]; rg.Do = p->out[0]; rg.padz = p->pad_lo[0];
                rg.Tx = g.Tx; rg.Ty = g.Ty; rg.Tz = tz; rg.mode = g.mode;
                rg.vin = g.vec_ok;
                rg.vout = g.Wo % 4 == 0 && (uintptr_t)dst % 16 == 0;
                /* the near-map form with tiles of 32 output rows, one block of 512
                 * threads an SM (the y halo of a tile's staged rows 1.375x its
                 * outputs instead of 1.75x at 13 taps); 16 rows where asked */
                const int mz = mt > tz ? mt : tz;
                const float *xs = (const float *)src;
                float *yd = (float *)dst;
                if (s->fused == 3) /* the full boundary map */
                    st = launch_zreg(mz, xs, yd, rw, rg, p->N, (float)cval, b->s);
                else if (s->zreg_ty == 32)
                    st = launch_zreg<0, true, 32>(mz, xs, yd, rw, rg, p->N, (float)cval, b->s);
                else
                    st = launch_zreg<0, true>(mz, xs, yd, rw, rg, p->N, (float)cval, b->s);
                cudaError_t e = cudaGetLastError();
                if (st == TC_OK && e != cudaSuccess) st = tc__cu_fail(e, "launch cuda.filter.separable", __FILE__, __LINE__);
                return st;
            }
        }
        if (s->fused == 2) {
            taps<E> wz;
            memset(&wz, 0, sizeof wz);
            for (int t = 0; t < p->msk[0]; t++) wz.w[t] = (E)s->f[0][t];
            zgeom z;
            memset(&z, 0, sizeof z);
            z.D = dims[0];
            z.Do = p->out[0];
            z.padz = p->pad_lo[0];
            z.Tz = (int)p->msk[0];
            st = launch_xyz<E>(mt, src, dst, fw, wz, g, z, p->N, (E)cval, b->s);
            cudaError_t e = cudaGetLastError();
            if (st == TC_OK && e != cudaSuccess) st = tc__cu_fail(e, "launch cuda.filter.separable", __FILE__, __LINE__);
            return st;
        }
        if (na == 3) {
            if ((st = tc__cu_alloc(&tmp[0], (size_t)(planes * g.Ho * g.Wo) * sizeof(E), b->s))) return st;
            dst = (E *)tmp[0];
        }
        if (s->fused == 4) {
            staps<E> sw;
            memset(&sw, 0, sizeof sw);
            for (int t = 0; t < g.Tx; t++) sw.x[t] = fw.x[t];
            for (int u = 0; u < g.Ty; u++) sw.yr[u] = fw.y[g.Ty - 1 - u];
            sgeom sg;
            memset(&sg, 0, sizeof sg);
            sg.W = g.W; sg.H = g.H; sg.Wo = g.Wo; sg.Ho = g.Ho; sg.padx = g.padx; sg.pady = g.pady;
            sg.Tx = g.Tx; sg.Ty = g.Ty; sg.mode = g.mode;
            sg.vin = g.vec_ok;
            sg.vout = g.Wo % fcfg<E>::VEC == 0 && (uintptr_t)dst % 16 == 0;
            /* the default form declines the arrays too small to fill the
             * device's warp slots; a forced one (the knob at 4) runs */
            int declined = 0;
            st = launch_stream<E>(mt, src, dst, sw, sg, planes, (E)cval, b->s, s->stream_forced ? NULL : &declined);
            if (st == TC_OK && declined) st = launch_fused<E>(mt, src, dst, fw, g, planes, (E)cval, b->s);
        } else {
            st = launch_fused<E>(mt, src, dst, fw, g, planes, (E)cval, b->s);
        }
        cudaError_t e = cudaGetLastError();
        if (st == TC_OK && e != cudaSuccess) st = tc__cu_fail(e, "launch cuda.filter.separable", __FILE__, __LINE__);
        src = dst;
        dims[2] = g.Wo;
        dims[1] = g.Ho;
        cval *= sx * sy;
        k0 = 2;
    }
    for (int k = k0; k < na && st == TC_OK; k++) {
        int ax = axes[k];
        pgeom g;
        g.L = dims[ax];
        g.Lo = p->out[ax];
        g.pad = p->pad_lo[ax];
        g.T = (int)p->msk[ax];
        g.mode = (int)p->mode;
        g.inner = 1;
        for (int q = ax + 1; q < 3; q++) g.inner *= dims[q];
        int64_t outer = p->N;
        for (int q = 0; q < ax; q++) outer *= dims[q];
        taps<E> w;
        memset(&w, 0, sizeof w);
        double sum = 0;
        for (int t = 0; t < g.T; t++) { w.w[t] = (E)s->f[ax][t]; sum += s->f[ax][t]; }
        E *dst; /* at most 3 passes: tmp0, tmp1, then y */
        if (k == na - 1) {
            dst = (E *)b->y;
        } else {
            size_t bytes = (size_t)(outer * g.Lo * g.inner) * sizeof(E);
            if ((st = tc__cu_alloc(&tmp[k & 1], bytes, b->s))) break;
            dst = (E *)tmp[k & 1];
        }
        if (g.inner == 1) {
            int64_t gx = tc__cu_div_up(g.Lo, 256);
            TC__CU_FOR_GRID(outer, 1, {
                sep_pass_x<E><<<dim3((unsigned)gx, gny), 256, 0, b->s>>>(src, dst, w, g, (E)cval, gy0);
            })
        } else {
            int64_t gx = tc__cu_div_up(g.inner, 32), gyn = tc__cu_div_up(g.Lo, 8);
            TC__CU_FOR_GRID(gyn, outer, {
                sep_pass_inner<E><<<dim3((unsigned)gx, gny, gnz), dim3(32, 8), 0, b->s>>>(
                    src, dst, w, g, (E)cval, gy0, gz0);
            })
        }
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) { st = tc__cu_fail(e, "launch cuda.filter.separable", __FILE__, __LINE__); break; }
        src = dst;
        dims[ax] = g.Lo;
        cval *= sum;
    }
    tc__cu_free(tmp[0], b->s);
    tc__cu_free(tmp[1], b->s);
    return st;
}

static tc_status s_launch(const tc__args *a, const tc__cu_bufs *b) {
    return a->p->dtype == TC_FLOAT32 ? run_passes<float>(a, b) : run_passes<double>(a, b);
}
static tc_status s_execute(const tc__args *a) { return tc__cu_run(a, NULL, 0, s_launch); }
/* device scratch (the device_workspace bound, exact): run_passes'
 * intermediate arrays, one after each pass but the last */
static size_t s_device_ws(const tc__problem *p, const tc__env *e, const void *state) {
    int64_t dims[3] = {p->in[0], p->in[1], p->in[2]};
    int axes[3], na = 0;
    for (int ax = 2; ax >= 0; ax--)
        if (p->msk[ax] > 1) axes[na++] = ax;
    size_t t = 0;
    if (state && ((const sstate *)state)->fused) /* one array after x + y when a z pass follows */
        return na == 3 && (((const sstate *)state)->fused == 1 || ((const sstate *)state)->fused == 4)
                   ? (size_t)(p->N * p->in[0] * p->out[1] * p->out[2]) * p->esize
                   : 0;
    for (int k = 0; k + 1 < na; k++) {
        dims[axes[k]] = p->out[axes[k]];
        t += (size_t)(p->N * dims[0] * dims[1] * dims[2]) * p->esize;
    }
    return t;
}

} // namespace

TC__CU_SOLVER(tc__solver_cuda_separable) = {
    "cuda.filter.separable", TC_BACKEND_CUDA, TC_OP_FILTER,
    "GPU filter for rank-1 masks: x and y fused through shared memory (one read, one write), "
    "then the z pass; or one 1D pass per axis.",
    tc__cu_available, s_applicable, s_estimate, NULL, s_plan, free, s_execute,
    NULL, NULL, s_device_ws, 0, tc__cu_report_separable,
};

void tc__cu_report_separable(tc__cu_report *r) {
    (void)cudaFuncSetAttribute(sep_fused_xy<float, 17>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)flay<float, 17>::BYTES);
    (void)cudaFuncSetAttribute(sep_fused_xy<double, 17>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)flay<double, 17>::BYTES);
    (void)cudaGetLastError();
    tc__cu_report_kernel(r, "cuda.filter.separable x pass f32", (const void *)sep_pass_x<float>, 256, 0);
    tc__cu_report_kernel(r, "cuda.filter.separable y/z pass f32", (const void *)sep_pass_inner<float>, 256, 0);
    tc__cu_report_kernel(r, "cuda.filter.separable fused x+y f32 (17 taps)", (const void *)sep_fused_xy<float, 17>,
                         256, flay<float, 17>::BYTES);
    tc__cu_report_kernel(r, "cuda.filter.separable fused x+y f64 (17 taps)", (const void *)sep_fused_xy<double, 17>,
                         256, flay<double, 17>::BYTES);
    (void)cudaFuncSetAttribute(sep_fused_xyz<float, 13>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)xyz_bytes<float, 13>(13));
    (void)cudaGetLastError();
    tc__cu_report_kernel(r, "cuda.filter.separable fused x+y+z f32 (13^3)", (const void *)sep_fused_xyz<float, 13>,
                         256, xyz_bytes<float, 13>(13));
    (void)cudaFuncSetAttribute(sep_zreg<13, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)rcfg<13>::BYTES);
    (void)cudaGetLastError();
    tc__cu_report_kernel(r, "cuda.filter.separable x+y+z register z window f32 (13^3)",
                         (const void *)sep_zreg<13, true>, 256, rcfg<13>::BYTES);
    tc__cu_report_kernel(r, "cuda.filter.separable row stream x+y f32 (17 taps)",
                         (const void *)sep_stream_xy<float, 17, true>, 256, slay<float, 17>::BYTES);
    tc__cu_report_kernel(r, "cuda.filter.separable row stream x+y f64 (17 taps)",
                         (const void *)sep_stream_xy<double, 17, true>, 256, slay<double, 17>::BYTES);
}
