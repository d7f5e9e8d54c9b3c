/* filter_direct_kernel.h - the row-block kernel of filter_direct.h written
 * once, instantiated per ISA and dtype by the including file, which defines:
 *   FK_T scalar type, FK_V vector type, FK_L lanes, FK_M tail-mask type,
 *   FK_VMAX vectors per row held in registers (rows x FK_VMAX accumulators),
 *   FK_LOADU(p) FK_MLOADU(m, p) FK_STOREU(p, v) FK_MSTOREU(p, m, v)
 *   FK_SET1(s) FK_FMA(a, b, c) = a*b+c FK_ZERO() FK_MASK(n) (first n lanes)
 *   FK_STREAM(p, v) non-temporal store, FK_ALIGN its alignment in bytes
 *   FK_FN(name) to make names unique, FK_ENTRY the exported function,
 *   FK_ES element stride: 1 for plain rows (element e at p + e), FK_L for
 *   lane-interleaved rows (element e is the vector at p + FK_L*e, see
 *   filter_direct_lanes.c); then vectors are full and aligned, no tails.
 * Included several times; everything it defines is static or FK_ENTRY.
 *
 * Register blocking: 4 output rows x V vectors of accumulators. For input
 * row i of mask plane r0, the V vectors loaded at tap column r2 are used by
 * every output row j with 0 <= i - j < m1, each with its own broadcast tap
 * w[r0][i-j][r2]: (V + rows) loads per rows*V FMAs instead of 1 load per
 * FMA. The active row range [jlo, jhi] depends only on i, so a switch picks
 * one of ten fully unrolled bodies and no FMA is wasted.
 */

#define FK_INL static inline __attribute__((always_inline))
/* Keeps a loaded vector in a register: without it GCC folds the load into
 * every FMA that uses it (a memory operand per FMA), which turns the
 * shared loads below back into one load, mostly line-splitting, per FMA. */
#define FK_PIN(v) __asm__("" : "+v"(v))
#define FK_VS (FK_ES == 1 ? FK_L : 1) /* elements per vector step */
#ifndef FK_V1 /* accumulators of the one-row kernels (strip1() below) */
#define FK_V1 8
#endif

/* The order of the taps of a mask row, the same in every kernel below
 * (each output's FMAs run in this order, so an output's value does not
 * depend on the block it falls in: a 4-row block, a 2-3-row remainder, or
 * the one-row path strip1(), which takes taps in pairs t, t + FK_VS to
 * share their loads): per 2 FK_VS taps from `base`, tap base + sh then tap
 * base + sh + FK_VS, for sh = 0 .. FK_VS - 1. Plain ascending order when
 * m2 <= FK_VS, and always for lane-interleaved rows (FK_VS = 1).
 * FK_FN(tapnext) steps r2 through that order (m2 steps from 0). */
FK_INL int64_t FK_FN(tapnext)(int64_t r2, int64_t m2) {
    const int64_t h = r2 % (2 * FK_VS);
    if (h < FK_VS) return r2 + FK_VS < m2 ? r2 + FK_VS : r2 + 1;
    return h == 2 * FK_VS - 1 ? r2 + 1 : r2 - FK_VS + 1;
}

FK_INL void FK_FN(taps)(FK_V acc[TC__FD_RMAX][FK_VMAX], const FK_T *p,
                        const FK_T *t0, int64_t m2, const int jlo, const int jhi,
                        const int V, const int masked, FK_M ml) {
    /* t0 = tap row of output row jlo; row j uses t0 - (j - jlo)*m2 */
    for (int64_t k = 0, r2 = 0; k < m2; k++, r2 = FK_FN(tapnext)(r2, m2)) {
        FK_V in[FK_VMAX];
#pragma GCC unroll 4
        for (int v = 0; v < V; v++)
            in[v] = (masked && v == V - 1)
                        ? FK_MLOADU(ml, p + FK_ES * (r2 + FK_VS * v))
                        : FK_LOADU(p + FK_ES * (r2 + FK_VS * v));
#pragma GCC unroll 4
        for (int v = 0; v < V; v++) FK_PIN(in[v]);
#pragma GCC unroll 4
        for (int j = jlo; j <= jhi; j++) {
            FK_V b = FK_SET1(t0[r2 - (j - jlo) * m2]);
#pragma GCC unroll 4
            for (int v = 0; v < V; v++) acc[j][v] = FK_FMA(in[v], b, acc[j][v]);
        }
    }
}

#ifdef FK_PERM2
/* Plain rows, full vectors, m2 >= 2 (FK_PERM2(lo, idx, hi) permutes the
 * concatenation hi:lo, FK_IDX(s) the index vector of a shift by s): the
 * tap vectors at p + r2 + FK_L*v are built in registers instead of loaded
 * one by one. Per chunk of FK_L taps the V + 1 vectors at p + c + FK_L*u
 * are loaded once (the last one masked to the ns - 1 elements that the
 * chunk reads of it); vector v of tap c + s is then a permutation of
 * B[v] and B[v + 1] (one port-5 uop instead of a load that splits a cache
 * line 15 times out of 16). Reads exactly the elements the plain loads
 * read; the FMAs and their order are unchanged (m2 <= FK_L: tapnext()'s
 * order is ascending there; wider masks take tapspair()). (Loading the first two
 * vectors of each tap unaligned instead, to balance the load ports against
 * port 5, measured no better.) */
/* FK_SHIFT(lo, hi, s): elements s .. s + L - 1 of hi:lo. With s known at
 * compile time (unrolled tap loops) one valignd/valignq, which leaves both
 * sources intact; otherwise a two-source permutation by an index vector.
 * (GCC only: clang checks the immediate before it folds the branch.) */
#if defined(__OPTIMIZE__) && !defined(__clang__) && defined(FK_ALIGNR)
#define FK_SHIFT(lo, hi, s)                                                   \
    (__builtin_constant_p(s) ? FK_ALIGNR(hi, lo, s) : FK_PERM2(lo, FK_IDX(s), hi))
#else
#define FK_SHIFT(lo, hi, s) FK_PERM2(lo, FK_IDX(s), hi)
#endif
FK_INL void FK_FN(fmas)(FK_V acc[TC__FD_RMAX][FK_VMAX], const FK_V *in,
                        const FK_T *t0, int64_t m2, int64_t r2, const int jlo,
                        const int jhi, const int V) {
#pragma GCC unroll 4
    for (int j = jlo; j <= jhi; j++) {
        FK_V b = FK_SET1(t0[r2 - (j - jlo) * m2]);
#pragma GCC unroll 4
        for (int v = 0; v < V; v++) acc[j][v] = FK_FMA(in[v], b, acc[j][v]);
    }
}
FK_INL void FK_FN(tapsp)(FK_V acc[TC__FD_RMAX][FK_VMAX], const FK_T *p,
                         const FK_T *t0, int64_t m2, const int jlo, const int jhi,
                         const int V) {
#pragma GCC unroll 2
    for (int64_t c = 0; c < m2; c += FK_L) {
        const FK_T *q = p + c;
        const int64_t ns = m2 - c < FK_L ? m2 - c : FK_L;
        FK_V B[FK_VMAX + 1];
#pragma GCC unroll 4
        for (int v = 0; v < V; v++) {
            B[v] = FK_LOADU(q + FK_L * v);
            FK_PIN(B[v]);
        }
        B[V] = FK_MLOADU(FK_MASK(ns - 1), q + FK_L * V);
        FK_PIN(B[V]);
        FK_FN(fmas)(acc, B, t0, m2, c, jlo, jhi, V); /* s = 0: B itself */
#pragma GCC unroll 16
        for (int64_t s = 1; s < ns; s++) {
            FK_V in[FK_VMAX];
#pragma GCC unroll 4
            for (int v = 0; v < V; v++) {
                in[v] = FK_SHIFT(B[v], B[v + 1], s);
                FK_PIN(in[v]);
            }
            FK_FN(fmas)(acc, in, t0, m2, c + s, jlo, jhi, V);
        }
    }
}
/* One output vector per pair of taps ta, ta + FK_L, in the tap order of
 * tapnext() (tapsp() runs the taps in ascending order, which is that order
 * only up to FK_L taps), with the tap vectors built by in-register shifts
 * as in tapsp(): per 2 FK_L taps from base, the V + 2 vectors at
 * p + base + FK_L*k are loaded once (the last two masked to what the row
 * has), and X_u = elements s.. of B[u]:B[u+1] is tap base + s of output
 * vector u and tap base + s + FK_L of output vector u - 1. Output rows
 * [jlo, jhi] of acc, AS vectors each (the tap row of row j at
 * t0 - (j - jlo) m2): the row block's taps for m2 > FK_L (FK_TAPS2 in
 * strip() and stripc()) and the one-row strip of full vectors
 * (strip1p()). */
#define FK_PMAX ((FK_V1 > FK_VMAX ? FK_V1 : FK_VMAX) + 1)
FK_INL void FK_FN(tapspair)(const int AS, FK_V acc[][AS], const FK_T *p, const FK_T *t0,
                            int64_t m2, const int jlo, const int jhi, const int V) {
    for (int64_t base = 0; base < m2; base += 2 * FK_L) {
        const FK_T *q = p + base;
        const int64_t R = FK_L * V + m2 - 1 - base; /* readable at q */
        FK_V B[FK_PMAX + 1];
#pragma GCC unroll 16
        for (int k = 0; k < V; k++) {
            B[k] = FK_LOADU(q + FK_L * k);
            FK_PIN(B[k]);
        }
#pragma GCC unroll 2
        for (int k = V; k < V + 2; k++) {
            int64_t n = R - FK_L * k;
            n = n < 0 ? 0 : n > FK_L ? FK_L : n;
            B[k] = FK_MLOADU(FK_MASK(n), q + FK_L * k);
            FK_PIN(B[k]);
        }
        const int64_t ns = m2 - base < FK_L ? m2 - base : FK_L;
#pragma GCC unroll 16
        for (int64_t s = 0; s < ns; s++) {
            const int64_t ta = base + s, tb = ta + FK_L;
            FK_V X[FK_PMAX];
            const int pair = tb < m2;
#pragma GCC unroll 17
            for (int u = 0; u < V + pair; u++) {
                X[u] = s == 0 ? B[u] : FK_SHIFT(B[u], B[u + 1], s);
                FK_PIN(X[u]);
            }
#pragma GCC unroll 4
            for (int j = jlo; j <= jhi; j++) {
                const FK_V b0 = FK_SET1(t0[ta - (j - jlo) * m2]);
                if (pair) {
                    const FK_V b1 = FK_SET1(t0[tb - (j - jlo) * m2]);
#pragma GCC unroll 16
                    for (int v = 0; v < V; v++) {
                        acc[j][v] = FK_FMA(X[v], b0, acc[j][v]);
                        acc[j][v] = FK_FMA(X[v + 1], b1, acc[j][v]);
                    }
                } else {
#pragma GCC unroll 16
                    for (int v = 0; v < V; v++) acc[j][v] = FK_FMA(X[v], b0, acc[j][v]);
                }
            }
        }
    }
}
#define FK_TAPS2(acc, p, t0, m2, jlo, jhi, V) FK_FN(tapspair)(FK_VMAX, acc, p, t0, m2, jlo, jhi, V)
#define FK_TAPS(a, b)                                                         \
    if (!masked && m2 > FK_L) FK_TAPS2(acc, p, t0, m2, a, b, V);             \
    else if (!masked && m2 > 1) FK_FN(tapsp)(acc, p, t0, m2, a, b, V);       \
    else FK_FN(taps)(acc, p, t0, m2, a, b, V, masked, ml);
#else
#define FK_TAPS(a, b) FK_FN(taps)(acc, p, t0, m2, a, b, V, masked, ml);
#endif

#define FK_CASE(a, b)                                                         \
    case (a) * TC__FD_RMAX + (b):                                             \
        FK_TAPS(a, b)                                                         \
        break;

FK_INL void FK_FN(strip)(const tc__fd_block *bk, int64_t x0, const int V,
                         const int masked, FK_M ml, const int64_t m2c) {
    FK_V acc[TC__FD_RMAX][FK_VMAX];
#pragma GCC unroll 4
    for (int j = 0; j < TC__FD_RMAX; j++)
#pragma GCC unroll 4
        for (int v = 0; v < V; v++) acc[j][v] = FK_ZERO();
    const int rows = bk->rows;
    /* m2c > 0: the mask width as a compile-time constant (small masks:
     * the tap loop unrolls, no loop overhead per input row) */
    const int64_t m1 = bk->m1, m2 = m2c > 0 ? m2c : bk->m2, ni = rows + m1 - 1;
    const FK_T *const *xr = (const FK_T *const *)bk->x;
    const FK_T *wp = (const FK_T *)bk->w;
    for (int64_t r0 = 0; r0 < bk->m0; r0++, xr += bk->xs, wp += m1 * m2) {
        for (int64_t i = 0; i < ni; i++) {
            const FK_T *p = xr[i] + FK_ES * (x0 + bk->xoff);
            int64_t jlo = i - m1 + 1 > 0 ? i - m1 + 1 : 0;
            int64_t jhi = i < rows - 1 ? i : rows - 1;
            const FK_T *t0 = wp + (i - jlo) * m2;
            switch (jlo * TC__FD_RMAX + jhi) {
                FK_CASE(0, 0) FK_CASE(0, 1) FK_CASE(0, 2) FK_CASE(0, 3)
                FK_CASE(1, 1) FK_CASE(1, 2) FK_CASE(1, 3)
                FK_CASE(2, 2) FK_CASE(2, 3)
                FK_CASE(3, 3)
            default: break;
            }
        }
    }
#pragma GCC unroll 4
    for (int j = 0; j < TC__FD_RMAX; j++) {
        if (j >= rows) break;
        FK_T *y = (FK_T *)bk->y[j] + FK_ES * x0;
#pragma GCC unroll 4
        for (int v = 0; v < V; v++) {
            FK_T *yv = y + FK_ES * FK_VS * v;
            if (masked && v == V - 1) FK_MSTOREU(yv, ml, acc[j][v]);
            else if (bk->nt && !((uintptr_t)yv & (FK_ALIGN - 1))) FK_STREAM(yv, acc[j][v]);
            else FK_STOREU(yv, acc[j][v]);
        }
    }
}
#undef FK_CASE
#undef FK_TAPS

#if FK_VMAX == 4
/* Stores 4 full rows x 4 vectors of accumulators at output x0 (streaming
 * when the block asks for it and the vector is aligned): the epilogue of
 * strip33() and stripc(). */
FK_INL void FK_FN(store44)(const tc__fd_block *bk, int64_t x0, FK_V (*acc)[4]) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) {
        FK_T *y = (FK_T *)bk->y[j] + FK_ES * x0;
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++) {
            FK_T *yv = y + FK_ES * FK_VS * v;
            if (bk->nt && !((uintptr_t)yv & (FK_ALIGN - 1))) FK_STREAM(yv, acc[j][v]);
            else FK_STOREU(yv, acc[j][v]);
        }
    }
}

/* 3 x 3 taps per plane (2D k3, 3D k3), 4 full rows x 4 vectors: the nine
 * taps of a plane are broadcast once into registers (16 accumulators + 9
 * taps + 4 inputs = 29 zmm) instead of once per input row and tap as in
 * strip(), which leaves the loads of the input vectors alone on the load
 * ports. Same FMA order per output as strip(): r0, r1, r2 ascending. */
FK_INL void FK_FN(strip33)(const tc__fd_block *bk, int64_t x0) {
    FK_V acc[4][4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++)
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++) acc[j][v] = FK_ZERO();
    const FK_T *const *xr = (const FK_T *const *)bk->x;
    const FK_T *wp = (const FK_T *)bk->w;
    for (int64_t r0 = 0; r0 < bk->m0; r0++, xr += bk->xs, wp += 9) {
        FK_V wv[9];
#pragma GCC unroll 9
        for (int t = 0; t < 9; t++) {
            wv[t] = FK_SET1(wp[t]);
            FK_PIN(wv[t]);
        }
#pragma GCC unroll 6
        for (int i = 0; i < 6; i++) {
            const FK_T *p = xr[i] + FK_ES * (x0 + bk->xoff);
#ifdef FK_PERM2 /* as in tapsp(): one chunk, ns = 3 */
            FK_V B[5];
#pragma GCC unroll 4
            for (int v = 0; v < 4; v++) {
                B[v] = FK_LOADU(p + FK_L * v);
                FK_PIN(B[v]);
            }
            B[4] = FK_MLOADU(FK_MASK(2), p + FK_L * 4);
            FK_PIN(B[4]);
#endif
#pragma GCC unroll 3
            for (int r2 = 0; r2 < 3; r2++) {
                FK_V in[4];
#ifdef FK_PERM2
#pragma GCC unroll 4
                for (int v = 0; v < 4; v++) {
                    in[v] = r2 == 0 ? B[v] : FK_SHIFT(B[v], B[v + 1], r2);
                    FK_PIN(in[v]);
                }
#else
#pragma GCC unroll 4
                for (int v = 0; v < 4; v++) {
                    in[v] = FK_LOADU(p + FK_ES * (r2 + FK_VS * v));
                    FK_PIN(in[v]);
                }
#endif
#pragma GCC unroll 4
                for (int j = 0; j < 4; j++) {
                    if (i - j < 0 || i - j > 2) continue;
#pragma GCC unroll 4
                    for (int v = 0; v < 4; v++)
                        acc[j][v] = FK_FMA(in[v], wv[(i - j) * 3 + r2], acc[j][v]);
                }
            }
        }
    }
    FK_FN(store44)(bk, x0, acc);
}
#endif

/* One output row (1D, or the last row of a plane): no loads to share
 * between rows. FK_V1 accumulators along x hide the FMA latency, and taps
 * are taken in pairs t, t + FK_VS (one vector apart), so the V + 1 vectors
 * loaded for a pair feed 2V FMAs: input vector u is tap t of output vector
 * u and tap t + FK_VS of output vector u - 1. */
/* Stores V vectors of one output row at output x0 (the last one masked
 * when asked; streaming when the block asks and a vector is aligned): the
 * epilogue of strip1() and strip1p(). */
FK_INL void FK_FN(store1)(const tc__fd_block *bk, int64_t x0, const FK_V *acc, const int V,
                          const int masked, FK_M ml) {
    FK_T *y = (FK_T *)bk->y[0] + FK_ES * x0;
#pragma GCC unroll 16
    for (int v = 0; v < V; v++) {
        FK_T *yv = y + FK_ES * FK_VS * v;
        if (masked && v == V - 1) FK_MSTOREU(yv, ml, acc[v]);
        else if (bk->nt && !((uintptr_t)yv & (FK_ALIGN - 1))) FK_STREAM(yv, acc[v]);
        else FK_STOREU(yv, acc[v]);
    }
}
FK_INL void FK_FN(strip1)(const tc__fd_block *bk, int64_t x0, const int V,
                          const int masked, FK_M ml) {
    FK_V acc[FK_V1];
#pragma GCC unroll 16
    for (int v = 0; v < V; v++) acc[v] = FK_ZERO();
    const int64_t m1 = bk->m1, m2 = bk->m2;
    const FK_T *const *xr = (const FK_T *const *)bk->x;
    const FK_T *wp = (const FK_T *)bk->w;
    for (int64_t r0 = 0; r0 < bk->m0; r0++, xr += bk->xs)
        for (int64_t r1 = 0; r1 < m1; r1++, wp += m2) {
            const FK_T *p = xr[r1] + FK_ES * (x0 + bk->xoff);
            for (int64_t base = 0; base < m2; base += 2 * FK_VS)
                for (int64_t sh = 0; sh < FK_VS && base + sh < m2; sh++) {
                    const int64_t t0 = base + sh, t1 = t0 + FK_VS;
                    const int pair = t1 < m2;
                    FK_V in[FK_V1 + 1];
#pragma GCC unroll 17
                    for (int u = 0; u < V + pair; u++) {
                        const FK_T *q = p + FK_ES * (t0 + FK_VS * u);
                        in[u] = (masked && u >= V - 1) ? FK_MLOADU(ml, q) : FK_LOADU(q);
                        FK_PIN(in[u]);
                    }
                    const FK_V b0 = FK_SET1(wp[t0]);
#pragma GCC unroll 16
                    for (int v = 0; v < V; v++) acc[v] = FK_FMA(in[v], b0, acc[v]);
                    if (pair) {
                        const FK_V b1 = FK_SET1(wp[t1]);
#pragma GCC unroll 16
                        for (int v = 0; v < V; v++) acc[v] = FK_FMA(in[v + 1], b1, acc[v]);
                    }
                }
        }
    FK_FN(store1)(bk, x0, acc, V, masked, ml);
}

#ifdef FK_PERM2
/* strip1() for full vectors with the tap vectors built by in-register
 * shifts (tapspair() on one row). Same FMAs in the same order per output
 * as strip1(). (Loading every other X_u unaligned instead measured 5%
 * slower in L1; 12 accumulators 10% slower.) */
FK_INL void FK_FN(strip1p)(const tc__fd_block *bk, int64_t x0, const int V) {
    FK_V acc[1][FK_V1];
#pragma GCC unroll 16
    for (int v = 0; v < V; v++) acc[0][v] = FK_ZERO();
    const int64_t m1 = bk->m1, m2 = bk->m2;
    const FK_T *const *xr = (const FK_T *const *)bk->x;
    const FK_T *wp = (const FK_T *)bk->w;
    for (int64_t r0 = 0; r0 < bk->m0; r0++, xr += bk->xs)
        for (int64_t r1 = 0; r1 < m1; r1++, wp += m2)
            FK_FN(tapspair)(FK_V1, acc, xr[r1] + (x0 + bk->xoff), wp, m2, 0, 0, V);
    FK_FN(store1)(bk, x0, acc[0], V, 0, FK_MASK(FK_L));
}
#endif

/* 1D (one row of one plane): prefetch, into L2, the input FK_PF1 bytes
 * ahead of the strip at x. The hardware prefetchers alone leave the core
 * waiting: 2^24 k31 on 2 threads 8.7 -> 6.0 ms with it (4, 8 or 16 KiB
 * ahead alike; 64 KiB 6.1). 2D blocks read several rows at once and
 * gained nothing from the same (docs/solvers/cpu-direct.md). */
#define FK_PF1 8192
FK_INL void FK_FN(pf1)(const tc__fd_block *bk, int64_t x, int64_t n) {
    if (bk->m0 * bk->m1 != 1) return;
    const char *q = (const char *)(((const FK_T *const *)bk->x)[0] + FK_ES * (x + bk->xoff));
    for (int64_t l = 0; l < n * FK_ES * (int64_t)sizeof(FK_T); l += 64)
        __builtin_prefetch(q + FK_PF1 + l, 0, 2);
}

FK_INL void FK_FN(entry1)(const tc__fd_block *bk) {
    const int64_t nx = bk->nx, full = FK_VS * FK_V1;
    int64_t x = 0;
#ifdef FK_PERM2
    if (bk->m2 > 1)
        for (; x + full <= nx; x += full) {
            FK_FN(pf1)(bk, x, full);
            FK_FN(strip1p)(bk, x, FK_V1);
        }
#endif
    for (; x + full <= nx; x += full) {
        FK_FN(pf1)(bk, x, full);
        FK_FN(strip1)(bk, x, FK_V1, 0, FK_MASK(FK_L));
    }
    for (; x < nx; x += FK_VS) { /* tail one vector at a time */
        int64_t rem = nx - x;
        if (FK_ES == 1 && rem < FK_L) FK_FN(strip1)(bk, x, 1, 1, FK_MASK(rem));
        else FK_FN(strip1)(bk, x, 1, 0, FK_MASK(FK_L));
    }
}
#undef FK_V1

#if FK_VMAX == 4
/* Column passes (m2 = 1, separable.c) with 4 full rows and m1 known at
 * compile time: the input-row loop unrolls completely, so each input row's
 * active output rows are constants and the per-row switch of strip() (an
 * indirect jump and its set-up for at most 16 FMAs) disappears. Same FMAs
 * in the same order as strip(). (The same for square 5x5, 7x7, 9x9 masks,
 * M2 = M1, measured 10-14% slower than strip() in L1: the unrolled bodies
 * are 4-12 KB of code.) */
FK_INL void FK_FN(stripc)(const tc__fd_block *bk, int64_t x0, const int M1, const int M2) {
    FK_V acc[TC__FD_RMAX][FK_VMAX];
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++)
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++) acc[j][v] = FK_ZERO();
    const FK_T *const *xr = (const FK_T *const *)bk->x;
    const FK_T *wp = (const FK_T *)bk->w;
    const FK_M ml = FK_MASK(FK_L);
    for (int64_t r0 = 0; r0 < bk->m0; r0++, xr += bk->xs, wp += M1 * M2) {
#pragma GCC unroll 19
        for (int i = 0; i < M1 + 3; i++) {
            const FK_T *p = xr[i] + FK_ES * (x0 + bk->xoff);
            const int jlo = i - M1 + 1 > 0 ? i - M1 + 1 : 0, jhi = i < 3 ? i : 3;
#ifdef FK_PERM2
            if (M2 > FK_L) FK_TAPS2(acc, p, wp + (i - jlo) * M2, M2, jlo, jhi, 4);
            else if (M2 > 1) FK_FN(tapsp)(acc, p, wp + (i - jlo) * M2, M2, jlo, jhi, 4);
            else
#endif
            FK_FN(taps)(acc, p, wp + (i - jlo) * M2, M2, jlo, jhi, 4, 0, ml);
        }
    }
    FK_FN(store44)(bk, x0, acc);
}
#define FK_COLCASE(M)                                                         \
    case M:                                                                   \
        for (; x + full <= nx; x += full) FK_FN(stripc)(bk, x, M, 1);         \
        break;
#endif

FK_INL void FK_FN(entry)(const tc__fd_block *bk, int64_t m2c) {
    const int64_t nx = bk->nx, full = FK_VS * FK_VMAX;
    int64_t x = 0;
#if FK_VMAX == 4
    /* strip33 on 2D only: 3D k3 blocks run 2-7% faster through strip()
     * (Zen 5, 32x64x128 in L2; its 9 pinned taps leave too few registers
     * for 16 accumulators, 5 loaded and 4 shifted vectors) */
    if (m2c == 3 && bk->m1 == 3 && bk->rows == 4 && bk->m0 == 1)
        for (; x + full <= nx; x += full) FK_FN(strip33)(bk, x);
    if (m2c == 1 && bk->rows == 4) switch (bk->m1) {
            FK_COLCASE(3) FK_COLCASE(5) FK_COLCASE(7) FK_COLCASE(9)
            FK_COLCASE(11) FK_COLCASE(13) FK_COLCASE(15)
        default: break;
        }
#endif
    for (; x + full <= nx; x += full) FK_FN(strip)(bk, x, FK_VMAX, 0, FK_MASK(FK_L), m2c);
    int64_t rem = nx - x;
    if (m2c > 5) m2c = 0; /* tails: the general tap loop */
    if (rem <= 0) return;
    int V = (int)((rem + FK_VS - 1) / FK_VS);
    const int masked = FK_ES == 1;
    FK_M ml = FK_MASK(FK_ES == 1 ? rem - (int64_t)(V - 1) * FK_L : FK_L);
    switch (V) {
    case 1: FK_FN(strip)(bk, x, 1, masked, ml, m2c); break;
#if FK_VMAX >= 2
    case 2: FK_FN(strip)(bk, x, 2, masked, ml, m2c); break;
#endif
#if FK_VMAX >= 3
    case 3: FK_FN(strip)(bk, x, 3, masked, ml, m2c); break;
#endif
#if FK_VMAX >= 4
    case 4: FK_FN(strip)(bk, x, 4, masked, ml, m2c); break;
#endif
    default: break;
    }
}

void FK_ENTRY(const tc__fd_block *bk) {
    if (bk->rows == 1) {
        FK_FN(entry1)(bk);
        return;
    }
    switch (bk->m2) { /* the common small masks get unrolled tap loops */
    case 1: FK_FN(entry)(bk, 1); break; /* column passes (separable.c) */
    case 3: FK_FN(entry)(bk, 3); break;
    case 5: FK_FN(entry)(bk, 5); break;
#ifdef FK_PERM2 /* unrolled: the shifts become valign immediates */
    case 7: FK_FN(entry)(bk, 7); break;
    case 9: FK_FN(entry)(bk, 9); break;
#endif
    default: FK_FN(entry)(bk, 0); break;
    }
}

#if defined(FK_PENTRY) && FK_VMAX == 4 && defined(FK_PERM2)
/* Two output planes per block (bk->y: plane A, bk->y1: plane B, the next
 * one; bk->x holds m0 + 1 planes of xs row pointers, plane B's mask plane
 * r0 at input plane r0 + 1), 4 full rows x 2 vectors each: 16
 * accumulators. Each input row's 3 loaded and 2 (M2 - 1) shifted vectors
 * feed both planes where both use it (input planes 1 .. m0 - 1), so the
 * shifts per FMA drop by a third against strip() (k3: 96 per 432 FMAs
 * instead of 144), and the driver's per-block work serves twice the
 * outputs. Same FMAs in the same order per output as strip(): input
 * planes ascending (= r0 ascending for both planes), rows ascending (r1),
 * taps ascending (tapnext()'s order for m2 <= FK_L). */
FK_INL void FK_FN(prow)(FK_V acc[2][4][2], const FK_T *p, const FK_T *wa, const FK_T *wb,
                        const int i, const int M1, const int M2, const int pa,
                        const int pb, const int ld) {
    const int jlo = i - M1 + 1 > 0 ? i - M1 + 1 : 0, jhi = i < 3 ? i : 3;
    /* the taps re-read per input row: otherwise GCC keeps each plane's
     * broadcast taps in registers across its rows (18 for k3, beside 16
     * accumulators) and spills */
    __asm__ volatile("" : "+r"(wa), "+r"(wb));
    FK_V B[3];
    B[0] = FK_LOADU(p);
    FK_PIN(B[0]);
    B[1] = FK_LOADU(p + FK_L);
    FK_PIN(B[1]);
    if (!ld) {
        B[2] = FK_MLOADU(FK_MASK(M2 - 1), p + 2 * FK_L);
        FK_PIN(B[2]);
    }
#pragma GCC unroll 16
    for (int s = 0; s < M2; s++) {
        /* ld: each tap's vectors loaded from the row (unaligned) instead
         * of shifted out of the three loaded */
        FK_V X0 = s == 0 ? B[0] : ld ? FK_LOADU(p + s) : FK_SHIFT(B[0], B[1], s);
        FK_V X1 = s == 0 ? B[1] : ld ? FK_LOADU(p + FK_L + s) : FK_SHIFT(B[1], B[2], s);
#pragma GCC unroll 4
        for (int j = jlo; j <= jhi; j++) {
            if (pa) {
                const FK_V b = FK_SET1(wa[(i - j) * M2 + s]);
                acc[0][j][0] = FK_FMA(X0, b, acc[0][j][0]);
                acc[0][j][1] = FK_FMA(X1, b, acc[0][j][1]);
            }
            if (pb) {
                const FK_V b = FK_SET1(wb[(i - j) * M2 + s]);
                acc[1][j][0] = FK_FMA(X0, b, acc[1][j][0]);
                acc[1][j][1] = FK_FMA(X1, b, acc[1][j][1]);
            }
        }
    }
}
FK_INL void FK_FN(strip2p)(const tc__fd_block *bk, int64_t x0, const int M1, const int M2,
                           const int ld) {
    FK_V acc[2][4][2];
#pragma GCC unroll 2
    for (int q = 0; q < 2; q++)
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) acc[q][j][0] = acc[q][j][1] = FK_ZERO();
    const FK_T *const *xr = (const FK_T *const *)bk->x;
    const FK_T *w = (const FK_T *)bk->w;
    const int64_t xs = bk->xs, off = x0 + bk->xoff, m0 = bk->m0, pl = M1 * M2;
    if (bk->pfo) /* this strip's lines of the rows two blocks ahead, into L2 */
#pragma GCC unroll 2
        for (int q = 0; q < 2; q++)
#pragma GCC unroll 4
            for (int j = 0; j < 4; j++) {
                const char *yp = (const char *)((FK_T *)(q ? bk->y1[j] : bk->y[j]) + x0) + bk->pfo;
                __asm__ volatile("prefetcht1 %0" ::"m"(*yp));
                __asm__ volatile("prefetcht1 %0" ::"m"(*(yp + FK_L * sizeof(FK_T))));
            }
#pragma GCC unroll 8
    for (int i = 0; i < M1 + 3; i++) /* input plane 0: plane A only */
        FK_FN(prow)(acc, xr[i] + off, w, w, i, M1, M2, 1, 0, ld);
    for (int64_t e = 1; e < m0; e++) {
        const FK_T *const *xe = xr + e * xs;
#pragma GCC unroll 8
        for (int i = 0; i < M1 + 3; i++)
            FK_FN(prow)(acc, xe[i] + off, w + e * pl, w + (e - 1) * pl, i, M1, M2, 1, 1, ld);
    }
    {
        const FK_T *const *xe = xr + m0 * xs; /* input plane m0: plane B only */
#pragma GCC unroll 8
        for (int i = 0; i < M1 + 3; i++)
            FK_FN(prow)(acc, xe[i] + off, w, w + (m0 - 1) * pl, i, M1, M2, 0, 1, ld);
    }
#pragma GCC unroll 2
    for (int q = 0; q < 2; q++)
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) {
            FK_T *y = (FK_T *)(q ? bk->y1[j] : bk->y[j]) + x0;
#pragma GCC unroll 2
            for (int v = 0; v < 2; v++) {
                FK_T *yv = y + FK_L * v;
                if (bk->nt && !((uintptr_t)yv & (FK_ALIGN - 1))) FK_STREAM(yv, acc[q][j][v]);
                else FK_STOREU(yv, acc[q][j][v]);
            }
        }
}

/* A block of two output planes: the pair strips where they apply (4 rows,
 * full 2-vector strips, 3x3 rows of taps), the rest (a tail of < 2 vectors,
 * a short last row block, other masks) by FK_ENTRY one plane at a time.
 * FK_PENTRY_LD (where defined): the same with the taps' vectors loaded
 * (ld), no shifts. */
FK_INL void FK_FN(pentry)(const tc__fd_block *bk, const int ld) {
    int64_t x = 0;
    const int64_t full = 2 * FK_L;
    if (bk->rows == 4 && bk->m1 == 3 && bk->m2 == 3)
        for (; x + full <= bk->nx; x += full) FK_FN(strip2p)(bk, x, 3, 3, ld);
    else if (bk->rows == 4 && bk->m1 == 5 && bk->m2 == 5)
        for (; x + full <= bk->nx; x += full) FK_FN(strip2p)(bk, x, 5, 5, ld);
    if (x >= bk->nx) return;
    tc__fd_block b = *bk;
    b.xoff += x;
    b.nx -= x;
    for (int r = 0; r < b.rows; r++) {
        b.y[r] = (FK_T *)bk->y[r] + x;
        b.y1[r] = (FK_T *)bk->y1[r] + x;
    }
    FK_ENTRY(&b);
    b.x = bk->x + bk->xs;
    for (int r = 0; r < b.rows; r++) b.y[r] = b.y1[r];
    FK_ENTRY(&b);
}
void FK_PENTRY(const tc__fd_block *bk) { FK_FN(pentry)(bk, 0); }
#ifdef FK_PENTRY_LD
void FK_PENTRY_LD(const tc__fd_block *bk) { FK_FN(pentry)(bk, 1); }
#endif
#endif
#undef FK_VS
#undef FK_PMAX
#undef FK_TAPS2
#undef FK_PF1
#undef FK_COLCASE
#undef FK_SHIFT
#undef FK_PIN
#undef FK_INL
