/* conv_depthwise_avx2.c - cpu.conv.depthwise's plane kernels for AVX2+FMA
 * CPUs: float64 and the general float32 case from the generic C
 * (conv_depthwise_kern.h); float32 with 3x3 taps along the last two axes
 * (stride 1 or 2 there, dilation 1 on axis 1, any on axis 2, any taps,
 * stride and dilation along axis 0 of 3D) by hand on the extended plane:
 * RB = 4 output rows at once, so every input row loaded feeds up to three
 * of them, 16 outputs of a row in two ymm accumulators per output row,
 * full-width loads (the plane buffer has at least 16 floats of zeroed
 * slack after its last row, and lanes past a row's end are never stored),
 * stride 2 by picking even elements, the row tail stored through a mask.
 * Per output the taps are summed in the order bias, r0, r1, r2, as in the
 * generic code. The float32 extension by hand too (8-lane copies). Called
 * only on AVX2 CPUs. */
#include <immintrin.h>
#include <stdint.h>

#define DW_SFX avx2
#define DW_HAND_F32 1
#define DW_HAND_EXT_F32 1
#include "conv_depthwise_kern.h"

/* The float32 extension (see conv_depthwise_kern.h): the interior of each
 * row in 8-lane copies, the last one moved back to end at the row's end
 * (it rewrites a few elements with the same values), no library call; the
 * padding columns from the index map. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns"))) /* no memcpy call */
#endif
void tc__dw_extend_f32_avx2(const float *restrict x, const int64_t in[3], const int64_t E[3],
                            const int64_t *restrict map, int64_t a2, int64_t b2, int64_t lo2,
                            float cval, float *restrict e) {
    const int64_t *m0 = map, *m1 = map + E[0], *m2 = map + E[0] + E[1];
    for (int64_t i0 = 0; i0 < E[0]; i0++)
        for (int64_t i1 = 0; i1 < E[1]; i1++) {
            float *restrict d = e + (i0 * E[1] + i1) * E[2];
            if (m0[i0] < 0 || m1[i1] < 0) {
                for (int64_t j = 0; j < E[2]; j++) d[j] = cval;
                continue;
            }
            const float *restrict row = x + (m0[i0] * in[1] + m1[i1]) * in[2];
            for (int64_t i2 = 0; i2 < a2; i2++) d[i2] = m2[i2] < 0 ? cval : row[m2[i2]];
            if (b2 - a2 >= 8) {
                int64_t j = a2;
                for (; j + 8 <= b2; j += 8) _mm256_storeu_ps(d + j, _mm256_loadu_ps(row + (j - lo2)));
                if (j < b2) _mm256_storeu_ps(d + b2 - 8, _mm256_loadu_ps(row + (b2 - 8 - lo2)));
            } else {
                for (int64_t j = a2; j < b2; j++) d[j] = row[j - lo2];
            }
            for (int64_t i2 = b2; i2 < E[2]; i2++) d[i2] = m2[i2] < 0 ? cval : row[m2[i2]];
        }
}

static inline __attribute__((always_inline)) __m256 dw3a_ld(const float *src, const int S2) {
    if (S2 == 1) return _mm256_loadu_ps(src);
    __m256 a = _mm256_loadu_ps(src), b = _mm256_loadu_ps(src + 8);
    __m256 r = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)); /* a0 a2 b0 b2 a4 a6 b4 b6 */
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(r), _MM_SHUFFLE(3, 1, 2, 0)));
}

#define DW3A_RB 4
/* Output rows [o1, o1 + RB) of columns [c0, c0 + 8 NV); b points at the
 * extended row o1 * S1, column c0 * S2, of the first axis-0 tap's plane;
 * the last vector has `last` outputs (masked store when < 8). */
static inline __attribute__((always_inline)) void
dw3a_block(const float *restrict b, int64_t E2, int64_t step0, int64_t m0,
           const float *restrict w, int64_t d2, const int RB, const int S1, const int S2,
           const int NV, int last, __m256i mlast, float bias, float *restrict y,
           int64_t ystep) {
    __m256 acc[DW3A_RB][2]; /* fixed size: RB and NV are constants after inlining */
    for (int i = 0; i < RB; i++)
        for (int v = 0; v < NV; v++) acc[i][v] = _mm256_set1_ps(bias);
    for (int64_t r0 = 0; r0 < m0; r0++, b += step0, w += 9) {
#pragma GCC unroll 16
        for (int k = 0; k < (RB - 1) * S1 + 3; k++)
#pragma GCC unroll 3
            for (int t = 0; t < 3; t++)
#pragma GCC unroll 2
                for (int v = 0; v < NV; v++) {
                    const __m256 xv = dw3a_ld(b + k * E2 + t * d2 + 8 * S2 * v, S2);
#pragma GCC unroll 3
                    for (int r1 = 0; r1 < 3; r1++) {
                        const int i = k - r1;
                        if (i >= 0 && i % S1 == 0 && i / S1 < RB)
                            acc[i / S1][v] = _mm256_fmadd_ps(_mm256_broadcast_ss(w + r1 * 3 + t),
                                                             xv, acc[i / S1][v]);
                    }
                }
    }
    for (int i = 0; i < RB; i++)
        for (int v = 0; v < NV; v++) {
            float *dst = y + i * ystep + 8 * v;
            if (v == NV - 1 && last < 8) _mm256_maskstore_ps(dst, mlast, acc[i][v]);
            else _mm256_storeu_ps(dst, acc[i][v]);
        }
}

#define DW3A_COLS(S1, S2, NV)                                                            \
    static void dw3a_cols_##S1##_##S2##_##NV(                                            \
        const float *restrict e, const int64_t E[3], const float *restrict w,            \
        const int64_t m[3], const int64_t s[3], const int64_t d[3], const int64_t out[3], \
        float bias, float *restrict y, int64_t c0, int last, __m256i mlast) {            \
        const int64_t E12 = E[1] * E[2];                                                 \
        const int64_t step0 = m[0] > 1 ? d[0] * E12 : 0; /* d[0] alone may be huge */   \
        for (int64_t o0 = 0; o0 < out[0]; o0++) {                                        \
            const float *e0 = e + o0 * s[0] * E12 + c0 * S2;                             \
            float *y0 = y + o0 * out[1] * out[2] + c0;                                   \
            if (out[1] < DW3A_RB) {                                                      \
                for (int64_t o1 = 0; o1 < out[1]; o1++)                                  \
                    dw3a_block(e0 + o1 * S1 * E[2], E[2], step0, m[0], w, d[2], 1,       \
                               S1, S2, NV, last, mlast, bias, y0 + o1 * out[2], out[2]); \
                continue;                                                                \
            }                                                                            \
            for (int64_t o1 = 0;; o1 += DW3A_RB) {                                       \
                if (o1 > out[1] - DW3A_RB) o1 = out[1] - DW3A_RB;                        \
                dw3a_block(e0 + o1 * S1 * E[2], E[2], step0, m[0], w, d[2],              \
                           DW3A_RB, S1, S2, NV, last, mlast, bias, y0 + o1 * out[2],     \
                           out[2]);                                                      \
                if (o1 + DW3A_RB >= out[1]) break;                                       \
            }                                                                            \
        }                                                                                \
    }
DW3A_COLS(1, 1, 1)
DW3A_COLS(1, 1, 2)
DW3A_COLS(1, 2, 1)
DW3A_COLS(1, 2, 2)
DW3A_COLS(2, 1, 1)
DW3A_COLS(2, 1, 2)
DW3A_COLS(2, 2, 1)
DW3A_COLS(2, 2, 2)

typedef void (*dw3a_fn)(const float *, const int64_t *, const float *, const int64_t *,
                        const int64_t *, const int64_t *, const int64_t *, float, float *,
                        int64_t, int, __m256i);
static const dw3a_fn dw3a_table[2][2][2] = {
    {{dw3a_cols_1_1_1, dw3a_cols_1_1_2}, {dw3a_cols_1_2_1, dw3a_cols_1_2_2}},
    {{dw3a_cols_2_1_1, dw3a_cols_2_1_2}, {dw3a_cols_2_2_1, dw3a_cols_2_2_2}}};

void tc__dw_plane_f32_avx2(const float *restrict e, const int64_t E[3], const float *restrict w,
                           const int64_t m[3], const int64_t s[3], const int64_t d[3],
                           const int64_t out[3], float bias, float *restrict y) {
    if (!(m[1] == 3 && m[2] == 3 && d[1] == 1 && s[1] <= 2 && s[2] <= 2)) {
        tc__dw_plane_f32_generic_avx2(e, E, w, m, s, d, out, bias, y);
        return;
    }
    for (int64_t c0 = 0; c0 < out[2]; c0 += 16) {
        int64_t n = out[2] - c0 < 16 ? out[2] - c0 : 16;
        int nv = n > 8 ? 2 : 1, last = (int)(n - 8 * (nv - 1));
        __m256i mlast = _mm256_cmpgt_epi32(_mm256_set1_epi32(last),
                                           _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        dw3a_table[s[1] - 1][s[2] - 1][nv - 1](e, E, w, m, s, d, out, bias, y, c0, last, mlast);
    }
}
