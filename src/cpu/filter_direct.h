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
 * Summation order per output depends only on the problem and the row's
 * place in its block (r0, r1, r2 ascending; a block's single last row takes
 * r2 in pairs one vector apart), never on threads: one fused multiply-add
 * per tap.
 */
#ifndef TC_FILTER_DIRECT_H
#define TC_FILTER_DIRECT_H

#include "core/internal.h"
#include <string.h>

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
    int64_t xoff;              /* elements added to every x[] pointer */
    void *y1[TC__FD_RMAX];     /* pair kernels: the rows of the next output
                                  plane (x[] then holds m0 + 1 planes) */
    int64_t pfo;               /* pair kernels: bytes from each output row to
                                  the row written two blocks later, whose
                                  lines each strip prefetches into L2 (0:
                                  none) */
} tc__fd_block;

typedef void (*tc__fd_kernel)(const tc__fd_block *b);

void tc__fd_f32_avx512(const tc__fd_block *b);
void tc__fd_f64_avx512(const tc__fd_block *b);
void tc__fd_f32_avx2(const tc__fd_block *b);
/* memcpy for the plane ring's rows (AVX-512BW; filter_direct_avx512.c) */
void tc__fd_copy_avx512(void *dst, const void *src, size_t bytes);
void tc__fd_f64_avx2(const tc__fd_block *b);
/* Two output planes per call (3D plane ring; b->y1, m0 + 1 input planes) */
void tc__fd_f32_avx512_pair(const tc__fd_block *b);
/* the same, each tap's vectors loaded instead of shifted (Zen 4) */
void tc__fd_f32_avx512_pair_ld(const tc__fd_block *b);
void tc__fd_f64_avx512_pair(const tc__fd_block *b);

/* Lane-interleaved rows (filter_direct_lanes.c): the same kernel on rows
 * whose element k is the aligned vector (row[k], row[k+S], ..., row[k+(L-1)S])
 * of L lanes, so every load is aligned and no tails exist. */
void tc__fd_f32_avx512_lanes(const tc__fd_block *b);
void tc__fd_f64_avx512_lanes(const tc__fd_block *b);
/* tr[k][l] = lane[l][k] for k < round_up(nk, L) */
void tc__fd_f32_avx512_lanes_in(float *tr, const float *const *lane, int64_t nk);
void tc__fd_f64_avx512_lanes_in(double *tr, const double *const *lane, int64_t nk);
/* y[l*S + kb + i] = to[i][l] for i < nk and l*S + kb + i < wt */
void tc__fd_f32_avx512_lanes_out(float *y, const float *to, int64_t S, int64_t kb,
                                 int64_t nk, int64_t wt, int nt);
void tc__fd_f64_avx512_lanes_out(double *y, const double *to, int64_t S, int64_t kb,
                                 int64_t nk, int64_t wt, int nt);

/* Plan-time state of the cpu.direct.* solvers (filter_direct.c). */
typedef struct tc__fd_state {
    int lanes;              /* 1: lane-interleaved path (filter_direct_lanes.c) */
    int ring;               /* 1: padded plane ring (3D, filter_direct.c) */
    int64_t RW, roff;       /* ring: padded row stride, offset of element 0 */
    tc__fd_kernel kern;     /* row-block kernel of the chosen path */
    tc__fd_kernel kern2;    /* ring: the two-plane kernel (P = 2) */
    int64_t P;              /* ring: output planes per work item (1 or 2) */
    void (*copy)(void *, const void *, size_t); /* ring rows: memcpy or the ISA's */
    int64_t D, H, W, Do, Ho, Wo, m0, m1, m2, pl0, pl1, pl2;
    int64_t R, xs;          /* rows per block, row pointers per mask plane */
    int64_t Tx, ntx;        /* x tile width, count */
    int64_t Hb, nbands;     /* rows per band (multiple of R), count */
    int64_t items;          /* N * ntx * nbands * Do * Hb/R work items */
    int nt;                 /* stream the output past the caches */
    int pf;                 /* ring: prefetch the next block's source rows */
    int pff;                /* ring: input from memory, also prefetch 2 blocks ahead */
    int pfl2;               /* ring: the next block's rows prefetched into L2, not L1 */
    int pfo;                /* ring: the pair kernel prefetches its outputs two blocks ahead */
    int64_t *dmap, *hmap;   /* extended plane/row -> input plane/row, -1 = cval */
    /* plain path: x pieces left [0,xl1), inside [xl1,xr0), right [xr0,Wo) */
    int64_t xl1, xr0;
    int64_t EL, ER;         /* edge table widths per input row */
    int64_t *xmapL, *xmapR;
    int64_t runL[2], runR[2]; /* consecutive stretch of each map (memcpy) */
    void *cvrow;            /* cval, long enough for any piece */
    /* lane path */
    int64_t L, S, NK, NKp, Hbe, stlen, CK;
    size_t ws_thread;       /* bytes of workspace per thread */
    void *cvT;              /* NKp vectors of cval */
    int64_t *smapL, *smapR; /* lane staging, ring rows: x = -1-i -> smapL[i], x = W+i -> smapR[i] */
    int64_t nsL, nsR;
} tc__fd_state;

/* One work item of the cpu.direct.* loops, items ordered (n, x tile,
 * band, output plane, row block) with the row block fastest. */
typedef struct tc__fd_item {
    int64_t n, xt, band, o0, rb;
    int64_t q;  /* n * ntx + xt (with band: the band-cache key) */
    int64_t o1; /* first output row of the block */
} tc__fd_item;

/* A row block's fields that stay fixed over a thread's loop: its row
 * pointer array x, the mask w and the state's sizes; nt: stream the output
 * (0 for the lane path, which stores through its own transpose). */
static inline void tc__fd_block_init(tc__fd_block *b, const tc__fd_state *s,
                                     const void *const *x, const void *w, int nt) {
    memset(b, 0, sizeof *b);
    b->x = x;
    b->xs = s->xs;
    b->w = w;
    b->m0 = s->m0;
    b->m1 = s->m1;
    b->m2 = s->m2;
    b->nt = nt;
}

/* Decodes item `it`; returns 0 when the row block starts past the last
 * output row (the last band is shorter) and the item has no work. */
static inline int tc__fd_item_decode(const tc__fd_state *s, int64_t it,
                                     tc__fd_item *w) {
    const int64_t rbpb = s->Hb / s->R;
    int64_t q = it;
    w->rb = q % rbpb; q /= rbpb;
    const int64_t dq = (s->Do + s->P - 1) / s->P; /* plane groups */
    w->o0 = q % dq * s->P; q /= dq;
    w->band = q % s->nbands; q /= s->nbands;
    w->q = q;
    w->xt = q % s->ntx;
    w->n = q / s->ntx;
    w->o1 = w->band * s->Hb + w->rb * s->R;
    return w->o1 < s->Ho;
}

int64_t tc__fd_l2_bytes(void);
/* the last-level cache (one instance) the 3D ring compares a call's data with */
int64_t tc__fd_llc_bytes(void);
/* lane path (filter_direct_lanes.c) */
int tc__fdl_wanted(const tc__problem *p);
void tc__fdl_geometry(const tc__problem *p, tc__fd_state *s);
tc_status tc__fdl_plan(const tc__problem *p, tc__fd_state *s);
void tc__fdl_execute(const tc__args *a);

#endif
