/* filter_direct_avx2.c - AVX2+FMA instances of the row-block kernel
 * (filter_direct_kernel.h): 4 rows x 2 ymm accumulators (16 registers),
 * tails through vmaskmov. */
#include "cpu/filter_direct.h"

#include <immintrin.h>

/* lane mask of the first n lanes (n = 1..8) for vmaskmov */
static inline __m256i fk_mask8(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline __m256i fk_mask4(int64_t n) {
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3));
}

/* ---- float32: 8 lanes ---- */
#define FK_T float
#define FK_V __m256
#define FK_L 8
#define FK_M __m256i
#define FK_ALIGN 32
#define FK_ES 1
#define FK_V1 6 /* 6 accumulators + 7 loads + 2 taps fit in 16 ymm */
#define FK_VMAX 2
#define FK_LOADU(p) _mm256_loadu_ps(p)
#define FK_MLOADU(m, p) _mm256_maskload_ps(p, m)
#define FK_STOREU(p, v) _mm256_storeu_ps(p, v)
#define FK_MSTOREU(p, m, v) _mm256_maskstore_ps(p, m, v)
#define FK_STREAM(p, v) _mm256_stream_ps(p, v)
#define FK_SET1(s) _mm256_set1_ps(s)
#define FK_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define FK_ZERO() _mm256_setzero_ps()
#define FK_MASK(n) fk_mask8(n)
#define FK_FN(name) fk256s_##name
#define FK_ENTRY tc__fd_f32_avx2
#include "cpu/filter_direct_kernel.h"
#undef FK_T
#undef FK_V
#undef FK_L
#undef FK_M
#undef FK_LOADU
#undef FK_MLOADU
#undef FK_STOREU
#undef FK_STREAM
#undef FK_MSTOREU
#undef FK_SET1
#undef FK_FMA
#undef FK_ZERO
#undef FK_MASK
#undef FK_FN
#undef FK_ENTRY

/* ---- float64: 4 lanes ---- */
#define FK_T double
#define FK_V1 6
#define FK_V __m256d
#define FK_L 4
#define FK_M __m256i
#define FK_LOADU(p) _mm256_loadu_pd(p)
#define FK_MLOADU(m, p) _mm256_maskload_pd(p, m)
#define FK_STOREU(p, v) _mm256_storeu_pd(p, v)
#define FK_MSTOREU(p, m, v) _mm256_maskstore_pd(p, m, v)
#define FK_STREAM(p, v) _mm256_stream_pd(p, v)
#define FK_SET1(s) _mm256_set1_pd(s)
#define FK_FMA(a, b, c) _mm256_fmadd_pd(a, b, c)
#define FK_ZERO() _mm256_setzero_pd()
#define FK_MASK(n) fk_mask4(n)
#define FK_FN(name) fk256d_##name
#define FK_ENTRY tc__fd_f64_avx2
#include "cpu/filter_direct_kernel.h"
