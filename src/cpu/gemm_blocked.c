/* gemm_blocked.c - a plain cache-blocked GEMM (row-major, transposes,
 * alpha/beta), threaded over row blocks of C. The internal tc__gemm() entry
 * lives in gemm_packed.c and falls back to tc__gemm_blocked(). */
#include "gemm_packed.h"

#include <string.h>

#define MB 64
#define KB 256

/* One macro body for float and double: C[i0:i1, :] = alpha A B + beta C. */
#define TC__GEMM_ROWS(T, NAME)                                                 \
    static void NAME(const tc__problem *p, T *C, const T *A, const T *B,       \
                     int64_t i0, int64_t i1) {                                 \
        const int64_t n = p->n, k = p->k;                                      \
        const T alpha = (T)p->alpha, beta = (T)p->beta;                        \
        T acc[MB > 0 ? 1 : 1];                                                 \
        (void)acc;                                                             \
        for (int64_t i = i0; i < i1; i++) {                                    \
            T *c = C + i * p->ldc;                                             \
            if (beta == 0) memset(c, 0, (size_t)n * sizeof(T));                \
            else if (beta != 1) for (int64_t j = 0; j < n; j++) c[j] *= beta;  \
        }                                                                      \
        for (int64_t l0 = 0; l0 < k; l0 += KB) {                               \
            int64_t l1 = l0 + KB < k ? l0 + KB : k;                            \
            for (int64_t i = i0; i < i1; i++) {                                \
                T *c = C + i * p->ldc;                                         \
                for (int64_t l = l0; l < l1; l++) {                            \
                    T a = alpha * (p->trans_a ? A[l * p->lda + i]              \
                                              : A[i * p->lda + l]);            \
                    if (!p->trans_b) {                                         \
                        const T *b = B + l * p->ldb;                           \
                        for (int64_t j = 0; j < n; j++) c[j] += a * b[j];      \
                    } else {                                                   \
                        for (int64_t j = 0; j < n; j++)                        \
                            c[j] += a * B[j * p->ldb + l];                     \
                    }                                                          \
                }                                                              \
            }                                                                  \
        }                                                                      \
    }

TC__GEMM_ROWS(float, gemm_rows_f32)
TC__GEMM_ROWS(double, gemm_rows_f64)

typedef struct gemm_job {
    const tc__problem *p;
    void *C;
    const void *A, *B;
} gemm_job;

static void gemm_blocks(void *arg, int64_t b0, int64_t b1, int tid) {
    gemm_job *j = arg;
    int64_t i0 = b0 * MB, i1 = b1 * MB < j->p->m ? b1 * MB : j->p->m;
    if (j->p->dtype == TC_FLOAT32)
        gemm_rows_f32(j->p, j->C, j->A, j->B, i0, i1);
    else
        gemm_rows_f64(j->p, j->C, j->A, j->B, i0, i1);
}

static void gemm_run(const tc__problem *p, int threads, void *C, const void *A,
                     const void *B) {
    gemm_job job = {p, C, A, B};
    tc__parallel_for(threads, (p->m + MB - 1) / MB, gemm_blocks, &job);
}

/* Fallback of tc__gemm (gemm_packed.c) when pack buffers are unavailable. */
void tc__gemm_blocked(int threads, const tc__problem *p, void *C,
                      const void *A, const void *B) {
    gemm_run(p, threads, C, A, B);
}

static int gb_applicable(const tc__problem *p, const tc__env *e, char *why,
                         size_t n) {
    return p->op == TC_OP_GEMM;
}

static double gb_estimate(const tc__problem *p, const tc__env *e) {
    /* scalar-ish loops that the compiler vectorises: ~1/8 of peak */
    return tc__problem_flops(p) / (tc__peak_flops(e) / 8.0);
}

static tc_status gb_execute(const tc__args *a) {
    gemm_run(a->p, a->threads, a->y, a->x, a->w);
    return TC_OK;
}

const tc__solver tc__solver_cpu_gemm_blocked = {
    .name = "cpu.gemm.blocked",
    .backend = TC_BACKEND_CPU,
    .ops = TC_OP_GEMM,
    .summary = "Cache-blocked GEMM, rows of C split over threads.",
    .applicable = gb_applicable,
    .estimate = gb_estimate,
    .execute = gb_execute,
};
