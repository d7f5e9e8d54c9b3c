/* separable_avx512.c - the separable solvers' inner loops for AVX-512F
 * (CMake compiles *_avx512.c with -mavx512f...; separable.c calls them
 * only when cpuid has them). See separable.h for what row and comb do.
 *
 * Blocks of 4 vectors of outputs stay in registers while the taps run
 * (one unaligned load + one FMA per tap and vector); the remainder uses
 * masked vectors with the same FMA sequence, so every output is rounded
 * the same way wherever a row is split. */
#include "cpu/separable.h"

#include <immintrin.h>

#define SEP512(T, TS, V, W, MASK, SET1, ZERO, LOADU, MLOADU, STOREU, MSTOREU,  \
               FMA, STREAM, ALIGN)                                              \
    static void sep_row_##TS(void *out_, const void *h_, const void *c_,        \
                             int64_t m, int64_t len) {                          \
        T *out = out_;                                                          \
        const T *h = h_, *c = c_;                                               \
        int64_t o = 0;                                                          \
        for (; o + 8 * W <= len; o += 8 * W) {                                  \
            V a0 = ZERO(), a1 = ZERO(), a2 = ZERO(), a3 = ZERO();               \
            V a4 = ZERO(), a5 = ZERO(), a6 = ZERO(), a7 = ZERO();               \
            const T *hp = h + o;                                                \
            for (int64_t r = 0; r < m; r++) {                                   \
                V cr = SET1(c[r]);                                              \
                const T *q = hp + r;                                            \
                a0 = FMA(cr, LOADU(q), a0);                                     \
                a1 = FMA(cr, LOADU(q + W), a1);                                 \
                a2 = FMA(cr, LOADU(q + 2 * W), a2);                             \
                a3 = FMA(cr, LOADU(q + 3 * W), a3);                             \
                a4 = FMA(cr, LOADU(q + 4 * W), a4);                             \
                a5 = FMA(cr, LOADU(q + 5 * W), a5);                             \
                a6 = FMA(cr, LOADU(q + 6 * W), a6);                             \
                a7 = FMA(cr, LOADU(q + 7 * W), a7);                             \
            }                                                                   \
            STOREU(out + o, a0);                                                \
            STOREU(out + o + W, a1);                                            \
            STOREU(out + o + 2 * W, a2);                                        \
            STOREU(out + o + 3 * W, a3);                                        \
            STOREU(out + o + 4 * W, a4);                                        \
            STOREU(out + o + 5 * W, a5);                                        \
            STOREU(out + o + 6 * W, a6);                                        \
            STOREU(out + o + 7 * W, a7);                                        \
        }                                                                       \
        for (; o < len; o += W) {                                               \
            MASK k = len - o >= W ? (MASK)~0u : (MASK)((1u << (len - o)) - 1);  \
            V a = ZERO();                                                       \
            for (int64_t r = 0; r < m; r++)                                     \
                a = FMA(SET1(c[r]), MLOADU(k, h + o + r), a);                   \
            MSTOREU(out + o, k, a);                                             \
        }                                                                       \
    }                                                                           \
                                                                                \
    static void sep_comb_##TS(void *out_, const void *const *src,               \
                              const void *c_, int64_t nt, double bias,          \
                              int64_t len, int stream) {                        \
        T *out = out_;                                                          \
        const T *c = c_;                                                        \
        const V b = SET1((T)bias);                                              \
        int64_t o = 0;                                                          \
        stream = stream && ((uintptr_t)out & ALIGN) == 0;                       \
        for (; o + 8 * W <= len; o += 8 * W) {                                  \
            V a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b;   \
            for (int64_t t = 0; t < nt; t++) {                                  \
                V ct = SET1(c[t]);                                              \
                const T *s = (const T *)src[t] + o;                             \
                a0 = FMA(ct, LOADU(s), a0);                                     \
                a1 = FMA(ct, LOADU(s + W), a1);                                 \
                a2 = FMA(ct, LOADU(s + 2 * W), a2);                             \
                a3 = FMA(ct, LOADU(s + 3 * W), a3);                             \
                a4 = FMA(ct, LOADU(s + 4 * W), a4);                             \
                a5 = FMA(ct, LOADU(s + 5 * W), a5);                             \
                a6 = FMA(ct, LOADU(s + 6 * W), a6);                             \
                a7 = FMA(ct, LOADU(s + 7 * W), a7);                             \
            }                                                                   \
            if (stream) {                                                       \
                STREAM(out + o, a0);                                            \
                STREAM(out + o + W, a1);                                        \
                STREAM(out + o + 2 * W, a2);                                    \
                STREAM(out + o + 3 * W, a3);                                    \
                STREAM(out + o + 4 * W, a4);                                    \
                STREAM(out + o + 5 * W, a5);                                    \
                STREAM(out + o + 6 * W, a6);                                    \
                STREAM(out + o + 7 * W, a7);                                    \
                continue;                                                       \
            }                                                                   \
            STOREU(out + o, a0);                                                \
            STOREU(out + o + W, a1);                                            \
            STOREU(out + o + 2 * W, a2);                                        \
            STOREU(out + o + 3 * W, a3);                                        \
            STOREU(out + o + 4 * W, a4);                                        \
            STOREU(out + o + 5 * W, a5);                                        \
            STOREU(out + o + 6 * W, a6);                                        \
            STOREU(out + o + 7 * W, a7);                                        \
        }                                                                       \
        for (; o < len; o += W) {                                               \
            MASK k = len - o >= W ? (MASK)~0u : (MASK)((1u << (len - o)) - 1);  \
            V a = b;                                                            \
            for (int64_t t = 0; t < nt; t++)                                    \
                a = FMA(SET1(c[t]), MLOADU(k, (const T *)src[t] + o), a);       \
            MSTOREU(out + o, k, a);                                             \
        }                                                                       \
    }

SEP512(float, f32, __m512, 16, __mmask16, _mm512_set1_ps, _mm512_setzero_ps,
       _mm512_loadu_ps, _mm512_maskz_loadu_ps, _mm512_storeu_ps,
       _mm512_mask_storeu_ps, _mm512_fmadd_ps, _mm512_stream_ps, 63)
SEP512(double, f64, __m512d, 8, __mmask8, _mm512_set1_pd, _mm512_setzero_pd,
       _mm512_loadu_pd, _mm512_maskz_loadu_pd, _mm512_storeu_pd,
       _mm512_mask_storeu_pd, _mm512_fmadd_pd, _mm512_stream_pd, 63)

/* Row pass with the tap vectors built in registers (as the direct filter's
 * plain-row kernel does, filter_direct_kernel.h): per block of 8 vectors
 * and chunk of W taps, the 9 vectors at h + o + c0 + u*W are loaded once
 * (the last one masked to the ns - 1 elements the chunk reads of it), and
 * the vector of tap c0 + s is a two-source permutation of B[u], B[u + 1]
 * (port 5) instead of a load that splits a cache line. In L1 (m = 15, one
 * core) 80 -> 95 GFLOP/s; loading 4 of the 8 vectors unaligned instead
 * gave 88, 2 of 8 the same 95. Same FMAs in the same order (r ascending)
 * as sep_row_*, so results are unchanged. */
#define SEP_PIN(v) __asm__("" : "+v"(v))
#define SEP512P(T, TS, V, W, MASK, SET1, ZERO, LOADU, MLOADU, STOREU, FMA, IDX,   \
                PERM2)                                                          \
    static void sep_rowp_##TS(void *out_, const void *h_, const void *c_,       \
                              int64_t m, int64_t len) {                         \
        T *out = out_;                                                          \
        const T *h = h_, *c = c_;                                               \
        int64_t o = 0;                                                          \
        for (; o + 8 * W <= len; o += 8 * W) {                                  \
            V a[8];                                                             \
            _Pragma("GCC unroll 8") for (int u = 0; u < 8; u++) a[u] = ZERO();  \
            for (int64_t c0 = 0; c0 < m; c0 += W) {                             \
                const T *q = h + o + c0;                                        \
                const int64_t ns = m - c0 < W ? m - c0 : W;                     \
                V B[9];                                                         \
                _Pragma("GCC unroll 8") for (int u = 0; u < 8; u++) {           \
                    B[u] = LOADU(q + u * W);                                    \
                    SEP_PIN(B[u]);                                              \
                }                                                               \
                B[8] = MLOADU((MASK)((1u << (ns - 1)) - 1u), q + 8 * W);        \
                SEP_PIN(B[8]);                                                  \
                for (int64_t s = 0; s < ns; s++) {                              \
                    const V cr = SET1(c[c0 + s]);                               \
                    const __m512i ix = IDX(s);                                  \
                    _Pragma("GCC unroll 8") for (int u = 0; u < 8; u++) {       \
                        V x = PERM2(B[u], ix, B[u + 1]);                        \
                        SEP_PIN(x);                                             \
                        a[u] = FMA(cr, x, a[u]);                                \
                    }                                                           \
                }                                                               \
            }                                                                   \
            _Pragma("GCC unroll 8") for (int u = 0; u < 8; u++)                 \
                STOREU(out + o + u * W, a[u]);                                  \
        }                                                                       \
        if (o < len) sep_row_##TS(out + o, h + o, c, m, len - o);               \
    }

#include "cpu/shift_idx.h"
#define SEP_IDX32(s) _mm512_load_si512(tc__shift_idx32[s])
#define SEP_IDX64(s) _mm512_load_si512(tc__shift_idx64[s])

SEP512P(float, f32, __m512, 16, __mmask16, _mm512_set1_ps, _mm512_setzero_ps,
        _mm512_loadu_ps, _mm512_maskz_loadu_ps, _mm512_storeu_ps, _mm512_fmadd_ps,
        SEP_IDX32, _mm512_permutex2var_ps)
SEP512P(double, f64, __m512d, 8, __mmask8, _mm512_set1_pd, _mm512_setzero_pd,
        _mm512_loadu_pd, _mm512_maskz_loadu_pd, _mm512_storeu_pd, _mm512_fmadd_pd,
        SEP_IDX64, _mm512_permutex2var_pd)

const tc__sep_kernels tc__sep_kernels_avx512 = {
    .isa = "avx512",
    .row = {sep_rowp_f32, sep_rowp_f64},
    .comb = {sep_comb_f32, sep_comb_f64},
};
