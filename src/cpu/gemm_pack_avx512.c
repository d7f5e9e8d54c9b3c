/*
 * gemm_pack_avx512.c - transposing pack routines for the packed GEMM
 * (gemm_packed.c). Compiled with -mavx512f...; called only after cpuid.
 *
 * They pack a panel whose rows are strided in memory (op(A) when A is not
 * transposed, op(B) when B is transposed):
 *
 *   dst[l*P + r] = src[r*ld + l]  for r < rows, l < kc;  0 for rows <= r < P
 *
 * 16x16 (f32) or 8x8 (f64) blocks are loaded row by row (contiguous, so
 * the hardware prefetchers follow every row) and transposed in registers:
 * about 0.25 shuffles per element instead of one scalar load + store.
 */
#include "gemm_packed.h"

#include <immintrin.h>

/* In-place 16x16 f32 transpose of r[0..15]. */
static inline void tc__transpose16_ps(__m512 r[16]) {
    __m512 a[16], b[16];
    for (int i = 0; i < 8; i++) {
        a[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        a[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    /* b[4i + c], 128-bit lane L: rows 4i..4i+3 of column 4L + c */
    for (int i = 0; i < 4; i++) {
        __m512d a0 = _mm512_castps_pd(a[4 * i]), a1 = _mm512_castps_pd(a[4 * i + 1]);
        __m512d a2 = _mm512_castps_pd(a[4 * i + 2]), a3 = _mm512_castps_pd(a[4 * i + 3]);
        b[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
        b[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
        b[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
        b[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
    }
    for (int c = 0; c < 4; c++) {
        __m512 e0 = _mm512_shuffle_f32x4(b[c], b[4 + c], 0x44);
        __m512 e1 = _mm512_shuffle_f32x4(b[c], b[4 + c], 0xEE);
        __m512 f0 = _mm512_shuffle_f32x4(b[8 + c], b[12 + c], 0x44);
        __m512 f1 = _mm512_shuffle_f32x4(b[8 + c], b[12 + c], 0xEE);
        r[c] = _mm512_shuffle_f32x4(e0, f0, 0x88);
        r[4 + c] = _mm512_shuffle_f32x4(e0, f0, 0xDD);
        r[8 + c] = _mm512_shuffle_f32x4(e1, f1, 0x88);
        r[12 + c] = _mm512_shuffle_f32x4(e1, f1, 0xDD);
    }
}

/* In-place 8x8 f64 transpose of r[0..7]. */
static inline void tc__transpose8_pd(__m512d r[8]) {
    __m512d a[8];
    for (int i = 0; i < 4; i++) {
        a[2 * i] = _mm512_unpacklo_pd(r[2 * i], r[2 * i + 1]);
        a[2 * i + 1] = _mm512_unpackhi_pd(r[2 * i], r[2 * i + 1]);
    }
    /* a[2i + s], 128-bit lane L: rows 2i, 2i+1 of column 2L + s */
    for (int s = 0; s < 2; s++) {
        __m512d e0 = _mm512_shuffle_f64x2(a[s], a[2 + s], 0x44);
        __m512d e1 = _mm512_shuffle_f64x2(a[s], a[2 + s], 0xEE);
        __m512d f0 = _mm512_shuffle_f64x2(a[4 + s], a[6 + s], 0x44);
        __m512d f1 = _mm512_shuffle_f64x2(a[4 + s], a[6 + s], 0xEE);
        r[s] = _mm512_shuffle_f64x2(e0, f0, 0x88);
        r[2 + s] = _mm512_shuffle_f64x2(e0, f0, 0xDD);
        r[4 + s] = _mm512_shuffle_f64x2(e1, f1, 0x88);
        r[6 + s] = _mm512_shuffle_f64x2(e1, f1, 0xDD);
    }
}

void tc__f32_pack_t_avx512(float *restrict dst, int P, const float *src,
                           int64_t ld, int rows, int64_t kc) {
    for (int r0 = 0; r0 < P; r0 += 16) {
        int nr = rows - r0 < 16 ? (rows - r0 > 0 ? rows - r0 : 0) : 16;
        int w = P - r0 < 16 ? P - r0 : 16; /* lanes stored per k step */
        __mmask16 sm = (__mmask16)((1u << w) - 1);
        for (int64_t l0 = 0; l0 < kc; l0 += 16) {
            int nl = kc - l0 < 16 ? (int)(kc - l0) : 16;
            __mmask16 lm = (__mmask16)((1u << nl) - 1);
            __m512 r[16];
            for (int i = 0; i < 16; i++)
                r[i] = i < nr ? _mm512_maskz_loadu_ps(lm, src + (r0 + i) * ld + l0)
                              : _mm512_setzero_ps();
            tc__transpose16_ps(r);
            for (int t = 0; t < nl; t++)
                _mm512_mask_storeu_ps(dst + (l0 + t) * P + r0, sm, r[t]);
        }
    }
}

void tc__f64_pack_t_avx512(double *restrict dst, int P, const double *src,
                           int64_t ld, int rows, int64_t kc) {
    for (int r0 = 0; r0 < P; r0 += 8) {
        int nr = rows - r0 < 8 ? (rows - r0 > 0 ? rows - r0 : 0) : 8;
        int w = P - r0 < 8 ? P - r0 : 8;
        __mmask8 sm = (__mmask8)((1u << w) - 1);
        for (int64_t l0 = 0; l0 < kc; l0 += 8) {
            int nl = kc - l0 < 8 ? (int)(kc - l0) : 8;
            __mmask8 lm = (__mmask8)((1u << nl) - 1);
            __m512d r[8];
            for (int i = 0; i < 8; i++)
                r[i] = i < nr ? _mm512_maskz_loadu_pd(lm, src + (r0 + i) * ld + l0)
                              : _mm512_setzero_pd();
            tc__transpose8_pd(r);
            for (int t = 0; t < nl; t++)
                _mm512_mask_storeu_pd(dst + (l0 + t) * P + r0, sm, r[t]);
        }
    }
}
