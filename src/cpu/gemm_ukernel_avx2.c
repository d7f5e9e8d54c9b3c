/*
 * gemm_ukernel_avx2.c - AVX2 + FMA GEMM micro-kernels (contract in
 * gemm_packed.h). Compiled with -mavx2 -mfma; called only after cpuid.
 *
 * Shape: MR = 6 rows x 2 ymm columns (f32 6x16, f64 6x8): 12 accumulators
 * + 2 B vectors + 1 broadcast = 15 of 16 ymm registers, enough
 * independent FMAs (12 >= 2 ports x 4-5 cycles latency) to stay
 * throughput-bound. Edge tiles go through a small stack tile.
 */
#include "gemm_packed.h"

#include <immintrin.h>

#define TC__UKERNEL_AVX2(NAME, T, VT, W, S, MR)                                \
    void NAME(int64_t kc, const T *restrict a, const T *restrict b,           \
              T *restrict c, int64_t ldc, T alpha, T beta, int mr, int nr) {  \
        VT acc[MR][2];                                                         \
        _Pragma("GCC unroll 8") for (int i = 0; i < MR; i++) {                \
            acc[i][0] = _mm256_setzero_##S();                                  \
            acc[i][1] = _mm256_setzero_##S();                                  \
        }                                                                      \
        _Pragma("GCC unroll 4") for (int64_t l = 0; l < kc; l++) {            \
            const VT b0 = _mm256_load_##S(b);                                  \
            const VT b1 = _mm256_load_##S(b + W);                              \
            _Pragma("GCC unroll 8") for (int i = 0; i < MR; i++) {            \
                const VT ai = _mm256_set1_##S(a[i]);                    \
                acc[i][0] = _mm256_fmadd_##S(ai, b0, acc[i][0]);               \
                acc[i][1] = _mm256_fmadd_##S(ai, b1, acc[i][1]);               \
            }                                                                  \
            a += MR;                                                           \
            b += 2 * W;                                                        \
        }                                                                      \
        const VT va = _mm256_set1_##S(alpha), vb = _mm256_set1_##S(beta);      \
        if (mr == MR && nr == 2 * W) {                                         \
            _Pragma("GCC unroll 8") for (int i = 0; i < MR; i++) {            \
                T *ci = c + i * ldc;                                           \
                VT r0 = _mm256_mul_##S(va, acc[i][0]);                         \
                VT r1 = _mm256_mul_##S(va, acc[i][1]);                         \
                if (beta != (T)0) {                                            \
                    r0 = _mm256_fmadd_##S(vb, _mm256_loadu_##S(ci), r0);       \
                    r1 = _mm256_fmadd_##S(vb, _mm256_loadu_##S(ci + W), r1);   \
                }                                                              \
                _mm256_storeu_##S(ci, r0);                                     \
                _mm256_storeu_##S(ci + W, r1);                                 \
            }                                                                  \
            return;                                                            \
        }                                                                      \
        T tile[MR][2 * W] __attribute__((aligned(32)));                        \
        _Pragma("GCC unroll 8") for (int i = 0; i < MR; i++) {                \
            _mm256_store_##S(tile[i], _mm256_mul_##S(va, acc[i][0]));          \
            _mm256_store_##S(tile[i] + W, _mm256_mul_##S(va, acc[i][1]));      \
        }                                                                      \
        for (int i = 0; i < mr; i++) {                                         \
            T *ci = c + i * ldc;                                               \
            if (beta == (T)0)                                                  \
                for (int j = 0; j < nr; j++) ci[j] = tile[i][j];               \
            else                                                               \
                for (int j = 0; j < nr; j++)                                   \
                    ci[j] = TC__FMA_##T(beta, ci[j], tile[i][j]);   \
        }                                                                      \
    }

/* fma for the edge path, matching the vector path's single rounding */
#define TC__FMA_float __builtin_fmaf
#define TC__FMA_double __builtin_fma

TC__UKERNEL_AVX2(tc__f32_gemm_ukernel_6x16__avx2, float, __m256, 8, ps, 6)
TC__UKERNEL_AVX2(tc__f64_gemm_ukernel_6x8__avx2, double, __m256d, 4, pd, 6)
