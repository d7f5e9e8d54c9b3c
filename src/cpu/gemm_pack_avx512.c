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

#include "avx512_util.h"

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
            tc__avx512_tr16_ps(r);
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
            tc__avx512_tr8_pd(r);
            for (int t = 0; t < nl; t++)
                _mm512_mask_storeu_pd(dst + (l0 + t) * P + r0, sm, r[t]);
        }
    }
}
