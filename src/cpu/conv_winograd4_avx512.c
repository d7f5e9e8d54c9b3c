/* conv_winograd4_avx512.c - the AVX-512 parts of cpu.conv.winograd4
 * (conv_winograd4.c): Winograd F(4x4, 3x3) transforms over 16 tiles of one
 * tile row (one zmm lane per tile) and a 28x16 GEMM micro-kernel for
 * blocks of 16 tiles. Float32. Points 0, 1, -1, 2, -2 and infinity:
 *
 *   B^T = [4  0 -5  0 1 0]    A^T = [1 1  1 1  1 0]
 *         [0 -4 -4  1 1 0]          [0 1 -1 2 -2 0]
 *         [0  4 -4 -1 1 0]          [0 1  1 4  4 0]
 *         [0 -2 -1  2 1 0]          [0 1 -1 8 -8 1]
 *         [0  2 -1 -2 1 0]
 *         [0  4  0 -5 0 1]
 *
 * Input: tile t of the segment reads input columns x0 + 4t .. x0 + 4t + 5 of
 * six input rows y0 .. y0 + 5; the rows are fetched with the boundary mode
 * applied (a direct masked load where the whole segment lies inside the
 * row, otherwise a 68-float row buffer patched at the edges), the six
 * columns of 16 tiles picked with two-table permutes, and V = B^T d B is
 * written as 36 masked vectors V[xi] (xi = 6*row + col) at dst + xi*stride.
 *
 * Output: 36 vectors M[xi] (lanes = tiles) to Y = A^T M A (4x4 per tile)
 * plus bias, interleaved into up to 4 output rows of 4*len floats, stored
 * with masks for the right and bottom edges. */
#include "gemm_packed.h"

#include <immintrin.h>
#include <string.h>

#define WG4_ROWBUF 80

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

/* One input row of the segment, n = 4*len + 2 values starting at column
 * x0, boundary applied; returns where to read it (the image or buf). */
static const float *wg4_fetch_row(const float *plane, int64_t H, int64_t W, int64_t y,
                                  int64_t x0, int64_t n, int mode, float cval, float *buf) {
    int64_t by = tc__boundary_index(y, H, (tc_mode)mode);
    if (by < 0) {
        for (int64_t e = 0; e < n; e++) buf[e] = cval;
        return buf;
    }
    const float *row = plane + by * W;
    if (x0 >= 0 && x0 + n <= W) return row + x0;
    int64_t e0 = x0 < 0 ? -x0 : 0, e1 = W - x0 < n ? W - x0 : n;
    if (e1 > e0) memcpy(buf + e0, row + x0 + e0, (size_t)(e1 - e0) * sizeof(float));
    else e0 = e1 = n < e0 ? n : e0; /* no column inside: every value patched below */
    for (int64_t e = 0; e < e0; e++) {
        int64_t bx = tc__boundary_index(x0 + e, W, (tc_mode)mode);
        buf[e] = bx < 0 ? cval : row[bx];
    }
    for (int64_t e = e1 < e0 ? e0 : e1; e < n; e++) {
        int64_t bx = tc__boundary_index(x0 + e, W, (tc_mode)mode);
        buf[e] = bx < 0 ? cval : row[bx];
    }
    return buf;
}

/* rowbuf: 6 * WG4_ROWBUF floats of scratch (contents beyond n never reach a
 * stored lane). */
void tc__wg4_in_avx512(const float *plane, int64_t H, int64_t W, int64_t y0, int64_t x0, int len,
                       int mode, float cval, float *rowbuf, float *dst, int64_t xi_stride) {
    const __mmask16 mk = wg4_cnt(len);
    const int64_t n = 4 * (int64_t)len + 2;
    /* lanes 0..7: element 4t + j of a 32-float pair; lanes 8..15 unused */
    const __m512i i0 = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28);
    const __m512i i1 = _mm512_add_epi32(i0, _mm512_set1_epi32(1));
    const __m512i i2 = _mm512_add_epi32(i0, _mm512_set1_epi32(2));
    const __m512i i3 = _mm512_add_epi32(i0, _mm512_set1_epi32(3));
    __m512 t[6][6]; /* (d B) per row */
    for (int r = 0; r < 6; r++) {
        const float *p = wg4_fetch_row(plane, H, W, y0 + r, x0, n, mode, cval,
                                       rowbuf + r * WG4_ROWBUF);
        __m512 a0 = _mm512_maskz_loadu_ps(wg4_cnt(n), p);
        __m512 a1 = _mm512_maskz_loadu_ps(wg4_cnt(n - 16), p + 16);
        __m512 a2 = _mm512_maskz_loadu_ps(wg4_cnt(n - 32), p + 32);
        __m512 a3 = _mm512_maskz_loadu_ps(wg4_cnt(n - 48), p + 48);
        __m512 b0 = _mm512_maskz_loadu_ps(wg4_cnt(n - 4), p + 4);
        __m512 b1 = _mm512_maskz_loadu_ps(wg4_cnt(n - 20), p + 20);
        __m512 b2 = _mm512_maskz_loadu_ps(wg4_cnt(n - 36), p + 36);
        __m512 b3 = _mm512_maskz_loadu_ps(wg4_cnt(n - 52), p + 52);
        __m512 d[6];
#define WG4_COL(x0v, x1v, x2v, x3v, idx)                                                      \
    _mm512_shuffle_f32x4(_mm512_permutex2var_ps(x0v, idx, x1v),                              \
                         _mm512_permutex2var_ps(x2v, idx, x3v), _MM_SHUFFLE(1, 0, 1, 0))
        d[0] = WG4_COL(a0, a1, a2, a3, i0);
        d[1] = WG4_COL(a0, a1, a2, a3, i1);
        d[2] = WG4_COL(a0, a1, a2, a3, i2);
        d[3] = WG4_COL(a0, a1, a2, a3, i3);
        d[4] = WG4_COL(b0, b1, b2, b3, i0);
        d[5] = WG4_COL(b0, b1, b2, b3, i1);
#undef WG4_COL
        wg4_row(d, t[r]);
    }
    for (int j = 0; j < 6; j++) { /* B^T (d B): down the rows */
        __m512 d[6] = {t[0][j], t[1][j], t[2][j], t[3][j], t[4][j], t[5][j]}, v[6];
        wg4_row(d, v);
        for (int i = 0; i < 6; i++) _mm512_mask_storeu_ps(dst + (6 * i + j) * xi_stride, mk, v[i]);
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

/* M[xi] at src + xi*xi_stride (16 tiles) -> output rows y, y + OW, ...:
 * rows valid rows (<= 4), cnt valid columns (<= 64). */
void tc__wg4_out_avx512(const float *src, int64_t xi_stride, float bias, float *y, int64_t OW,
                        int rows, int cnt) {
    __m512 s[4][6]; /* A^T M: row i of the 4, column b of the 6 */
    for (int b = 0; b < 6; b++) {
        __m512 m[6], r[4];
        for (int a = 0; a < 6; a++) m[a] = _mm512_loadu_ps(src + (6 * a + b) * xi_stride);
        wg4_out1(m, r);
        for (int i = 0; i < 4; i++) s[i][b] = r[i];
    }
    const __m512 bv = _mm512_set1_ps(bias);
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i hi = _mm512_add_epi32(lo, _mm512_set1_epi32(8));
    const __m512i q0 = _mm512_setr_epi32(0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
    const __m512i q1 = _mm512_add_epi32(q0, _mm512_set1_epi32(8));
    for (int i = 0; i < rows; i++) {
        __m512 yv[4];
        wg4_out1(s[i], yv);
        for (int j = 0; j < 4; j++) yv[j] = _mm512_add_ps(yv[j], bv);
        /* out[4t + j] = yv[j][t]: pairs (0,1), (2,3) then quads */
        __m512 p01l = _mm512_permutex2var_ps(yv[0], lo, yv[1]);
        __m512 p01h = _mm512_permutex2var_ps(yv[0], hi, yv[1]);
        __m512 p23l = _mm512_permutex2var_ps(yv[2], lo, yv[3]);
        __m512 p23h = _mm512_permutex2var_ps(yv[2], hi, yv[3]);
        float *yr = y + i * OW;
        _mm512_mask_storeu_ps(yr, wg4_cnt(cnt), _mm512_permutex2var_ps(p01l, q0, p23l));
        if (cnt > 16)
            _mm512_mask_storeu_ps(yr + 16, wg4_cnt(cnt - 16), _mm512_permutex2var_ps(p01l, q1, p23l));
        if (cnt > 32)
            _mm512_mask_storeu_ps(yr + 32, wg4_cnt(cnt - 32), _mm512_permutex2var_ps(p01h, q0, p23h));
        if (cnt > 48)
            _mm512_mask_storeu_ps(yr + 48, wg4_cnt(cnt - 48), _mm512_permutex2var_ps(p01h, q1, p23h));
    }
}

/* GEMM micro-kernel for 16-tile blocks: C (28 x 16, ldc) = A B with A given
 * as two 14-row panels a0, a1 (k-major, 14 per k step: the packed U) and B
 * one 16-wide panel (k-major); rows >= mr not written. 28 accumulators, one
 * B load and 28 broadcast FMAs per k step. */
void tc__wg4_ukernel_28x16_avx512(int64_t kc, const float *restrict a0, const float *restrict a1,
                                  const float *restrict b, float *restrict c, int64_t ldc,
                                  int mr) {
    __m512 acc[28];
    for (int i = 0; i < 28; i++) acc[i] = _mm512_setzero_ps();
    for (int64_t l = 0; l < kc; l++) {
        const __m512 bv = _mm512_load_ps(b);
        _mm_prefetch((const char *)(b + 16 * 16), _MM_HINT_T0);
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
        if (i < mr) _mm512_storeu_ps(c + i * ldc, acc[i]);
}
