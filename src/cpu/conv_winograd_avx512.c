/* conv_winograd_avx512.c - the AVX-512 parts of the Winograd solvers
 * (conv_winograd.c): Winograd F(4x4, 3x3) (F(2x2, 3x3) at the end) transforms over segments of 16
 * consecutive tiles (one zmm lane per tile, possibly from several tile
 * rows: runs) and a 28x16 GEMM micro-kernel for blocks of <= 16 tiles.
 * Float32. Points 0, 1, -1, 2, -2 and infinity:
 *
 *   B^T = [4  0 -5  0 1 0]    A^T = [1 1  1 1  1 0]
 *         [0 -4 -4  1 1 0]          [0 1 -1 2 -2 0]
 *         [0  4 -4 -1 1 0]          [0 1  1 4  4 0]
 *         [0 -2 -1  2 1 0]          [0 1 -1 8 -8 1]
 *         [0  2 -1 -2 1 0]
 *         [0  4  0 -5 0 1]
 *
 * Input: the lane of a run's tile t reads input columns x0 + 4t .. x0 + 4t
 * + 5 of rows y0 .. y0 + 5. Each input row of the segment is gathered as
 * 5 vectors, element 4*lane + j = column j of the lane's tile (j < 4), by
 * masked loads from each run's row (a run is placed at its lanes by
 * offsetting the address), lanes outside the image set to cval or patched
 * with the mapped column (boundary modes); columns 0-3 of the 16 tiles are
 * picked by two rounds of even/odd permutes, columns 4-5 are the next
 * lane's 0-1 (valignd; a run's last lane patched with its own). V = B^T d
 * B is written as 36 masked vectors V[xi] (xi = 6*row + col) per channel.
 *
 * Output: 36 vectors M[xi] (lanes = tiles) to Y = A^T M A (4x4 per tile)
 * plus bias, interleaved into 4 output rows of 64 floats, stored per run
 * with masks for its lanes and the right and bottom edges. */
#include "conv_winograd.h"

#include <immintrin.h>
#include <stdint.h>
#include <string.h>


static inline __mmask16 wg4_cnt(int64_t n) {
    return n >= 16 ? (__mmask16)0xffff : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1);
}

/* d B over one row: 6 columns -> 6 values (per lane). */
static inline void wg4_row(const __m512 d[6], __m512 v[6]) {
    const __m512 c4 = _mm512_set1_ps(4.0f), c5 = _mm512_set1_ps(5.0f), c2 = _mm512_set1_ps(2.0f);
    v[0] = _mm512_fmadd_ps(c4, d[0], _mm512_fnmadd_ps(c5, d[2], d[4]));
    v[1] = _mm512_fnmadd_ps(c4, _mm512_add_ps(d[1], d[2]), _mm512_add_ps(d[3], d[4]));
    v[2] = _mm512_fmadd_ps(c4, _mm512_sub_ps(d[1], d[2]), _mm512_sub_ps(d[4], d[3]));
    __m512 t1 = _mm512_sub_ps(d[3], d[1]), t2 = _mm512_sub_ps(d[4], d[2]);
    v[3] = _mm512_fmadd_ps(c2, t1, t2);
    v[4] = _mm512_fnmadd_ps(c2, t1, t2);
    v[5] = _mm512_fmadd_ps(c4, d[1], _mm512_fnmadd_ps(c5, d[3], d[5]));
}

/* The mask of lanes [lo, hi) of the 16 lanes from element 16*i on. */
static inline __mmask16 wg4_range(int64_t lo, int64_t hi, int i) {
    lo -= 16 * i;
    hi -= 16 * i;
    lo = lo < 0 ? 0 : lo > 16 ? 16 : lo;
    hi = hi < 0 ? 0 : hi > 16 ? 16 : hi;
    return (__mmask16)(wg4_cnt(hi) & ~wg4_cnt(lo));
}

/* Per run, what is the same for every channel and input row: the lanes
 * loaded from the row (masks of the 5 vectors), the lanes taken from a
 * mapped column (boundary modes) and the run-end columns 4, 5. */
typedef struct wg4_prep {
    int64_t off;          /* column of element v: off + v */
    __mmask16 m[5];
    int np;               /* patched elements: (v, column or -1 = cval) */
    int16_t pv[80];
    int64_t px[80];
    int64_t xa, xb;       /* run-end columns m*len, m*len + 1 (or -1 = cval); last run: unused */
} wg4_prep;

/* Patches by permutes: a patched element whose mapped column
 * this run loads itself (reflect, replicate, a short row's circular) takes
 * it from the row's vectors, vector i's lanes from (a[i-1], a[i]) (L) or
 * (a[i], a[i+1]) (R) by one permute each for every run at once, instead of
 * a scalar load and a broadcast per element (3x3 256 @14: 16 a row, its
 * boundary modes 1.13-1.20x the time of zeros). The rest stay scalar. */
typedef struct wg_perm {
    int any;
    __mmask16 mL[5], mR[5];
    int32_t iL[5][16], iR[5][16];
} wg_perm;

/* a[i] with its permute patches (sources: the unpatched vectors) */
#define WG_PERM(pm, out, i, NV, A)                                                         \
    do {                                                                                   \
        if ((i) > 0 && (pm)->mL[i])                                                        \
            out = _mm512_mask_mov_ps(                                                      \
                out, (pm)->mL[i],                                                          \
                _mm512_permutex2var_ps(A[(i) > 0 ? (i) - 1 : 0],                           \
                                       _mm512_loadu_si512((pm)->iL[i]), A[i]));           \
        if ((i) + 1 < (NV) && (pm)->mR[i])                                                 \
            out = _mm512_mask_mov_ps(                                                      \
                out, (pm)->mR[i],                                                          \
                _mm512_permutex2var_ps(A[i], _mm512_loadu_si512((pm)->iR[i]),              \
                                       A[(i) + 1 < (NV) ? (i) + 1 : (i)]));               \
    } while (0)

/* Moves run k's patches whose source it loads into pm (removed from its
 * scalar list). */
static void wg_perm_add(wg4_prep *q, int64_t ib, int64_t ie, int NV, wg_perm *pm) {
    int keep = 0;
    for (int e = 0; e < q->np; e++) {
        const int v = q->pv[e], i = v >> 4, l = v & 15;
        const int64_t sv = q->px[e] < 0 ? -1 : q->px[e] - q->off;
        int done = 0;
        if (sv >= ib && sv < ie) {
            const int si = (int)(sv >> 4), sl = (int)(sv & 15);
            if (si == i - 1 && i > 0) {
                pm->mL[i] |= (__mmask16)(1u << l);
                pm->iL[i][l] = sl;
                done = 1;
            } else if (si == i && i + 1 < NV) {
                pm->mR[i] |= (__mmask16)(1u << l);
                pm->iR[i][l] = sl;
                done = 1;
            } else if (si == i && i > 0) {
                pm->mL[i] |= (__mmask16)(1u << l);
                pm->iL[i][l] = 16 + sl;
                done = 1;
            } else if (si == i + 1 && i + 1 < NV) {
                pm->mR[i] |= (__mmask16)(1u << l);
                pm->iR[i][l] = 16 + sl;
                done = 1;
            }
        }
        if (done) {
            pm->any = 1;
        } else {
            q->pv[keep] = q->pv[e];
            q->px[keep++] = q->px[e];
        }
    }
    q->np = keep;
}

/* The per-run preparation of both transforms (M columns a lane, NV
 * vectors a row, A rows a tile); returns whether any run has patched
 * elements (boundary modes other than constant); with pm, the patches a
 * permute can make move there (wg_perm). */
static int wg_prep(const tc__wg4_run *runs, int nruns, int64_t H, int64_t W, int mode, int M,
                   int NV, int A, wg4_prep *pr, int64_t rowoff[][16], wg_perm *pm) {
    int patched = 0;
    if (pm) memset(pm, 0, sizeof *pm);
    for (int k = 0; k < nruns; k++) {
        const tc__wg4_run *u = &runs[k];
        wg4_prep *q = &pr[k];
        int64_t vb = M * (int64_t)u->lane, ve = M * (int64_t)(u->lane + u->len) + (k == nruns - 1) * 2;
        q->off = u->x0 - vb;
        int64_t ib = -q->off > vb ? -q->off : vb, ie = W - q->off < ve ? W - q->off : ve;
        if (ie < ib) ie = ib;
        for (int i = 0; i < NV; i++) q->m[i] = wg4_range(ib, ie, i);
        q->np = 0;
        for (int64_t v = vb; v < ve; v++) {
            if (v == ib) v = ie;
            if (v >= ve) break;
            q->pv[q->np] = (int16_t)v;
            q->px[q->np++] = tc__boundary_index(q->off + v, W, (tc_mode)mode);
        }
        patched |= mode != TC_MODE_CONSTANT && q->np > 0;
        if (pm && mode != TC_MODE_CONSTANT) wg_perm_add(q, ib, ie, NV, pm);
        q->xa = tc__boundary_index(u->x0 + M * (int64_t)u->len, W, (tc_mode)mode);
        q->xb = tc__boundary_index(u->x0 + M * (int64_t)u->len + 1, W, (tc_mode)mode);
        for (int r = 0; r < A; r++) {
            int64_t by = u->plane ? tc__boundary_index(u->y0 + r, H, (tc_mode)mode) : -1;
            rowoff[r][k] = by < 0 ? -1 : by * W;
        }
    }
    return patched;
}

/* The segment's A rows of channel c (a plane apart from the current one:
 * a stride the hardware prefetchers do not follow). */
static inline void wg_prefetch(const tc__wg4_run *runs, int nruns, const wg4_prep *pr,
                               int64_t rowoff[][16], int M, int A, int64_t c, int64_t cstride) {
    for (int k = 0; k < nruns; k++)
        for (int r = 0; r < A; r++)
            if (rowoff[r][k] >= 0) {
                uintptr_t rb = (uintptr_t)(runs[k].plane + c * cstride + rowoff[r][k]) +
                               (uintptr_t)((pr[k].off + M * runs[k].lane) * 4);
                uintptr_t span = (uintptr_t)(4 * M * runs[k].len + 8);
                for (uintptr_t e = 0; e < span; e += 64) _mm_prefetch((const char *)(rb + e), _MM_HINT_T0);
                _mm_prefetch((const char *)(rb + span - 4), _MM_HINT_T0);
            }
}

/* The output transforms' store masks: run k's lanes of vector q, M
 * columns a lane; returns the largest row count. */
static int wg_out_masks(const tc__wg4_run *runs, int nruns, int M, int NQ, __mmask16 m[][4]) {
    int maxrows = 0;
    for (int k = 0; k < nruns; k++) {
        maxrows = runs[k].rows > maxrows ? runs[k].rows : maxrows;
        int64_t vb = M * (int64_t)runs[k].lane;
        for (int q = 0; q < NQ; q++) m[k][q] = wg4_range(vb, vb + runs[k].cnt, q);
    }
    return maxrows;
}

void tc__wg4_in_avx512(const tc__wg4_run *runs, int nruns, int nlanes, int64_t H, int64_t W,
                       int mode, float cval, int64_t nc, int64_t cstride, float *dst,
                       int64_t dst_cstride, int64_t xi_stride) {
    const __mmask16 mk = wg4_cnt(nlanes);
    const __m512 cv = _mm512_set1_ps(cval);
    const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
    wg4_prep pr[16];
    wg_perm pm;
    int64_t rowoff[6][16]; /* by * W, or -1: the row is cval */
    const int patched = wg_prep(runs, nruns, H, W, mode, 4, 5, 6, pr, rowoff, &pm);
    for (int64_t c = 0; c < nc; c++) {
        __m512 t[6][6]; /* (d B) per row */
        if (c + 2 < nc) wg_prefetch(runs, nruns, pr, rowoff, 4, 6, c + 2, cstride);
        for (int r = 0; r < 6; r++) {
            /* the row of the segment: element v = 4*lane + column of the
             * tile (columns 0..3; columns 4, 5 are the next lane's 0, 1) */
            /* five named vectors, indexed only by constants, so that they
             * stay in registers: an array indexed by the patch's element
             * kept them on the stack, each run's masked load then merging
             * through a store and a reload (57% of this function's time) */
            __m512 a0 = cv, a1 = cv, a2 = cv, a3 = cv, a4 = cv, d[6];
            for (int k = 0; k < nruns; k++) {
                if (rowoff[r][k] < 0) continue;
                const wg4_prep *q = &pr[k];
                const float *row = runs[k].plane + c * cstride + rowoff[r][k];
                /* element v at row + off + v (off may point before the row:
                 * address arithmetic in integers, masked lanes not read) */
                const uintptr_t rb = (uintptr_t)row + (uintptr_t)(q->off * 4);
                if (q->m[0]) a0 = _mm512_mask_loadu_ps(a0, q->m[0], (const void *)rb);
                if (q->m[1]) a1 = _mm512_mask_loadu_ps(a1, q->m[1], (const void *)(rb + 64));
                if (q->m[2]) a2 = _mm512_mask_loadu_ps(a2, q->m[2], (const void *)(rb + 128));
                if (q->m[3]) a3 = _mm512_mask_loadu_ps(a3, q->m[3], (const void *)(rb + 192));
                if (q->m[4]) a4 = _mm512_mask_loadu_ps(a4, q->m[4], (const void *)(rb + 256));
                if (patched)
                    for (int e = 0; e < q->np; e++) {
                        int v = q->pv[e];
                        const __mmask16 bit = (__mmask16)(1u << (v & 15));
                        const __m512 pvv = _mm512_set1_ps(q->px[e] < 0 ? cval : row[q->px[e]]);
                        switch (v >> 4) {
                        case 0: a0 = _mm512_mask_mov_ps(a0, bit, pvv); break;
                        case 1: a1 = _mm512_mask_mov_ps(a1, bit, pvv); break;
                        case 2: a2 = _mm512_mask_mov_ps(a2, bit, pvv); break;
                        case 3: a3 = _mm512_mask_mov_ps(a3, bit, pvv); break;
                        default: a4 = _mm512_mask_mov_ps(a4, bit, pvv); break;
                        }
                    }
            }
            __m512 a[5] = {a0, a1, a2, a3, a4};
            if (pm.any) {
                const __m512 u[5] = {a0, a1, a2, a3, a4};
                WG_PERM(&pm, a[0], 0, 5, u);
                WG_PERM(&pm, a[1], 1, 5, u);
                WG_PERM(&pm, a[2], 2, 5, u);
                WG_PERM(&pm, a[3], 3, 5, u);
                WG_PERM(&pm, a[4], 4, 5, u);
            }
            /* column j of lane t = element 4t + j: two rounds of even/odd picks */
            __m512 e01 = _mm512_permutex2var_ps(a[0], ev, a[1]), o01 = _mm512_permutex2var_ps(a[0], od, a[1]);
            __m512 e23 = _mm512_permutex2var_ps(a[2], ev, a[3]), o23 = _mm512_permutex2var_ps(a[2], od, a[3]);
            d[0] = _mm512_permutex2var_ps(e01, ev, e23);
            d[2] = _mm512_permutex2var_ps(e01, od, e23);
            d[1] = _mm512_permutex2var_ps(o01, ev, o23);
            d[3] = _mm512_permutex2var_ps(o01, od, o23);
            __m512i a4i = _mm512_castps_si512(a[4]);
            d[4] = _mm512_castsi512_ps(_mm512_alignr_epi32(a4i, _mm512_castps_si512(d[0]), 1));
            d[5] = _mm512_castsi512_ps(
                _mm512_alignr_epi32(_mm512_alignr_epi32(a4i, a4i, 1), _mm512_castps_si512(d[1]), 1));
            /* the last lane of every run but the last: its own columns 4, 5 */
            for (int k = 0; k + 1 < nruns; k++) {
                const wg4_prep *q = &pr[k];
                __mmask16 m = (__mmask16)(1u << (runs[k].lane + runs[k].len - 1));
                float v4 = cval, v5 = cval;
                if (rowoff[r][k] >= 0) {
                    const float *row = runs[k].plane + c * cstride + rowoff[r][k];
                    if (q->xa >= 0) v4 = row[q->xa];
                    if (q->xb >= 0) v5 = row[q->xb];
                }
                d[4] = _mm512_mask_mov_ps(d[4], m, _mm512_set1_ps(v4));
                d[5] = _mm512_mask_mov_ps(d[5], m, _mm512_set1_ps(v5));
            }
            wg4_row(d, t[r]);
        }
        float *dc = dst + c * dst_cstride;
        for (int j = 0; j < 6; j++) { /* B^T (d B): down the rows */
            __m512 d[6] = {t[0][j], t[1][j], t[2][j], t[3][j], t[4][j], t[5][j]}, v[6];
            wg4_row(d, v);
            for (int i = 0; i < 6; i++) _mm512_mask_storeu_ps(dc + (6 * i + j) * xi_stride, mk, v[i]);
        }
    }
}

/* A^T over 6 values -> 4. */
static inline void wg4_out1(const __m512 m[6], __m512 y[4]) {
    __m512 a = _mm512_add_ps(m[1], m[2]), b = _mm512_sub_ps(m[1], m[2]);
    __m512 c = _mm512_add_ps(m[3], m[4]), d = _mm512_sub_ps(m[3], m[4]);
    y[0] = _mm512_add_ps(_mm512_add_ps(m[0], a), c);
    y[1] = _mm512_fmadd_ps(_mm512_set1_ps(2.0f), d, b);
    y[2] = _mm512_fmadd_ps(_mm512_set1_ps(4.0f), c, a);
    y[3] = _mm512_add_ps(_mm512_fmadd_ps(_mm512_set1_ps(8.0f), d, b), m[5]);
}

void tc__wg4_out_avx512(const float *src, int64_t xi_stride, int64_t src_kstride, int64_t nk,
                        const float *bias, const tc__wg4_run *runs, int nruns, int64_t OW,
                        int64_t kstride) {
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i hi = _mm512_add_epi32(lo, _mm512_set1_epi32(8));
    const __m512i q0 = _mm512_setr_epi32(0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
    const __m512i q1 = _mm512_add_epi32(q0, _mm512_set1_epi32(8));
    __mmask16 m[16][4];
    const int maxrows = wg_out_masks(runs, nruns, 4, 4, m);
    for (int64_t kk = 0; kk < nk; kk++) {
        const float *sk = src + kk * src_kstride;
        __m512 s[4][6]; /* A^T M: row i of the 4, column b of the 6 */
        for (int b = 0; b < 6; b++) {
            __m512 mm[6], r[4];
            for (int a = 0; a < 6; a++) mm[a] = _mm512_loadu_ps(sk + (6 * a + b) * xi_stride);
            wg4_out1(mm, r);
            for (int i = 0; i < 4; i++) s[i][b] = r[i];
        }
        const __m512 bv = _mm512_set1_ps(bias ? bias[kk] : 0.0f);
        for (int i = 0; i < maxrows; i++) {
            __m512 yv[4], o[4];
            wg4_out1(s[i], yv);
            for (int j = 0; j < 4; j++) yv[j] = _mm512_add_ps(yv[j], bv);
            /* o: element 4t + j = yv[j][t] (pairs (0,1), (2,3), then quads) */
            __m512 p01l = _mm512_permutex2var_ps(yv[0], lo, yv[1]);
            __m512 p01h = _mm512_permutex2var_ps(yv[0], hi, yv[1]);
            __m512 p23l = _mm512_permutex2var_ps(yv[2], lo, yv[3]);
            __m512 p23h = _mm512_permutex2var_ps(yv[2], hi, yv[3]);
            o[0] = _mm512_permutex2var_ps(p01l, q0, p23l);
            o[1] = _mm512_permutex2var_ps(p01l, q1, p23l);
            o[2] = _mm512_permutex2var_ps(p01h, q0, p23h);
            o[3] = _mm512_permutex2var_ps(p01h, q1, p23h);
            for (int k = 0; k < nruns; k++) {
                const tc__wg4_run *u = &runs[k];
                if (i >= u->rows) continue;
                uintptr_t base = (uintptr_t)(u->out + kk * kstride + i * OW) - (uintptr_t)(u->lane * 16);
                for (int q = 0; q < 4; q++)
                    if (m[k][q]) _mm512_mask_storeu_ps((float *)(base + (uintptr_t)(64 * q)), m[k][q], o[q]);
            }
        }
    }
}

/* GEMM micro-kernel for 16-tile blocks: C (28 x 16, ldc) = A B with A given
 * as two 14-row panels a0, a1 (k-major, 14 per k step: the packed U) and B
 * one 16-wide panel (k-major); rows >= mr not written. 28 accumulators, one
 * B load and 28 broadcast FMAs per k step. */
static inline __attribute__((always_inline)) void
wg4_k28(int64_t kc, const float *restrict a0, const float *restrict a1, const float *restrict b,
        float *restrict c, int64_t ldc, int mr, int accumulate, const int PFA) {
    __m512 acc[28];
    for (int i = 0; i < 28; i++) acc[i] = _mm512_setzero_ps();
    for (int64_t l = 0; l < kc; l++) {
        const __m512 bv = _mm512_load_ps(b);
        _mm_prefetch((const char *)(b + 16 * 16), _MM_HINT_T0);
        if (PFA) { /* stored U streams from L3 / DRAM: 64 steps ahead */
            _mm_prefetch((const char *)(a0 + 64 * 14), _MM_HINT_T0);
            _mm_prefetch((const char *)(a1 + 64 * 14), _MM_HINT_T0);
        }
#pragma GCC unroll 14
        for (int i = 0; i < 14; i++) {
            acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(a0[i]), bv, acc[i]);
            acc[14 + i] = _mm512_fmadd_ps(_mm512_set1_ps(a1[i]), bv, acc[14 + i]);
        }
        a0 += 14;
        a1 += 14;
        b += 16;
    }
    for (int i = 0; i < 28; i++)
        if (i < mr)
            _mm512_storeu_ps(c + i * ldc, accumulate ? _mm512_add_ps(acc[i], _mm512_loadu_ps(c + i * ldc))
                                                     : acc[i]);
}

/* The stored U's first 64 steps of each panel (a0, a1: rows a step), asked
 * for into L2 before the micro-kernel starts: its own prefetch runs 64
 * steps ahead from step 0, so without this the first 64 steps of every
 * call (3.5 KB a 14-row panel) are demand misses, and a call starts cold
 * on every panel pair and every one of the 16 or 36 planes. Without
 * -> with it, 512 @7 (F(2x2), U 16.8 MB from memory, AMD EPYC Zen 4 VM):
 * 0.61-0.71 -> 0.58-0.65 ms best, 0.72-0.82 -> 0.66-0.77 median, four
 * interleaved pairs of runs. */
static inline void wg4_pf_start(int64_t kc, const float *a0, const float *a1, int rows) {
    const int64_t n = (kc < 64 ? kc : 64) * rows * (int64_t)sizeof(float);
    for (int64_t e = 0; e < n; e += 64) {
        _mm_prefetch((const char *)a0 + e, _MM_HINT_T1);
        if (a1 != a0) _mm_prefetch((const char *)a1 + e, _MM_HINT_T1);
    }
}

void tc__wg4_ukernel_28x16_avx512(int64_t kc, const float *restrict a0, const float *restrict a1,
                                  const float *restrict b, float *restrict c, int64_t ldc,
                                  int mr, int flags) {
    if (flags & TC__WG_PFA) {
        wg4_pf_start(kc, a0, a1, 14);
        wg4_k28(kc, a0, a1, b, c, ldc, mr, flags & TC__WG_ACC, 1);
    } else
        wg4_k28(kc, a0, a1, b, c, ldc, mr, flags & TC__WG_ACC, 0);
}

/* 8-row panels, for output-channel counts that 14-row panels fill badly
 * (K = 32: 42 rows computed for 32). NP panels of 8 rows x NV vectors of
 * 16 columns, 16 accumulators: C (8 NP x 16 NV, ldc) = A B, A the panels
 * a0 (and a1), k-major, 8 per k step; B 16 NV wide, k-major; rows >= mr
 * not written. */
static inline __attribute__((always_inline)) void
wg4_k8(int64_t kc, const float *restrict a0, const float *restrict a1, const float *restrict b,
       float *restrict c, int64_t ldc, int mr, int accumulate, const int NP, const int NV,
       const int PFA) {
    __m512 acc[2][8][2];
    for (int p = 0; p < NP; p++)
        for (int i = 0; i < 8; i++)
            for (int v = 0; v < NV; v++) acc[p][i][v] = _mm512_setzero_ps();
    for (int64_t l = 0; l < kc; l++) {
        __m512 bv[2];
        for (int v = 0; v < NV; v++) bv[v] = _mm512_load_ps(b + 16 * v);
        _mm_prefetch((const char *)(b + 16 * NV * 8), _MM_HINT_T0);
        if (PFA && !(l & 1)) { /* stored U: a line per panel every 2 steps, 64 ahead */
            _mm_prefetch((const char *)(a0 + 64 * 8), _MM_HINT_T0);
            if (NP == 2) _mm_prefetch((const char *)(a1 + 64 * 8), _MM_HINT_T0);
        }
#pragma GCC unroll 8
        for (int i = 0; i < 8; i++) {
            const __m512 x0 = _mm512_set1_ps(a0[i]);
            for (int v = 0; v < NV; v++) acc[0][i][v] = _mm512_fmadd_ps(x0, bv[v], acc[0][i][v]);
            if (NP == 2) {
                const __m512 x1 = _mm512_set1_ps(a1[i]);
                acc[1][i][0] = _mm512_fmadd_ps(x1, bv[0], acc[1][i][0]);
            }
        }
        a0 += 8;
        a1 += 8;
        b += 16 * NV;
    }
    for (int p = 0; p < NP; p++)
        for (int i = 0; i < 8; i++)
            if (p * 8 + i < mr)
                for (int v = 0; v < NV; v++) {
                    float *cp = c + (p * 8 + i) * ldc + 16 * v;
                    _mm512_storeu_ps(cp, accumulate ? _mm512_add_ps(acc[p][i][v], _mm512_loadu_ps(cp))
                                                    : acc[p][i][v]);
                }
}

void tc__wg4_ukernel_8x32_avx512(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                                 int mr, int flags) {
    if (flags & TC__WG_PFA) {
        wg4_pf_start(kc, a, a, 8);
        wg4_k8(kc, a, a, b, c, ldc, mr, flags & TC__WG_ACC, 1, 2, 1);
    } else
        wg4_k8(kc, a, a, b, c, ldc, mr, flags & TC__WG_ACC, 1, 2, 0);
}

void tc__wg4_ukernel_16x16_avx512(int64_t kc, const float *a0, const float *a1, const float *b,
                                  float *c, int64_t ldc, int mr, int flags) {
    if (flags & TC__WG_PFA) {
        wg4_pf_start(kc, a0, a1, 8);
        wg4_k8(kc, a0, a1, b, c, ldc, mr, flags & TC__WG_ACC, 2, 1, 1);
    } else
        wg4_k8(kc, a0, a1, b, c, ldc, mr, flags & TC__WG_ACC, 2, 1, 0);
}

/* ---- weight transform in the call (the solvers' raw-weight variants) ----
 * One step of G's 3 -> 6 (F(4,3)) or 3 -> 4 (F(2,3)) map on vectors of
 * kernel rows, with the pairs of rows 1, 2 and 3, 4 sharing their sums:
 *   G4 = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6;
 *         1/24 -1/12 1/6; 0 0 1],   G2 = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1] */
static inline void wg_g6(__m512 x0, __m512 x1, __m512 x2, __m512 y[6]) {
    const __m512 s = _mm512_add_ps(x0, x2);
    const __m512 m6 = _mm512_set1_ps(-1.0f / 6.0f);
    y[0] = _mm512_mul_ps(x0, _mm512_set1_ps(0.25f));
    y[1] = _mm512_mul_ps(_mm512_add_ps(s, x1), m6);
    y[2] = _mm512_mul_ps(_mm512_sub_ps(s, x1), m6);
    const __m512 f = _mm512_fmadd_ps(x0, _mm512_set1_ps(1.0f / 24.0f),
                                     _mm512_mul_ps(x2, _mm512_set1_ps(1.0f / 6.0f)));
    const __m512 h = _mm512_mul_ps(x1, _mm512_set1_ps(1.0f / 12.0f));
    y[3] = _mm512_add_ps(f, h);
    y[4] = _mm512_sub_ps(f, h);
    y[5] = x2;
}

static inline void wg_g4(__m512 x0, __m512 x1, __m512 x2, __m512 y[4]) {
    const __m512 s = _mm512_add_ps(x0, x2);
    const __m512 h = _mm512_set1_ps(0.5f);
    y[0] = x0;
    y[1] = _mm512_mul_ps(_mm512_add_ps(s, x1), h);
    y[2] = _mm512_mul_ps(_mm512_sub_ps(s, x1), h);
    y[3] = x2;
}

void tc__wg_wt_avx512(int m, const float *w, int64_t n, float *dst, int64_t xi_stride) {
    for (int64_t e = 0; e < n; e += 16) {
        const __mmask16 k = n - e >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - e)) - 1u);
        __m512 g[9];
        for (int t = 0; t < 9; t++) g[t] = _mm512_maskz_loadu_ps(k, w + t * n + e);
        if (m == 4) {
            __m512 t6[3][6]; /* t6[b][a] = (G g)[a][b] */
            for (int b = 0; b < 3; b++) wg_g6(g[b], g[3 + b], g[6 + b], t6[b]);
            for (int a = 0; a < 6; a++) {
                __m512 u[6];
                wg_g6(t6[0][a], t6[1][a], t6[2][a], u);
                for (int b = 0; b < 6; b++) _mm512_mask_store_ps(dst + (a * 6 + b) * xi_stride + e, k, u[b]);
            }
        } else {
            __m512 t4[3][4];
            for (int b = 0; b < 3; b++) wg_g4(g[b], g[3 + b], g[6 + b], t4[b]);
            for (int a = 0; a < 4; a++) {
                __m512 u[4];
                wg_g4(t4[0][a], t4[1][a], t4[2][a], u);
                for (int b = 0; b < 4; b++) _mm512_mask_store_ps(dst + (a * 4 + b) * xi_stride + e, k, u[b]);
            }
        }
    }
}

/* ---- F(2x2, 3x3): 4x4 input tiles at stride 2, points 0, 1, -1, infinity
 *
 *   B^T = [1  0 -1  0]   A^T = [1 1  1  0]
 *         [0  1  1  0]         [0 1 -1 -1]
 *         [0 -1  1  0]
 *         [0  1  0 -1]
 *
 * The same segments and runs as F(4x4,3x3), two columns a lane: element
 * 2*lane + j of a segment's row is column j of the lane's tile (j < 2),
 * columns 2, 3 the next lane's 0, 1 (a run's last lane patched with its own
 * columns 2*len, 2*len + 1). */

/* d B over one row: 4 columns -> 4 values. */
static inline void wg2_row(const __m512 d[4], __m512 v[4]) {
    v[0] = _mm512_sub_ps(d[0], d[2]);
    v[1] = _mm512_add_ps(d[1], d[2]);
    v[2] = _mm512_sub_ps(d[2], d[1]);
    v[3] = _mm512_sub_ps(d[1], d[3]);
}

void tc__wg2_in_avx512(const tc__wg4_run *runs, int nruns, int nlanes, int64_t H, int64_t W,
                       int mode, float cval, int64_t nc, int64_t cstride, float *dst,
                       int64_t dst_cstride, int64_t xi_stride) {
    const __mmask16 mk = wg4_cnt(nlanes);
    const __m512 cv = _mm512_set1_ps(cval);
    const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
    wg4_prep pr[16];
    wg_perm pm;
    int64_t rowoff[4][16];
    const int patched = wg_prep(runs, nruns, H, W, mode, 2, 3, 4, pr, rowoff, &pm);
    for (int64_t c = 0; c < nc; c++) {
        if (c + 2 < nc) wg_prefetch(runs, nruns, pr, rowoff, 2, 4, c + 2, cstride);
        __m512 t[4][4];
        for (int r = 0; r < 4; r++) {
            __m512 a0 = cv, a1 = cv, a2 = cv, d[4];
            for (int k = 0; k < nruns; k++) {
                if (rowoff[r][k] < 0) continue;
                const float *row = runs[k].plane + c * cstride + rowoff[r][k];
                const uintptr_t rb = (uintptr_t)row + (uintptr_t)(pr[k].off * 4);
                if (pr[k].m[0]) a0 = _mm512_mask_loadu_ps(a0, pr[k].m[0], (const void *)rb);
                if (pr[k].m[1]) a1 = _mm512_mask_loadu_ps(a1, pr[k].m[1], (const void *)(rb + 64));
                if (pr[k].m[2]) a2 = _mm512_mask_loadu_ps(a2, pr[k].m[2], (const void *)(rb + 128));
                if (patched)
                    for (int e = 0; e < pr[k].np; e++) {
                        int v = pr[k].pv[e];
                        const __mmask16 bit = (__mmask16)(1u << (v & 15));
                        const __m512 pvv = _mm512_set1_ps(pr[k].px[e] < 0 ? cval : row[pr[k].px[e]]);
                        switch (v >> 4) {
                        case 0: a0 = _mm512_mask_mov_ps(a0, bit, pvv); break;
                        case 1: a1 = _mm512_mask_mov_ps(a1, bit, pvv); break;
                        default: a2 = _mm512_mask_mov_ps(a2, bit, pvv); break;
                        }
                    }
            }
            if (pm.any) {
                const __m512 u[3] = {a0, a1, a2};
                WG_PERM(&pm, a0, 0, 3, u);
                WG_PERM(&pm, a1, 1, 3, u);
                WG_PERM(&pm, a2, 2, 3, u);
            }
            d[0] = _mm512_permutex2var_ps(a0, ev, a1);
            d[1] = _mm512_permutex2var_ps(a0, od, a1);
            __m512i a2i = _mm512_castps_si512(a2);
            d[2] = _mm512_castsi512_ps(_mm512_alignr_epi32(a2i, _mm512_castps_si512(d[0]), 1));
            d[3] = _mm512_castsi512_ps(
                _mm512_alignr_epi32(_mm512_alignr_epi32(a2i, a2i, 1), _mm512_castps_si512(d[1]), 1));
            for (int k = 0; k + 1 < nruns; k++) {
                __mmask16 m = (__mmask16)(1u << (runs[k].lane + runs[k].len - 1));
                float v2 = cval, v3 = cval;
                if (rowoff[r][k] >= 0) {
                    const float *row = runs[k].plane + c * cstride + rowoff[r][k];
                    if (pr[k].xa >= 0) v2 = row[pr[k].xa];
                    if (pr[k].xb >= 0) v3 = row[pr[k].xb];
                }
                d[2] = _mm512_mask_mov_ps(d[2], m, _mm512_set1_ps(v2));
                d[3] = _mm512_mask_mov_ps(d[3], m, _mm512_set1_ps(v3));
            }
            wg2_row(d, t[r]);
        }
        float *dc = dst + c * dst_cstride;
        for (int j = 0; j < 4; j++) {
            __m512 d[4] = {t[0][j], t[1][j], t[2][j], t[3][j]}, v[4];
            wg2_row(d, v);
            for (int i = 0; i < 4; i++) _mm512_mask_storeu_ps(dc + (4 * i + j) * xi_stride, mk, v[i]);
        }
    }
}

void tc__wg2_out_avx512(const float *src, int64_t xi_stride, int64_t src_kstride, int64_t nk,
                        const float *bias, const tc__wg4_run *runs, int nruns, int64_t OW,
                        int64_t kstride) {
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i hi = _mm512_add_epi32(lo, _mm512_set1_epi32(8));
    __mmask16 m[16][4];
    const int maxrows = wg_out_masks(runs, nruns, 2, 2, m);
    for (int64_t kk = 0; kk < nk; kk++) {
        const float *sk = src + kk * src_kstride;
        __m512 s[2][4]; /* A^T M: row i of the 2, column b of the 4 */
        for (int b = 0; b < 4; b++) {
            __m512 m0 = _mm512_loadu_ps(sk + (0 + b) * xi_stride);
            __m512 m1 = _mm512_loadu_ps(sk + (4 + b) * xi_stride);
            __m512 m2 = _mm512_loadu_ps(sk + (8 + b) * xi_stride);
            __m512 m3 = _mm512_loadu_ps(sk + (12 + b) * xi_stride);
            s[0][b] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
            s[1][b] = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3);
        }
        const __m512 bv = _mm512_set1_ps(bias ? bias[kk] : 0.0f);
        for (int i = 0; i < maxrows; i++) {
            __m512 y0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(s[i][0], s[i][1]), s[i][2]), bv);
            __m512 y1 = _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(s[i][1], s[i][2]), s[i][3]), bv);
            __m512 o[2] = {_mm512_permutex2var_ps(y0, lo, y1), _mm512_permutex2var_ps(y0, hi, y1)};
            for (int k = 0; k < nruns; k++) {
                const tc__wg4_run *u = &runs[k];
                if (i >= u->rows) continue;
                uintptr_t base = (uintptr_t)(u->out + kk * kstride + i * OW) - (uintptr_t)(u->lane * 8);
                for (int q = 0; q < 2; q++)
                    if (m[k][q]) _mm512_mask_storeu_ps((float *)(base + (uintptr_t)(64 * q)), m[k][q], o[q]);
            }
        }
    }
}
