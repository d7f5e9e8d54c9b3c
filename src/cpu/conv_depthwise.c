/* conv_depthwise.c - depthwise convolution layers (solver
 * "cpu.conv.depthwise"): groups == C, each group one input channel and
 * K/C output channels (MobileNet's 3x3 layers; channel multiplier >= 1).
 *
 * A depthwise layer has no reduction over channels, so GEMM-based methods
 * waste it (im2col's GEMM has an inner dimension of R = 9) and blocked
 * direct kernels broadcast nothing. Every output plane is its own job, and
 * there are two ways to run one:
 *
 * - direct (float32, float16 or bfloat16 on AVX-512; 3x3 along the last
 *   two axes, stride 1 or 2 and dilation 1 there, at most one padding
 *   column per side: MobileNet's layers in every padding mode;
 *   conv_depthwise_avx512.c): rows are read
 *   in place from the caller's input through a row table (rows outside the
 *   input along axes 0/1 map to the mode's source row or to a row of cval),
 *   the two edge columns come from masked loads filled with the mode's
 *   value, four output rows are computed at once from six input rows. No
 *   copy: the extension cost about 40% of a 28x28 plane's time. 16-bit
 *   storage is widened in registers, summed in float32 and rounded once on
 *   store; weights go to float32 in wpack, the bias per call. Other 16-bit
 *   problems (and those with a fused activation or residual) are staged to
 *   float32 by the core (dw_caps_for).
 * - extended (everything else): the channel's input plane is extended by
 *   the boundary mode into a per-chunk buffer (E = (out-1)*stride +
 *   (m-1)*dil + 1 per axis; index maps computed once per chunk, interior
 *   rows copied by vector code), then the plane kernel (AVX-512 by hand for
 *   float32, AVX2 by hand for 3x3 float32, conv_depthwise_kern.h's generic
 *   C otherwise) accumulates a row's outputs in registers over all taps.
 *
 * Threads take chunks of whole planes (N x K of them), several chunks per
 * thread claimed dynamically when planes are small; results do not depend
 * on the thread count. */
#include "core/half.h"

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
                                double *y);                                          \
    void tc__dw_extend_f32_##SFX(const float *x, const int64_t in[3], const int64_t E[3], \
                                 const int64_t *map, int64_t a2, int64_t b2, int64_t lo2, \
                                 float cval, float *e);                              \
    void tc__dw_extend_f64_##SFX(const double *x, const int64_t in[3], const int64_t E[3], \
                                 const int64_t *map, int64_t a2, int64_t b2, int64_t lo2, \
                                 double cval, double *e);
DW_DECL(avx512)
void tc__dw3d_setup_avx512(const tc__problem *p, void *tab);
void tc__dw3d_planes_f32_avx512(const tc__problem *p, const float *x, const float *wt,
                                const float *bias, float *y, int64_t begin, int64_t end,
                                const void *tab);
void tc__dw3d_planes_half_avx512(const tc__problem *p, const uint16_t *x, const float *wt,
                                 const float *bias, uint16_t *y, int64_t begin, int64_t end,
                                 const void *tab);
DW_DECL(avx2)

#define DW_PLANE_CAP ((int64_t)64 << 20) /* bytes of one extended plane */

static size_t dw_round64(size_t b) { return (b + 63) & ~(size_t)63; }

static void dw_extent(const tc__problem *p, int64_t E[3]) {
    for (int a = 0; a < 3; a++)
        E[a] = (p->out[a] - 1) * p->stride[a] + (p->msk[a] - 1) * p->dil[a] + 1;
}

static size_t dw_plane_bytes(const tc__problem *p) {
    int64_t E[3];
    dw_extent(p, E);
    return ((size_t)(E[0] * E[1] * E[2]) * p->esize + 64 + 63) & ~(size_t)63;
}

static int dw_direct_ok(const tc__problem *p);

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
    /* float16 / bfloat16 reach the solver only where dw_caps_for gives the
     * cap (the core stages the others to float32) */
    if (tc__dtype_is_half(p->dtype)) {
        if (!dw_direct_ok(p)) {
            if (why)
                snprintf(why, n, "%s storage only on the direct path (AVX-512, 3x3, stride "
                         "<= 2, padding <= 1 along the rows); staged to float32 otherwise",
                         tc_dtype_name(p->dtype));
            return 0;
        }
        if (p->act != TC_ACT_NONE || p->has_residual) {
            if (why)
                snprintf(why, n, "%s with a fused activation or residual is staged to "
                         "float32 (one rounding at the end)", tc_dtype_name(p->dtype));
            return 0;
        }
    }
    return 1;
}

/* Chunks of planes handed to the pool: several per thread when planes are
 * small, claimed dynamically, so a helper that wakes late (or is preempted
 * on a shared machine) leaves its share to the threads already running
 * instead of making the call wait for it; one per thread for large planes
 * (each chunk needs its own extended-plane buffer). */
#ifndef DW_CHUNKS_PER_THREAD
#define DW_CHUNKS_PER_THREAD 8
#endif
#define DW_SMALL_PLANE ((size_t)64 << 10)

static int64_t dw_chunks(const tc__problem *p, int threads) {
    int64_t planes = p->N * p->K, c = threads > 1 ? threads : 1;
    if (c > 1 && dw_plane_bytes(p) <= DW_SMALL_PLANE) c *= DW_CHUNKS_PER_THREAD;
    if (c > 4096) c = 4096; /* tc__parallel_for's limit */
    return c < planes ? c : planes;
}

/* The direct path (conv_depthwise_avx512.c, no extended plane): float32,
 * float16 or bfloat16 on AVX-512, 3x3 along the last two axes with
 * dilation 1 and stride 1 or 2 there (any taps, stride and dilation along
 * axis 0 of 3D), and at most one padding column on each side of a row.
 * MobileNet's layers, stride 1 and 2, in every padding mode. */
static int dw_direct_ok(const tc__problem *p) {
    if (p->dtype == TC_FLOAT64 || !(tc__cpu_detect() & TC__CPU_AVX512)) return 0;
    if (p->msk[1] != 3 || p->msk[2] != 3 || p->dil[1] != 1 || p->dil[2] != 1) return 0;
    if (p->stride[1] > 2 || p->stride[2] > 2) return 0;
    int64_t E2 = (p->out[2] - 1) * p->stride[2] + 3;
    return p->pad_lo[2] >= 0 && p->pad_lo[2] <= 1 && E2 - p->pad_lo[2] - p->in[2] <= 1;
}

/* The direct path's scratch, shared by all chunks (filled once per call):
 * E0 x E1 row offsets, a row of cval, 24 masks per 64 output columns. */
static size_t dw_direct_tab(const tc__problem *p) {
    int64_t E[3];
    dw_extent(p, E);
    size_t b = (size_t)(E[0] * E[1]) * sizeof(int64_t) + (size_t)(p->in[2] + 64) * sizeof(float) +
               (size_t)((p->out[2] + 63) / 64) * 24 * sizeof(uint16_t);
    return (b + 63) & ~(size_t)63;
}

/* One chunk's scratch: the extended plane, then the E0 + E1 + E2 source
 * indices of the extension (none on the direct path). */
static size_t dw_slot_bytes(const tc__problem *p) {
    if (dw_direct_ok(p)) return 0;
    int64_t E[3];
    dw_extent(p, E);
    return dw_plane_bytes(p) + dw_round64((size_t)(E[0] + E[1] + E[2]) * sizeof(int64_t));
}

/* float16 / bfloat16: the bias in float32, after the tables or slots */
static size_t dw_bias_bytes(const tc__problem *p) {
    return tc__dtype_is_half(p->dtype) && p->has_bias ? dw_round64((size_t)p->K * sizeof(float))
                                                      : 0;
}

static size_t dw_main_bytes(const tc__problem *p, int threads) {
    if (dw_direct_ok(p)) return dw_direct_tab(p);
    return (size_t)dw_chunks(p, threads) * dw_slot_bytes(p);
}

static size_t dw_workspace(const tc__problem *p, const tc__env *env) {
    return dw_main_bytes(p, env->threads) + dw_bias_bytes(p);
}

/* float16 / bfloat16 weights, converted to float32 once (when the plan
 * holds them: tc_plan_conv_set_weights) or per execute into the core's
 * workspace; float32 and float64 read the caller's weights (no copy). */
static size_t dw_wpack_size(const tc__problem *p, const tc__env *env) {
    (void)env;
    return tc__dtype_is_half(p->dtype) ? dw_round64((size_t)tc__w_count(p) * sizeof(float)) : 0;
}

static void dw_to_f32(float *d, const void *src, tc_dtype dt, int64_t n) {
    const uint16_t *h = src;
    if (dt == TC_BFLOAT16)
        for (int64_t i = 0; i < n; i++) d[i] = tc__bf16_to_f32(h[i]);
    else
        for (int64_t i = 0; i < n; i++) d[i] = tc__f16_to_f32(h[i]);
}

static tc_status dw_wpack(const tc__problem *p, const tc__env *env, const void *state,
                          const void *w, void *dst) {
    (void)env;
    (void)state;
    if (tc__dtype_is_half(p->dtype)) dw_to_f32(dst, w, p->dtype, tc__w_count(p));
    return TC_OK;
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

typedef void (*dw_ext_f32)(const float *, const int64_t *, const int64_t *, const int64_t *,
                           int64_t, int64_t, int64_t, float, float *);
typedef void (*dw_ext_f64)(const double *, const int64_t *, const int64_t *, const int64_t *,
                           int64_t, int64_t, int64_t, double, double *);
typedef void (*dw_pl_f32)(const float *, const int64_t *, const float *, const int64_t *,
                          const int64_t *, const int64_t *, const int64_t *, float, float *);
typedef void (*dw_pl_f64)(const double *, const int64_t *, const double *, const int64_t *,
                          const int64_t *, const int64_t *, const int64_t *, double, double *);

typedef struct dw_job {
    const tc__args *a;
    const float *wf, *bf; /* float16 / bfloat16: weights and bias in float32 */
    size_t plane_bytes, slot_bytes;
    int direct; /* dw_direct_ok */
    dw_ext_f32 ext32;
    dw_ext_f64 ext64;
    dw_pl_f32 pl32;
    dw_pl_f64 pl64;
} dw_job;

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
    if (j->direct) {
        if (tc__dtype_is_half(p->dtype))
            tc__dw3d_planes_half_avx512(p, a->x, j->wf, j->bf, a->y, begin, end, a->ws);
        else
            tc__dw3d_planes_f32_avx512(p, a->x, a->w, a->bias, a->y, begin, end, a->ws);
        return;
    }
    char *slot = (char *)a->ws + (size_t)tid * j->slot_bytes;
    void *e = slot;
    /* zero slack after the plane: the AVX2 3x3 kernel loads full vectors
     * past a row's end (into lanes it never stores) */
    size_t used = (size_t)(E[0] * E[1] * E[2]) * p->esize;
    memset((char *)e + used, 0, j->plane_bytes - used);
    int64_t *map = (int64_t *)(slot + j->plane_bytes), *mp = map;
    for (int ax = 0; ax < 3; ax++)
        for (int64_t i = 0; i < E[ax]; i++)
            *mp++ = tc__boundary_index(i - p->pad_lo[ax], p->in[ax], p->mode);
    /* interior columns: e[i2] = row[i2 - lo2] */
    const int64_t lo2 = p->pad_lo[2];
    int64_t a2 = lo2 > 0 ? lo2 : 0, b2 = lo2 + p->in[2];
    if (a2 > E[2]) a2 = E[2];
    if (b2 > E[2]) b2 = E[2];
    if (b2 < a2) b2 = a2;
    int64_t have = -1; /* the extended channel in e */
    for (int64_t t = begin; t < end; t++) {
        int64_t n = t / p->K, k = t % p->K, c = k / mult;
        int64_t key = n * p->C + c;
        if (p->dtype == TC_FLOAT32) {
            if (key != have)
                j->ext32((const float *)a->x + key * inplane, p->in, E, map, a2, b2, lo2,
                         (float)p->cval, e);
            const float *w = (const float *)a->w + k * taps;
            float bias = p->has_bias ? ((const float *)a->bias)[k] : 0.0f;
            j->pl32(e, E, w, p->msk, p->stride, p->dil, p->out, bias,
                    (float *)a->y + t * outplane);
        } else {
            if (key != have)
                j->ext64((const double *)a->x + key * inplane, p->in, E, map, a2, b2, lo2,
                         p->cval, e);
            const double *w = (const double *)a->w + k * taps;
            double bias = p->has_bias ? ((const double *)a->bias)[k] : 0.0;
            j->pl64(e, E, w, p->msk, p->stride, p->dil, p->out, bias,
                    (double *)a->y + t * outplane);
        }
        have = key;
    }
}

/* float16 / bfloat16 natively where the direct path runs the problem and
 * no epilogue follows (the core's epilogue pass would round a second
 * time); everything else is staged to float32 by the core. */
static unsigned dw_caps_for(const tc__problem *p) {
    if (p->op == TC_OP_CONV && tc__dtype_is_half(p->dtype) && dw_direct_ok(p) &&
        p->act == TC_ACT_NONE && !p->has_residual)
        return TC__CAP_HALF;
    return 0;
}

static tc_status dw_execute(const tc__args *a) {
    const tc__problem *p = a->p;
    unsigned cpu = tc__cpu_detect();
    dw_job j = {a, NULL, NULL, dw_plane_bytes(p), dw_slot_bytes(p), dw_direct_ok(p),
                tc__dw_extend_f32_plain, tc__dw_extend_f64_plain, tc__dw_plane_f32_plain,
                tc__dw_plane_f64_plain};
    if (tc__dtype_is_half(p->dtype)) {
        if (!a->wpack) return tc__error(TC_ERR_INTERNAL, "cpu.conv.depthwise: weights not packed");
        j.wf = a->wpack;
        if (p->has_bias) {
            float *bf = (float *)((char *)a->ws + dw_main_bytes(p, a->threads));
            dw_to_f32(bf, a->bias, p->dtype, p->K);
            j.bf = bf;
        }
    }
    if (cpu & TC__CPU_AVX512) {
        j.ext32 = tc__dw_extend_f32_avx512;
        j.ext64 = tc__dw_extend_f64_avx512;
        j.pl32 = tc__dw_plane_f32_avx512;
        j.pl64 = tc__dw_plane_f64_avx512;
    } else if (cpu & TC__CPU_AVX2) {
        j.ext32 = tc__dw_extend_f32_avx2;
        j.ext64 = tc__dw_extend_f64_avx2;
        j.pl32 = tc__dw_plane_f32_avx2;
        j.pl64 = tc__dw_plane_f64_avx2;
    }
    if (j.direct) tc__dw3d_setup_avx512(p, a->ws);
    /* each chunk index owns one slot of the workspace (extension path) */
    tc__parallel_for((int)dw_chunks(p, a->threads), p->N * p->K, dw_planes, &j);
    return TC_OK;
}

const tc__solver tc__solver_cpu_conv_depthwise = {
    .name = "cpu.conv.depthwise",
    .backend = TC_BACKEND_CPU,
    .ops = TC_OP_CONV,
    .summary = "depthwise layers (groups == channels, any multiplier): per plane, 3x3 read in place (edge columns by masked loads, every padding mode) or the input extended by the padding mode; a row's outputs accumulated in registers over all taps.",
    .applicable = dw_applicable,
    .estimate = dw_estimate,
    .workspace = dw_workspace,
    .execute = dw_execute,
    .wpack_size = dw_wpack_size,
    .wpack = dw_wpack,
    .caps = TC__CAP_HALF,
    .caps_for = dw_caps_for,
};
