/* direct_halo.c - direct correlation with the boundary resolved once into a
 * padded ("halo") copy of each input channel, so the inner loops have no
 * bounds checks: the CPU analogue of the seeds' ghost cells.
 *
 * Phase 1 (threads over n*C channels): build padded channels of size
 * P[a] = (out[a]-1)*stride[a] + (msk[a]-1)*dil[a] + 1 in the workspace.
 * Phase 2 (threads over output rows n,k,p0,p1): accumulate each output row
 * over c, r0, r1, r2 with a unit-stride inner loop over p2. */
#include "core/internal.h"

#include <stdio.h>
#include <string.h>

static void halo_dims(const tc__problem *p, int64_t P[3]) {
    for (int a = 0; a < 3; a++)
        P[a] = (p->out[a] - 1) * p->stride[a] + (p->msk[a] - 1) * p->dil[a] + 1;
}

static int64_t halo_bytes(const tc__problem *p, int threads);

static int halo_applicable(const tc__problem *p, const tc__env *e, char *why,
                           size_t n) {
    if (p->op != TC_OP_FILTER && p->op != TC_OP_CONV) return 0;
    if (halo_bytes(p, e->threads) == 0) {
        if (why) snprintf(why, n, "padded copy of the input overflows 64 bits");
        return 0;
    }
    return 1;
}

/* Bytes of the padded copy plus one double accumulator row per thread,
 * or 0 when that overflows 64 bits. */
static int64_t halo_bytes(const tc__problem *p, int threads) {
    int64_t P[3], v = p->N, acc;
    halo_dims(p, P);
    if (!tc__mul_ok(v, p->C, &v) || !tc__mul_ok(v, P[0], &v) ||
        !tc__mul_ok(v, P[1], &v) || !tc__mul_ok(v, P[2], &v) ||
        !tc__mul_ok(v, (int64_t)p->esize, &v) ||
        !tc__add_ok(p->out[2], 8, &acc) || !tc__mul_ok(acc, 8 * (int64_t)threads, &acc) ||
        !tc__add_ok(v, acc, &v) || !tc__add_ok(v, 64, &v))
        return 0;
    return v;
}

static size_t halo_workspace(const tc__problem *p, const tc__env *e) {
    return (size_t)halo_bytes(p, e->threads);
}

/* Seconds: the padded copy and the arrays through memory, or the
 * multiply-adds at 1/6 of the peak (filters) or 1/25 (conv layers: one
 * output row at a time over every input channel with double accumulators,
 * 2-4% of the FMA peak measured on the dnn suite's layers, Zen 4; at 1/6
 * the planner would take it for the depthwise layer, 10x slower
 * than cpu.conv.depthwise), whichever is longer. */
static double halo_estimate(const tc__problem *p, const tc__env *e) {
    int64_t P[3];
    halo_dims(p, P);
    double bytes = tc__problem_bytes(p) + 2.0 * p->N * p->C * P[0] * P[1] * P[2] * p->esize;
    double t_mem = bytes / tc__peak_bandwidth(e);
    double t_fl = tc__problem_flops(p) / (tc__peak_flops(e) / (p->op == TC_OP_CONV ? 25.0 : 6.0));
    return t_mem > t_fl ? t_mem : t_fl;
}

typedef struct halo_job {
    const tc__args *a;
    int64_t P[3];
    void *pad;
    double *acc;   /* threads x (out[2] + 8) */
    int64_t acc_stride;
} halo_job;

#define LD(T, ptr, i) ((double)((const T *)(ptr))[i])

static void halo_pad(void *arg, int64_t begin, int64_t end, int tid) {
    halo_job *j = arg;
    const tc__problem *p = j->a->p;
    const int64_t *P = j->P, plane = P[0] * P[1] * P[2];
    const int64_t inplane = p->in[0] * p->in[1] * p->in[2];
    for (int64_t ch = begin; ch < end; ch++) {
        for (int64_t i0 = 0; i0 < P[0]; i0++) {
            int64_t s0 = tc__boundary_index(i0 - p->pad_lo[0], p->in[0], p->mode);
            for (int64_t i1 = 0; i1 < P[1]; i1++) {
                int64_t s1 = tc__boundary_index(i1 - p->pad_lo[1], p->in[1], p->mode);
                int64_t dst = ch * plane + (i0 * P[1] + i1) * P[2];
                for (int64_t i2 = 0; i2 < P[2]; i2++) {
                    int64_t s2 = tc__boundary_index(i2 - p->pad_lo[2], p->in[2], p->mode);
                    int64_t src = ch * inplane + (s0 * p->in[1] + s1) * p->in[2] + s2;
                    int ok = s0 >= 0 && s1 >= 0 && s2 >= 0;
                    if (p->dtype == TC_FLOAT32)
                        ((float *)j->pad)[dst + i2] = ok ? ((const float *)j->a->x)[src] : (float)p->cval;
                    else
                        ((double *)j->pad)[dst + i2] = ok ? ((const double *)j->a->x)[src] : p->cval;
                }
            }
        }
    }
}

#define HALO_ROWS(T, NAME)                                                        \
    static void NAME(halo_job *j, int64_t begin, int64_t end, int tid) {          \
        const tc__args *a = j->a;                                                 \
        const tc__problem *p = a->p;                                              \
        const int64_t *P = j->P, plane = P[0] * P[1] * P[2];                      \
        const int64_t Cg = p->C / p->G, Kg = p->K / p->G;                         \
        const int64_t O0 = p->out[0], O1 = p->out[1], O2 = p->out[2];             \
        const int64_t mplane = p->msk[0] * p->msk[1] * p->msk[2];                 \
        const T *pad = j->pad, *w = a->w;                                         \
        double *acc = j->acc + tid * j->acc_stride;                               \
        for (int64_t row = begin; row < end; row++) {                             \
            int64_t o1 = row % O1, t = row / O1;                                  \
            int64_t o0 = t % O0; t /= O0;                                         \
            int64_t k = t % p->K, n = t / p->K, g = k / Kg;                       \
            double b0 = p->has_bias ? LD(T, a->bias, k) : 0.0;                    \
            for (int64_t o2 = 0; o2 < O2; o2++) acc[o2] = b0;                     \
            for (int64_t c = 0; c < Cg; c++) {                                    \
                const T *xc = pad + (n * p->C + g * Cg + c) * plane;              \
                const T *wc = w + (k * Cg + c) * mplane;                          \
                for (int64_t r0 = 0; r0 < p->msk[0]; r0++)                        \
                    for (int64_t r1 = 0; r1 < p->msk[1]; r1++) {                  \
                        const T *xr = xc + ((o0 * p->stride[0] + r0 * p->dil[0]) * P[1] + \
                                            o1 * p->stride[1] + r1 * p->dil[1]) * P[2]; \
                        const T *wr = wc + (r0 * p->msk[1] + r1) * p->msk[2];     \
                        for (int64_t r2 = 0; r2 < p->msk[2]; r2++) {              \
                            const double wv = wr[r2];                             \
                            const T *xs = xr + r2 * p->dil[2];                    \
                            if (p->stride[2] == 1)                                \
                                for (int64_t o2 = 0; o2 < O2; o2++)               \
                                    acc[o2] += wv * xs[o2];                       \
                            else                                                  \
                                for (int64_t o2 = 0; o2 < O2; o2++)               \
                                    acc[o2] += wv * xs[o2 * p->stride[2]];        \
                        }                                                         \
                    }                                                             \
            }                                                                     \
            T *y = (T *)a->y + row * O2;                                          \
            for (int64_t o2 = 0; o2 < O2; o2++) y[o2] = (T)acc[o2];               \
        }                                                                         \
    }

HALO_ROWS(float, halo_rows_f32)
HALO_ROWS(double, halo_rows_f64)

static void halo_rows(void *arg, int64_t begin, int64_t end, int tid) {
    halo_job *j = arg;
    if (j->a->p->dtype == TC_FLOAT32) halo_rows_f32(j, begin, end, tid);
    else halo_rows_f64(j, begin, end, tid);
}

static tc_status halo_execute(const tc__args *a) {
    const tc__problem *p = a->p;
    halo_job j;
    memset(&j, 0, sizeof j);
    j.a = a;
    halo_dims(p, j.P);
    j.pad = a->ws;
    size_t padbytes = (size_t)(p->N * p->C * j.P[0] * j.P[1] * j.P[2]) * p->esize;
    j.acc = (double *)((char *)a->ws + ((padbytes + 63) & ~(size_t)63));
    j.acc_stride = p->out[2] + 8;
    tc__parallel_for(a->threads, p->N * p->C, halo_pad, &j);
    tc__parallel_for(a->threads, p->N * p->K * p->out[0] * p->out[1], halo_rows, &j);
    return TC_OK;
}

const tc__solver tc__solver_cpu_direct_halo = {
    .name = "cpu.filter.direct-halo",
    .backend = TC_BACKEND_CPU,
    .ops = TC_OP_FILTER | TC_OP_CONV,
    .summary = "Direct loops over a padded halo copy of the input (boundary resolved once).",
    .applicable = halo_applicable,
    .estimate = halo_estimate,
    .workspace = halo_workspace,
    .execute = halo_execute,
};
