/* conv_depthwise_avx512.c - cpu.conv.depthwise's plane kernels for AVX-512:
 * float32 by hand (up to 64 outputs of a row in four zmm accumulators,
 * masked loads for the row's tail, stride 2 by picking even lanes), float64
 * from the generic C (conv_depthwise_kern.h). Called only on AVX-512 CPUs. */
#include <immintrin.h>
#include <stdint.h>

#define DW_SFX avx512
#define DW_HAND_F32 1
#include "conv_depthwise_kern.h"

/* lanes [0, n) of a vector starting at element j of a stride-s row */
static inline __m512 dw_load(const float *src, int64_t s, __mmask16 m, int64_t n) {
    if (s == 1) return _mm512_maskz_loadu_ps(m, src);
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
                                           28, 30);
    /* stride 2: elements 0 .. 2(n-1) */
    int64_t need = 2 * (n - 1) + 1;
    __mmask16 ma = (__mmask16)(need >= 16 ? 0xffff : (1u << need) - 1);
    __mmask16 mb = (__mmask16)(need > 16 ? (1u << (need - 16)) - 1 : 0);
    __m512 a = _mm512_maskz_loadu_ps(ma, src), b = _mm512_maskz_loadu_ps(mb, src + 16);
    return _mm512_permutex2var_ps(a, even, b);
}

#define DW_ROW(NV)                                                                     \
    do {                                                                               \
        __m512 acc[NV];                                                                \
        for (int v = 0; v < NV; v++) acc[v] = _mm512_set1_ps(bias);                    \
        const float *wr = w;                                                           \
        for (int64_t r0 = 0; r0 < m[0]; r0++)                                          \
            for (int64_t r1 = 0; r1 < m[1]; r1++) {                                    \
                const float *row = e + (o0 * s[0] + r0 * d[0]) * E12 +                 \
                                   (o1 * s[1] + r1 * d[1]) * E[2] + c0 * s[2];         \
                for (int64_t r2 = 0; r2 < m[2]; r2++, wr++) {                          \
                    const __m512 wv = _mm512_set1_ps(*wr);                             \
                    const float *src = row + r2 * d[2];                                \
                    for (int v = 0; v < NV; v++)                                       \
                        acc[v] = _mm512_fmadd_ps(                                      \
                            wv, dw_load(src + 16 * v * s[2], s[2], mk[v], cnt[v]), acc[v]); \
                }                                                                      \
            }                                                                          \
        for (int v = 0; v < NV; v++) _mm512_mask_storeu_ps(yr + c0 + 16 * v, mk[v], acc[v]); \
    } while (0)

/* stride 1 along the row, 3 taps along it: the common 3x3 / 3x3x3 case */
#define DW_ROW_S1K3(NV)                                                                \
    do {                                                                               \
        __m512 acc[NV];                                                                \
        for (int v = 0; v < NV; v++) acc[v] = _mm512_set1_ps(bias);                    \
        const float *wr = w;                                                           \
        const int64_t d2 = d[2];                                                       \
        for (int64_t r0 = 0; r0 < m[0]; r0++)                                          \
            for (int64_t r1 = 0; r1 < m[1]; r1++, wr += 3) {                           \
                const float *row = e + (o0 * s[0] + r0 * d[0]) * E12 +                 \
                                   (o1 * s[1] + r1 * d[1]) * E[2] + c0;                \
                const __m512 w0 = _mm512_set1_ps(wr[0]), w1 = _mm512_set1_ps(wr[1]),   \
                             w2 = _mm512_set1_ps(wr[2]);                               \
                for (int v = 0; v < NV; v++) {                                         \
                    const float *src = row + 16 * v;                                   \
                    acc[v] = _mm512_fmadd_ps(w0, _mm512_maskz_loadu_ps(mk[v], src), acc[v]); \
                    acc[v] = _mm512_fmadd_ps(w1, _mm512_maskz_loadu_ps(mk[v], src + d2), acc[v]); \
                    acc[v] = _mm512_fmadd_ps(w2, _mm512_maskz_loadu_ps(mk[v], src + 2 * d2), acc[v]); \
                }                                                                      \
            }                                                                          \
        for (int v = 0; v < NV; v++) _mm512_mask_storeu_ps(yr + c0 + 16 * v, mk[v], acc[v]); \
    } while (0)

void tc__dw_plane_f32_avx512(const float *restrict e, const int64_t E[3],
                             const float *restrict w, const int64_t m[3], const int64_t s[3],
                             const int64_t d[3], const int64_t out[3], float bias,
                             float *restrict y) {
    if (s[2] > 2) { /* rare: the generic code */
        tc__dw_plane_f32_generic_avx512(e, E, w, m, s, d, out, bias, y);
        return;
    }
    const int64_t E12 = E[1] * E[2];
    for (int64_t o0 = 0; o0 < out[0]; o0++)
        for (int64_t o1 = 0; o1 < out[1]; o1++) {
            float *yr = y + (o0 * out[1] + o1) * out[2];
            for (int64_t c0 = 0; c0 < out[2]; c0 += 64) {
                int64_t n = out[2] - c0 < 64 ? out[2] - c0 : 64;
                int nv = (int)((n + 15) / 16);
                __mmask16 mk[4];
                int64_t cnt[4];
                for (int v = 0; v < 4; v++) {
                    int64_t left = n - 16 * v;
                    cnt[v] = left >= 16 ? 16 : left > 0 ? left : 0;
                    mk[v] = (__mmask16)(cnt[v] >= 16 ? 0xffff : (1u << cnt[v]) - 1);
                }
                if (s[2] == 1 && m[2] == 3) {
                    switch (nv) {
                    case 1: DW_ROW_S1K3(1); break;
                    case 2: DW_ROW_S1K3(2); break;
                    case 3: DW_ROW_S1K3(3); break;
                    default: DW_ROW_S1K3(4); break;
                    }
                    continue;
                }
                switch (nv) {
                case 1: DW_ROW(1); break;
                case 2: DW_ROW(2); break;
                case 3: DW_ROW(3); break;
                default: DW_ROW(4); break;
                }
            }
        }
}
