/* conv_depthwise_avx512.c - cpu.conv.depthwise's kernels for AVX-512:
 * float32 by hand, float64 from the generic C (conv_depthwise_kern.h).
 * Called only on AVX-512 CPUs. Three float32 kernels:
 *   - the direct path (tc__dw3d_*, last in this file): 3x3 taps on the
 *     last two axes read in place from the caller's input, no extended
 *     plane (see conv_depthwise.c for when it applies);
 *   - dw3_plane: the same 4-row blocking on an extended plane (3x3, stride
 *     1 or 2, when the direct path does not apply, e.g. padding 2);
 *   - DW_ROW / DW_ROW_S1K3: any taps, one row at a time, up to 64 outputs
 *     in four zmm accumulators, masked loads for the row's tail, stride 2
 *     by picking even lanes.
 * Plus the float32 extension (masked 16-lane copies of the interior), and
 * the direct path on float16 / bfloat16 storage (tc__dw3d_planes_half_*,
 * last: widened in registers, float32 FMAs, rounded once on store). */
#include "core/half.h"

#include <immintrin.h>
#include <stdint.h>

#define DW_SFX avx512
#define DW_HAND_F32 1
#define DW_HAND_EXT_F32 1
#include "conv_depthwise_kern.h"

/* The float32 extension (see conv_depthwise_kern.h): the interior of each
 * row in masked 16-lane copies (no library call for short rows), the
 * padding columns from the index map. */
void tc__dw_extend_f32_avx512(const float *restrict x, const int64_t in[3], const int64_t E[3],
                              const int64_t *restrict map, int64_t a2, int64_t b2, int64_t lo2,
                              float cval, float *restrict e) {
    const int64_t *m0 = map, *m1 = map + E[0], *m2 = map + E[0] + E[1];
    const __m512 cv = _mm512_set1_ps(cval);
    for (int64_t i0 = 0; i0 < E[0]; i0++)
        for (int64_t i1 = 0; i1 < E[1]; i1++) {
            float *restrict d = e + (i0 * E[1] + i1) * E[2];
            if (m0[i0] < 0 || m1[i1] < 0) {
                for (int64_t j = 0; j < E[2]; j += 16) {
                    int64_t n = E[2] - j < 16 ? E[2] - j : 16;
                    _mm512_mask_storeu_ps(d + j, (__mmask16)((1u << n) - 1), cv);
                }
                continue;
            }
            const float *restrict row = x + (m0[i0] * in[1] + m1[i1]) * in[2];
            for (int64_t i2 = 0; i2 < a2; i2++) d[i2] = m2[i2] < 0 ? cval : row[m2[i2]];
            for (int64_t j = a2; j < b2; j += 16) {
                int64_t n = b2 - j < 16 ? b2 - j : 16;
                __mmask16 mk = (__mmask16)((1u << n) - 1);
                _mm512_mask_storeu_ps(d + j, mk, _mm512_maskz_loadu_ps(mk, row + (j - lo2)));
            }
            for (int64_t i2 = b2; i2 < E[2]; i2++) d[i2] = m2[i2] < 0 ? cval : row[m2[i2]];
        }
}

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

/* ---- 3x3 along the last two axes (any taps, stride and dilation on the
 * first), stride 1 or 2 on both, dilation 1 on axis 1 and any on axis 2:
 * RB output rows at once, so every input row loaded feeds up to three of
 * them (MobileNet's depthwise layers; 3x3x3 volumes). The nine weights of
 * one axis-0 tap stay in registers; per output the taps are summed in the
 * order bias, r0, r1, r2, as in the generic code. ---- */

static inline __attribute__((always_inline)) __m512 dw3_ld(const float *src, const int S2,
                                                          __mmask16 ma, __mmask16 mb) {
    if (S2 == 1) return _mm512_maskz_loadu_ps(ma, src);
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
                                           28, 30);
    return _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(ma, src), even,
                                  _mm512_maskz_loadu_ps(mb, src + 16));
}

#define DW3_RB 4
/* One input row of a block as dw3_rows() sees it: where it starts and, on
 * the direct path, the values of its padding columns left and right. */
typedef struct dw3_row {
    const float *p;
    __m512 fl, fr;
} dw3_row;

/* The row-block loop of both 3x3 kernels, written once: output rows
 * [o1, o1 + RB) of the columns [c0, c0 + 16 NV), each input row's vectors
 * feeding every output row it belongs to. Where the vectors come from is
 * the kernel's: row(src, at, k) is input row k of the block for the axis-0
 * tap at offset `at` (0, step0, 2 step0, ...), ld(src, &row, t, v) the
 * vector of tap column t for output vector v. Both are static inline
 * functions passed as constants, so they are inlined like the rest. */
typedef dw3_row (*dw3_row_fn)(const void *src, int64_t at, int k);
typedef __m512 (*dw3_ld_fn)(const void *src, const dw3_row *row, int t, int v);
static inline __attribute__((always_inline)) void
dw3_rows(const void *src, dw3_row_fn row, dw3_ld_fn ld, int64_t step0, int64_t m0,
         const float *restrict w, const int RB, const int S1, const int NV,
         const __mmask16 *mk, float bias, float *restrict y, int64_t ystep) {
    __m512 acc[DW3_RB][4]; /* fixed size: RB and NV are constants after inlining */
    for (int i = 0; i < RB; i++)
        for (int v = 0; v < NV; v++) acc[i][v] = _mm512_set1_ps(bias);
    int64_t at = 0;
    for (int64_t r0 = 0; r0 < m0; r0++, at += step0, w += 9) {
        __m512 wv[9];
        for (int t = 0; t < 9; t++) wv[t] = _mm512_set1_ps(w[t]);
#pragma GCC unroll 16
        for (int k = 0; k < (RB - 1) * S1 + 3; k++) {
            const dw3_row rw = row(src, at, k);
#pragma GCC unroll 3
            for (int t = 0; t < 3; t++)
#pragma GCC unroll 4
                for (int v = 0; v < NV; v++) {
                    const __m512 xv = ld(src, &rw, t, v);
#pragma GCC unroll 3
                    for (int r1 = 0; r1 < 3; r1++) {
                        const int i = k - r1;
                        if (i >= 0 && i % S1 == 0 && i / S1 < RB)
                            acc[i / S1][v] = _mm512_fmadd_ps(wv[r1 * 3 + t], xv, acc[i / S1][v]);
                    }
                }
        }
    }
    for (int i = 0; i < RB; i++)
        for (int v = 0; v < NV; v++)
            _mm512_mask_storeu_ps(y + i * ystep + 16 * v, mk[v], acc[i][v]);
}

/* dw3_rows() on the extended plane: b points at input row o1 * S1, column
 * c0 * S2, of the first axis-0 tap's plane; rows E2 apart, taps d2. */
typedef struct dw3p_src {
    const float *b;
    int64_t E2, d2;
    int S2;
    const __mmask16 *ma, *mb;
} dw3p_src;

static inline __attribute__((always_inline)) dw3_row dw3p_row(const void *src, int64_t at,
                                                              int k) {
    const dw3p_src *s = src;
    return (dw3_row){s->b + at + k * s->E2, _mm512_setzero_ps(), _mm512_setzero_ps()};
}

static inline __attribute__((always_inline)) __m512 dw3p_ld(const void *src, const dw3_row *r,
                                                           int t, int v) {
    const dw3p_src *s = src;
    return dw3_ld(r->p + t * s->d2 + 16 * s->S2 * v, s->S2, s->ma[v], s->mb[v]);
}

static inline __attribute__((always_inline)) void
dw3_block(const float *restrict b, int64_t E2, int64_t step0, int64_t m0,
          const float *restrict w, int64_t d2, const int RB, const int S1, const int S2,
          const int NV, const __mmask16 *ma, const __mmask16 *mb, const __mmask16 *mk,
          float bias, float *restrict y, int64_t ystep) {
    const dw3p_src s = {b, E2, d2, S2, ma, mb};
    dw3_rows(&s, dw3p_row, dw3p_ld, step0, m0, w, RB, S1, NV, mk, bias, y, ystep);
}

/* Every output row of one column chunk: blocks of DW3_RB rows, the last
 * block moved back to end at the last row (its overlap is recomputed to
 * the same values); single rows when the plane has fewer. */
#define DW3_COLS(S1, S2, NV)                                                             \
    static void dw3_cols_##S1##_##S2##_##NV(                                             \
        const float *restrict e, const int64_t E[3], const float *restrict w,            \
        const int64_t m[3], const int64_t s[3], const int64_t d[3], const int64_t out[3], \
        float bias, float *restrict y, int64_t c0, const __mmask16 *ma,                 \
        const __mmask16 *mb, const __mmask16 *mk) {                                      \
        const int64_t E12 = E[1] * E[2];                                                 \
        const int64_t step0 = m[0] > 1 ? d[0] * E12 : 0; /* d[0] alone may be huge */   \
        for (int64_t o0 = 0; o0 < out[0]; o0++) {                                        \
            const float *e0 = e + o0 * s[0] * E12 + c0 * S2;                             \
            float *y0 = y + o0 * out[1] * out[2] + c0;                                   \
            if (out[1] < DW3_RB) {                                                       \
                for (int64_t o1 = 0; o1 < out[1]; o1++)                                  \
                    dw3_block(e0 + o1 * S1 * E[2], E[2], step0, m[0], w, d[2], 1, S1,      \
                              S2, NV, ma, mb, mk, bias, y0 + o1 * out[2], out[2]);        \
                continue;                                                                \
            }                                                                            \
            for (int64_t o1 = 0;; o1 += DW3_RB) {                                        \
                if (o1 > out[1] - DW3_RB) o1 = out[1] - DW3_RB;                          \
                dw3_block(e0 + o1 * S1 * E[2], E[2], step0, m[0], w, d[2], DW3_RB,       \
                          S1, S2, NV, ma, mb, mk, bias, y0 + o1 * out[2], out[2]);        \
                if (o1 + DW3_RB >= out[1]) break;                                        \
            }                                                                            \
        }                                                                                \
    }
#define DW3_NV(S1, S2) DW3_COLS(S1, S2, 1) DW3_COLS(S1, S2, 2) DW3_COLS(S1, S2, 3) DW3_COLS(S1, S2, 4)
DW3_NV(1, 1)
DW3_NV(1, 2)
DW3_NV(2, 1)
DW3_NV(2, 2)

typedef void (*dw3_fn)(const float *, const int64_t *, const float *, const int64_t *,
                       const int64_t *, const int64_t *, const int64_t *, float, float *,
                       int64_t, const __mmask16 *, const __mmask16 *, const __mmask16 *);
#define DW3_ROW4(S1, S2)                                                                 \
    {dw3_cols_##S1##_##S2##_1, dw3_cols_##S1##_##S2##_2, dw3_cols_##S1##_##S2##_3,      \
     dw3_cols_##S1##_##S2##_4}
static const dw3_fn dw3_table[2][2][4] = {{DW3_ROW4(1, 1), DW3_ROW4(1, 2)},
                                          {DW3_ROW4(2, 1), DW3_ROW4(2, 2)}};

static void dw3_plane(const float *restrict e, const int64_t E[3], const float *restrict w,
                      const int64_t m[3], const int64_t s[3], const int64_t d[3],
                      const int64_t out[3], float bias, float *restrict y) {
    for (int64_t c0 = 0; c0 < out[2]; c0 += 64) {
        int64_t n = out[2] - c0 < 64 ? out[2] - c0 : 64;
        int nv = (int)((n + 15) / 16);
        __mmask16 mk[4], ma[4], mb[4];
        for (int v = 0; v < 4; v++) {
            int64_t cnt = n - 16 * v;
            cnt = cnt >= 16 ? 16 : cnt > 0 ? cnt : 0;
            mk[v] = (__mmask16)(cnt >= 16 ? 0xffff : (1u << cnt) - 1);
            /* stride 2: elements 0 .. 2 (cnt - 1) of the row from 32 v */
            int64_t need = cnt ? 2 * (cnt - 1) + 1 : 0;
            ma[v] = s[2] == 1 ? mk[v] : (__mmask16)(need >= 16 ? 0xffff : (1u << need) - 1);
            mb[v] = (__mmask16)(need > 16 ? (1u << (need - 16)) - 1 : 0);
        }
        dw3_table[s[1] - 1][s[2] - 1][nv - 1](e, E, w, m, s, d, out, bias, y, c0, ma, mb, mk);
    }
}

void tc__dw_plane_f32_avx512(const float *restrict e, const int64_t E[3],
                             const float *restrict w, const int64_t m[3], const int64_t s[3],
                             const int64_t d[3], const int64_t out[3], float bias,
                             float *restrict y) {
    if (m[1] == 3 && m[2] == 3 && d[1] == 1 && s[1] <= 2 && s[2] <= 2) {
        dw3_plane(e, E, w, m, s, d, out, bias, y);
        return;
    }
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

/* ---- The direct path (no extended plane): 3x3 along the last two axes as
 * above, dilation 1 on both, padding of at most one column on each side of
 * the rows. Rows are read in place from the channel's input: a row outside
 * the input along axes 0/1 is the mode's source row (index map) or a row of
 * cval; the one column left of a row (tap 0) and right of it (tap 2) come
 * from masked loads whose masked-off lane takes the mode's value for that
 * row, broadcast from its source element. So every padding mode costs the
 * same two scalar broadcasts per input row, and nothing is copied. ---- */

typedef struct dw3d_geom {
    const int64_t *rowoff; /* E0 x E1: offset of extended row (i0, i1) in the
                              channel's input, or -1 for a row of cval */
    const float *cv;       /* in2 + 64 floats of cval */
    int64_t E1, lo2, mapL, mapR;
    const uint16_t *masks; /* per 64-column chunk, [v][t][lo, hi] */
} dw3d_geom;

static inline __attribute__((always_inline)) __m512 dw3d_ld(__m512 fill, const float *src,
                                                           const int S2, __mmask16 ma,
                                                           __mmask16 mb) {
    if (S2 == 1) return _mm512_mask_loadu_ps(fill, ma, src);
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
                                           28, 30);
    return _mm512_permutex2var_ps(_mm512_mask_loadu_ps(fill, ma, src), even,
                                  _mm512_mask_loadu_ps(fill, mb, src + 16));
}

/* dw3_rows() in place: ro is the row-offset table at extended row (i0 of
 * the first axis-0 tap, o1 * S1); a row's tap-0 and tap-2 loads take the
 * mode's value of its left and right padding column where masked off. */
typedef struct dw3d_src {
    const float *x, *cv;
    const int64_t *ro;
    int64_t mapL, mapR, col;
    int S2;
    const uint16_t *mk2;
} dw3d_src;

static inline __attribute__((always_inline)) dw3_row dw3d_row(const void *src, int64_t at,
                                                              int k) {
    const dw3d_src *s = src;
    const int64_t off = s->ro[at + k];
    const float *rp = off < 0 ? s->cv : s->x + off;
    return (dw3_row){rp + s->col, _mm512_set1_ps(s->mapL < 0 ? s->cv[0] : rp[s->mapL]),
                     _mm512_set1_ps(s->mapR < 0 ? s->cv[0] : rp[s->mapR])};
}

static inline __attribute__((always_inline)) __m512 dw3d_ldv(const void *src, const dw3_row *r,
                                                            int t, int v) {
    const dw3d_src *s = src;
    const uint16_t *mm = s->mk2 + (v * 3 + t) * 2;
    return dw3d_ld(t == 2 ? r->fr : r->fl, r->p + t + 16 * s->S2 * v, s->S2, (__mmask16)mm[0],
                   (__mmask16)mm[1]);
}

static inline __attribute__((always_inline)) void
dw3d_block(const dw3d_geom *g, const float *restrict x, const int64_t *ro, int64_t step0,
           int64_t m0, const float *restrict w, int64_t c0, const int RB, const int S1,
           const int S2, const int NV, const uint16_t *mk2, const __mmask16 *mk, float bias,
           float *restrict y, int64_t ystep) {
    const dw3d_src s = {x, g->cv, ro, g->mapL, g->mapR, c0 * S2 - g->lo2, S2, mk2};
    dw3_rows(&s, dw3d_row, dw3d_ldv, step0, m0, w, RB, S1, NV, mk, bias, y, ystep);
}

#define DW3D_COLS(S1, S2, NV)                                                            \
    static void dw3d_cols_##S1##_##S2##_##NV(                                            \
        const dw3d_geom *g, const float *restrict x, const int64_t m[3],                 \
        const int64_t s[3], const int64_t d[3], const int64_t out[3],                    \
        const float *restrict w, float bias, float *restrict y, int64_t c0,              \
        const uint16_t *mk2, const __mmask16 *mk) {                                      \
        const int64_t step0 = m[0] > 1 ? d[0] * g->E1 : 0; /* < E0 x E1 */              \
        for (int64_t o0 = 0; o0 < out[0]; o0++) {                                        \
            const int64_t *ro0 = g->rowoff + o0 * s[0] * g->E1;                          \
            float *y0 = y + o0 * out[1] * out[2] + c0;                                   \
            if (out[1] < DW3_RB) {                                                       \
                for (int64_t o1 = 0; o1 < out[1]; o1++)                                  \
                    dw3d_block(g, x, ro0 + o1 * S1, step0, m[0], w, c0, 1, S1, S2, NV,   \
                               mk2, mk, bias, y0 + o1 * out[2], out[2]);                 \
                continue;                                                                \
            }                                                                            \
            for (int64_t o1 = 0;; o1 += DW3_RB) {                                        \
                if (o1 > out[1] - DW3_RB) o1 = out[1] - DW3_RB;                          \
                dw3d_block(g, x, ro0 + o1 * S1, step0, m[0], w, c0, DW3_RB, S1, S2, NV,  \
                           mk2, mk, bias, y0 + o1 * out[2], out[2]);                     \
                if (o1 + DW3_RB >= out[1]) break;                                        \
            }                                                                            \
        }                                                                                \
    }
#define DW3D_NV(S1, S2) \
    DW3D_COLS(S1, S2, 1) DW3D_COLS(S1, S2, 2) DW3D_COLS(S1, S2, 3) DW3D_COLS(S1, S2, 4)
DW3D_NV(1, 1)
DW3D_NV(1, 2)
DW3D_NV(2, 1)
DW3D_NV(2, 2)

typedef void (*dw3d_fn)(const dw3d_geom *, const float *, const int64_t *, const int64_t *,
                        const int64_t *, const int64_t *, const float *, float, float *,
                        int64_t, const uint16_t *, const __mmask16 *);
#define DW3D_ROW4(S1, S2)                                                                \
    {dw3d_cols_##S1##_##S2##_1, dw3d_cols_##S1##_##S2##_2, dw3d_cols_##S1##_##S2##_3,   \
     dw3d_cols_##S1##_##S2##_4}
static const dw3d_fn dw3d_table[2][2][4] = {{DW3D_ROW4(1, 1), DW3D_ROW4(1, 2)},
                                           {DW3D_ROW4(2, 1), DW3D_ROW4(2, 2)}};

/* bits [0, n) of 32, n clamped to [0, 32] */
static inline uint32_t dw3d_low(int64_t n) {
    return n <= 0 ? 0u : n >= 32 ? 0xffffffffu : (1u << n) - 1u;
}

/* Fills the direct path's tables in tab (conv_depthwise.c's dw_direct_tab
 * bytes: E0 x E1 row offsets, a row of cval (in the problem's dtype, in
 * in2 + 64 floats' room), 24 masks per 64 output columns), once per call,
 * before the planes run. */
void tc__dw3d_setup_avx512(const tc__problem *p, void *tab) {
    const int64_t E0 = (p->out[0] - 1) * p->stride[0] + (p->msk[0] - 1) * p->dil[0] + 1;
    const int64_t E1 = (p->out[1] - 1) * p->stride[1] + 3;
    const int64_t W = p->in[2], S2 = p->stride[2], nch = (p->out[2] + 63) / 64;
    const int64_t lo2 = p->pad_lo[2];
    int64_t *rowoff = tab;
    float *cv = (float *)(rowoff + E0 * E1);
    uint16_t *masks = (uint16_t *)(cv + W + 64);
    for (int64_t i0 = 0; i0 < E0; i0++) {
        int64_t b0 = tc__boundary_index(i0 - p->pad_lo[0], p->in[0], p->mode);
        for (int64_t i1 = 0; i1 < E1; i1++) {
            int64_t b1 = tc__boundary_index(i1 - p->pad_lo[1], p->in[1], p->mode);
            rowoff[i0 * E1 + i1] = b0 < 0 || b1 < 0 ? -1 : (b0 * p->in[1] + b1) * W;
        }
    }
    if (p->esize == 2) { /* float16 / bfloat16: the row of cval in the dtype */
        uint16_t h = p->dtype == TC_BFLOAT16 ? tc__f32_to_bf16((float)p->cval)
                                             : tc__f32_to_f16((float)p->cval);
        for (int64_t i = 0; i < W + 64; i++) ((uint16_t *)cv)[i] = h;
    } else {
        for (int64_t i = 0; i < W + 64; i++) cv[i] = (float)p->cval;
    }
    /* load masks: lane (S2 = 1) or element (S2 = 2, two halves) e of the
     * load for tap t of vector v reads column c = (c0 + 16 v) S2 + t - lo2
     * + e; kept when it is a needed element and 0 <= c < W (else the fill) */
    for (int64_t ch = 0; ch < nch; ch++) {
        int64_t c0 = ch * 64, n = p->out[2] - c0 < 64 ? p->out[2] - c0 : 64;
        for (int v = 0; v < 4; v++) {
            int64_t cnt = n - 16 * v;
            cnt = cnt >= 16 ? 16 : cnt > 0 ? cnt : 0;
            for (int t = 0; t < 3; t++) {
                int64_t cs = (c0 + 16 * v) * S2 + t - lo2;
                uint32_t need = S2 == 1 ? dw3d_low(cnt) : 0x55555555u & dw3d_low(2 * cnt - 1);
                uint32_t mm = need & ~dw3d_low(-cs) & dw3d_low(W - cs);
                masks[ch * 24 + (v * 3 + t) * 2] = (uint16_t)(mm & 0xffff);
                masks[ch * 24 + (v * 3 + t) * 2 + 1] = (uint16_t)(mm >> 16);
            }
        }
    }
}

/* The direct path's geometry from the tables tc__dw3d_setup_avx512 filled
 * (row offsets, the row of cval, the edge masks). */
static dw3d_geom dw3d_geom_of(const tc__problem *p, const void *tab) {
    const int64_t E0 = (p->out[0] - 1) * p->stride[0] + (p->msk[0] - 1) * p->dil[0] + 1;
    const int64_t E1 = (p->out[1] - 1) * p->stride[1] + 3;
    const int64_t W = p->in[2];
    const int64_t *rowoff = tab;
    const float *cv = (const float *)(rowoff + E0 * E1);
    const dw3d_geom g = {rowoff, cv, E1, p->pad_lo[2], tc__boundary_index(-1, W, p->mode),
                         tc__boundary_index(W, W, p->mode), (const uint16_t *)(cv + W + 64)};
    return g;
}

/* The store masks of a chunk of nn (<= 64) output columns, 16 a vector. */
static void dw3d_chunk_masks(int64_t nn, __mmask16 mk[4]) {
    for (int v = 0; v < 4; v++) {
        int64_t cnt = nn - 16 * v;
        mk[v] = (__mmask16)dw3d_low(cnt >= 16 ? 16 : cnt);
    }
}

/* Planes [begin, end) (t = n K + k) of a float32 problem that passed
 * conv_depthwise.c's dw_direct_ok, with the tables tc__dw3d_setup_avx512
 * filled. */
void tc__dw3d_planes_f32_avx512(const tc__problem *p, const float *x, const float *wt,
                                const float *bias, float *y, int64_t begin, int64_t end,
                                const void *tab) {
    const int64_t W = p->in[2], S2 = p->stride[2], nch = (p->out[2] + 63) / 64;
    const dw3d_geom g = dw3d_geom_of(p, tab);
    const uint16_t *masks = g.masks;
    const int64_t mult = p->K / p->C, inplane = p->in[0] * p->in[1] * W;
    const int64_t outplane = p->out[0] * p->out[1] * p->out[2];
    const int64_t taps = p->msk[0] * 9;
    for (int64_t t = begin; t < end; t++) {
        int64_t n = t / p->K, k = t % p->K, c = k / mult;
        const float *xc = x + (n * p->C + c) * inplane;
        const float *w = wt + k * taps;
        float b = p->has_bias ? bias[k] : 0.0f;
        float *yp = y + t * outplane;
        for (int64_t ch = 0; ch < nch; ch++) {
            int64_t c0 = ch * 64, nn = p->out[2] - c0 < 64 ? p->out[2] - c0 : 64;
            int nv = (int)((nn + 15) / 16);
            __mmask16 mk[4];
            dw3d_chunk_masks(nn, mk);
            dw3d_table[p->stride[1] - 1][S2 - 1][nv - 1](&g, xc, p->msk, p->stride, p->dil,
                                                        p->out, w, b, yp, c0,
                                                        masks + ch * 24, mk);
        }
    }
}

/* ---- The direct path in float16 / bfloat16: the same blocking, tables and
 * edge handling, half values loaded (masked, the padding column's value in
 * the masked-off words), widened to float32, float32 FMAs, each output
 * rounded once on store as src/core/half.h rounds (round to nearest even,
 * NaN kept quiet; float16 by vcvtps2ph). Three load forms per 64-column
 * chunk (FORM):
 *   0: stride 1, 16 columns a vector: 16 words loaded, widened (bfloat16
 *      vpmovzxwd + shift, float16 vcvtph2ps);
 *   1: stride 2: 32 words loaded, the even ones kept (bfloat16: one shift
 *      puts them in place; float16: vpmovdw + vcvtph2ps);
 *   2: bfloat16, stride 1, more than 16 columns: 32 words loaded once give
 *      two vectors, the even columns (shift) and the odd ones (and), one
 *      instruction each; the accumulators hold even / odd output columns
 *      and the store interleaves them back (one word permute or blend).
 * bfloat16 with AVX512-BF16 rounds by vcvtne(2)ps2bf16 (a vector holding a
 * subnormal by the integer form), and with zeros padding loads zero-masked
 * (no per-row padding values). Blocks of 7 output rows where a row has at
 * most two accumulators (DW3H_RB), else 4.
 * Per output the taps are summed in the float32 kernel's order, so a
 * result equals the float32 path's on the widened inputs, rounded once. */

/* The 16-bit code below may use AVX512-BF16's conversions; its kernels
 * with BF == 2 run only where tc__cpu_detect() reports AVX512-BF16. */
#if defined(__clang__) /* clang reads no GCC target pragma */
#pragma clang attribute push(__attribute__((target("avx512bf16"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512bf16")
#endif

static inline __attribute__((always_inline)) __m512 dwh_wide16(__m256i h, const int BF) {
    if (BF) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    return _mm512_cvtph_ps(h);
}
static inline __attribute__((always_inline)) __m512 dwh_even(__m512i z, const int BF) {
    if (BF) return _mm512_castsi512_ps(_mm512_slli_epi32(z, 16));
    return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(z));
}
static inline __attribute__((always_inline)) __m512 dwh_odd_bf(__m512i z) {
    return _mm512_castsi512_ps(_mm512_and_si512(z, _mm512_set1_epi32((int)0xffff0000u)));
}
/* bfloat16 of each lane (tc__f32_to_bf16) in the lane's high half */
static inline __attribute__((always_inline)) __m512i dwh_bf16_hi(__m512 a) {
    const __m512i u = _mm512_castps_si512(a);
    const __m512i r = _mm512_add_epi32(
        u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff),
                            _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1))));
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(
        _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
    return _mm512_mask_or_epi32(r, nan, u, _mm512_set1_epi32(0x00400000));
}
/* vcvtneps2bf16 rounds as tc__f32_to_bf16 (nearest even, NaN made quiet
 * the same way) except that it flushes subnormal inputs to zero: lanes
 * holding one go the integer way. BF: 0 float16, 1 bfloat16 by integer
 * rounding, 2 bfloat16 by vcvtneps2bf16 / vcvtne2ps2bf16. */
#define DWH_DENORMAL 0x20 /* vfpclassps: denormal */
/* 16 float32 lanes rounded to 16 half values */
static inline __attribute__((always_inline)) __m256i dwh_round16(__m512 a, const int BF) {
    if (BF == 2 && !_mm512_fpclass_ps_mask(a, DWH_DENORMAL))
        return (__m256i)_mm512_cvtneps_pbh(a);
    if (BF) return _mm512_cvtepi32_epi16(_mm512_srli_epi32(dwh_bf16_hi(a), 16));
    return _mm512_cvtps_ph(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
/* even / odd output columns rounded to bfloat16 and interleaved: 32 words */
static inline __attribute__((always_inline)) __m512i dwh_pair(__m512 e, __m512 o, const int BF) {
    if (BF == 2 && !(_mm512_fpclass_ps_mask(e, DWH_DENORMAL) |
                     _mm512_fpclass_ps_mask(o, DWH_DENORMAL))) {
        /* words e0..e15, o0..o15 -> e0 o0 e1 o1 ... */
        const __m512i idx = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25,
                                             9, 24, 8, 23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2,
                                             17, 1, 16, 0);
        return _mm512_permutexvar_epi16(idx, (__m512i)_mm512_cvtne2ps_pbh(o, e));
    }
    return _mm512_mask_blend_epi16(0xaaaaaaaau, _mm512_srli_epi32(dwh_bf16_hi(e), 16),
                                   dwh_bf16_hi(o));
}

/* rows per block: 7 with up to two accumulators a row, else 4 */
#define DW3H_RBMAX 7
#define DW3H_RB(NV) ((NV) <= 2 ? 7 : 4)

typedef struct dw3h_src {
    const uint16_t *x, *cv;
    const int64_t *ro;
    int64_t mapL, mapR, col;
} dw3h_src;

/* Output rows [o1, o1 + RB) of the chunk's columns (as dw3_rows): NV
 * accumulators a row (FORM 2: NV / 2 pairs of even / odd columns). ZF:
 * the padding value is +0 (zeros padding): zero-masked loads, no per-row
 * fill values. */
static inline __attribute__((always_inline)) void
dw3h_block(const dw3h_src *s, int64_t step0, int64_t m0, const float *restrict w, const int RB,
           const int S1, const int FORM, const int BF, const int ZF, const int NV, const uint16_t *mk2,
           const __mmask16 *mk, float bias, uint16_t *restrict y, int64_t ystep) {
    __mmask32 lm[4][3]; /* the load masks: FORM 0 16 bits, else 32 */
    for (int v = 0; v < NV; v++)
        for (int t = 0; t < 3; t++) {
            if (FORM == 2) {
                if (v % 2) continue;
                lm[v / 2][t] = (__mmask32)mk2[(v * 3 + t) * 2] |
                               (__mmask32)mk2[((v + 1) * 3 + t) * 2] << 16;
            } else {
                lm[v][t] = (__mmask32)mk2[(v * 3 + t) * 2] |
                           (FORM == 1 ? (__mmask32)mk2[(v * 3 + t) * 2 + 1] << 16 : 0);
            }
        }
    __m512 acc[DW3H_RBMAX][4];
    for (int i = 0; i < RB; i++)
        for (int v = 0; v < NV; v++) acc[i][v] = _mm512_set1_ps(bias);
    int64_t at = 0;
    for (int64_t r0 = 0; r0 < m0; r0++, at += step0, w += 9) {
        __m512 wv[9];
        for (int t = 0; t < 9; t++) wv[t] = _mm512_set1_ps(w[t]);
#pragma GCC unroll 16
        for (int k = 0; k < (RB - 1) * S1 + 3; k++) {
            const int64_t off = s->ro[at + k];
            const uint16_t *rp = off < 0 ? s->cv : s->x + off;
            __m512i fl = _mm512_setzero_si512(), fr = fl;
            if (!ZF) {
                fl = _mm512_set1_epi16((short)(s->mapL < 0 ? s->cv[0] : rp[s->mapL]));
                fr = _mm512_set1_epi16((short)(s->mapR < 0 ? s->cv[0] : rp[s->mapR]));
            }
            const uint16_t *pp = rp + s->col;
#pragma GCC unroll 3
            for (int t = 0; t < 3; t++) {
                const __m512i fill = t == 2 ? fr : fl;
                __m512 xv[4];
#pragma GCC unroll 4
                for (int v = 0; v < NV; v++) {
                    if (FORM == 0) {
                        const __m256i h =
                            ZF ? _mm256_maskz_loadu_epi16(lm[v][t], pp + t + 16 * v)
                               : _mm256_mask_loadu_epi16(_mm512_castsi512_si256(fill), lm[v][t],
                                                         pp + t + 16 * v);
                        xv[v] = dwh_wide16(h, BF);
                    } else if (FORM == 1) {
                        const __m512i z =
                            ZF ? _mm512_maskz_loadu_epi16(lm[v][t], pp + t + 32 * v)
                               : _mm512_mask_loadu_epi16(fill, lm[v][t], pp + t + 32 * v);
                        xv[v] = dwh_even(z, BF);
                    } else if (v % 2 == 0) {
                        const __m512i z =
                            ZF ? _mm512_maskz_loadu_epi16(lm[v / 2][t], pp + t + 16 * v)
                               : _mm512_mask_loadu_epi16(fill, lm[v / 2][t], pp + t + 16 * v);
                        xv[v] = dwh_even(z, 1);
                        xv[v + 1] = dwh_odd_bf(z);
                    }
                }
#pragma GCC unroll 4
                for (int v = 0; v < NV; v++)
#pragma GCC unroll 3
                    for (int r1 = 0; r1 < 3; r1++) {
                        const int i = k - r1;
                        if (i >= 0 && i % S1 == 0 && i / S1 < RB)
                            acc[i / S1][v] = _mm512_fmadd_ps(wv[r1 * 3 + t], xv[v], acc[i / S1][v]);
                    }
            }
        }
    }
    for (int i = 0; i < RB; i++) {
        uint16_t *yr = y + i * ystep;
        if (FORM == 2) {
            for (int v = 0; v < NV; v += 2)
                _mm512_mask_storeu_epi16(yr + 16 * v, (__mmask32)mk[v] | (__mmask32)mk[v + 1] << 16,
                                         dwh_pair(acc[i][v], acc[i][v + 1], BF));
        } else {
            for (int v = 0; v < NV; v++)
                _mm256_mask_storeu_epi16(yr + 16 * v, mk[v], dwh_round16(acc[i][v], BF));
        }
    }
}

/* The output rows of one plane's column chunk in blocks of RB rows, the
 * last block moved back to end at the last row (as DW3D_COLS) */
#define DW3H_ROWS(RB, BF, ZF, S1, FORM, NV)                                              \
    for (int64_t o1 = 0;; o1 += (RB)) {                                                  \
        if (o1 > out[1] - (RB)) o1 = out[1] - (RB);                                      \
        const dw3h_src sr = {x, (const uint16_t *)g->cv, ro0 + o1 * S1, g->mapL,         \
                             g->mapR, col};                                              \
        dw3h_block(&sr, step0, m[0], w, (RB), S1, FORM, BF, ZF, NV, mk2, mk, bias,       \
                   y0 + o1 * out[2], out[2]);                                            \
        if (o1 + (RB) >= out[1]) break;                                                  \
    }
/* blocks of DW3H_RB(NV) rows, of 4 for planes with fewer rows, single rows
 * for planes of fewer than 4 */
#define DW3H_COLS(BF, ZF, S1, FORM, NV)                                                  \
    static void dw3h_cols_##BF##_##ZF##_##S1##_##FORM##_##NV(                            \
        const dw3d_geom *g, const uint16_t *restrict x, const int64_t m[3],              \
        const int64_t s[3], const int64_t d[3], const int64_t out[3],                    \
        const float *restrict w, float bias, uint16_t *restrict y, int64_t c0,           \
        const uint16_t *mk2, const __mmask16 *mk) {                                      \
        const int64_t step0 = m[0] > 1 ? d[0] * g->E1 : 0;                               \
        const int64_t col = c0 * (FORM == 1 ? 2 : 1) - g->lo2;                           \
        for (int64_t o0 = 0; o0 < out[0]; o0++) {                                        \
            const int64_t *ro0 = g->rowoff + o0 * s[0] * g->E1;                          \
            uint16_t *y0 = y + o0 * out[1] * out[2] + c0;                                \
            if (out[1] >= DW3H_RB(NV)) {                                                 \
                DW3H_ROWS(DW3H_RB(NV), BF, ZF, S1, FORM, NV)                             \
            } else if (DW3H_RB(NV) > DW3_RB && out[1] >= DW3_RB) {                       \
                DW3H_ROWS(DW3_RB, BF, ZF, S1, FORM, NV)                                  \
            } else {                                                                     \
                DW3H_ROWS(1, BF, ZF, S1, FORM, NV)                                       \
            }                                                                            \
        }                                                                                \
    }
/* float16: 16 columns a vector at stride 1 (form 0) and 2 (form 1);
 * bfloat16: form 0 only up to 16 columns, form 1, form 2 (2 or 4
 * accumulators a row) */
#define DW3H_F16(S1)                                                                     \
    DW3H_COLS(0, 0, S1, 0, 1) DW3H_COLS(0, 0, S1, 0, 2) DW3H_COLS(0, 0, S1, 0, 3)       \
    DW3H_COLS(0, 0, S1, 0, 4) DW3H_COLS(0, 0, S1, 1, 1) DW3H_COLS(0, 0, S1, 1, 2)       \
    DW3H_COLS(0, 0, S1, 1, 3) DW3H_COLS(0, 0, S1, 1, 4)
#define DW3H_BF16(BF, ZF, S1)                                                            \
    DW3H_COLS(BF, ZF, S1, 0, 1) DW3H_COLS(BF, ZF, S1, 1, 1) DW3H_COLS(BF, ZF, S1, 1, 2) \
    DW3H_COLS(BF, ZF, S1, 1, 3) DW3H_COLS(BF, ZF, S1, 1, 4) DW3H_COLS(BF, ZF, S1, 2, 2) \
    DW3H_COLS(BF, ZF, S1, 2, 4)
DW3H_F16(1)
DW3H_F16(2)
DW3H_BF16(1, 0, 1)
DW3H_BF16(1, 0, 2)
DW3H_BF16(2, 0, 1)
DW3H_BF16(2, 0, 2)
DW3H_BF16(2, 1, 1)
DW3H_BF16(2, 1, 2)

typedef void (*dw3h_fn)(const dw3d_geom *, const uint16_t *, const int64_t *, const int64_t *,
                        const int64_t *, const int64_t *, const float *, float, uint16_t *,
                        int64_t, const uint16_t *, const __mmask16 *);
#define DW3H_N(BF, ZF, S1, FORM, NV) dw3h_cols_##BF##_##ZF##_##S1##_##FORM##_##NV
#define DW3H_TF16(S1)                                                                    \
    {{DW3H_N(0, 0, S1, 0, 1), DW3H_N(0, 0, S1, 0, 2), DW3H_N(0, 0, S1, 0, 3),            \
      DW3H_N(0, 0, S1, 0, 4)},                                                           \
     {DW3H_N(0, 0, S1, 1, 1), DW3H_N(0, 0, S1, 1, 2), DW3H_N(0, 0, S1, 1, 3),            \
      DW3H_N(0, 0, S1, 1, 4)}}
#define DW3H_TBF16(BF, ZF, S1)                                                           \
    {{DW3H_N(BF, ZF, S1, 0, 1)},                                                         \
     {DW3H_N(BF, ZF, S1, 1, 1), DW3H_N(BF, ZF, S1, 1, 2), DW3H_N(BF, ZF, S1, 1, 3),      \
      DW3H_N(BF, ZF, S1, 1, 4)},                                                         \
     {NULL, DW3H_N(BF, ZF, S1, 2, 2), NULL, DW3H_N(BF, ZF, S1, 2, 4)}}
/* [kind: float16, bfloat16 by integer rounding, by AVX512-BF16, the same
 * with zeros padding][stride 1 - 1][form][accumulators a row - 1] */
static const dw3h_fn dw3h_table[4][2][3][4] = {
    {DW3H_TF16(1), DW3H_TF16(2)},
    {DW3H_TBF16(1, 0, 1), DW3H_TBF16(1, 0, 2)},
    {DW3H_TBF16(2, 0, 1), DW3H_TBF16(2, 0, 2)},
    {DW3H_TBF16(2, 1, 1), DW3H_TBF16(2, 1, 2)}};

/* Planes [begin, end) of a float16 / bfloat16 problem that passed
 * dw_direct_ok, tables filled by tc__dw3d_setup_avx512; weights and bias
 * already float32 (K x taps, K). */
void tc__dw3d_planes_half_avx512(const tc__problem *p, const uint16_t *x, const float *wt,
                                 const float *bias, uint16_t *y, int64_t begin, int64_t end,
                                 const void *tab) {
    const int64_t W = p->in[2], S2 = p->stride[2], nch = (p->out[2] + 63) / 64;
    const dw3d_geom g = dw3d_geom_of(p, tab);
    const uint16_t *masks = g.masks;
    const float *cv = g.cv;
    /* 0 float16, 1 bfloat16, 2 bfloat16 rounded by AVX512-BF16 */
    int bf = p->dtype != TC_BFLOAT16 ? 0 : tc__cpu_detect() & TC__CPU_AVX512BF16 ? 2 : 1;
    const char *knob = tc__knob_get(TC__KNOB_DW_BF16_ROUND);
    if (bf == 2 && knob && knob[0] == '1') bf = 1;
    /* zeros padding: cval +0 (the row of cval's first word) */
    const int kind = bf == 2 && p->mode == TC_MODE_CONSTANT && ((const uint16_t *)cv)[0] == 0
                         ? 3
                         : bf;
    const int64_t mult = p->K / p->C, inplane = p->in[0] * p->in[1] * W;
    const int64_t outplane = p->out[0] * p->out[1] * p->out[2];
    const int64_t taps = p->msk[0] * 9;
    for (int64_t t = begin; t < end; t++) {
        int64_t n = t / p->K, k = t % p->K, c = k / mult;
        const uint16_t *xc = x + (n * p->C + c) * inplane;
        const float *w = wt + k * taps;
        float b = p->has_bias ? bias[k] : 0.0f;
        uint16_t *yp = y + t * outplane;
        for (int64_t ch = 0; ch < nch; ch++) {
            int64_t c0 = ch * 64, nn = p->out[2] - c0 < 64 ? p->out[2] - c0 : 64;
            int nv = (int)((nn + 15) / 16);
            __mmask16 mk[4];
            dw3d_chunk_masks(nn, mk);
            const int form = S2 == 2 ? 1 : bf && nn > 16 ? 2 : 0;
            const int na = form == 2 ? 2 * (int)((nn + 31) / 32) : nv;
            dw3h_fn f = dw3h_table[kind][p->stride[1] - 1][form][na - 1];
            f(&g, xc, p->msk, p->stride, p->dil, p->out, w, b, yp, c0, masks + ch * 24, mk);
        }
    }
}

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
