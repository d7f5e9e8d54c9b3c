/* conv_bf16_avx512.c - the AVX512-BF16 micro-kernels of cpu.conv.igemm-bf16
 * (conv_bf16.c). Compiled with -mavx512bf16 (CMakeLists.txt); called only
 * when cpuid reports AVX512_BF16.
 *
 * A tile is MR output pixels (rows, equidistant in the source image: row i
 * at x + i*rs) by NV x 16 output channels. The reduction runs over the
 * taps (runs: one offset each into the source image) and, inside a run,
 * over pairs of input channels: one vdpbf16ps multiplies the pair (c, c+1)
 * of a pixel, broadcast as one 32-bit value, by the packed weights' 16
 * lanes x 2 and adds both products to the lane's fp32 sum. MR x NV
 * accumulators: 6x4, 8x3, 12x2, 12x1 (24, 24, 24, 12 zmm), loads per step
 * NV + MR for MR*NV vdpbf16ps.
 *
 * The epilogue runs on the registers: + bias (fp32), + residual (bf16
 * rows), activation, one rounding to bf16 (vcvtneps2bf16), masked stores;
 * or, for channels-first output, the fp32 tile is written to tb and the
 * caller finishes it. vdpbf16ps and vcvtneps2bf16 treat denormal inputs as
 * zero and flush denormal results (fixed DAZ/FTZ, round to nearest even). */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "../core/half.h"

typedef struct tc__bf16_tile {
    const uint16_t *x;      /* row 0 at the tap origin */
    int64_t rs;             /* row stride, elements */
    const int64_t *runoff;  /* element offset of each run */
    int nruns, npairs;      /* runs, channel pairs per run */
    const uint16_t *w;      /* packed weights: [nruns*npairs][NV*16][2] */
    int row0;               /* rows < row0 are not stored (recomputed) */
    int nch;                /* valid output channels of the NV*16 */
    /* epilogue */
    uint16_t *const *out;   /* MR row pointers (bf16, channels-last) or NULL */
    const uint16_t *const *res; /* MR residual row pointers, or NULL */
    const float *bias;      /* NV*16 fp32 (zeros without bias) */
    int act;                /* tc_activation */
    float *tb;              /* fp32 tile [MR][NV*16] when out is NULL */
} tc__bf16_tile;

typedef int32_t tc__bf_i32u __attribute__((may_alias, aligned(2)));

static inline __m512 bf_act(__m512 v, int act) {
    if (act == TC_ACT_RELU) {
        /* max(v, 0) with NaN kept: NaN compares false, keep v there */
        __mmask16 neg = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ);
        return _mm512_mask_mov_ps(v, neg, _mm512_setzero_ps());
    }
    if (act == TC_ACT_RELU6) {
        __mmask16 neg = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ);
        __mmask16 big = _mm512_cmp_ps_mask(v, _mm512_set1_ps(6.0f), _CMP_GT_OQ);
        v = _mm512_mask_mov_ps(v, neg, _mm512_setzero_ps());
        return _mm512_mask_mov_ps(v, big, _mm512_set1_ps(6.0f));
    }
    if (act == TC_ACT_NONE) return v;
    float t[16];
    _mm512_storeu_ps(t, v);
    for (int j = 0; j < 16; j++) t[j] = tc__act_f((tc_activation)act, t[j]);
    return _mm512_loadu_ps(t);
}

static inline __m512 bf_load_bf16(__mmask16 m, const uint16_t *s) {
    __m512i u = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, s));
    return _mm512_castsi512_ps(_mm512_slli_epi32(u, 16));
}

#define BF_UKR(MR, NV)                                                              \
    void tc__bf16_ukr_##MR##x##NV(const tc__bf16_tile *t) {                        \
        __m512 acc[MR][NV];                                                         \
        _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                       \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[i][v] = _mm512_setzero_ps(); \
        const uint16_t *w = t->w;                                                   \
        const int64_t rs = t->rs;                                                   \
        const int np = t->npairs;                                                   \
        for (int r = 0; r < t->nruns; r++) {                                        \
            const uint16_t *xr = t->x + t->runoff[r];                               \
            for (int q = 0; q < np; q++) {                                          \
                __m512bh b[NV];                                                     \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                \
                    b[v] = (__m512bh)_mm512_loadu_si512((const void *)(w + v * 32)); \
                _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) {             \
                    const __m512bh a = (__m512bh)_mm512_set1_epi32(                 \
                        *(const tc__bf_i32u *)(xr + i * rs + 2 * q));               \
                    _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)            \
                        acc[i][v] = _mm512_dpbf16_ps(acc[i][v], a, b[v]);           \
                }                                                                   \
                w += NV * 32;                                                       \
            }                                                                       \
        }                                                                           \
        __mmask16 m[NV];                                                            \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) {                      \
            int left = t->nch - v * 16;                                             \
            m[v] = left >= 16 ? (__mmask16)0xFFFF                                   \
                   : left <= 0 ? (__mmask16)0 : (__mmask16)((1u << left) - 1);      \
        }                                                                           \
        if (!t->out) {                                                              \
            _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                   \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                \
                    _mm512_storeu_ps(t->tb + (i * NV + v) * 16, acc[i][v]);         \
            return;                                                                 \
        }                                                                           \
        __m512 bias[NV];                                                            \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) bias[v] = _mm512_loadu_ps(t->bias + v * 16); \
        _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) {                     \
            uint16_t *o = t->out[i];                                                \
            if (i < t->row0 || !o) continue;                                        \
            const uint16_t *rr = t->res ? t->res[i] : NULL;                         \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) {                  \
                __m512 y = _mm512_add_ps(acc[i][v], bias[v]);                       \
                if (rr) y = _mm512_add_ps(y, bf_load_bf16(m[v], rr + v * 16));      \
                y = bf_act(y, t->act);                                              \
                __m256i h = (__m256i)_mm512_cvtneps_pbh(y);                         \
                _mm256_mask_storeu_epi16(o + v * 16, m[v], h);                      \
            }                                                                       \
        }                                                                           \
    }

BF_UKR(6, 4)
BF_UKR(8, 3)
BF_UKR(12, 2)
BF_UKR(12, 1)
