/*
 * avx512_util.h - register-level helpers shared by the AVX-512 kernels
 * (include only from files compiled with AVX-512 flags).
 *
 * tc__avx512_tr16_ps / tc__avx512_tr8_pd: in-place transposes of a 16x16
 * float / 8x8 double block held one row a register (r[i] = row i; after,
 * r[j] = column j). 16x16: 16 unpcklps/unpckhps, 16 unpcklpd/unpckhpd and
 * 32 vshuff32x4 (64 shuffles); 8x8: 8 unpack and 16 vshuff64x2 (24). Used by
 * the direct filter's lane interleave (filter_direct_avx512.c), the packed
 * GEMM's transposing packs (gemm_pack_avx512.c) and the direct
 * convolution's layout conversion and transposed stores
 * (conv_direct_avx512.c).
 */
#ifndef TC_CPU_AVX512_UTIL_H
#define TC_CPU_AVX512_UTIL_H

#include <immintrin.h>

static inline __attribute__((always_inline)) void tc__avx512_tr16_ps(__m512 r[16]) {
    __m512 a[16], b[16];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) {
        a[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        a[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    /* b[4i + c], 128-bit lane q: rows 4i..4i+3 of column 4q + c */
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        __m512d a0 = _mm512_castps_pd(a[4 * i]), a1 = _mm512_castps_pd(a[4 * i + 1]);
        __m512d a2 = _mm512_castps_pd(a[4 * i + 2]), a3 = _mm512_castps_pd(a[4 * i + 3]);
        b[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
        b[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
        b[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
        b[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
    }
#pragma GCC unroll 4
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

static inline __attribute__((always_inline)) void tc__avx512_tr8_pd(__m512d r[8]) {
    __m512d a[8];
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        a[2 * i] = _mm512_unpacklo_pd(r[2 * i], r[2 * i + 1]);
        a[2 * i + 1] = _mm512_unpackhi_pd(r[2 * i], r[2 * i + 1]);
    }
    /* a[2i + s], 128-bit lane q: rows 2i, 2i+1 of column 2q + s */
#pragma GCC unroll 2
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

#endif /* TC_CPU_AVX512_UTIL_H */
