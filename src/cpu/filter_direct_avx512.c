/* filter_direct_avx512.c - AVX-512 instances of the row-block kernel
 * (filter_direct_kernel.h): 4 rows x 4 zmm accumulators, masked tails. */
#include "cpu/filter_direct.h"

#include <immintrin.h>

/* ---- float32: 16 lanes ---- */
#define FK_T float
#define FK_V __m512
#define FK_L 16
#define FK_M __mmask16
#define FK_ALIGN 64
#define FK_VMAX 4
#define FK_LOADU(p) _mm512_loadu_ps(p)
#define FK_MLOADU(m, p) _mm512_maskz_loadu_ps(m, p)
#define FK_STOREU(p, v) _mm512_storeu_ps(p, v)
#define FK_MSTOREU(p, m, v) _mm512_mask_storeu_ps(p, m, v)
#define FK_STREAM(p, v) _mm512_stream_ps(p, v)
#define FK_SET1(s) _mm512_set1_ps(s)
#define FK_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define FK_ZERO() _mm512_setzero_ps()
#define FK_MASK(n) ((__mmask16)((1u << (n)) - 1u))
#define FK_FN(name) fd512s_##name
#define FK_ENTRY tc__fd_f32_avx512
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

/* ---- float64: 8 lanes ---- */
#define FK_T double
#define FK_V __m512d
#define FK_L 8
#define FK_M __mmask8
#define FK_LOADU(p) _mm512_loadu_pd(p)
#define FK_MLOADU(m, p) _mm512_maskz_loadu_pd(m, p)
#define FK_STOREU(p, v) _mm512_storeu_pd(p, v)
#define FK_MSTOREU(p, m, v) _mm512_mask_storeu_pd(p, m, v)
#define FK_STREAM(p, v) _mm512_stream_pd(p, v)
#define FK_SET1(s) _mm512_set1_pd(s)
#define FK_FMA(a, b, c) _mm512_fmadd_pd(a, b, c)
#define FK_ZERO() _mm512_setzero_pd()
#define FK_MASK(n) ((__mmask8)((1u << (n)) - 1u))
#define FK_FN(name) fd512d_##name
#define FK_ENTRY tc__fd_f64_avx512
#include "cpu/filter_direct_kernel.h"
