/* filter_direct.h - the row-block micro-kernel interface shared by
 * filter_direct.c (tiling, boundaries, threads) and its ISA kernels
 * (filter_direct_avx512.c, filter_direct_avx2.c, scalar in filter_direct.c).
 *
 * One call computes `rows` (<= TC__FD_RMAX) consecutive output rows of one
 * output plane over nx outputs along x:
 *
 *   y[j][k] = sum_{r0 < m0, r1 < m1, r2 < m2} w[r0][r1][r2] * x[r0*xs + j + r1][k + r2]
 *
 * x[] holds m0 * xs row pointers (xs >= rows + m1 - 1); row pointer
 * x[r0*xs + i] is input row i of mask plane r0, already offset so that
 * element k + r2 feeds output k. The kernel loads each input vector once per
 * tap column and feeds it to every output row that uses it (rows share
 * input rows), with the rows x vectors accumulators held in registers. It
 * reads exactly x[..][0 .. nx + m2 - 1) and writes exactly y[j][0 .. nx)
 * (masked tails), so the caller decides what is behind each pointer: the
 * caller's input, a padded edge copy, or a row of cval.
 *
 * Summation order per output is fixed (r0, r1, r2 ascending, one fused
 * multiply-add each), independent of blocking and threads.
 */
#ifndef TC_FILTER_DIRECT_H
#define TC_FILTER_DIRECT_H

#include "core/internal.h"

#define TC__FD_RMAX 4 /* output rows per kernel call */

typedef struct tc__fd_block {
    int64_t nx;                /* outputs along x, >= 1 */
    int rows;                  /* 1..TC__FD_RMAX */
    void *y[TC__FD_RMAX];      /* output rows at their first output */
    const void *const *x;      /* m0 * xs input row pointers */
    int64_t xs;                /* pointers per mask plane */
    const void *w;             /* mask, m0*m1*m2, correlation order */
    int64_t m0, m1, m2;
    int nt;                    /* 1: store aligned full vectors non-temporally
                                  (the caller fences before finishing) */
} tc__fd_block;

typedef void (*tc__fd_kernel)(const tc__fd_block *b);

void tc__fd_f32_avx512(const tc__fd_block *b);
void tc__fd_f64_avx512(const tc__fd_block *b);
void tc__fd_f32_avx2(const tc__fd_block *b);
void tc__fd_f64_avx2(const tc__fd_block *b);

#endif
