/* conv_winograd_avx512.c - the AVX-512 transforms of cpu.conv.winograd
 * (conv_winograd.c), F(2x2, 3x3), float32, 16 tiles of one tile row at a
 * time (one zmm lane per tile).
 *
 * Input: for 16 tiles starting at tile column tx0, rows r of the 4-row
 * input strip are given as 34-float buffers holding input columns
 * 2*tx0 - pad .. 2*tx0 - pad + 33 (boundary already applied). Column j of
 * tile t is element 2t + j: even/odd lanes picked with vpermt2ps. Then
 * V = B^T d B with B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], written
 * as 16 vectors: V[xi][t], xi = 4*row + col, to dst + xi * xi_stride.
 *
 * Output: M[xi][t] (16 vectors, from src + xi * xi_stride) to the 2x2
 * outputs per tile, Y = A^T M A with A^T = [1 1 1 0; 0 1 -1 -1], plus
 * bias; rows 0 and 1 of the tile row are returned interleaved (lane pairs
 * (2t, 2t+1)) as two 32-float rows in out0 / out1. */
#include <immintrin.h>
#include <stdint.h>

static inline __m512 wg_cols(__m512 a, __m512 b, const __m512i idx) {
    return _mm512_permutex2var_ps(a, idx, b);
}

void tc__wg_in_f23_avx512(const float *const rows[4], float *dst, int64_t xi_stride,
                          int len) {
    const __mmask16 mk = (__mmask16)(len >= 16 ? 0xffff : (1u << len) - 1);
    const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i od = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    __m512 t[4][4]; /* (d B) per row: 4 columns after the row transform */
    for (int r = 0; r < 4; r++) {
        const float *p = rows[r];
        __m512 a = _mm512_loadu_ps(p), b = _mm512_loadu_ps(p + 16);
        __m512 a2 = _mm512_loadu_ps(p + 2), b2 = _mm512_loadu_ps(p + 18);
        __m512 c0 = wg_cols(a, b, ev), c1 = wg_cols(a, b, od);
        __m512 c2 = wg_cols(a2, b2, ev), c3 = wg_cols(a2, b2, od);
        /* d B: columns (c0 - c2, c1 + c2, c2 - c1, c1 - c3) */
        t[r][0] = _mm512_sub_ps(c0, c2);
        t[r][1] = _mm512_add_ps(c1, c2);
        t[r][2] = _mm512_sub_ps(c2, c1);
        t[r][3] = _mm512_sub_ps(c1, c3);
    }
    for (int j = 0; j < 4; j++) { /* B^T (d B): rows */
        _mm512_mask_storeu_ps(dst + (0 * 4 + j) * xi_stride, mk, _mm512_sub_ps(t[0][j], t[2][j]));
        _mm512_mask_storeu_ps(dst + (1 * 4 + j) * xi_stride, mk, _mm512_add_ps(t[1][j], t[2][j]));
        _mm512_mask_storeu_ps(dst + (2 * 4 + j) * xi_stride, mk, _mm512_sub_ps(t[2][j], t[1][j]));
        _mm512_mask_storeu_ps(dst + (3 * 4 + j) * xi_stride, mk, _mm512_sub_ps(t[1][j], t[3][j]));
    }
}

void tc__wg_out_f23_avx512(const float *src, int64_t xi_stride, float bias, float *out0,
                           float *out1) {
    __m512 m[16];
    for (int i = 0; i < 16; i++) m[i] = _mm512_loadu_ps(src + i * xi_stride);
    /* A^T M: rows s0 = m0 + m1 + m2, s1 = m1 - m2 - m3 (per column) */
    __m512 s0[4], s1[4];
    for (int j = 0; j < 4; j++) {
        s0[j] = _mm512_add_ps(_mm512_add_ps(m[0 * 4 + j], m[1 * 4 + j]), m[2 * 4 + j]);
        s1[j] = _mm512_sub_ps(_mm512_sub_ps(m[1 * 4 + j], m[2 * 4 + j]), m[3 * 4 + j]);
    }
    const __m512 bv = _mm512_set1_ps(bias);
    __m512 y00 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(s0[0], s0[1]), s0[2]), bv);
    __m512 y01 = _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(s0[1], s0[2]), s0[3]), bv);
    __m512 y10 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(s1[0], s1[1]), s1[2]), bv);
    __m512 y11 = _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(s1[1], s1[2]), s1[3]), bv);
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30,
                                         15, 31);
    _mm512_storeu_ps(out0, _mm512_permutex2var_ps(y00, lo, y01));
    _mm512_storeu_ps(out0 + 16, _mm512_permutex2var_ps(y00, hi, y01));
    _mm512_storeu_ps(out1, _mm512_permutex2var_ps(y10, lo, y11));
    _mm512_storeu_ps(out1 + 16, _mm512_permutex2var_ps(y10, hi, y11));
}
