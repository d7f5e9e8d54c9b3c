/* conv_bf16_avx512.c - the AVX512-BF16 micro-kernels of cpu.conv.igemm-bf16
 * (conv_bf16.c). Compiled with -mavx512bf16 (CMakeLists.txt); called only
 * when cpuid reports AVX512_BF16.
 *
 * A tile is MR output pixels (rows: row i at x + roff[i], the offsets held
 * in index registers) by NV x 16 output channels. The reduction runs over the
 * taps (runs: one offset each into the source image) and, inside a run,
 * over pairs of input channels: one vdpbf16ps multiplies the pair (c, c+1)
 * of a pixel, broadcast as one 32-bit value, by the packed weights' 16
 * lanes x 2 and adds both products to the lane's fp32 sum. MR x NV
 * accumulators: 6x4, 8x3, 12x2, 12x1 (24, 24, 24, 12 zmm), loads per step
 * NV + MR for MR*NV vdpbf16ps.
 *
 * The epilogue runs on the registers: + bias (fp32), + residual (bf16
 * rows), activation, one rounding to bf16 (vcvtneps2bf16), masked stores;
 * or, for channels-first output, the fp32 tile is written to tb and
 * tc__bf16_store_cf finishes it. vdpbf16ps and vcvtneps2bf16 treat denormal inputs as
 * zero and flush denormal results (fixed DAZ/FTZ, round to nearest even). */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "../core/half.h"
#include "conv_bf16.h"


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
        int64_t ro[MR];                                                             \
        _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) ro[i] = t->roff[i];   \
        const int np = t->npairs;                                                   \
        for (int r = 0; r < t->nruns; r++) {                                        \
            const uint16_t *xr = t->x + t->runoff[r];                               \
            for (int q = 0; q < np; q++) {                                          \
                __m512bh b[NV];                                                     \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                \
                    b[v] = (__m512bh)_mm512_loadu_si512((const void *)(w + v * 32)); \
                _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) {             \
                    const __m512bh a = (__m512bh)_mm512_set1_epi32(                 \
                        *(const tc__bf_i32u *)(xr + ro[i] + 2 * q));               \
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

/* Depthwise (one input and one output channel per group), channels-last:
 * one output row. 32 channels per step: a 512-bit load holds 16 pairs
 * (c even, c odd); the odd channels as fp32 are the pairs masked to their
 * high halves, the even ones the pairs shifted left 16, so the weights and
 * the bias come packed per 32-channel block as [16 even][16 odd] fp32 and
 * every tap is one load, two integer ops and two FMAs. Per pixel
 * (bf_dw_block: edges, other masks) two pixels share each weight (3x3:
 * held in registers, or spilled to L1); rows of 3x3 taps at stride 1 and 2
 * (bf_dw_reg) run blocks of pixels that load and split each input pixel
 * once for all the outputs that read it. The two fp32 results are rounded
 * (vcvtneps2bf16) and re-interleaved (vpermt2w). */
static inline void bf_split(__m512i v, __m512 *ev, __m512 *od) {
    *ev = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
    *od = _mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32((int)0xFFFF0000u)));
}

/* One pixel's 32 channels (even / odd fp32 halves) + residual, activation,
 * rounded and re-interleaved to y. */
static inline __attribute__((always_inline)) void bf_dw_store(__m512 ae, __m512 ao, const uint16_t *res,
                                                               __mmask32 m, int act, __m512i ilv,
                                                               uint16_t *y) {
    if (res) {
        __m512 e0, o0;
        bf_split(_mm512_maskz_loadu_epi16(m, res), &e0, &o0);
        ae = _mm512_add_ps(ae, e0);
        ao = _mm512_add_ps(ao, o0);
    }
    ae = bf_act(ae, act);
    ao = bf_act(ao, act);
    __m512i he = _mm512_castsi256_si512((__m256i)_mm512_cvtneps_pbh(ae));
    __m512i ho = _mm512_castsi256_si512((__m256i)_mm512_cvtneps_pbh(ao));
    _mm512_mask_storeu_epi16(y, m, _mm512_permutex2var_epi16(he, ilv, ho));
}

/* One 32-channel block of nw output pixels; tap j reads x + off[j] (+ the
 * pixel's o * xs) with the weights of tap widx[j]. With nt a constant
 * (3x3: 9) the taps unroll and their weights stay in registers. */
static inline __attribute__((always_inline)) void
bf_dw_block(const uint16_t *x, int64_t ps, int64_t xs, const int64_t *off, const int *widx,
            const int nt, const float *wb, const float *bias, __mmask32 m, int64_t nw, uint16_t *y,
            const uint16_t *res, int act, __m512i ilv, const int hold) {
    enum { H = 9 };
    __m512 we[H], wo[H];
    if (hold) {
        _Pragma("GCC unroll 9") for (int r = 0; r < H; r++) {
            if (r < nt) {
                we[r] = _mm512_loadu_ps(wb + widx[r] * 32);
                wo[r] = _mm512_loadu_ps(wb + widx[r] * 32 + 16);
            }
        }
    }
    const __m512 bse = _mm512_loadu_ps(bias), bso = _mm512_loadu_ps(bias + 16);
    int64_t o = 0;
    for (; hold && o + 2 <= nw; o += 2) { /* two pixels share each weight load */
        const uint16_t *x0 = x + o * xs, *x1 = x0 + xs;
        __m512 ae = bse, ao = bso, ce = bse, co = bso;
        _Pragma("GCC unroll 9") for (int r = 0; r < nt; r++) {
            __m512 e0, o0, e1, o1;
            bf_split(_mm512_maskz_loadu_epi16(m, x0 + off[r]), &e0, &o0);
            bf_split(_mm512_maskz_loadu_epi16(m, x1 + off[r]), &e1, &o1);
            const __m512 ve = we[r < H ? r : 0], vo = wo[r < H ? r : 0];
            ae = _mm512_fmadd_ps(e0, ve, ae);
            ao = _mm512_fmadd_ps(o0, vo, ao);
            ce = _mm512_fmadd_ps(e1, ve, ce);
            co = _mm512_fmadd_ps(o1, vo, co);
        }
        bf_dw_store(ae, ao, res ? res + o * ps : NULL, m, act, ilv, y + o * ps);
        bf_dw_store(ce, co, res ? res + (o + 1) * ps : NULL, m, act, ilv, y + (o + 1) * ps);
    }
    for (; o < nw; o++) {
        const uint16_t *xo = x + o * xs;
        __m512 ae = bse, ao = bso; /* the taps in order, as in the pairs above */
        _Pragma("GCC unroll 9") for (int r = 0; r < nt; r++) {
            __m512 e0, o0;
            bf_split(_mm512_maskz_loadu_epi16(m, xo + off[r]), &e0, &o0);
            const float *wr = wb + widx[r] * 32;
            const __m512 ve = hold ? we[r < H ? r : 0] : _mm512_loadu_ps(wr);
            const __m512 vo = hold ? wo[r < H ? r : 0] : _mm512_loadu_ps(wr + 16);
            ae = _mm512_fmadd_ps(e0, ve, ae);
            ao = _mm512_fmadd_ps(o0, vo, ao);
        }
        bf_dw_store(ae, ao, res ? res + o * ps : NULL, m, act, ilv, y + o * ps);
    }
}

/* One 32-channel block of nw output pixels whose taps come in ng rows of
 * three adjacent pixels (tap 3g + k at x + off[3g] + k * ps), input step
 * S pixels (1 or 2), B outputs at a time with their accumulators in
 * registers. Per tap row the S * (B - 1) + 3 input pixels the B outputs
 * read are each loaded and split once and added to every output that
 * reads them, in ascending pixel order: each output still gets its taps in
 * order (3g, 3g + 1, 3g + 2, rows in order) on its bias, the FMAs of
 * bf_dw_block, so the sums are bit for bit its sums. The row's six weight
 * vectors are loaded once per block. Returns the pixels done (nw rounded
 * down to B). */
static inline __attribute__((always_inline)) int64_t
bf_dw_reg(const uint16_t *x, int64_t ps, const int64_t *off, const int *widx, int ng,
          const float *wb, const float *bias, __mmask32 m, int64_t nw, uint16_t *y,
          const uint16_t *res, int act, __m512i ilv, const int S, const int B) {
    enum { BM = 8, NC = 2 * (BM - 1) + 3 };
    const int nc = S * (B - 1) + 3;
    int64_t o = 0;
    for (; o + B <= nw; o += B) {
        __m512 ae[BM], ao[BM];
        _Pragma("GCC unroll 8") for (int j = 0; j < BM; j++) {
            if (j < B) {
                ae[j] = _mm512_loadu_ps(bias);
                ao[j] = _mm512_loadu_ps(bias + 16);
            }
        }
        const uint16_t *xo = x + o * S * ps;
        for (int g = 0; g < ng; g++) {
            const uint16_t *xr = xo + off[3 * g];
            __m512 we[3], wo[3];
            _Pragma("GCC unroll 3") for (int k = 0; k < 3; k++) {
                we[k] = _mm512_loadu_ps(wb + widx[3 * g + k] * 32);
                wo[k] = _mm512_loadu_ps(wb + widx[3 * g + k] * 32 + 16);
            }
            _Pragma("GCC unroll 17") for (int c = 0; c < NC; c++) {
                if (c >= nc) continue;
                __m512 e, d;
                bf_split(_mm512_maskz_loadu_epi16(m, xr + c * ps), &e, &d);
                /* output j reads pixel c as its tap k = c - S j */
                _Pragma("GCC unroll 8") for (int j = BM - 1; j >= 0; j--) {
                    const int k = c - S * j;
                    if (j >= B || k < 0 || k > 2) continue;
                    ae[j] = _mm512_fmadd_ps(e, we[k], ae[j]);
                    ao[j] = _mm512_fmadd_ps(d, wo[k], ao[j]);
                }
            }
        }
        _Pragma("GCC unroll 8") for (int j = 0; j < BM; j++) {
            if (j < B)
                bf_dw_store(ae[j], ao[j], res ? res + (o + j) * ps : NULL, m, act, ilv,
                            y + (o + j) * ps);
        }
    }
    return o;
}

/* bf_dw_reg over a row: blocks of B0 pixels, the rest in blocks of 4, 2
 * and 1. */
static inline __attribute__((always_inline)) void
bf_dw_reg_row(const uint16_t *x, int64_t ps, const int64_t *off, const int *widx, int ng,
              const float *wb, const float *bias, __mmask32 m, int64_t nw, uint16_t *y,
              const uint16_t *res, int act, __m512i ilv, const int S, const int B0) {
    int64_t o = 0;
#define BF_DW_REG(B)                                                                              \
    o += bf_dw_reg(x + o * S * ps, ps, off, widx, ng, wb, bias, m, nw - o, y + o * ps,           \
                   res ? res + o * ps : NULL, act, ilv, S, B)
    BF_DW_REG(B0);
    if (B0 > 4) BF_DW_REG(4);
    BF_DW_REG(2);
    BF_DW_REG(1);
#undef BF_DW_REG
}

/* nw output pixels of one row (y pixel stride ps, input step xs), every
 * 32-channel block; weights [block][tap][16 even][16 odd] fp32, nruns
 * taps per block. */
void tc__bf16_dw_row(const uint16_t *x, int64_t ps, int64_t xs, const int64_t *off, const int *widx,
                     int nt, const float *w, int nruns, const float *bias, int64_t C, int64_t nw,
                     uint16_t *y, const uint16_t *res, int act) {
    /* result[2i] = even[i], result[2i+1] = odd[i] */
    static const uint16_t ilv_tab[32] = {0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39,
                                         8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
    const __m512i ilv = _mm512_loadu_si512((const void *)ilv_tab);
    /* taps in rows of three adjacent pixels (3x3, 3 or 6 taps where a
     * zeros border drops rows), stride 1 or 2: register blocks of 8
     * pixels at stride 1, 3 at stride 2 (the fastest on Zen 4:
     * docs/solvers/cpu-conv-bf16.md) */
    int rows3 = nt > 0 && nt % 3 == 0 && nt <= 9 && (xs == ps || xs == 2 * ps);
    for (int g = 0; rows3 && g < nt / 3; g++)
        rows3 = off[3 * g + 1] - off[3 * g] == ps && off[3 * g + 2] - off[3 * g + 1] == ps;
    if (rows3) {
        for (int64_t c0 = 0; c0 < C; c0 += 32) {
            const __mmask32 m = C - c0 >= 32 ? (__mmask32)0xFFFFFFFFu : (__mmask32)((1u << (C - c0)) - 1);
            const float *wb = w + c0 * nruns;
            const uint16_t *rb = res ? res + c0 : NULL;
            if (xs == ps)
                bf_dw_reg_row(x + c0, ps, off, widx, nt / 3, wb, bias + c0, m, nw, y + c0, rb, act,
                              ilv, 1, 8);
            else
                bf_dw_reg_row(x + c0, ps, off, widx, nt / 3, wb, bias + c0, m, nw, y + c0, rb, act,
                              ilv, 2, 3);
        }
        return;
    }
    for (int64_t c0 = 0; c0 < C; c0 += 32) {
        const __mmask32 m = C - c0 >= 32 ? (__mmask32)0xFFFFFFFFu : (__mmask32)((1u << (C - c0)) - 1);
        const float *wb = w + c0 * nruns;
        const uint16_t *rb = res ? res + c0 : NULL;
        if (nt == 9)
            bf_dw_block(x + c0, ps, xs, off, widx, 9, wb, bias + c0, m, nw, y + c0, rb, act, ilv, 1);
        else
            bf_dw_block(x + c0, ps, xs, off, widx, nt, wb, bias + c0, m, nw, y + c0, rb, act, ilv, 0);
    }
}

/* Odd channel counts: mr rows of the reduction (tap, channel) packed
 * contiguously at pk + i*lp, zero past taps x channels: nrun runs of `run`
 * elements, run j of row i read at src + roff[i] + runoff[j*step]. */
void tc__bf16_pack_rows(const uint16_t *src, const int64_t *roff, int mr, const int64_t *runoff,
                        int64_t nrun, int64_t step, int64_t run, int64_t lp, uint16_t *pk) {
    for (int i = 0; i < mr; i++) {
        uint16_t *d = pk + i * lp;
        const uint16_t *s = src + roff[i];
        for (int64_t j = 0; j < nrun; j++, d += run) {
            const uint16_t *sr = s + runoff[j * step];
            int64_t k = 0;
            for (; k + 32 <= run; k += 32)
                _mm512_storeu_si512((void *)(d + k), _mm512_loadu_si512((const void *)(sr + k)));
            if (k < run) {
                __mmask32 m = (__mmask32)((1ull << (run - k)) - 1);
                _mm512_mask_storeu_epi16(d + k, m, _mm512_maskz_loadu_epi16(m, sr + k));
            }
        }
        if (lp > nrun * run) pk[i * lp + nrun * run] = 0;
    }
}

/* Channels-first epilogue: rows fp32 pixels x nr channels at tb (row-major)
 * to nch output rows of contiguous pixels (channel stride cs), 16 pixels a
 * step gathered down one channel column: y = act(v + bias + residual). */
void tc__bf16_store_cf(const float *tb, int64_t nr, int64_t rows, int nch, const float *bias,
                       uint16_t *y, int64_t cs, const uint16_t *res, int act) {
    const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                                             12, 13, 14, 15),
                                           _mm512_set1_epi32((int)nr));
    for (int j = 0; j < nch; j++) {
        const __m512 b = _mm512_set1_ps(bias[j]);
        for (int64_t r = 0; r < rows; r += 16) {
            const __mmask16 m = rows - r >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (rows - r)) - 1);
            __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, tb + r * nr + j, 4);
            v = _mm512_add_ps(v, b);
            if (res) v = _mm512_add_ps(v, bf_load_bf16(m, res + j * cs + r));
            v = bf_act(v, act);
            _mm256_mask_storeu_epi16(y + j * cs + r, m, (__m256i)_mm512_cvtneps_pbh(v));
        }
    }
}

/* 1 when any of n bf16 values is an infinity or a NaN. */
int tc__bf16_any_nonfinite(const uint16_t *s, int64_t n) {
    const __m512i ex = _mm512_set1_epi16(0x7f80);
    __mmask32 hit = 0;
    int64_t j = 0;
    for (; j + 32 <= n; j += 32)
        hit |= _mm512_cmpeq_epi16_mask(_mm512_and_si512(_mm512_loadu_si512((const void *)(s + j)), ex), ex);
    if (j < n) {
        __mmask32 m = (__mmask32)((1ull << (n - j)) - 1);
        hit |= _mm512_mask_cmpeq_epi16_mask(m, _mm512_and_si512(_mm512_maskz_loadu_epi16(m, s + j), ex), ex);
    }
    return hit != 0;
}

/* Winograd F(2x2, 3x3) transforms of cpu.conv.winograd-f2-bf16
 * (conv_bf16_winograd.c), in fp32.
 * Input: the 4x4 pixels at src (row stride rs, pixel stride ps) to
 * V[pos * vs + ...] = (B^T d B)[pos] rounded to bf16, 32 channels a step:
 * one load splits into the even and the odd channels (shift / mask, as
 * the depthwise kernel), both are transformed, and one vcvtne2ps2bf16
 * stores them as [16 even][16 odd]: V's channel order within each block
 * of 32 (the weights are packed in the same order). C is rounded up to 32
 * in V, the lanes past it zero. */
void tc__bf16_wg_in(const uint16_t *src, int64_t rs, int64_t ps, int64_t C, uint16_t *V, int64_t vs) {
    for (int64_t c0 = 0; c0 < C; c0 += 32) {
        const __mmask32 m = C - c0 >= 32 ? (__mmask32)0xFFFFFFFFu : (__mmask32)((1u << (C - c0)) - 1);
        __m512 d[4][4][2];
        for (int r = 0; r < 4; r++)
            for (int s = 0; s < 4; s++)
                bf_split(_mm512_maskz_loadu_epi16(m, src + r * rs + s * ps + c0), &d[r][s][0], &d[r][s][1]);
        for (int h = 0; h < 2; h++)
            for (int s = 0; s < 4; s++) { /* rows: B^T d */
                __m512 a0 = d[0][s][h], a1 = d[1][s][h], a2 = d[2][s][h], a3 = d[3][s][h];
                d[0][s][h] = _mm512_sub_ps(a0, a2);
                d[1][s][h] = _mm512_add_ps(a1, a2);
                d[2][s][h] = _mm512_sub_ps(a2, a1);
                d[3][s][h] = _mm512_sub_ps(a1, a3);
            }
        for (int r = 0; r < 4; r++) { /* columns: (B^T d) B */
            __m512 o[4][2];
            for (int h = 0; h < 2; h++) {
                __m512 a0 = d[r][0][h], a1 = d[r][1][h], a2 = d[r][2][h], a3 = d[r][3][h];
                o[0][h] = _mm512_sub_ps(a0, a2);
                o[1][h] = _mm512_add_ps(a1, a2);
                o[2][h] = _mm512_sub_ps(a2, a1);
                o[3][h] = _mm512_sub_ps(a1, a3);
            }
            for (int s = 0; s < 4; s++)
                _mm512_storeu_si512((void *)(V + (r * 4 + s) * vs + c0),
                                    (__m512i)_mm512_cvtne2ps_pbh(o[s][1], o[s][0]));
        }
    }
}

/* Output: M[pos * ms + k] (fp32, nv x 16 channels) to the 2x2 outputs
 * A^T M A + bias; channels-last rows out[j] (NULL: outside) get the
 * epilogue (residual res[j], activation, bf16), or, with out NULL, the
 * four fp32 vectors go to tmp[j * nv * 16 + k]. */
void tc__bf16_wg_out(const float *M, int64_t ms, int nv, int nch, const float *bias,
                     uint16_t *const *out, const uint16_t *const *res, int act, float *tmp) {
    for (int v = 0; v < nv; v++) {
        int left = nch - v * 16;
        const __mmask16 m = left >= 16 ? (__mmask16)0xFFFF : left <= 0 ? 0 : (__mmask16)((1u << left) - 1);
        __m512 t[2][4];
        for (int s = 0; s < 4; s++) { /* rows: A^T M */
            __m512 a0 = _mm512_loadu_ps(M + (0 * 4 + s) * ms + v * 16);
            __m512 a1 = _mm512_loadu_ps(M + (1 * 4 + s) * ms + v * 16);
            __m512 a2 = _mm512_loadu_ps(M + (2 * 4 + s) * ms + v * 16);
            __m512 a3 = _mm512_loadu_ps(M + (3 * 4 + s) * ms + v * 16);
            t[0][s] = _mm512_add_ps(_mm512_add_ps(a0, a1), a2);
            t[1][s] = _mm512_sub_ps(_mm512_sub_ps(a1, a2), a3);
        }
        const __m512 b = _mm512_loadu_ps(bias + v * 16);
        for (int r = 0; r < 2; r++) {
            __m512 y0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(t[r][0], t[r][1]), t[r][2]), b);
            __m512 y1 = _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(t[r][1], t[r][2]), t[r][3]), b);
            __m512 yy[2] = {y0, y1};
            for (int s = 0; s < 2; s++) {
                int j = r * 2 + s;
                if (!out) {
                    _mm512_storeu_ps(tmp + j * nv * 16 + v * 16, yy[s]);
                    continue;
                }
                if (!out[j]) continue;
                __m512 q = yy[s];
                if (res && res[j]) q = _mm512_add_ps(q, bf_load_bf16(m, res[j] + v * 16));
                q = bf_act(q, act);
                _mm256_mask_storeu_epi16(out[j] + v * 16, m, (__m256i)_mm512_cvtneps_pbh(q));
            }
        }
    }
}
