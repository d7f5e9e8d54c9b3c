/* conv_direct_avx2.c - cpu.conv.direct-avx2's register-tile kernels for AVX2+FMA
 * (driver: conv_direct.c, the AVX-512 kernels' 8-lane twin): UH rows x UW
 * positions x NKB blocks of 8 output channels, at most 12 ymm accumulators
 * (6x2 or 3x2x2), 2 weight vectors and one broadcast in the 16 registers.
 * The tile is stored through a stack buffer to the NCHW output. Compiled
 * with AVX2 flags; called only when cpuid reports AVX2. */
#include <immintrin.h>
#include <stdint.h>

#include "conv_direct.h"

#define D8_STEP(UW, UH, NKB, CB, XP, WP)                                              \
    do {                                                                              \
        const float *xs_ = (XP), *ws_ = (WP);                                         \
        __m256 wv[NKB];                                                               \
        _Pragma("GCC unroll 2") for (int b = 0; b < NKB; b++)                         \
            wv[b] = _mm256_load_ps(ws_ + b * wkb);                                    \
        _Pragma("GCC unroll 2") for (int h = 0; h < UH; h++)                          \
            _Pragma("GCC unroll 6") for (int j = 0; j < UW; j++) {                    \
                const __m256 xv = _mm256_broadcast_ss(xs_ + h * rowp + j * CB);       \
                _Pragma("GCC unroll 2") for (int b = 0; b < NKB; b++)                 \
                    acc[h * UW + j][b] = _mm256_fmadd_ps(xv, wv[b], acc[h * UW + j][b]); \
            }                                                                         \
    } while (0)

#define D8_BODY(UW, UH, NKB, CB)                                                      \
    static void d8_k_##UW##_##UH##_##NKB##_##CB(const dc_targs *a) {                 \
        __m256 acc[UH * UW][NKB];                                                     \
        _Pragma("GCC unroll 12") for (int p = 0; p < UH * UW; p++)                    \
            _Pragma("GCC unroll 2") for (int b = 0; b < NKB; b++)                     \
                acc[p][b] = a->bias ? _mm256_loadu_ps(a->bias + 8 * b)                \
                                    : _mm256_setzero_ps();                            \
        const int64_t rowp = a->rowp, wkb = a->wkb, ntaps = a->ntaps;                \
        const float *wq = a->w;                                                       \
        for (int64_t cb = 0; cb < a->ncb; cb++) {                                     \
            const int64_t cw = cb == a->ncb - 1 ? a->cw_last : CB;                    \
            const float *xcb = a->x + cb * a->cbp;                                    \
            for (int64_t t = 0; t < ntaps; t++, wq += CB * 8) {                       \
                const float *xp = xcb + a->tapoff[t];                                 \
                const float *wp = wq;                                                 \
                if (CB == 4) {                                                        \
                    _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++) if (c < cw)   \
                        D8_STEP(UW, UH, NKB, CB, xp + c, wp + 8 * c);                 \
                } else {                                                              \
                    for (int64_t c = 0; c < cw; c++, xp++, wp += 8)                   \
                        D8_STEP(UW, UH, NKB, CB, xp, wp);                             \
                }                                                                     \
            }                                                                         \
        }                                                                             \
        float buf[NKB * 8 * UH * UW] __attribute__((aligned(32)));                   \
        _Pragma("GCC unroll 12") for (int p = 0; p < UH * UW; p++)                    \
            _Pragma("GCC unroll 2") for (int b = 0; b < NKB; b++)                     \
                _mm256_store_ps(buf + (b * UH * UW + p) * 8, acc[p][b]);              \
        for (int64_t k = 0; k < a->nk; k++) {                                         \
            const float *src = buf + (k >> 3) * (UH * UW * 8) + (k & 7);              \
            float *yk = a->y + k * a->ypl;                                            \
            for (int h = 0; h < UH; h++)                                              \
                for (int j = 0; j < UW; j++) yk[h * a->yrow + j] = src[(h * UW + j) * 8]; \
        }                                                                             \
    }

#define D8_W3(UH, NKB, CB) D8_BODY(1, UH, NKB, CB) D8_BODY(2, UH, NKB, CB) D8_BODY(3, UH, NKB, CB)
#define D8_W6(UH, NKB, CB)                                                            \
    D8_W3(UH, NKB, CB) D8_BODY(4, UH, NKB, CB) D8_BODY(5, UH, NKB, CB) D8_BODY(6, UH, NKB, CB)
#define D8_CB(CB) D8_W6(1, 1, CB) D8_W6(1, 2, CB) D8_W3(2, 1, CB) D8_W3(2, 2, CB)
D8_CB(8)
D8_CB(4)

#define D8_T3(UH, NKB, CB)                                                            \
    d8_k_1_##UH##_##NKB##_##CB, d8_k_2_##UH##_##NKB##_##CB, d8_k_3_##UH##_##NKB##_##CB
#define D8_T6(UH, NKB, CB)                                                            \
    D8_T3(UH, NKB, CB), d8_k_4_##UH##_##NKB##_##CB, d8_k_5_##UH##_##NKB##_##CB,       \
        d8_k_6_##UH##_##NKB##_##CB
#define D8_TCB(CB) {{{D8_T6(1, 1, CB)}, {D8_T3(2, 1, CB)}}, {{D8_T6(1, 2, CB)}, {D8_T3(2, 2, CB)}}}

/* [cb index - 1][nkb-1][uh-1][uw-1] */
static const dc_kernel_fn d8_table[2][2][2][DC_MAXUW8] = {D8_TCB(8), D8_TCB(4)};

dc_kernel_fn tc__dc_kernel_avx2(int cbi, int nkb, int uh, int uw) {
    if (cbi < 1 || cbi > 2 || nkb < 1 || nkb > 2 || uh < 1 || uh > 2 || uw < 1 ||
        uw > DC_MAXUW8 || (uh == 2 && uw > 3))
        return 0;
    return d8_table[cbi - 1][nkb - 1][uh - 1][uw - 1];
}

void tc__dc_row_avx2(float *dst, int64_t CB, int64_t cw, const float *src, int64_t pitch,
                     const int32_t *map, int64_t npos, float cval) {
    for (int64_t p = 0; p < npos; p++) {
        int32_t m = map[p];
        float *d = dst + p * CB;
        if (m < 0)
            for (int64_t c = 0; c < cw; c++) d[c] = cval;
        else
            for (int64_t c = 0; c < cw; c++) d[c] = src[c * pitch + m];
    }
}
