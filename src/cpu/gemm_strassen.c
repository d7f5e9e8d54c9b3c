/*
 * gemm_strassen.c - one level of Strassen's algorithm over the packed GEMM
 * (solver "cpu.gemm.strassen").
 *
 * op(A), op(B) and C are split into 2 x 2 blocks of m/2 x k/2, k/2 x n/2 and
 * m/2 x n/2 (floor); seven block products replace eight:
 *   M1 = (A11 + A22)(B11 + B22)   C11 = M1 + M4 - M5 + M7
 *   M2 = (A21 + A22) B11          C12 = M3 + M5
 *   M3 = A11 (B12 - B22)          C21 = M2 + M4
 *   M4 = A22 (B21 - B11)          C22 = M1 - M2 + M3 + M6
 *   M5 = (A11 + A12) B22
 *   M6 = (A21 - A11)(B11 + B12)
 *   M7 = (A12 - A22)(B21 + B22)
 * M6 and M7 are accumulated straight into C22 / C11 by the GEMM (beta 1);
 * M1..M5 go through one m/2 x n/2 temporary because each feeds two blocks.
 * Operand sums keep the storage orientation of A / B (a transposed A gives
 * a transposed sum), so every sub-product is a plain packed GEMM call.
 * An odd last row, column or k index is peeled off and done by the packed
 * GEMM (a 1 x n, m x 1 or rank-1 product).
 *
 * Workspace: SA (m/2 x k/2) + SB (k/2 x n/2) + M (m/2 x n/2) elements plus
 * the packed GEMM's own workspace for the largest sub-product: a quarter
 * of A, B and C together, plus up to ~34 MiB.
 *
 * Arithmetic: 7/8 of the multiplications of the classical product, plus
 * 18 block additions (O(n^2)). Accuracy is worse than the classical GEMM
 * because sums like A11 + A22 are rounded before the product (a normwise,
 * not elementwise, error bound). Measured max over C of
 * |C - C_exact| / (|A||B|)_ij, A and B uniform in [-1, 1), square n, exact
 * = long double; n = 2048 on 256 sampled rows (docs/solvers/cpu-gemm.md):
 *      n     f32 strassen  f32 packed   f64 strassen  f64 packed
 *   1024     2.2e-7        1.15e-7      2.9e-16       1.6e-16
 *   2048     1.7e-7        8.3e-8       2.0e-16       8.8e-17
 * i.e. about 2x the classical error, 1.5-3 units of eps relative to |A||B|.
 * Speed (2 cores, quiet host): at most ~3% faster than cpu.gemm.packed
 * for f32 n >= 2048, slower for f64 and n <= 1024; see sx_estimate.
 * Results are deterministic and bit-identical for every thread count.
 */
#include "gemm_packed.h"

#include <stdio.h>
#include <string.h>

#define SX_MIN_DIM 512 /* below this the additions outweigh the saving */

/* ---------------- elementwise block operations ---------------- */
/* dst = a*X + b*Y over rows x cols; Y may be NULL (dst = a*X), and Y may be
 * dst itself (an update). All operands in one dtype. */
typedef struct sx_axpby {
    int f32;
    int64_t cols;
    void *dst;
    int64_t ldd;
    const void *x;
    int64_t ldx;
    double a;
    const void *y;
    int64_t ldy;
    double b;
} sx_axpby;

static void sx_axpby_rows(void *arg, int64_t r0, int64_t r1, int tid) {
    const sx_axpby *o = arg;
    for (int64_t i = r0; i < r1; i++) {
        if (o->f32) {
            float *d = (float *)o->dst + i * o->ldd;
            const float *x = (const float *)o->x + i * o->ldx;
            const float a = (float)o->a, b = (float)o->b;
            if (!o->y) {
                for (int64_t j = 0; j < o->cols; j++) d[j] = a * x[j];
            } else {
                const float *y = (const float *)o->y + i * o->ldy;
                for (int64_t j = 0; j < o->cols; j++) d[j] = a * x[j] + b * y[j];
            }
        } else {
            double *d = (double *)o->dst + i * o->ldd;
            const double *x = (const double *)o->x + i * o->ldx;
            const double a = o->a, b = o->b;
            if (!o->y) {
                for (int64_t j = 0; j < o->cols; j++) d[j] = a * x[j];
            } else {
                const double *y = (const double *)o->y + i * o->ldy;
                for (int64_t j = 0; j < o->cols; j++) d[j] = a * x[j] + b * y[j];
            }
        }
    }
}

static void sx_op(int threads, int f32, int64_t rows, int64_t cols, void *dst,
                  int64_t ldd, const void *x, int64_t ldx, double a,
                  const void *y, int64_t ldy, double b) {
    sx_axpby o = {f32, cols, dst, ldd, x, ldx, a, y, ldy, b};
    tc__parallel_for(threads, rows, sx_axpby_rows, &o);
}

/* ---------------- the plan of one execute ---------------- */
typedef struct sx_ctx {
    const tc__problem *p;
    int threads;
    int f32;
    size_t es;
    int64_t m2, n2, k2;
    const char *A, *B;
    char *C;
    char *sa, *sb, *mt, *gws; /* temporaries and packed-GEMM workspace */
    int64_t ldsa, ldsb;       /* sums keep A's / B's orientation */
} sx_ctx;

/* Element offsets of block (bi, bj) of op(A), op(B), C. */
static const char *sx_a(const sx_ctx *s, int bi, int bj) {
    const tc__problem *p = s->p;
    int64_t off = p->trans_a ? bj * s->k2 * p->lda + bi * s->m2
                             : bi * s->m2 * p->lda + bj * s->k2;
    return s->A + (size_t)off * s->es;
}
static const char *sx_b(const sx_ctx *s, int bi, int bj) {
    const tc__problem *p = s->p;
    int64_t off = p->trans_b ? bj * s->n2 * p->ldb + bi * s->k2
                             : bi * s->k2 * p->ldb + bj * s->n2;
    return s->B + (size_t)off * s->es;
}
static char *sx_c(const sx_ctx *s, int bi, int bj) {
    return s->C + (size_t)(bi * s->m2 * s->p->ldc + bj * s->n2) * s->es;
}

/* SA = X + sign * Y over two blocks of op(A), stored like A. */
static void sx_sum_a(const sx_ctx *s, int xi, int xj, int yi, int yj, double sign) {
    const tc__problem *p = s->p;
    int64_t rows = p->trans_a ? s->k2 : s->m2, cols = p->trans_a ? s->m2 : s->k2;
    sx_op(s->threads, s->f32, rows, cols, s->sa, s->ldsa, sx_a(s, xi, xj), p->lda,
          1.0, sx_a(s, yi, yj), p->lda, sign);
}
static void sx_sum_b(const sx_ctx *s, int xi, int xj, int yi, int yj, double sign) {
    const tc__problem *p = s->p;
    int64_t rows = p->trans_b ? s->n2 : s->k2, cols = p->trans_b ? s->k2 : s->n2;
    sx_op(s->threads, s->f32, rows, cols, s->sb, s->ldsb, sx_b(s, xi, xj), p->ldb,
          1.0, sx_b(s, yi, yj), p->ldb, sign);
}

/* Block product dst = alpha * X Y + beta * dst (m2 x n2 x k2). X is SA
 * (x == NULL) or a block of op(A); likewise Y. */
static void sx_mul(const sx_ctx *s, const char *x, const char *y, char *dst,
                   int64_t ldd, double alpha, double beta) {
    const tc__problem *p = s->p;
    tc__problem q;
    tc__gemm_problem(&q, p->dtype, p->trans_a, p->trans_b, s->m2, s->n2, s->k2,
                     alpha, x ? p->lda : s->ldsa, y ? p->ldb : s->ldsb, beta, ldd);
    tc__gemm_packed_run(&q, s->threads, dst, x ? x : s->sa, y ? y : s->sb, s->gws);
}

/* C block (bi, bj) = alpha * M + (first ? beta * C : C), never reading C
 * when first and beta == 0; sign flips M. */
static void sx_acc(const sx_ctx *s, int bi, int bj, double sign, int first) {
    const tc__problem *p = s->p;
    char *c = sx_c(s, bi, bj);
    double a = sign * p->alpha;
    if (first && p->beta == 0.0)
        sx_op(s->threads, s->f32, s->m2, s->n2, c, p->ldc, s->mt, s->n2, a, NULL, 0, 0);
    else
        sx_op(s->threads, s->f32, s->m2, s->n2, c, p->ldc, s->mt, s->n2, a, c, p->ldc,
              first ? p->beta : 1.0);
}

/* The sub-problems whose packed-GEMM workspace the plan must hold. */
static size_t sx_gemm_ws(const tc__problem *p, int threads) {
    int64_t m2 = p->m / 2, n2 = p->n / 2, k2 = p->k / 2;
    int64_t shapes[4][3] = {{m2, n2, k2}, {1, p->n, p->k}, {2 * m2, 1, p->k},
                            {2 * m2, 2 * n2, 1}};
    size_t best = 0;
    for (int i = 0; i < 4; i++) {
        tc__problem q;
        tc__gemm_problem(&q, p->dtype, p->trans_a, p->trans_b, shapes[i][0],
                         shapes[i][1], shapes[i][2], 1.0, p->lda, p->ldb, 0.0, p->ldc);
        size_t w = tc__gemm_packed_workspace(&q, threads);
        if (w > best) best = w;
    }
    return best;
}

static size_t sx_r64(size_t v) { return (v + 63) & ~(size_t)63; }

static size_t sx_workspace(const tc__problem *p, const tc__env *e) {
    int64_t m2 = p->m / 2, n2 = p->n / 2, k2 = p->k / 2;
    return sx_r64((size_t)(m2 * k2) * p->esize) + sx_r64((size_t)(k2 * n2) * p->esize) +
           sx_r64((size_t)(m2 * n2) * p->esize) + sx_gemm_ws(p, e->threads);
}

static int sx_applicable(const tc__problem *p, const tc__env *e, char *why,
                         size_t n) {
    if (p->op != TC_OP_GEMM) {
        if (why) snprintf(why, n, "not a GEMM");
        return 0;
    }
    if (p->m < SX_MIN_DIM || p->n < SX_MIN_DIM || p->k < SX_MIN_DIM) {
        if (why)
            snprintf(why, n,
                     "m=%lld n=%lld k=%lld: one-level Strassen needs m, n and k "
                     ">= %d (smaller products lose more to the block additions "
                     "than they save)",
                     (long long)p->m, (long long)p->n, (long long)p->k, SX_MIN_DIM);
        return 0;
    }
    return 1;
}

/* Packed-GEMM time for 7 half-size products + the additions' memory traffic
 * (15 passes over A/4 and B/4, 35 over C/4), times a 1.15 margin: Strassen
 * costs accuracy and measured at best ~3% faster than cpu.gemm.packed
 * (docs/solvers/cpu-gemm.md), so ESTIMATE should take it only for a predicted
 * gain of more than 15% - with this model, never up to n = 16384. MEASURE
 * still picks it where it really wins on the machine at hand. */
static double sx_estimate(const tc__problem *p, const tc__env *e) {
    double m2 = (double)(p->m / 2), n2 = (double)(p->n / 2), k2 = (double)(p->k / 2);
    double sub = 2.0 * m2 * n2 * k2 / (0.85 * tc__peak_flops(e)) +
                 (double)p->esize * 2.0 * (m2 * k2 + k2 * n2 + m2 * n2) /
                     tc__peak_bandwidth(e);
    double adds = (double)p->esize * (15.0 * m2 * k2 + 15.0 * k2 * n2 + 35.0 * m2 * n2);
    return 1.15 * (7.0 * sub + adds / tc__peak_bandwidth(e)) + 20e-6;
}

static tc_status sx_execute(const tc__args *a) {
    const tc__problem *p = a->p;
    sx_ctx s;
    memset(&s, 0, sizeof s);
    s.p = p;
    s.threads = a->threads;
    s.f32 = p->dtype == TC_FLOAT32;
    s.es = p->esize;
    s.m2 = p->m / 2;
    s.n2 = p->n / 2;
    s.k2 = p->k / 2;
    s.A = a->x;
    s.B = a->w;
    s.C = a->y;
    s.sa = a->ws;
    s.sb = s.sa + sx_r64((size_t)(s.m2 * s.k2) * s.es);
    s.mt = s.sb + sx_r64((size_t)(s.k2 * s.n2) * s.es);
    s.gws = s.mt + sx_r64((size_t)(s.m2 * s.n2) * s.es);
    s.ldsa = p->trans_a ? s.m2 : s.k2;
    s.ldsb = p->trans_b ? s.k2 : s.n2;
    const int64_t ldm = s.n2;

    /* M1 -> C11, C22 */
    sx_sum_a(&s, 0, 0, 1, 1, 1.0);
    sx_sum_b(&s, 0, 0, 1, 1, 1.0);
    sx_mul(&s, NULL, NULL, s.mt, ldm, 1.0, 0.0);
    sx_acc(&s, 0, 0, 1.0, 1);
    sx_acc(&s, 1, 1, 1.0, 1);
    /* M2 -> C21, -C22 */
    sx_sum_a(&s, 1, 0, 1, 1, 1.0);
    sx_mul(&s, NULL, sx_b(&s, 0, 0), s.mt, ldm, 1.0, 0.0);
    sx_acc(&s, 1, 0, 1.0, 1);
    sx_acc(&s, 1, 1, -1.0, 0);
    /* M3 -> C12, C22 */
    sx_sum_b(&s, 0, 1, 1, 1, -1.0);
    sx_mul(&s, sx_a(&s, 0, 0), NULL, s.mt, ldm, 1.0, 0.0);
    sx_acc(&s, 0, 1, 1.0, 1);
    sx_acc(&s, 1, 1, 1.0, 0);
    /* M4 -> C11, C21 */
    sx_sum_b(&s, 1, 0, 0, 0, -1.0);
    sx_mul(&s, sx_a(&s, 1, 1), NULL, s.mt, ldm, 1.0, 0.0);
    sx_acc(&s, 0, 0, 1.0, 0);
    sx_acc(&s, 1, 0, 1.0, 0);
    /* M5 -> -C11, C12 */
    sx_sum_a(&s, 0, 0, 0, 1, 1.0);
    sx_mul(&s, NULL, sx_b(&s, 1, 1), s.mt, ldm, 1.0, 0.0);
    sx_acc(&s, 0, 0, -1.0, 0);
    sx_acc(&s, 0, 1, 1.0, 0);
    /* M6 -> C22, M7 -> C11, straight into C */
    sx_sum_a(&s, 1, 0, 0, 0, -1.0);
    sx_sum_b(&s, 0, 0, 0, 1, 1.0);
    sx_mul(&s, NULL, NULL, sx_c(&s, 1, 1), p->ldc, p->alpha, 1.0);
    sx_sum_a(&s, 0, 1, 1, 1, -1.0);
    sx_sum_b(&s, 1, 0, 1, 1, 1.0);
    sx_mul(&s, NULL, NULL, sx_c(&s, 0, 0), p->ldc, p->alpha, 1.0);

    /* odd sizes: the peeled k index, last row, last column */
    tc__problem q;
    if (p->k & 1) { /* C[0:2m2, 0:2n2] += alpha op(A)[:, k-1] op(B)[k-1, :] */
        int64_t l = p->k - 1;
        const char *ax = s.A + (size_t)(p->trans_a ? l * p->lda : l) * s.es;
        const char *bx = s.B + (size_t)(p->trans_b ? l : l * p->ldb) * s.es;
        tc__gemm_problem(&q, p->dtype, p->trans_a, p->trans_b, 2 * s.m2, 2 * s.n2, 1,
                         p->alpha, p->lda, p->ldb, 1.0, p->ldc);
        tc__gemm_packed_run(&q, s.threads, s.C, ax, bx, s.gws);
    }
    if (p->m & 1) { /* last row of C, full n and k */
        int64_t i = p->m - 1;
        const char *ax = s.A + (size_t)(p->trans_a ? i : i * p->lda) * s.es;
        tc__gemm_problem(&q, p->dtype, p->trans_a, p->trans_b, 1, p->n, p->k,
                         p->alpha, p->lda, p->ldb, p->beta, p->ldc);
        tc__gemm_packed_run(&q, s.threads, s.C + (size_t)(i * p->ldc) * s.es, ax, s.B,
                            s.gws);
    }
    if (p->n & 1) { /* last column of C above the last row */
        int64_t j = p->n - 1;
        const char *bx = s.B + (size_t)(p->trans_b ? j * p->ldb : j) * s.es;
        tc__gemm_problem(&q, p->dtype, p->trans_a, p->trans_b, 2 * s.m2, 1, p->k,
                         p->alpha, p->lda, p->ldb, p->beta, p->ldc);
        tc__gemm_packed_run(&q, s.threads, s.C + (size_t)j * s.es, s.A, bx, s.gws);
    }
    return TC_OK;
}

const tc__solver tc__solver_cpu_gemm_strassen = {
    .name = "cpu.gemm.strassen",
    .backend = TC_BACKEND_CPU,
    .ops = TC_OP_GEMM,
    .summary = "One level of Strassen (7 half-size packed GEMMs + block "
               "additions) for large products; less accurate than classical.",
    .applicable = sx_applicable,
    .estimate = sx_estimate,
    .workspace = sx_workspace,
    .execute = sx_execute,
};
