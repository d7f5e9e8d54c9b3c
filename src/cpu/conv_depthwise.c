/* conv_depthwise.c - depthwise convolution layers (solver
 * "cpu.conv.depthwise"): groups == C, each group one input channel and
 * K/C output channels (MobileNet's 3x3 layers; channel multiplier >= 1).
 *
 * A depthwise layer has no reduction over channels, so GEMM-based methods
 * waste it (im2col's GEMM has an inner dimension of R = 9) and blocked
 * direct kernels broadcast nothing. Here every output plane is its own job:
 * the channel's input plane is extended by the boundary mode into a
 * per-thread buffer (E = (out-1)*stride + (m-1)*dil + 1 per axis, so the
 * kernel has no branches and every padding mode costs one copy), then the
 * plane kernel (conv_depthwise_kern.h) accumulates 16 outputs along the last
 * axis in registers over all taps and stores them once, bias included.
 * Threads take whole planes (N x K of them), so batch 1 with 256 channels
 * keeps every core busy; results do not depend on the thread count. */
#include "core/internal.h"

#include <stdio.h>
#include <string.h>

#define DW_SFX plain
#include "conv_depthwise_kern.h"

#define DW_DECL(SFX)                                                                 \
    void tc__dw_plane_f32_##SFX(const float *e, const int64_t E[3], const float *w,  \
                                const int64_t m[3], const int64_t s[3],              \
                                const int64_t d[3], const int64_t out[3], float bias, \
                                float *y);                                           \
    void tc__dw_plane_f64_##SFX(const double *e, const int64_t E[3], const double *w, \
                                const int64_t m[3], const int64_t s[3],              \
                                const int64_t d[3], const int64_t out[3], double bias, \
                                double *y);
DW_DECL(avx512)
DW_DECL(avx2)

#define DW_PLANE_CAP ((int64_t)64 << 20) /* bytes of one extended plane */

static void dw_extent(const tc__problem *p, int64_t E[3]) {
    for (int a = 0; a < 3; a++)
        E[a] = (p->out[a] - 1) * p->stride[a] + (p->msk[a] - 1) * p->dil[a] + 1;
}

static size_t dw_plane_bytes(const tc__problem *p) {
    int64_t E[3];
    dw_extent(p, E);
    return ((size_t)(E[0] * E[1] * E[2]) * p->esize + 64 + 63) & ~(size_t)63;
}

static int dw_applicable(const tc__problem *p, const tc__env *env, char *why, size_t n) {
    if (p->op != TC_OP_CONV) {
        if (why) snprintf(why, n, "convolution layers only");
        return 0;
    }
    if (p->G != p->C || p->K % p->C != 0) {
        if (why)
            snprintf(why, n, "depthwise layers only (groups == in_channels): groups=%lld, "
                     "in_channels=%lld", (long long)p->G, (long long)p->C);
        return 0;
    }
    int64_t E[3], t = (int64_t)p->esize;
    for (int a = 0; a < 3; a++) {
        int64_t span;
        if (!tc__mul_ok(p->msk[a] - 1, p->dil[a], &span) ||
            !tc__mul_ok(p->out[a] - 1, p->stride[a], &E[a]) || !tc__add_ok(E[a], span + 1, &E[a]) ||
            !tc__mul_ok(t, E[a], &t)) {
            if (why) snprintf(why, n, "extended plane size overflows");
            return 0;
        }
    }
    if (t > DW_PLANE_CAP) {
        if (why)
            snprintf(why, n, "one extended plane needs %lld bytes (limit %lld)", (long long)t,
                     (long long)DW_PLANE_CAP);
        return 0;
    }
    return 1;
}

static size_t dw_workspace(const tc__problem *p, const tc__env *env) {
    return (size_t)env->threads * dw_plane_bytes(p);
}

/* Seconds: one multiply-add per tap and output at ~25% of the vector peak
 * (one load per FMA, partial chunks), plus the input and output through
 * memory (the extended plane is rebuilt in one per-thread buffer, in cache). */
static double dw_estimate(const tc__problem *p, const tc__env *env) {
    int64_t E[3];
    dw_extent(p, E);
    double ext = (double)p->N * p->K * E[0] * E[1] * E[2] * p->esize;
    (void)ext; /* the per-thread extended plane stays in cache */
    return tc__problem_flops(p) / (tc__peak_flops(env) * 0.25) +
           tc__problem_bytes(p) / tc__peak_bandwidth(env);
}

typedef struct dw_job {
    const tc__args *a;
    size_t plane_bytes;
    int isa; /* 2 avx512, 1 avx2, 0 plain */
} dw_job;

#define DW_EXTEND(T)                                                                  \
    static void dw_extend_##T(const tc__problem *p, const T *x, const int64_t E[3],   \
                              T *e) {                                                 \
        const T cval = (T)p->cval;                                                    \
        for (int64_t i0 = 0; i0 < E[0]; i0++) {                                       \
            int64_t b0 = tc__boundary_index(i0 - p->pad_lo[0], p->in[0], p->mode);   \
            for (int64_t i1 = 0; i1 < E[1]; i1++) {                                   \
                int64_t b1 = tc__boundary_index(i1 - p->pad_lo[1], p->in[1], p->mode); \
                T *d = e + (i0 * E[1] + i1) * E[2];                                   \
                if (b0 < 0 || b1 < 0) {                                               \
                    for (int64_t i2 = 0; i2 < E[2]; i2++) d[i2] = cval;               \
                    continue;                                                         \
                }                                                                     \
                const T *row = x + (b0 * p->in[1] + b1) * p->in[2];                   \
                int64_t lo = p->pad_lo[2], hi = lo + p->in[2], i2 = 0;               \
                for (; i2 < E[2] && i2 < lo; i2++) {                                  \
                    int64_t b2 = tc__boundary_index(i2 - lo, p->in[2], p->mode);      \
                    d[i2] = b2 < 0 ? cval : row[b2];                                  \
                }                                                                     \
                int64_t mid = hi < E[2] ? hi : E[2];                                  \
                if (i2 < mid) {                                                       \
                    memcpy(d + i2, row + (i2 - lo), (size_t)(mid - i2) * sizeof(T));  \
                    i2 = mid;                                                         \
                }                                                                     \
                for (; i2 < E[2]; i2++) {                                             \
                    int64_t b2 = tc__boundary_index(i2 - lo, p->in[2], p->mode);      \
                    d[i2] = b2 < 0 ? cval : row[b2];                                  \
                }                                                                     \
            }                                                                         \
        }                                                                             \
    }
DW_EXTEND(float)
DW_EXTEND(double)

static void dw_planes(void *arg, int64_t begin, int64_t end, int tid) {
    dw_job *j = arg;
    const tc__args *a = j->a;
    const tc__problem *p = a->p;
    int64_t E[3];
    dw_extent(p, E);
    const int64_t mult = p->K / p->C;
    const int64_t inplane = p->in[0] * p->in[1] * p->in[2];
    const int64_t outplane = p->out[0] * p->out[1] * p->out[2];
    const int64_t taps = p->msk[0] * p->msk[1] * p->msk[2];
    void *e = (char *)a->ws + (size_t)tid * j->plane_bytes;
    int64_t have = -1; /* the extended channel in e */
    for (int64_t t = begin; t < end; t++) {
        int64_t n = t / p->K, k = t % p->K, c = k / mult;
        int64_t key = n * p->C + c;
        if (p->dtype == TC_FLOAT32) {
            if (key != have) dw_extend_float(p, (const float *)a->x + key * inplane, E, e);
            const float *w = (const float *)a->w + k * taps;
            float bias = p->has_bias ? ((const float *)a->bias)[k] : 0.0f;
            float *y = (float *)a->y + t * outplane;
            if (j->isa == 2) tc__dw_plane_f32_avx512(e, E, w, p->msk, p->stride, p->dil, p->out, bias, y);
            else if (j->isa == 1) tc__dw_plane_f32_avx2(e, E, w, p->msk, p->stride, p->dil, p->out, bias, y);
            else tc__dw_plane_f32_plain(e, E, w, p->msk, p->stride, p->dil, p->out, bias, y);
        } else {
            if (key != have) dw_extend_double(p, (const double *)a->x + key * inplane, E, e);
            const double *w = (const double *)a->w + k * taps;
            double bias = p->has_bias ? ((const double *)a->bias)[k] : 0.0;
            double *y = (double *)a->y + t * outplane;
            if (j->isa == 2) tc__dw_plane_f64_avx512(e, E, w, p->msk, p->stride, p->dil, p->out, bias, y);
            else if (j->isa == 1) tc__dw_plane_f64_avx2(e, E, w, p->msk, p->stride, p->dil, p->out, bias, y);
            else tc__dw_plane_f64_plain(e, E, w, p->msk, p->stride, p->dil, p->out, bias, y);
        }
        have = key;
    }
}

static tc_status dw_execute(const tc__args *a) {
    const tc__problem *p = a->p;
    unsigned cpu = tc__cpu_detect();
    dw_job j = {a, dw_plane_bytes(p),
                (cpu & TC__CPU_AVX512) ? 2 : (cpu & TC__CPU_AVX2) ? 1 : 0};
    tc__parallel_for(a->threads, p->N * p->K, dw_planes, &j);
    return TC_OK;
}

const tc__solver tc__solver_cpu_conv_depthwise = {
    .name = "cpu.conv.depthwise",
    .backend = TC_BACKEND_CPU,
    .ops = TC_OP_CONV,
    .summary = "depthwise layers (groups == channels, any multiplier): per plane, the input extended by the padding mode, 16 outputs accumulated in registers over all taps.",
    .applicable = dw_applicable,
    .estimate = dw_estimate,
    .workspace = dw_workspace,
    .execute = dw_execute,
};
