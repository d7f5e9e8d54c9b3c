/* separable.h - shared by the separable / low-rank solvers (separable.c),
 * their mask factorisation (separable_factor.c) and ISA kernels
 * (separable_kern.h included by separable{,_avx2,_avx512}.c). */
#ifndef TC_CPU_SEPARABLE_H
#define TC_CPU_SEPARABLE_H
#include "core/internal.h"

/* Relative Frobenius tolerance of a factorisation: the mask is accepted when
 * ||mask - sum_i a_i (x) b_i (x) c_i||_F <= tol * ||mask||_F. Chosen a few
 * ulps above the rounding of a mask stored in the dtype, so masks built as
 * outer products (gaussians, boxes, Sobel, ...) pass and genuinely 2D masks
 * (disks, random) fail. The output error this adds is at most
 * tol * ||mask||_F * ||x window||_2 <= tol * sqrt(taps) * sum|w||x|. */
#define TC__SEP_TOL_F32 1e-6
#define TC__SEP_TOL_F64 1e-12
#define TC__SEP_MAXRANK 16
#define TC__SEP_MAXSVD 64 /* low-rank: each mask axis at most this */

/* mask = sum_{i < rank} f[0][i] (x) f[1][i] (x) f[2][i], problem axis
 * order (0 slowest); term i of axis a is f[a] + i * m[a]. Axis 0 has one
 * term (rank > 1 needs m[0] == 1, and f[0] = {1}). */
typedef struct tc__sep_factors {
    int rank;
    int64_t m[3];
    double *f[3];
    double resid; /* achieved relative Frobenius residual */
} tc__sep_factors;

/* Rank-1 factorisation by the largest-|element| pivot (no SVD): exact for
 * outer products. Returns 1 and fills *fa (free with tc__sep_free) when
 * the residual is within tol; 0 otherwise (why gets a reason). */
int tc__sep_rank1(const tc__problem *p, double tol, tc__sep_factors *fa,
                  char *why, size_t why_size);
/* Rank-r factorisation of a 2D mask (m[0] == 1, m[1], m[2] <= 64) by a
 * one-sided Jacobi SVD in double: the smallest r <= maxrank whose residual
 * is within tol. Returns 1 on success, 0 otherwise. */
int tc__sep_lowrank(const tc__problem *p, double tol, int maxrank,
                    tc__sep_factors *fa, char *why, size_t why_size);
void tc__sep_free(tc__sep_factors *fa);

/* Inner loops, one table per ISA; index [0] float32, [1] float64.
 * row:  out[o] = sum_{r < m} c[r] * h[o + r],              o < len
 * comb: out[o] = bias + sum_{t < nt} c[t] * src[t][o],     o < len
 * Each output is summed in the same order whatever len, so results do not
 * depend on how the caller splits rows. stream != 0 asks comb for
 * non-temporal stores (final output much larger than the caches: no
 * read-for-ownership); honoured only when out is vector-aligned, because a
 * masked partial line next to streamed lines stalls on its
 * read-for-ownership (measured: ~45% of comb time). The caller fences. */
typedef struct tc__sep_kernels {
    const char *isa;
    void (*row[2])(void *out, const void *h, const void *c, int64_t m,
                   int64_t len);
    void (*comb[2])(void *out, const void *const *src, const void *c,
                    int64_t nt, double bias, int64_t len, int stream);
} tc__sep_kernels;

extern const tc__sep_kernels tc__sep_kernels_base;
#if defined(__x86_64__) || defined(__i386__)
extern const tc__sep_kernels tc__sep_kernels_avx2;
extern const tc__sep_kernels tc__sep_kernels_avx512;
#endif
#endif
