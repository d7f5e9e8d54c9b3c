/*
 * gemm_ukernel_avx512.c - AVX-512 GEMM micro-kernels (contract in
 * gemm_packed.h). Compiled with -mavx512f...; called only after cpuid.
 *
 * Shape: MR = 14 rows x 2 zmm columns (f32 14x32, f64 14x16). Each k step
 * loads two B vectors and broadcasts 14 A values straight into the FMAs
 * ({1to16} memory operands): 28 independent accumulators keep both FMA
 * ports busy through the 4-cycle FMA latency (>= 8 needed) and the loads
 * (16 per 28 FMA) stay below the two load ports' rate. 28 accumulators + 2
 * B vectors + 1 spare = 31 of 32 zmm registers.
 */
#include "gemm_packed.h"

#include <immintrin.h>

/* Edge masks for nr < NR: lanes [v*W, v*W + W) of a row. */
static inline __mmask16 tc__lane_mask16(int nr, int v) {
    int left = nr - v * 16;
    return left >= 16 ? (__mmask16)0xFFFF : left <= 0 ? 0 : (__mmask16)((1u << left) - 1);
}
static inline __mmask8 tc__lane_mask8(int nr, int v) {
    int left = nr - v * 8;
    return left >= 8 ? (__mmask8)0xFF : left <= 0 ? 0 : (__mmask8)((1u << left) - 1);
}

/* One template for both types. VT vector type, W lanes, S suffix (ps/pd),
 * MT mask type, MASKF mask function. */
#define TC__UKERNEL_AVX512(NAME, T, VT, W, S, MT, MASKF, MR)                   \
    void NAME(int64_t kc, const T *restrict a, const T *restrict b,           \
              T *restrict c, int64_t ldc, T alpha, T beta, int mr, int nr) {  \
        VT acc[MR][2];                                                         \
        _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) {               \
            acc[i][0] = _mm512_setzero_##S();                                  \
            acc[i][1] = _mm512_setzero_##S();                                  \
        }                                                                      \
        _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) {               \
            if (i < mr) {                                                      \
                _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);        \
                _mm_prefetch((const char *)(c + i * ldc + W), _MM_HINT_T0);    \
            }                                                                  \
        }                                                                      \
        _Pragma("GCC unroll 4") for (int64_t l = 0; l < kc; l++) {            \
            const VT b0 = _mm512_load_##S(b);                                  \
            const VT b1 = _mm512_load_##S(b + W);                              \
            _mm_prefetch((const char *)(b + 16 * 2 * W), _MM_HINT_T0);         \
            _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) {           \
                const VT ai = _mm512_set1_##S(a[i]);                           \
                acc[i][0] = _mm512_fmadd_##S(ai, b0, acc[i][0]);               \
                acc[i][1] = _mm512_fmadd_##S(ai, b1, acc[i][1]);               \
            }                                                                  \
            a += MR;                                                           \
            b += 2 * W;                                                        \
        }                                                                      \
        const VT va = _mm512_set1_##S(alpha);                                  \
        const MT m0 = MASKF(nr, 0), m1 = MASKF(nr, 1);                         \
        if (beta == (T)0) {                                                    \
            _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) {           \
                if (i < mr) {                                                  \
                    T *ci = c + i * ldc;                                       \
                    _mm512_mask_storeu_##S(ci, m0, _mm512_mul_##S(va, acc[i][0])); \
                    _mm512_mask_storeu_##S(ci + W, m1, _mm512_mul_##S(va, acc[i][1])); \
                }                                                              \
            }                                                                  \
        } else if (beta == (T)1) {                                             \
            _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) {           \
                if (i < mr) {                                                  \
                    T *ci = c + i * ldc;                                       \
                    VT c0 = _mm512_maskz_loadu_##S(m0, ci);                    \
                    VT c1 = _mm512_maskz_loadu_##S(m1, ci + W);                \
                    _mm512_mask_storeu_##S(ci, m0, _mm512_fmadd_##S(va, acc[i][0], c0)); \
                    _mm512_mask_storeu_##S(ci + W, m1, _mm512_fmadd_##S(va, acc[i][1], c1)); \
                }                                                              \
            }                                                                  \
        } else {                                                               \
            const VT vb = _mm512_set1_##S(beta);                               \
            _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) {           \
                if (i < mr) {                                                  \
                    T *ci = c + i * ldc;                                       \
                    VT c0 = _mm512_mul_##S(vb, _mm512_maskz_loadu_##S(m0, ci)); \
                    VT c1 = _mm512_mul_##S(vb, _mm512_maskz_loadu_##S(m1, ci + W)); \
                    _mm512_mask_storeu_##S(ci, m0, _mm512_fmadd_##S(va, acc[i][0], c0)); \
                    _mm512_mask_storeu_##S(ci + W, m1, _mm512_fmadd_##S(va, acc[i][1], c1)); \
                }                                                              \
            }                                                                  \
        }                                                                      \
    }

TC__UKERNEL_AVX512(tc__f32_gemm_ukernel_14x32__avx512, float, __m512, 16, ps,
                   __mmask16, tc__lane_mask16, 14)
TC__UKERNEL_AVX512(tc__f64_gemm_ukernel_14x16__avx512, double, __m512d, 8, pd,
                   __mmask8, tc__lane_mask8, 14)

/* f32 8 x 48: three zmm columns, 24 accumulators. For row counts that 14
 * fits badly (K = 32 fills 14-row panels to 76%, 64 to 91%; 8-row panels
 * fill both exactly). Per k step 3 B loads and 8 broadcasts feed 24 FMAs
 * (0.46 loads per FMA, against 0.57 for 14x32); 24 independent chains still
 * cover the two FMA pipes' latency. 24 + 3 + 1 = 28 zmm registers.
 *
 * One body for both B forms: PACKED (aligned NR-wide panels, row stride 48)
 * or in place (row stride ldb, any alignment, masked past nr). Both sum in
 * the same order, so their results are bit-identical. */
static inline __attribute__((always_inline)) void
tc__u8x48(int64_t kc, const float *restrict a, const float *restrict b, int64_t ldb,
          const int packed, float *restrict c, int64_t ldc, float alpha, float beta,
          int mr, int nr, const int nt) {
    enum { MR = 8 };
    __m512 acc[MR][3];
    _Pragma("GCC unroll 8") for (int i = 0; i < MR; i++) {
        acc[i][0] = _mm512_setzero_ps();
        acc[i][1] = _mm512_setzero_ps();
        acc[i][2] = _mm512_setzero_ps();
    }
    const __mmask16 m0 = tc__lane_mask16(nr, 0), m1 = tc__lane_mask16(nr, 1),
                    m2 = tc__lane_mask16(nr, 2);
    if (packed) {
        _Pragma("GCC unroll 8") for (int i = 0; i < MR; i++) {
            if (i < mr) {
                _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
                _mm_prefetch((const char *)(c + i * ldc + 16), _MM_HINT_T0);
                _mm_prefetch((const char *)(c + i * ldc + 32), _MM_HINT_T0);
            }
        }
    }
    _Pragma("GCC unroll 4") for (int64_t l = 0; l < kc; l++) {
        __m512 b0, b1, b2;
        if (packed) {
            b0 = _mm512_load_ps(b);
            b1 = _mm512_load_ps(b + 16);
            b2 = _mm512_load_ps(b + 32);
            _mm_prefetch((const char *)(b + 8 * 48), _MM_HINT_T0);
        } else {
            b0 = _mm512_maskz_loadu_ps(m0, b);
            b1 = _mm512_maskz_loadu_ps(m1, b + 16);
            b2 = _mm512_maskz_loadu_ps(m2, b + 32);
            _mm_prefetch((const char *)(b + 4 * ldb), _MM_HINT_T0);
            _mm_prefetch((const char *)(b + 4 * ldb + 47), _MM_HINT_T0);
        }
        _Pragma("GCC unroll 8") for (int i = 0; i < MR; i++) {
            const __m512 ai = _mm512_set1_ps(a[i]);
            acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
            acc[i][2] = _mm512_fmadd_ps(ai, b2, acc[i][2]);
        }
        a += MR;
        b += ldb;
    }
    const __m512 va = _mm512_set1_ps(alpha);
    const __m512 vb = _mm512_set1_ps(beta);
    _Pragma("GCC unroll 8") for (int i = 0; i < MR; i++) {
        if (i < mr) {
            float *ci = c + i * ldc;
            __m512 r0, r1, r2;
            if (beta == 0.0f) {
                r0 = _mm512_mul_ps(va, acc[i][0]);
                r1 = _mm512_mul_ps(va, acc[i][1]);
                r2 = _mm512_mul_ps(va, acc[i][2]);
            } else {
                __m512 c0 = _mm512_maskz_loadu_ps(m0, ci);
                __m512 c1 = _mm512_maskz_loadu_ps(m1, ci + 16);
                __m512 c2 = _mm512_maskz_loadu_ps(m2, ci + 32);
                if (beta != 1.0f) {
                    c0 = _mm512_mul_ps(vb, c0);
                    c1 = _mm512_mul_ps(vb, c1);
                    c2 = _mm512_mul_ps(vb, c2);
                }
                r0 = _mm512_fmadd_ps(va, acc[i][0], c0);
                r1 = _mm512_fmadd_ps(va, acc[i][1], c1);
                r2 = _mm512_fmadd_ps(va, acc[i][2], c2);
            }
            if (nt && nr == 48 && ((uintptr_t)ci & 63) == 0) {
                _mm512_stream_ps(ci, r0);
                _mm512_stream_ps(ci + 16, r1);
                _mm512_stream_ps(ci + 32, r2);
                continue;
            }
            _mm512_mask_storeu_ps(ci, m0, r0);
            _mm512_mask_storeu_ps(ci + 16, m1, r1);
            _mm512_mask_storeu_ps(ci + 32, m2, r2);
        }
    }
}

void tc__f32_gemm_ukernel_8x48__avx512(int64_t kc, const float *restrict a,
                                       const float *restrict b, float *restrict c,
                                       int64_t ldc, float alpha, float beta,
                                       int mr, int nr) {
    tc__u8x48(kc, a, b, 48, 1, c, ldc, alpha, beta, mr, nr, 0);
}

/* B read in place: row l of the panel is b + l*ldb (any alignment), columns
 * >= nr not read, so a row-major matrix needs no packing (1x1
 * convolutions: B is the input's C x HW block); alpha 1. */
void tc__f32_gemm_ukernel_8x48_ldb__avx512(int64_t kc, const float *restrict a,
                                           const float *restrict b, int64_t ldb,
                                           float *restrict c, int64_t ldc,
                                           float beta, int mr, int nr) {
    tc__u8x48(kc, a, b, ldb, 0, c, ldc, 1.0f, beta, mr, nr, 0);
}

/* The same with non-temporal stores of full, 64-byte aligned rows (the
 * caller fences before the results are read). */
void tc__f32_gemm_ukernel_8x48_ldb_nt__avx512(int64_t kc, const float *restrict a,
                                              const float *restrict b, int64_t ldb,
                                              float *restrict c, int64_t ldc, int mr, int nr) {
    tc__u8x48(kc, a, b, ldb, 0, c, ldc, 1.0f, 0.0f, mr, nr, 1);
}
