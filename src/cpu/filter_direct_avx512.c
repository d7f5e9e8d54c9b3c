/* filter_direct_avx512.c - AVX-512 instances of the row-block kernel
 * (filter_direct_kernel.h), plain rows (4 rows x 4 zmm, masked tails) and
 * lane-interleaved rows (aligned loads only), and the in-register
 * transposes that move rows in and out of the lane-interleaved layout
 * (filter_direct_lanes.c). */
#include "cpu/filter_direct.h"

#include <immintrin.h>

#include "cpu/avx512_util.h" /* tc__avx512_tr16_ps, tc__avx512_tr8_pd */

/* ---- float32: 16 lanes ---- */
#define FK_T float
#define FK_V __m512
#define FK_L 16
#define FK_M __mmask16
#define FK_ALIGN 64
#define FK_VMAX 4
#define FK_MLOADU(m, p) _mm512_maskz_loadu_ps(m, p)
#define FK_STOREU(p, v) _mm512_storeu_ps(p, v)
#define FK_MSTOREU(p, m, v) _mm512_mask_storeu_ps(p, m, v)
#define FK_STREAM(p, v) _mm512_stream_ps(p, v)
#define FK_SET1(s) _mm512_set1_ps(s)
#define FK_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define FK_ZERO() _mm512_setzero_ps()
#define FK_MASK(n) ((__mmask16)((1u << (n)) - 1u))

/* shift index vectors of FK_PERM2: row s is s, s + 1, ..., s + L - 1 */
#include "cpu/shift_idx.h"

#define FK_ES 1
#define FK_LOADU(p) _mm512_loadu_ps(p)
#define FK_FN(name) fk512s_##name
#define FK_ENTRY tc__fd_f32_avx512
#define FK_PENTRY tc__fd_f32_avx512_pair
#define FK_PENTRY_LD tc__fd_f32_avx512_pair_ld
#define FK_PERM2(lo, ix, hi) _mm512_permutex2var_ps(lo, ix, hi)
#define FK_IDX(s) _mm512_load_si512(tc__shift_idx32[s])
#define FK_ALIGNR(hi, lo, s)                                                  \
    _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(hi), _mm512_castps_si512(lo), s))
#include "cpu/filter_direct_kernel.h"
#undef FK_PERM2
#undef FK_IDX
#undef FK_ALIGNR
#undef FK_ES
#undef FK_LOADU
#undef FK_FN
#undef FK_ENTRY
#undef FK_PENTRY
#undef FK_PENTRY_LD

#define FK_ES FK_L
#define FK_LOADU(p) _mm512_load_ps(p)
#define FK_FN(name) fk512sl_##name
#define FK_ENTRY tc__fd_f32_avx512_lanes
#include "cpu/filter_direct_kernel.h"
#undef FK_ES
#undef FK_LOADU
#undef FK_FN
#undef FK_ENTRY
#undef FK_PENTRY

#undef FK_T
#undef FK_V
#undef FK_L
#undef FK_M
#undef FK_MLOADU
#undef FK_STOREU
#undef FK_MSTOREU
#undef FK_STREAM
#undef FK_SET1
#undef FK_FMA
#undef FK_ZERO
#undef FK_MASK

/* ---- float64: 8 lanes ---- */
#define FK_T double
#define FK_V __m512d
#define FK_L 8
#define FK_M __mmask8
#define FK_MLOADU(m, p) _mm512_maskz_loadu_pd(m, p)
#define FK_STOREU(p, v) _mm512_storeu_pd(p, v)
#define FK_MSTOREU(p, m, v) _mm512_mask_storeu_pd(p, m, v)
#define FK_STREAM(p, v) _mm512_stream_pd(p, v)
#define FK_SET1(s) _mm512_set1_pd(s)
#define FK_FMA(a, b, c) _mm512_fmadd_pd(a, b, c)
#define FK_ZERO() _mm512_setzero_pd()
#define FK_MASK(n) ((__mmask8)((1u << (n)) - 1u))

#define FK_ES 1
#define FK_LOADU(p) _mm512_loadu_pd(p)
#define FK_FN(name) fk512d_##name
#define FK_ENTRY tc__fd_f64_avx512
#define FK_PENTRY tc__fd_f64_avx512_pair
#define FK_PERM2(lo, ix, hi) _mm512_permutex2var_pd(lo, ix, hi)
#define FK_IDX(s) _mm512_load_si512(tc__shift_idx64[s])
#define FK_ALIGNR(hi, lo, s)                                                  \
    _mm512_castsi512_pd(_mm512_alignr_epi64(_mm512_castpd_si512(hi), _mm512_castpd_si512(lo), s))
#include "cpu/filter_direct_kernel.h"
#undef FK_PERM2
#undef FK_IDX
#undef FK_ALIGNR
#undef FK_ES
#undef FK_LOADU
#undef FK_FN
#undef FK_ENTRY
#undef FK_PENTRY

#define FK_ES FK_L
#define FK_LOADU(p) _mm512_load_pd(p)
#define FK_FN(name) fk512dl_##name
#define FK_ENTRY tc__fd_f64_avx512_lanes
#include "cpu/filter_direct_kernel.h"

/* ---- transposes (avx512_util.h) ---- */

void tc__fd_f32_avx512_lanes_in(float *tr, const float *const *lane, int64_t nk) {
    for (int64_t kb = 0; kb < nk; kb += 16) {
        __m512 r[16];
        for (int l = 0; l < 16; l++) r[l] = _mm512_loadu_ps(lane[l] + kb);
        tc__avx512_tr16_ps(r);
        for (int i = 0; i < 16; i++) _mm512_store_ps(tr + (kb + i) * 16, r[i]);
    }
}

void tc__fd_f64_avx512_lanes_in(double *tr, const double *const *lane, int64_t nk) {
    for (int64_t kb = 0; kb < nk; kb += 8) {
        __m512d r[8];
        for (int l = 0; l < 8; l++) r[l] = _mm512_loadu_pd(lane[l] + kb);
        tc__avx512_tr8_pd(r);
        for (int i = 0; i < 8; i++) _mm512_store_pd(tr + (kb + i) * 8, r[i]);
    }
}

/* Lane l of the L vectors at `to` holds outputs l*S + kb + i (i < L);
 * writes those below wt (and i < nk) to y. */
void tc__fd_f32_avx512_lanes_out(float *y, const float *to, int64_t S, int64_t kb,
                                 int64_t nk, int64_t wt, int nt) {
    __m512 r[16];
    for (int i = 0; i < 16; i++) r[i] = _mm512_load_ps(to + i * 16);
    tc__avx512_tr16_ps(r);
    if (nk == 16 && 15 * S + kb + 16 <= wt) { /* all lanes full */
        if (nt && !(((uintptr_t)(y + kb) | (uintptr_t)(S * 4)) & 63))
            for (int l = 0; l < 16; l++) _mm512_stream_ps(y + l * S + kb, r[l]);
        else
            for (int l = 0; l < 16; l++) _mm512_storeu_ps(y + l * S + kb, r[l]);
        return;
    }
#pragma GCC unroll 16
    for (int l = 0; l < 16; l++) { /* unrolled: r[] stays in registers */
        int64_t at = l * S + kb, n = wt - at < nk ? wt - at : nk;
        n = n < 0 ? 0 : n;
        _mm512_mask_storeu_ps(y + at, (__mmask16)((1u << n) - 1u), r[l]);
    }
}

void tc__fd_f64_avx512_lanes_out(double *y, const double *to, int64_t S, int64_t kb,
                                 int64_t nk, int64_t wt, int nt) {
    __m512d r[8];
    for (int i = 0; i < 8; i++) r[i] = _mm512_load_pd(to + i * 8);
    tc__avx512_tr8_pd(r);
    if (nk == 8 && 7 * S + kb + 8 <= wt) { /* all lanes full */
        if (nt && !(((uintptr_t)(y + kb) | (uintptr_t)(S * 8)) & 63))
            for (int l = 0; l < 8; l++) _mm512_stream_pd(y + l * S + kb, r[l]);
        else
            for (int l = 0; l < 8; l++) _mm512_storeu_pd(y + l * S + kb, r[l]);
        return;
    }
#pragma GCC unroll 8
    for (int l = 0; l < 8; l++) {
        int64_t at = l * S + kb, n = wt - at < nk ? wt - at : nk;
        n = n < 0 ? 0 : n;
        _mm512_mask_storeu_pd(y + at, (__mmask8)((1u << n) - 1u), r[l]);
    }
}

/* The plane ring's row copy (filter_direct.c, fd_ring_fill): bytes from
 * src to dst in 64-byte vectors, the tail masked; inline, where a libc
 * memcpy call cost its dispatch on every row of a few hundred bytes. */
void tc__fd_copy_avx512(void *dst, const void *src, size_t bytes) {
    char *d = dst;
    const char *s = src;
    size_t i = 0;
    for (; i + 256 <= bytes; i += 256) {
        __m512i a = _mm512_loadu_si512(s + i), b = _mm512_loadu_si512(s + i + 64);
        __m512i c = _mm512_loadu_si512(s + i + 128), e = _mm512_loadu_si512(s + i + 192);
        _mm512_storeu_si512(d + i, a);
        _mm512_storeu_si512(d + i + 64, b);
        _mm512_storeu_si512(d + i + 128, c);
        _mm512_storeu_si512(d + i + 192, e);
    }
    for (; i + 64 <= bytes; i += 64) _mm512_storeu_si512(d + i, _mm512_loadu_si512(s + i));
    if (i < bytes) {
        const __mmask64 m = _cvtu64_mask64(~0ull >> (64 - (bytes - i)));
        _mm512_mask_storeu_epi8(d + i, m, _mm512_maskz_loadu_epi8(m, s + i));
    }
}
