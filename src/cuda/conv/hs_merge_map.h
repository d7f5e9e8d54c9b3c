/*
 * hs_merge_map.h - the index map of the merged input of few-channel and
 * strided 2D half-precision layers (igemm_half_merge.cuh's k_hs_merge),
 * host and device, so that tests/test_hs_merge.cu checks it on the host.
 *
 * xm[n][h'][w'][j] = x[n][h' sy + dy - py][w' sx + s - px][c] for j = (dy,
 * s, c) = dy S C + s C + c < sy S C, zero outside the input and for j past
 * sy S C (up to Cm). The column part (dy, and the offset w C + c within an
 * input row) depends on (w', j) only, the row part on (h', dy): a thread
 * of k_hs_merge maps its 8 elements' columns once and reuses them on every
 * row it writes.
 */
#ifndef TC_CUDA_CONV_HS_MERGE_MAP_H
#define TC_CUDA_CONV_HS_MERGE_MAP_H

#include <stdint.h>

#ifndef __CUDACC__
#define __host__
#define __device__
#endif

struct hs_mgeom {
    int Hm, Wm, Cm; /* the merged input's rows an image, columns, channels */
    int H, W, C;    /* the input's */
    int S, sy, sx, py, px; /* mask width, strides, padding */
};

/* element j of merged column wq: its input row offset *dy (-1: zero on
 * every row) and its offset *xo within an input row of W x C elements */
__host__ __device__ inline void hs_merge_col(const hs_mgeom &g, int wq, int j, int *dy, int *xo) {
    const int SC = g.S * g.C;
    *dy = -1;
    *xo = 0;
    if (j >= g.sy * SC) return;
    const int d = j / SC, rem = j - d * SC, s = rem / g.C, c = rem - s * g.C;
    const int wi = wq * g.sx + s - g.px;
    if ((unsigned)wi >= (unsigned)g.W) return;
    *dy = d;
    *xo = wi * g.C + c;
}

/* the input row of merged row hq at row offset dy >= 0, or -1 (outside:
 * zero) */
__host__ __device__ inline int hs_merge_row(const hs_mgeom &g, int hq, int dy) {
    const int hi = hq * g.sy + dy - g.py;
    return (unsigned)hi < (unsigned)g.H ? hi : -1;
}

#endif
