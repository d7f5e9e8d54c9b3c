/* separable_avx2.c - the separable solvers' inner loops for AVX2 + FMA
 * (CMake compiles *_avx2.c with -mavx2 -mfma; separable.c calls them only
 * when cpuid has them). Same scheme as separable_avx512.c; the remainder
 * uses maskload/maskstore. */
#include "cpu/separable.h"

#include <immintrin.h>

/* lane mask for the first n (< W) lanes, as the integer vector maskload
 * wants */
static __m256i sep_mask32(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static __m256i sep_mask64(int64_t n) {
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3));
}

#define SEP256(T, TS, V, W, MK, SET1, ZERO, LOADU, MLOADU, STOREU, MSTOREU,    \
               FMA, STREAM, ALIGN)                                              \
    static void sep_row_##TS(void *out_, const void *h_, const void *c_,        \
                             int64_t m, int64_t len) {                          \
        T *out = out_;                                                          \
        const T *h = h_, *c = c_;                                               \
        int64_t o = 0;                                                          \
        for (; o + 8 * W <= len; o += 8 * W) {                                  \
            V a0 = ZERO(), a1 = ZERO(), a2 = ZERO(), a3 = ZERO();               \
            V a4 = ZERO(), a5 = ZERO(), a6 = ZERO(), a7 = ZERO();               \
            const T *hp = h + o;                                                \
            for (int64_t r = 0; r < m; r++) {                                   \
                V cr = SET1(c[r]);                                              \
                const T *q = hp + r;                                            \
                a0 = FMA(cr, LOADU(q), a0);                                     \
                a1 = FMA(cr, LOADU(q + W), a1);                                 \
                a2 = FMA(cr, LOADU(q + 2 * W), a2);                             \
                a3 = FMA(cr, LOADU(q + 3 * W), a3);                             \
                a4 = FMA(cr, LOADU(q + 4 * W), a4);                             \
                a5 = FMA(cr, LOADU(q + 5 * W), a5);                             \
                a6 = FMA(cr, LOADU(q + 6 * W), a6);                             \
                a7 = FMA(cr, LOADU(q + 7 * W), a7);                             \
            }                                                                   \
            STOREU(out + o, a0);                                                \
            STOREU(out + o + W, a1);                                            \
            STOREU(out + o + 2 * W, a2);                                        \
            STOREU(out + o + 3 * W, a3);                                        \
            STOREU(out + o + 4 * W, a4);                                        \
            STOREU(out + o + 5 * W, a5);                                        \
            STOREU(out + o + 6 * W, a6);                                        \
            STOREU(out + o + 7 * W, a7);                                        \
        }                                                                       \
        for (; o < len; o += W) {                                               \
            __m256i k = MK(len - o);                                            \
            V a = ZERO();                                                       \
            for (int64_t r = 0; r < m; r++)                                     \
                a = FMA(SET1(c[r]), MLOADU(h + o + r, k), a);                   \
            MSTOREU(out + o, k, a);                                             \
        }                                                                       \
    }                                                                           \
                                                                                \
    static void sep_comb_##TS(void *out_, const void *const *src,               \
                              const void *c_, int64_t nt, double bias,          \
                              int64_t len, int stream) {                        \
        T *out = out_;                                                          \
        const T *c = c_;                                                        \
        const V b = SET1((T)bias);                                              \
        int64_t o = 0;                                                          \
        stream = stream && ((uintptr_t)out & ALIGN) == 0;                       \
        for (; o + 8 * W <= len; o += 8 * W) {                                  \
            V a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b;   \
            for (int64_t t = 0; t < nt; t++) {                                  \
                V ct = SET1(c[t]);                                              \
                const T *s = (const T *)src[t] + o;                             \
                a0 = FMA(ct, LOADU(s), a0);                                     \
                a1 = FMA(ct, LOADU(s + W), a1);                                 \
                a2 = FMA(ct, LOADU(s + 2 * W), a2);                             \
                a3 = FMA(ct, LOADU(s + 3 * W), a3);                             \
                a4 = FMA(ct, LOADU(s + 4 * W), a4);                             \
                a5 = FMA(ct, LOADU(s + 5 * W), a5);                             \
                a6 = FMA(ct, LOADU(s + 6 * W), a6);                             \
                a7 = FMA(ct, LOADU(s + 7 * W), a7);                             \
            }                                                                   \
            if (stream) {                                                       \
                STREAM(out + o, a0);                                            \
                STREAM(out + o + W, a1);                                        \
                STREAM(out + o + 2 * W, a2);                                    \
                STREAM(out + o + 3 * W, a3);                                    \
                STREAM(out + o + 4 * W, a4);                                    \
                STREAM(out + o + 5 * W, a5);                                    \
                STREAM(out + o + 6 * W, a6);                                    \
                STREAM(out + o + 7 * W, a7);                                    \
                continue;                                                       \
            }                                                                   \
            STOREU(out + o, a0);                                                \
            STOREU(out + o + W, a1);                                            \
            STOREU(out + o + 2 * W, a2);                                        \
            STOREU(out + o + 3 * W, a3);                                        \
            STOREU(out + o + 4 * W, a4);                                        \
            STOREU(out + o + 5 * W, a5);                                        \
            STOREU(out + o + 6 * W, a6);                                        \
            STOREU(out + o + 7 * W, a7);                                        \
        }                                                                       \
        for (; o < len; o += W) {                                               \
            __m256i k = MK(len - o);                                            \
            V a = b;                                                            \
            for (int64_t t = 0; t < nt; t++)                                    \
                a = FMA(SET1(c[t]), MLOADU((const T *)src[t] + o, k), a);       \
            MSTOREU(out + o, k, a);                                             \
        }                                                                       \
    }

SEP256(float, f32, __m256, 8, sep_mask32, _mm256_set1_ps, _mm256_setzero_ps,
       _mm256_loadu_ps, _mm256_maskload_ps, _mm256_storeu_ps,
       _mm256_maskstore_ps, _mm256_fmadd_ps, _mm256_stream_ps, 31)
SEP256(double, f64, __m256d, 4, sep_mask64, _mm256_set1_pd, _mm256_setzero_pd,
       _mm256_loadu_pd, _mm256_maskload_pd, _mm256_storeu_pd,
       _mm256_maskstore_pd, _mm256_fmadd_pd, _mm256_stream_pd, 31)

const tc__sep_kernels tc__sep_kernels_avx2 = {
    .isa = "avx2",
    .row = {sep_row_f32, sep_row_f64},
    .comb = {sep_comb_f32, sep_comb_f64},
};
