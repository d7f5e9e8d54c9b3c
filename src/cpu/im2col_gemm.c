/* im2col_gemm.c - convolution as matrix multiplication (seed 000/002).
 * For each image n and group g, unroll every input window into a column of
 * col[(c, r0, r1, r2), (p0, p1, p2)] (boundary mode applied while
 * unrolling), then y[n, g*Kg:(g+1)*Kg, :] = W_g (Kg x Cg*R) * col (Cg*R x P)
 * with one GEMM. The column buffer is the workspace: Cg*R*P elements, the
 * cost the seeds warn about (27x the input for a 3x3x3 mask). */
#include "core/internal.h"

#include <stdio.h>
#include <string.h>

static int64_t col_rows(const tc__problem *p) {
    return (p->C / p->G) * p->msk[0] * p->msk[1] * p->msk[2];
}
static int64_t col_cols(const tc__problem *p) {
    return p->out[0] * p->out[1] * p->out[2];
}

static int i2c_applicable(const tc__problem *p, const tc__env *e, char *why,
                          size_t n) {
    if (p->op != TC_OP_FILTER && p->op != TC_OP_CONV) return 0;
    int64_t cells;
    if (!tc__mul_ok(col_rows(p), col_cols(p), &cells) ||
        !tc__mul_ok(cells, (int64_t)p->esize, &cells)) {
        if (why) snprintf(why, n, "column buffer size overflows");
        return 0;
    }
    return 1;
}

static size_t i2c_workspace(const tc__problem *p, const tc__env *e) {
    return (size_t)(col_rows(p) * col_cols(p)) * p->esize;
}

static double i2c_estimate(const tc__problem *p, const tc__env *e) {
    double colbytes = 2.0 * (double)i2c_workspace(p, e) * p->N * p->G;
    return colbytes / tc__peak_bandwidth(e) +
           tc__problem_flops(p) / (tc__peak_flops(e) / 8.0);
}

typedef struct i2c_job {
    const tc__args *a;
    int64_t n, g;
    void *col;
} i2c_job;

/* rows of col: (c, r0, r1, r2) */
static void i2c_unroll(void *arg, int64_t begin, int64_t end, int tid) {
    i2c_job *j = arg;
    const tc__problem *p = j->a->p;
    const int64_t Cg = p->C / p->G, P = col_cols(p);
    const int64_t inplane = p->in[0] * p->in[1] * p->in[2];
    for (int64_t row = begin; row < end; row++) {
        int64_t r2 = row % p->msk[2], t = row / p->msk[2];
        int64_t r1 = t % p->msk[1]; t /= p->msk[1];
        int64_t r0 = t % p->msk[0], c = t / p->msk[0];
        const int64_t xoff = (j->n * p->C + j->g * Cg + c) * inplane;
        int64_t col = 0;
        for (int64_t o0 = 0; o0 < p->out[0]; o0++) {
            int64_t i0 = tc__boundary_index(o0 * p->stride[0] + r0 * p->dil[0] - p->pad_lo[0], p->in[0], p->mode);
            for (int64_t o1 = 0; o1 < p->out[1]; o1++) {
                int64_t i1 = tc__boundary_index(o1 * p->stride[1] + r1 * p->dil[1] - p->pad_lo[1], p->in[1], p->mode);
                for (int64_t o2 = 0; o2 < p->out[2]; o2++, col++) {
                    int64_t i2 = tc__boundary_index(o2 * p->stride[2] + r2 * p->dil[2] - p->pad_lo[2], p->in[2], p->mode);
                    int ok = i0 >= 0 && i1 >= 0 && i2 >= 0;
                    int64_t src = xoff + (i0 * p->in[1] + i1) * p->in[2] + i2;
                    if (p->dtype == TC_FLOAT32)
                        ((float *)j->col)[row * P + col] = ok ? ((const float *)j->a->x)[src] : (float)p->cval;
                    else
                        ((double *)j->col)[row * P + col] = ok ? ((const double *)j->a->x)[src] : p->cval;
                }
            }
        }
    }
}

static tc_status i2c_execute(const tc__args *a) {
    const tc__problem *p = a->p;
    const int64_t Kg = p->K / p->G, R = col_rows(p), P = col_cols(p);
    i2c_job j = {a, 0, 0, a->ws};
    for (j.n = 0; j.n < p->N; j.n++)
        for (j.g = 0; j.g < p->G; j.g++) {
            tc__parallel_for(a->threads, R, i2c_unroll, &j);
            char *y = (char *)a->y + (size_t)((j.n * p->K + j.g * Kg) * P) * p->esize;
            const char *w = (const char *)a->w + (size_t)(j.g * Kg * R) * p->esize;
            double beta = 0.0;
            if (p->has_bias) { /* y = bias, then y += W col */
                for (int64_t k = 0; k < Kg; k++)
                    for (int64_t q = 0; q < P; q++) {
                        int64_t kk = j.g * Kg + k;
                        if (p->dtype == TC_FLOAT32)
                            ((float *)y)[k * P + q] = ((const float *)a->bias)[kk];
                        else
                            ((double *)y)[k * P + q] = ((const double *)a->bias)[kk];
                    }
                beta = 1.0;
            }
            tc_status st = tc__gemm(a->threads, p->dtype, 0, 0, Kg, P, R, 1.0, w, R,
                                    a->ws, P, beta, y, P);
            if (st) return st;
        }
    return TC_OK;
}

const tc__solver tc__solver_cpu_im2col_gemm = {
    .name = "cpu.conv.im2col",
    .backend = TC_BACKEND_CPU,
    .ops = TC_OP_FILTER | TC_OP_CONV,
    .summary = "im2col: unroll input windows into a column buffer, then one GEMM per image and group.",
    .applicable = i2c_applicable,
    .estimate = i2c_estimate,
    .workspace = i2c_workspace,
    .execute = i2c_execute,
};
