/*
 * gemm_packed.h - the contract between the packed GEMM framework
 * (gemm_packed.c) and its micro-kernels (gemm_ukernel_<isa>.c).
 *
 * A micro-kernel computes one MR x NR tile of C from packed panels:
 *
 *   acc[i][j] = sum_{l < kc} a[l*MR + i] * b[l*NR + j]     (l in order)
 *   C[i][j]   = alpha * acc[i][j] + beta * C[i][j]   for i < mr, j < nr
 *
 * a is an MR-row panel of op(A) stored k-major (MR values per k step), b an
 * NR-column panel of op(B) stored k-major (NR values per k step); both are
 * zero-padded to full MR / NR and 64-byte aligned. When beta == 0, C is not
 * read. Rows >= mr and columns >= nr of C are neither read nor written, so
 * edge tiles need no copy. The summation order over l is fixed, so a tile's
 * result never depends on which thread computed it.
 */
#ifndef TC_GEMM_PACKED_H
#define TC_GEMM_PACKED_H

#include "core/internal.h"

typedef void (*tc__f32_gemm_ukernel_fn)(int64_t kc, const float *a,
                                        const float *b, float *c, int64_t ldc,
                                        float alpha, float beta, int mr,
                                        int nr);
typedef void (*tc__f64_gemm_ukernel_fn)(int64_t kc, const double *a,
                                        const double *b, double *c,
                                        int64_t ldc, double alpha, double beta,
                                        int mr, int nr);

/* AVX-512 (gemm_ukernel_avx512.c): broadcast A, load B, 28 accumulators. */
void tc__f32_gemm_ukernel_14x32__avx512(int64_t kc, const float *a,
                                        const float *b, float *c, int64_t ldc,
                                        float alpha, float beta, int mr, int nr);
/* f32 8 x 48 (three zmm columns, 24 accumulators): for row counts that
 * 14-row panels fill badly (32, 64 output channels). */
void tc__f32_gemm_ukernel_8x48__avx512(int64_t kc, const float *a,
                                       const float *b, float *c, int64_t ldc,
                                       float alpha, float beta, int mr, int nr);
/* f32 8 x 48 with B read in place, row l at b + l*ldb (masked past nr),
 * accumulating into C when beta != 0 (alpha 1). */
void tc__f32_gemm_ukernel_8x48_ldb__avx512(int64_t kc, const float *a,
                                           const float *b, int64_t ldb,
                                           float *c, int64_t ldc, float beta,
                                           int mr, int nr);
void tc__f32_gemm_ukernel_8x48_ldb_nt__avx512(int64_t kc, const float *a, const float *b,
                                              int64_t ldb, float *c, int64_t ldc, int mr,
                                              int nr);
void tc__f64_gemm_ukernel_14x16__avx512(int64_t kc, const double *a,
                                        const double *b, double *c,
                                        int64_t ldc, double alpha, double beta,
                                        int mr, int nr);
/* AVX2 + FMA (gemm_ukernel_avx2.c): 12 accumulators. */
void tc__f32_gemm_ukernel_6x16__avx2(int64_t kc, const float *a,
                                     const float *b, float *c, int64_t ldc,
                                     float alpha, float beta, int mr, int nr);
void tc__f64_gemm_ukernel_6x8__avx2(int64_t kc, const double *a,
                                    const double *b, double *c, int64_t ldc,
                                    double alpha, double beta, int mr, int nr);

/* Transposing panel packs (gemm_pack_avx512.c):
 * dst[l*P + r] = src[r*ld + l] for r < rows, l < kc; zero for rows <= r < P. */
void tc__f32_pack_t_avx512(float *dst, int P, const float *src, int64_t ld,
                           int rows, int64_t kc);
void tc__f64_pack_t_avx512(double *dst, int P, const double *src, int64_t ld,
                           int rows, int64_t kc);

/* Test hook (gemm_packed.c): ISA bits ANDed with cpuid when the packed GEMM
 * picks its kernel; tests set TC__CPU_AVX2 or 0 to run the AVX2 or scalar
 * kernels on an AVX-512 machine. Default ~0u. Not thread-safe to change
 * while GEMMs run. */
extern unsigned tc__gemm_isa_mask;

/* The plain blocked GEMM (gemm_blocked.c), used by tc__gemm when the packed
 * GEMM cannot get its pack buffers. Needs no memory. */
void tc__gemm_blocked(int threads, const tc__problem *p, void *C,
                      const void *A, const void *B);

/* Packed GEMM on a problem (op == TC_OP_GEMM) with caller scratch ws of at
 * least tc__gemm_packed_workspace(p, threads) bytes, 64-byte aligned.
 * Deterministic: the result is bit-identical for every thread count. */
size_t tc__gemm_packed_workspace(const tc__problem *p, int threads);
void tc__gemm_packed_run(const tc__problem *p, int threads, void *C,
                         const void *A, const void *B, void *ws);
/* Fills a GEMM problem from BLAS-style arguments. */
void tc__gemm_problem(tc__problem *p, tc_dtype dt, int ta, int tb, int64_t m,
                      int64_t n, int64_t k, double alpha, int64_t lda,
                      int64_t ldb, double beta, int64_t ldc);

#endif
