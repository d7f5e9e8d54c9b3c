/* conv_direct_avx512.c - cpu.conv.direct's register-tile kernels and
 * layout conversion for AVX-512 (driver: conv_direct.c). Compiled with
 * AVX-512 flags; called only when cpuid reports AVX-512.
 *
 * A tile is UH output rows x UW output positions x NKB blocks of 16 output
 * channels: UH*UW*NKB zmm accumulators (at most 28), NKB weight vectors in
 * registers, and for every (input channel block, tap, channel) one scalar
 * of the blocked input broadcast per position (vbroadcastss from memory,
 * used by NKB FMAs). Positions of a row are CB floats apart in the blocked
 * input whatever the stride (the driver splits each row by stride phase),
 * so every address in the unrolled body is a constant displacement from
 * one or two pointers. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "avx512_util.h"
#include "conv_direct.h"

/* one reduction step: NKB weight vectors against UH*UW broadcast inputs */
#define DC_STEP(UW, UH, NKB, CB, XP, WP)                                              \
    do {                                                                              \
        const float *xs_ = (XP), *ws_ = (WP);                                         \
        __m512 wv[NKB];                                                               \
        _Pragma("GCC unroll 2") for (int b = 0; b < NKB; b++)                         \
            wv[b] = _mm512_load_ps(ws_ + b * wkb);                                    \
        _Pragma("GCC unroll 2") for (int h = 0; h < UH; h++)                          \
            _Pragma("GCC unroll 14") for (int j = 0; j < UW; j++) {                   \
                const __m512 xv = _mm512_set1_ps(xs_[h * rowp + j * CB]);             \
                _Pragma("GCC unroll 2") for (int b = 0; b < NKB; b++)                 \
                    acc[h * UW + j][b] = _mm512_fmadd_ps(xv, wv[b], acc[h * UW + j][b]); \
            }                                                                         \
    } while (0)

#define DC_BODY(UW, UH, NKB, CB)                                                      \
    static void dc_k_##UW##_##UH##_##NKB##_##CB(const dc_targs *a) {                 \
        __m512 acc[UH * UW][NKB];                                                     \
        _Pragma("GCC unroll 32") for (int p = 0; p < UH * UW; p++)                    \
            _Pragma("GCC unroll 2") for (int b = 0; b < NKB; b++)                     \
                acc[p][b] = a->bias ? _mm512_loadu_ps(a->bias + 16 * b)               \
                                    : _mm512_setzero_ps();                            \
        const int64_t rowp = a->rowp, wkb = a->wkb, ntaps = a->ntaps;                \
        const float *wq = a->w;                                                       \
        DC_PREFETCH_OUT(a, UH, UW);                                                   \
        for (int64_t cb = 0; cb < a->ncb; cb++) {                                     \
            const int64_t cw = cb == a->ncb - 1 ? a->cw_last : CB;                    \
            const float *xcb = a->x + cb * a->cbp;                                    \
            for (int64_t t = 0; t < ntaps; t++, wq += CB * 16) {                      \
                const float *xp = xcb + a->tapoff[t];                                 \
                const float *wp = wq;                                                 \
                if (CB == 4) { /* few channels (conv1): straight-line */         \
                    _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++) if (c < cw)   \
                        DC_STEP(UW, UH, NKB, CB, xp + c, wp + 16 * c);                \
                } else {                                                              \
                    for (int64_t c = 0; c < cw; c++, xp++, wp += 16)                  \
                        DC_STEP(UW, UH, NKB, CB, xp, wp);                             \
                }                                                                     \
            }                                                                         \
        }                                                                             \
        /* transposed store: 16x16 transposes, one masked store per row */       \
        const __mmask16 m0 = (__mmask16)((1u << UW) - 1);                             \
        _Pragma("GCC unroll 2") for (int b = 0; b < NKB; b++) {                       \
            __m512 r[16];                                                             \
            _Pragma("GCC unroll 16") for (int p = 0; p < 16; p++)                     \
                r[p] = p < UH * UW ? acc[p < UH * UW ? p : 0][b] : _mm512_setzero_ps(); \
            tc__avx512_tr16_ps(r);                                                               \
            int64_t kn = a->nk - 16 * b;                                              \
            if (kn > 16) kn = 16;                                                     \
            float *yb = a->y + 16 * b * a->ypl;                                       \
            _Pragma("GCC unroll 16") for (int l = 0; l < 16; l++) if (l < kn) {       \
                _mm512_mask_storeu_ps(yb + l * a->ypl, m0, r[l]);                     \
                if (UH == 2)                                                          \
                    _mm512_mask_storeu_ps(yb + l * a->ypl + a->yrow - UW,             \
                                          (__mmask16)(m0 << UW), r[l]);               \
            }                                                                         \
        }                                                                             \
    }

#define DC_W7(UH, NKB, CB)                                                            \
    DC_BODY(1, UH, NKB, CB) DC_BODY(2, UH, NKB, CB) DC_BODY(3, UH, NKB, CB)          \
    DC_BODY(4, UH, NKB, CB) DC_BODY(5, UH, NKB, CB) DC_BODY(6, UH, NKB, CB)          \
    DC_BODY(7, UH, NKB, CB)
#define DC_W14(UH, NKB, CB)                                                           \
    DC_W7(UH, NKB, CB) DC_BODY(8, UH, NKB, CB) DC_BODY(9, UH, NKB, CB)               \
    DC_BODY(10, UH, NKB, CB) DC_BODY(11, UH, NKB, CB) DC_BODY(12, UH, NKB, CB)       \
    DC_BODY(13, UH, NKB, CB) DC_BODY(14, UH, NKB, CB)
#define DC_CB(CB) DC_W14(1, 1, CB) DC_W14(1, 2, CB) DC_W7(2, 1, CB) DC_W7(2, 2, CB)
DC_CB(16)
DC_CB(8)
DC_CB(4)

#define DC_T7(UH, NKB, CB)                                                            \
    dc_k_1_##UH##_##NKB##_##CB, dc_k_2_##UH##_##NKB##_##CB, dc_k_3_##UH##_##NKB##_##CB, \
        dc_k_4_##UH##_##NKB##_##CB, dc_k_5_##UH##_##NKB##_##CB,                       \
        dc_k_6_##UH##_##NKB##_##CB, dc_k_7_##UH##_##NKB##_##CB
#define DC_T14(UH, NKB, CB)                                                           \
    DC_T7(UH, NKB, CB), dc_k_8_##UH##_##NKB##_##CB, dc_k_9_##UH##_##NKB##_##CB,       \
        dc_k_10_##UH##_##NKB##_##CB, dc_k_11_##UH##_##NKB##_##CB,                     \
        dc_k_12_##UH##_##NKB##_##CB, dc_k_13_##UH##_##NKB##_##CB,                     \
        dc_k_14_##UH##_##NKB##_##CB
#define DC_TCB(CB)                                                                    \
    {{{DC_T14(1, 1, CB)}, {DC_T7(2, 1, CB)}}, {{DC_T14(1, 2, CB)}, {DC_T7(2, 2, CB)}}}

/* [cb index][nkb-1][uh-1][uw-1] */
static const dc_kernel_fn dc_table[3][2][2][DC_MAXUW] = {DC_TCB(16), DC_TCB(8), DC_TCB(4)};

dc_kernel_fn tc__dc_kernel_avx512(int cbi, int nkb, int uh, int uw) {
    if (cbi < 0 || cbi > 2 || nkb < 1 || nkb > 2 || uh < 1 || uh > 2 || uw < 1 ||
        uw > DC_MAXUW || (uh == 2 && uw > 7))
        return 0;
    return dc_table[cbi][nkb - 1][uh - 1][uw - 1];
}

void tc__dc_row_avx512(float *dst, int64_t CB, int64_t cw, const float *src, int64_t pitch,
                       const int32_t *map, int64_t npos, float cval) {
    int64_t p0 = 0;
    if (CB == 16) {
        const __m512 cv = _mm512_set1_ps(cval);
        const __m512i iota =
            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        for (; p0 < npos; p0 += 16) {
            int64_t n = npos - p0 < 16 ? npos - p0 : 16;
            __mmask16 in = (__mmask16)(n == 16 ? 0xffff : (1u << n) - 1);
            __m512i ix = _mm512_maskz_loadu_epi32(in, map + p0);
            __mmask16 ok = _mm512_mask_cmpge_epi32_mask(in, ix, _mm512_setzero_si512());
            /* the valid lanes one contiguous run (index - lane constant)? */
            __m512i off = _mm512_sub_epi32(ix, iota);
            int32_t base = 0;
            __mmask16 same = 0;
            if (ok) {
                base = map[p0 + __builtin_ctz(ok)] - __builtin_ctz(ok);
                same = _mm512_mask_cmpeq_epi32_mask(ok, off, _mm512_set1_epi32(base));
            }
            int contig = same == ok;
            __m512 r[16];
            for (int c = 0; c < 16; c++) {
                if (c >= cw) {
                    r[c] = _mm512_setzero_ps();
                    continue;
                }
                const float *sc = src + c * pitch;
                r[c] = contig ? _mm512_mask_loadu_ps(cv, ok, sc + base)
                              : _mm512_mask_i32gather_ps(cv, ok, ix, sc, 4);
            }
            /* rows r[c][pos]: wanted dst[pos][c] */
            tc__avx512_tr16_ps(r);
            if (n == 16)
                for (int q = 0; q < 16; q++) _mm512_storeu_ps(dst + (p0 + q) * 16, r[q]);
            else
                for (int q = 0; q < n; q++) _mm512_storeu_ps(dst + (p0 + q) * 16, r[q]);
        }
        return;
    }
    /* 4 or 8 channels (conv1: 3): 16 positions at a time, each channel's
     * 16 values by one load (step 1), two loads and a permute (step 2, a
     * stride-2 phase) or a gather, then interleaved in registers */
    {
        const __m512 cv = _mm512_set1_ps(cval);
        const __m512i iota =
            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22,
                                               24, 26, 28, 30);
        for (; p0 < npos; p0 += 16) {
            int64_t n = npos - p0 < 16 ? npos - p0 : 16;
            __mmask16 in = (__mmask16)(n == 16 ? 0xffff : (1u << n) - 1);
            __m512i ix = _mm512_maskz_loadu_epi32(in, map + p0);
            __mmask16 ok = _mm512_mask_cmpge_epi32_mask(in, ix, _mm512_setzero_si512());
            int step = 0, lo = 0, hi = 0;
            int32_t base = 0;
            if (ok) { /* the valid lanes affine with step 1 or 2? */
                lo = __builtin_ctz(ok);
                hi = 31 - __builtin_clz((unsigned)ok);
                int32_t st = lo < hi ? (map[p0 + hi] - map[p0 + lo]) / (hi - lo) : 1;
                if (st == 1 || st == 2) {
                    base = map[p0 + lo] - lo * st;
                    __m512i want = _mm512_add_epi32(
                        _mm512_set1_epi32(base), _mm512_mullo_epi32(iota, _mm512_set1_epi32(st)));
                    if (_mm512_mask_cmpeq_epi32_mask(ok, ix, want) == ok) step = st;
                }
            }
            __m512 r[16];
            for (int c = 0; c < (int)CB; c++) {
                if (c >= cw || !ok) {
                    r[c] = c >= cw ? _mm512_setzero_ps() : cv;
                    continue;
                }
                const float *sc = src + c * pitch;
                if (step == 1) {
                    r[c] = _mm512_mask_loadu_ps(cv, ok, sc + base);
                } else if (step == 2) {
                    /* elements 2*lo .. 2*hi of the 32 from sc + base */
                    uint64_t m32 = ((2ull << (2 * hi)) - 1) & ~((1ull << (2 * lo)) - 1);
                    __m512 va = _mm512_maskz_loadu_ps((__mmask16)m32, sc + base);
                    __m512 vb = _mm512_maskz_loadu_ps((__mmask16)(m32 >> 16), sc + base + 16);
                    r[c] = _mm512_mask_mov_ps(cv, ok, _mm512_permutex2var_ps(va, even, vb));
                } else {
                    r[c] = _mm512_mask_i32gather_ps(cv, ok, ix, sc, 4);
                }
            }
            float *d = dst + p0 * CB;
            if (CB == 4) {
                /* 4x4 within 128-bit lanes: u[q] lane L = position 4L+q */
                __m512 t0 = _mm512_unpacklo_ps(r[0], r[1]), t1 = _mm512_unpackhi_ps(r[0], r[1]);
                __m512 t2 = _mm512_unpacklo_ps(r[2], r[3]), t3 = _mm512_unpackhi_ps(r[2], r[3]);
                __m512 u0 = _mm512_castpd_ps(
                    _mm512_unpacklo_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
                __m512 u1 = _mm512_castpd_ps(
                    _mm512_unpackhi_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
                __m512 u2 = _mm512_castpd_ps(
                    _mm512_unpacklo_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
                __m512 u3 = _mm512_castpd_ps(
                    _mm512_unpackhi_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
                /* then the 4x4 of lanes: o[k] = positions 4k .. 4k+3 */
                __m512 A = _mm512_shuffle_f32x4(u0, u1, 0x44), B = _mm512_shuffle_f32x4(u2, u3, 0x44);
                __m512 C = _mm512_shuffle_f32x4(u0, u1, 0xee), D = _mm512_shuffle_f32x4(u2, u3, 0xee);
                __m512 o[4] = {_mm512_shuffle_f32x4(A, B, 0x88), _mm512_shuffle_f32x4(A, B, 0xdd),
                               _mm512_shuffle_f32x4(C, D, 0x88), _mm512_shuffle_f32x4(C, D, 0xdd)};
                for (int k = 0; k < 4; k++) {
                    int64_t left = n - 4 * k;
                    if (left <= 0) break;
                    if (left >= 4) _mm512_storeu_ps(d + 16 * k, o[k]);
                    else _mm512_mask_storeu_ps(d + 16 * k, (__mmask16)((1u << (4 * left)) - 1), o[k]);
                }
            } else { /* CB 8: rows r[c][pos] -> dst[pos][c], the low 8 of each */
                for (int c = (int)CB; c < 16; c++) r[c] = _mm512_setzero_ps();
                tc__avx512_tr16_ps(r);
                for (int q = 0; q < n; q++)
                    _mm256_storeu_ps(d + q * 8, _mm512_castps512_ps256(r[q]));
            }
        }
        return;
    }
    for (int64_t p = p0; p < npos; p++) {
        int32_t m = map[p];
        float *d = dst + p * CB;
        if (m < 0)
            for (int64_t c = 0; c < cw; c++) d[c] = cval;
        else
            for (int64_t c = 0; c < cw; c++) d[c] = src[c * pitch + m];
    }
}

/* ---- few input channels: lanes over output positions (dp_targs) ---- */
#define DP_BODY(UV, UH)                                                               \
    static void dp_k_##UV##_##UH(const dp_targs *a) {                                 \
        __m512 acc[UH * UV][4];                                                       \
        _Pragma("GCC unroll 4") for (int k = 0; k < 4; k++) {                         \
            const __m512 b0 = a->bias ? _mm512_set1_ps(a->bias[k]) : _mm512_setzero_ps(); \
            _Pragma("GCC unroll 6") for (int p = 0; p < UH * UV; p++) acc[p][k] = b0; \
        }                                                                             \
        for (int64_t k = 0; k < a->nk; k++)                                           \
            _Pragma("GCC unroll 6") for (int h = 0; h < UH; h++)                      \
                _Pragma("GCC unroll 6") for (int j = 0; j < UV; j++)                  \
                    __builtin_prefetch(a->y + k * a->ypl + h * a->yrow + 16 * j, 1, 3); \
        const int64_t rowp = a->rowp, cst = a->cst, cw = a->cw, ntaps = a->ntaps;    \
        const float *wq = a->w;                                                       \
        for (int64_t t = 0; t < ntaps; t++, wq += 4 * cw) {                           \
            const float *xp = a->x + a->tapoff[t];                                    \
            _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++) if (c < cw) {         \
                __m512 wv[4];                                                         \
                _Pragma("GCC unroll 4") for (int k = 0; k < 4; k++)                   \
                    wv[k] = _mm512_set1_ps(wq[4 * c + k]);                            \
                _Pragma("GCC unroll 6") for (int h = 0; h < UH; h++)                  \
                    _Pragma("GCC unroll 6") for (int j = 0; j < UV; j++) {            \
                        const __m512 xv = _mm512_loadu_ps(xp + c * cst + h * rowp + 16 * j); \
                        _Pragma("GCC unroll 4") for (int k = 0; k < 4; k++)           \
                            acc[h * UV + j][k] = _mm512_fmadd_ps(xv, wv[k], acc[h * UV + j][k]); \
                    }                                                                 \
            }                                                                         \
        }                                                                             \
        _Pragma("GCC unroll 4") for (int k = 0; k < 4; k++) if (k < a->nk)            \
            _Pragma("GCC unroll 6") for (int h = 0; h < UH; h++) {                    \
                float *yk = a->y + k * a->ypl + h * a->yrow;                          \
                _Pragma("GCC unroll 6") for (int j = 0; j < UV - 1; j++)              \
                    _mm512_storeu_ps(yk + 16 * j, acc[h * UV + j][k]);                \
                _mm512_mask_storeu_ps(yk + 16 * (UV - 1), a->mlast, acc[h * UV + UV - 1][k]); \
            }                                                                         \
    }
DP_BODY(1, 1) DP_BODY(1, 2) DP_BODY(1, 3) DP_BODY(1, 4) DP_BODY(1, 5) DP_BODY(1, 6)
DP_BODY(2, 1) DP_BODY(2, 2) DP_BODY(2, 3)
DP_BODY(3, 1) DP_BODY(3, 2)
DP_BODY(4, 1) DP_BODY(5, 1) DP_BODY(6, 1)

/* [uv-1][uh-1] */
static const dp_kernel_fn dp_table[DP_MAXV][DP_MAXV] = {
    {dp_k_1_1, dp_k_1_2, dp_k_1_3, dp_k_1_4, dp_k_1_5, dp_k_1_6},
    {dp_k_2_1, dp_k_2_2, dp_k_2_3},
    {dp_k_3_1, dp_k_3_2},
    {dp_k_4_1},
    {dp_k_5_1},
    {dp_k_6_1}};

dp_kernel_fn tc__dp_kernel_avx512(int uv, int uh) {
    if (uv < 1 || uh < 1 || uv * uh > DP_MAXV) return 0;
    return dp_table[uv - 1][uh - 1];
}

/* per 16 positions of a row: how to load them (the map is the same for
 * every row of a call, so this runs once a call and thread) */
void tc__dp_desc_avx512(dp_chunk *dsc, const int32_t *map, int64_t npos) {
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for (int64_t p0 = 0, q = 0; p0 < npos; p0 += 16, q++) {
        int64_t n = npos - p0 < 16 ? npos - p0 : 16;
        __mmask16 in = (__mmask16)(n == 16 ? 0xffff : (1u << n) - 1);
        __m512i ix = _mm512_maskz_loadu_epi32(in, map + p0);
        __mmask16 ok = _mm512_mask_cmpge_epi32_mask(in, ix, _mm512_setzero_si512());
        dp_chunk d = {0, ok, 0, 0, ok ? DP_GATHER : DP_FILL};
        if (ok) { /* the valid lanes affine with step 1 or 2? */
            int lo = __builtin_ctz(ok), hi = 31 - __builtin_clz((unsigned)ok);
            int32_t st = lo < hi ? (map[p0 + hi] - map[p0 + lo]) / (hi - lo) : 1;
            if (st == 1 || st == 2) {
                int32_t base = map[p0 + lo] - lo * st;
                __m512i want = _mm512_add_epi32(_mm512_set1_epi32(base),
                                                _mm512_mullo_epi32(iota, _mm512_set1_epi32(st)));
                if (_mm512_mask_cmpeq_epi32_mask(ok, ix, want) == ok) {
                    uint64_t m32 = ((2ull << (2 * hi)) - 1) & ~((1ull << (2 * lo)) - 1);
                    d.base = base;
                    d.step = st == 1 ? DP_STEP1 : DP_STEP2;
                    d.ma = (uint16_t)m32;
                    d.mb = (uint16_t)(m32 >> 16);
                }
            }
        }
        dsc[q] = d;
    }
}

void tc__dp_row_avx512(float *dst, const float *src, const int32_t *map, const dp_chunk *dsc,
                       int64_t npos, float cval) {
    const __m512 cv = _mm512_set1_ps(cval);
    const __m512i even =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    int64_t p0 = 0;
    for (; p0 < npos; p0 += 16, dsc++) {
        __m512 r;
        switch (dsc->step) {
        case DP_STEP1: r = _mm512_mask_loadu_ps(cv, dsc->ok, src + dsc->base); break;
        case DP_STEP2: {
            __m512 va = _mm512_maskz_loadu_ps(dsc->ma, src + dsc->base);
            __m512 vb = _mm512_maskz_loadu_ps(dsc->mb, src + dsc->base + 16);
            r = _mm512_mask_mov_ps(cv, dsc->ok, _mm512_permutex2var_ps(va, even, vb));
            break;
        }
        case DP_GATHER:
            r = _mm512_mask_i32gather_ps(cv, dsc->ok, _mm512_maskz_loadu_epi32(dsc->ok, map + p0),
                                         src, 4);
            break;
        default: r = cv;
        }
        _mm512_storeu_ps(dst + p0, r);
    }
    _mm512_storeu_ps(dst + p0, _mm512_setzero_ps());
}
