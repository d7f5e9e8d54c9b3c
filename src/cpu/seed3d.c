/* seed3d.c - seed 003's 3D convolution ("3D convolution project report",
 * CPU part) as two solvers, for comparison with cpu.direct.*:
 *
 *   cpu.filter.seed3d-rowshift  single thread. Each input row is multiplied by
 *       each mask weight 8 floats at a time (256-bit AVX), the products of
 *       one mask row are accumulated, shifted by their tap offset, into a
 *       row-length temp array, and the temp row is added into the output
 *       row it belongs to ("push" form: an input row feeds K*K output rows).
 *   cpu.filter.seed3d-zsplit  the multi-threaded version: input planes are split
 *       along z over threads; instead of locking the shared output, each
 *       contribution goes to one of K private output copies, summed at the
 *       end with AVX. The report picks the copy by thread id; here it is
 *       (input plane z) mod K, so that results are bit-identical for any
 *       thread count: the K input planes that feed one output plane have
 *       distinct residues, so every (copy, plane) has exactly one writer and
 *       the final sum runs in a fixed order.
 *
 * Scope, as in the report: float32, 3 filtered axes, cubic odd masks K^3,
 * centred ("same", origin 0), zero border (constant mode with cval 0).
 * Anything else is not applicable, with the reason.
 */
#include "cpu/seed3d.h"

#include <stdio.h>
#include <string.h>

static int s3_available(void) { return (tc__cpu_detect() & TC__CPU_AVX2) != 0; }

static int s3_applicable(const tc__problem *p, const tc__env *e, char *why,
                         size_t n) {
    const char *r = NULL;
    const int64_t K = p->msk[0];
    if (p->op != TC_OP_FILTER) r = "only the filter operation";
    else if (p->dtype != TC_FLOAT32) r = "float32 only (256-bit AVX, 8 floats)";
    else if (p->nsp != 3) r = "needs 3 filtered axes";
    else if (p->msk[1] != K || p->msk[2] != K || K % 2 == 0)
        r = "needs a cubic mask of odd size";
    else if (p->pad_lo[0] != K / 2 || p->pad_lo[1] != K / 2 || p->pad_lo[2] != K / 2 ||
             p->out[0] != p->in[0] || p->out[1] != p->in[1] || p->out[2] != p->in[2])
        r = "needs output 'same' with origin 0";
    else if (p->mode != TC_MODE_CONSTANT || p->cval != 0.0)
        r = "needs the zero border (mode constant, cval 0)";
    if (r && why && n) snprintf(why, n, "%s", r);
    return r == NULL;
}

/* Adds the contributions of input plane (n, iz) to output planes
 * out_plane(oz) for every oz it feeds (rows iy, mask rows a, b). */
static void s3_push_plane(const tc__problem *p, const float *x, const float *w,
                          float *temp, int64_t n, int64_t iz,
                          float *(*out_plane)(void *ctx, int64_t n, int64_t oz),
                          void *ctx) {
    const int64_t D = p->in[0], H = p->in[1], W = p->in[2], K = p->msk[0], P = K / 2;
    const float *xp = x + (n * D + iz) * H * W;
    for (int64_t iy = 0; iy < H; iy++)
        for (int64_t a = 0; a < K; a++) {
            int64_t oz = iz + P - a;
            if (oz < 0 || oz >= D) continue;
            float *op = out_plane(ctx, n, oz);
            for (int64_t b = 0; b < K; b++) {
                int64_t oy = iy + P - b;
                if (oy < 0 || oy >= H) continue;
                tc__seed3d_row_avx(op + oy * W, xp + iy * W, w + (a * K + b) * K,
                                   temp, W, K);
            }
        }
}

/* ---------------- cpu.filter.seed3d-rowshift ---------------- */
static float *s3_direct_plane(void *ctx, int64_t n, int64_t oz) {
    const tc__args *a = ctx;
    const tc__problem *p = a->p;
    return (float *)a->y + (n * p->in[0] + oz) * p->in[1] * p->in[2];
}

static size_t s3_temp_floats(const tc__problem *p) {
    return (size_t)(p->in[2] + p->msk[2] + 16);
}

static size_t rs_workspace(const tc__problem *p, const tc__env *e) {
    return s3_temp_floats(p) * sizeof(float);
}

static double rs_estimate(const tc__problem *p, const tc__env *e) {
    /* one thread, 8 lanes, mul + add + a temp load and store per product */
    return tc__problem_flops(p) / 8e9 + tc__problem_bytes(p) / tc__peak_bandwidth(e);
}

static tc_status rs_execute(const tc__args *a) {
    const tc__problem *p = a->p;
    memset(a->y, 0, (size_t)tc__y_count(p) * sizeof(float));
    for (int64_t n = 0; n < p->N; n++)
        for (int64_t iz = 0; iz < p->in[0]; iz++)
            s3_push_plane(p, a->x, a->w, a->ws, n, iz, s3_direct_plane, (void *)a);
    return TC_OK;
}

const tc__solver tc__solver_cpu_seed3d_rowshift = {
    .name = "cpu.filter.seed3d-rowshift",
    .backend = TC_BACKEND_CPU,
    .ops = TC_OP_FILTER,
    .summary = "Seed 003: single-thread AVX row-shift 3D convolution (odd cubic "
               "masks, zero border).",
    .available = s3_available,
    .applicable = s3_applicable,
    .estimate = rs_estimate,
    .workspace = rs_workspace,
    .execute = rs_execute,
};

/* ---------------- cpu.filter.seed3d-zsplit ---------------- */
typedef struct zs_job {
    const tc__args *a;
    float *copies;   /* K copies of the output */
    float *temps;    /* threads x temp row */
    size_t temp_floats;
} zs_job;

typedef struct zs_ctx { zs_job *j; int64_t copy; } zs_ctx;

static float *zs_copy_plane(void *ctx, int64_t n, int64_t oz) {
    zs_ctx *c = ctx;
    const tc__problem *p = c->j->a->p;
    const int64_t plane = p->in[1] * p->in[2];
    return c->j->copies + ((size_t)c->copy * (size_t)tc__y_count(p)) +
           (size_t)((n * p->in[0] + oz) * plane);
}

static void zs_push(void *arg, int64_t begin, int64_t end, int tid) {
    zs_job *j = arg;
    const tc__problem *p = j->a->p;
    const int64_t D = p->in[0], K = p->msk[0], P = K / 2;
    const size_t plane = (size_t)(p->in[1] * p->in[2]);
    float *temp = j->temps + (size_t)tid * j->temp_floats;
    for (int64_t t = begin; t < end; t++) {
        int64_t n = t / D, iz = t % D;
        zs_ctx c = {j, iz % K};
        /* this input plane is the only writer of these copy planes */
        for (int64_t a = 0; a < K; a++) {
            int64_t oz = iz + P - a;
            if (oz >= 0 && oz < D) memset(zs_copy_plane(&c, n, oz), 0, plane * sizeof(float));
        }
        s3_push_plane(p, j->a->x, j->a->w, temp, n, iz, zs_copy_plane, &c);
    }
}

static void zs_sum(void *arg, int64_t begin, int64_t end, int tid) {
    zs_job *j = arg;
    const tc__problem *p = j->a->p;
    const int64_t D = p->in[0], K = p->msk[0], P = K / 2;
    const int64_t plane = p->in[1] * p->in[2];
    const float *src[64];
    for (int64_t t = begin; t < end; t++) {
        int64_t n = t / D, oz = t % D;
        int cnt = 0;
        for (int64_t a = 0; a < K; a++) { /* fixed order: by mask plane */
            int64_t iz = oz - P + a;
            if (iz < 0 || iz >= D) continue;
            zs_ctx c = {j, iz % K};
            src[cnt++] = zs_copy_plane(&c, n, oz);
        }
        tc__seed3d_sum_avx((float *)j->a->y + t * plane, src, cnt, plane);
    }
}

static size_t zs_workspace(const tc__problem *p, const tc__env *e) {
    size_t copies = (size_t)p->msk[0] * (size_t)tc__y_count(p) * sizeof(float);
    return ((copies + 63) & ~(size_t)63) +
           (size_t)e->threads * s3_temp_floats(p) * sizeof(float);
}

static int zs_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (!s3_applicable(p, e, why, n)) return 0;
    if (p->msk[0] > 64) { /* zs_sum keeps one pointer per mask plane */
        if (why && n) snprintf(why, n, "mask size %lld > 64", (long long)p->msk[0]);
        return 0;
    }
    return 1;
}

static double zs_estimate(const tc__problem *p, const tc__env *e) {
    double t_fl = tc__problem_flops(p) / (8e9 * e->threads);
    double bytes = tc__problem_bytes(p) + 3.0 * p->msk[0] * (double)tc__y_count(p) * 4.0;
    return t_fl + bytes / tc__peak_bandwidth(e);
}

static tc_status zs_execute(const tc__args *a) {
    const tc__problem *p = a->p;
    zs_job j;
    j.a = a;
    j.copies = a->ws;
    size_t copies = (size_t)p->msk[0] * (size_t)tc__y_count(p) * sizeof(float);
    j.temps = (float *)((char *)a->ws + ((copies + 63) & ~(size_t)63));
    j.temp_floats = s3_temp_floats(p);
    tc__parallel_for(a->threads, p->N * p->in[0], zs_push, &j);
    tc__parallel_for(a->threads, p->N * p->in[0], zs_sum, &j);
    return TC_OK;
}

const tc__solver tc__solver_cpu_seed3d_zsplit = {
    .name = "cpu.filter.seed3d-zsplit",
    .backend = TC_BACKEND_CPU,
    .ops = TC_OP_FILTER,
    .summary = "Seed 003: threads split along z, K private output copies "
               "(chosen by plane, not thread) summed with AVX.",
    .available = s3_available,
    .applicable = zs_applicable,
    .estimate = zs_estimate,
    .workspace = zs_workspace,
    .execute = zs_execute,
};
