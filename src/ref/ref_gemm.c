/* ref_gemm.c - reference GEMM: C = alpha op(A) op(B) + beta C, row-major,
 * double accumulation, every dtype (one rounding at the end). The oracle of the GEMM tests; never optimise. */
#include "core/half.h"

static int refg_applicable(const tc__problem *p, const tc__env *e, char *why,
                           size_t n) {
    return p->op == TC_OP_GEMM;
}

static double refg_estimate(const tc__problem *p, const tc__env *e) {
    return 1e6 + tc__problem_flops(p) / 1e8;
}

typedef struct refg_job { const tc__args *a; } refg_job;

static void refg_rows(void *arg, int64_t begin, int64_t end, int tid) {
    const tc__args *a = ((refg_job *)arg)->a;
    const tc__problem *p = a->p;
    for (int64_t i = begin; i < end; i++)
        for (int64_t j = 0; j < p->n; j++) {
            double acc = 0;
            for (int64_t l = 0; l < p->k; l++) {
                double av = tc__load_d(a->x, p->trans_a ? l * p->lda + i : i * p->lda + l, p->dtype);
                double bv = tc__load_d(a->w, p->trans_b ? j * p->ldb + l : l * p->ldb + j, p->dtype);
                acc += av * bv;
            }
            int64_t ci = i * p->ldc + j;
            double v = p->alpha * acc;
            if (p->beta != 0.0) v += p->beta * tc__load_d(a->y, ci, p->dtype);
            tc__store_d(a->y, ci, p->dtype, v);
        }
}

static tc_status refg_execute(const tc__args *a) {
    refg_job job = {a};
    tc__parallel_for(a->threads, a->p->m, refg_rows, &job);
    return TC_OK;
}

const tc__solver tc__solver_ref_gemm = {
    .name = "ref.gemm.loops",
    .backend = TC_BACKEND_CPU,
    .ops = TC_OP_GEMM,
    .summary = "Reference GEMM: plain triple loop, double accumulation (test oracle).",
    .applicable = refg_applicable,
    .estimate = refg_estimate,
    .execute = refg_execute,
    .caps = TC__CAP_HALF,
};
