/*
 * gather.cuh - device building blocks of the implicit-GEMM conv kernels
 * (src/cuda/conv/), for any .cu file of that directory:
 *
 *  - the padding-mode index map (cv_bidx) and the remapped copy of an
 *    im2col element outside the input (ig_edge);
 *  - the tap table: per mask tap t, its per-axis offsets (r0*d0, r1*d1,
 *    r2*d2) and its offset in the input (cv_fill_taps);
 *  - the reduction-row table for zero padding: per reduction row l =
 *    (c, t) of the whole reduction, padded to whole k tiles, the row's
 *    offset c * plane + the tap's offset and the tap's bit (cv_fill_rows);
 *  - a column's in-bounds taps as a bit mask (cv_tap_mask): with both
 *    tables an im2col element is a table load, a bit test, a select and a
 *    (zero-filling) copy;
 *  - the core-matrix layout of a wgmma operand in shared memory (cv_cm);
 *  - a predicated read-only load (ig_ldg_if) and the TF32 mma.sync m16n8k8
 *    (ig_mma).
 *
 * Like cuda_hopper.h, every definition lies in an anonymous namespace:
 * each including file has its own copies.
 */
#ifndef TC_CUDA_CONV_GATHER_CUH
#define TC_CUDA_CONV_GATHER_CUH

#include "cuda/conv/conv_internal.h"

namespace {

using tc_conv::igp;

__device__ __forceinline__ int cv_bidx(int i, int n, int mode) {
    if ((unsigned)i < (unsigned)n) return i;
    return (int)tc__cu_bidx(i, n, mode);
}

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

/* The tap table, taps[t] = (r0*d0, r1*d1, r2*d2, their offset in the
 * input), filled by the NT threads of the block (no barrier) */
__device__ __forceinline__ void cv_fill_taps(int4 *taps, const igp &a, int tid, int NT) {
    for (int t = tid; t < a.R; t += NT) {
        int r2 = t % a.m2, u = t / a.m2;
        int r1 = u % a.m1, r0 = u / a.m1;
        int e0 = r0 * a.d0, e1 = r1 * a.d1, e2 = r2 * a.d2;
        taps[t] = make_int4(e0, e1, e2, (e0 * a.in1 + e1) * a.in2 + e2);
    }
}

/* The reduction-row table over `rows` rows (the reduction padded to whole
 * k tiles), from the tap table: with a.ltab == 1 (R <= 32) row l is
 * (c * plane + the tap's offset, 1 << t), (0, 0) past Rl; with a.ltab == 2
 * (R < 64) (c * plane + the tap's offset, t), t = 63 past Rl (the masks'
 * bit 63 is never set). No barrier. */
__device__ __forceinline__ void cv_fill_rows(int2 *ltab, const int4 *taps, const igp &a, int rows,
                                             int tid, int NT) {
    for (int l = tid; l < rows; l += NT) {
        const int c = l / a.R, t = l - c * a.R;
        ltab[l] = l >= a.Rl      ? make_int2(0, a.ltab == 1 ? 0 : 63)
                  : a.ltab == 1 ? make_int2(c * a.plane + taps[t].w, (int)(1u << t))
                                : make_int2(c * a.plane + taps[t].w, t);
    }
}

/* The taps inside the input for a window at origin (c0, c1, c2), a bit
 * each (R <= 64) */
__device__ __forceinline__ unsigned long long cv_tap_mask(const int4 *taps, const igp &a, int c0,
                                                          int c1, int c2) {
    unsigned long long m = 0;
    for (int t = 0; t < a.R; t++) {
        const int4 tp = taps[t];
        const bool inb = ((unsigned)(c0 + tp.x) < (unsigned)a.in0) &
                         ((unsigned)(c1 + tp.y) < (unsigned)a.in1) &
                         ((unsigned)(c2 + tp.z) < (unsigned)a.in2);
        m |= (unsigned long long)inb << t;
    }
    return m;
}

/* A wgmma operand of 8 x 4 core matrices (8 rows x 16 bytes each, 128
 * contiguous bytes), K-major with K elements a row: element (row, k) of
 * the tile. The K / 4 core matrices of an 8-row group are consecutive
 * (128 bytes apart along K), the groups K * 32 bytes apart. */
template <int K> __device__ __forceinline__ int cv_cm(int row, int k) {
    return ((row >> 3) * (K / 4) + (k >> 2)) * 32 + (row & 7) * 4 + (k & 3);
}

} // namespace

#endif
