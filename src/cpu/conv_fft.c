/* conv_fft.c - convolution layers through FFTW (solver "cpu.conv.fft";
 * seed 000/002's FFT strength reduction, for layers with large masks).
 *
 * Lowered problem (internal.h): y[n,k,o] = bias[k] + sum_c sum_r
 * w[k,c,r] X(n, c, o*stride + r*dil - pad_lo). Per axis the outputs need the
 * extended input e[i] = X(i - pad_lo), i < E = (out-1)*stride + span, with
 * span = (m-1)*dil + 1 the dilated mask. With L >= E (a 2,3,5,7-smooth FFT
 * length), the circular correlation of e with the dilated mask wd,
 *
 *   c[j] = sum_t wd[t] e[(j + t) mod L],
 *
 * does not wrap for j <= L - span, which covers every j = o*stride. So
 *
 *   Y_k = sum_c r2c(e_c) * conj(r2c(wd_kc)) / prod(L),  y[k, o] = c2r(Y_k)[o*stride].
 *
 * The weight spectra (conjugated and scaled) are the solver's packed
 * weights (wpack: once per plan with tc_plan_conv_set_weights): K*Cg
 * complex arrays of L0*L1*(L2/2+1). Execute, per image and group: the Cg
 * input spectra, in parallel over channels (boundary mode applied while
 * building e), then per output channel, in parallel, the frequency-domain
 * sum (blocked over frequencies so the accumulator stays in L1/L2), one c2r
 * and the strided crop with bias. Work per (n, g) is K*Cg complex
 * multiply-adds per frequency plus Cg + Kg transforms, against
 * K*Cg*prod(m) per output for a direct method: it pays for large masks.
 *
 * FFTW's planner runs under the library's one FFTW lock
 * (tc__fftw_planner_lock, fft_fftw.c); execution uses the new-array calls
 * on 64-byte aligned in-place buffers, as planned. Accuracy as cpu.filter.fft:
 * about eps * log2(prod L) of sum |w||x| per output. */
#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if TC_HAVE_FFTW
#include <fftw3.h>

void tc__fftw_planner_lock(void);
void tc__fftw_planner_unlock(void);

#define CF_WPACK_CAP ((int64_t)512 << 20) /* bytes of weight spectra */

typedef struct cf_geom {
    int64_t E[3], L[3];
    int64_t ld;        /* last axis of a buffer: 2*(L2/2+1) reals */
    int64_t nreal;     /* reals per buffer (a multiple of 16) */
    int64_t Cg, Kg;
} cf_geom;

typedef struct cf_state {
    cf_geom g;
    void *fwd, *inv;
    tc_dtype dtype;
} cf_state;

static void cf_geometry(const tc__problem *p, cf_geom *g) {
    memset(g, 0, sizeof *g);
    for (int a = 0; a < 3; a++) {
        int64_t span = (p->msk[a] - 1) * p->dil[a] + 1;
        g->E[a] = (p->out[a] - 1) * p->stride[a] + span;
        g->L[a] = g->E[a] > 1 ? tc__fft_smooth_length(g->E[a], 0) : 1;
    }
    g->ld = 2 * (g->L[2] / 2 + 1);
    g->nreal = (g->L[0] * g->L[1] * g->ld + 15) & ~(int64_t)15;
    g->Cg = p->C / p->G;
    g->Kg = p->K / p->G;
}

static int cf_available(void) { return 1; }

static int cf_applicable(const tc__problem *p, const tc__env *env, char *why,
                         size_t n) {
    if (p->op != TC_OP_CONV) {
        if (why) snprintf(why, n, "convolution layers only");
        return 0;
    }
    for (int a = 0; a < 3; a++) {
        int64_t span;
        /* (out - 1) x stride fits: it is at most the padded input */
        if (!tc__mul_ok(p->msk[a] - 1, p->dil[a], &span) || span > (1 << 24) ||
            p->out[a] > (1 << 24) || (p->out[a] - 1) * p->stride[a] > (1 << 24)) {
            if (why) snprintf(why, n, "axis %d too long for one FFT", a);
            return 0;
        }
    }
    cf_geom g;
    cf_geometry(p, &g);
    int64_t t;
    if (!tc__mul_ok(g.L[0] * g.L[1], g.ld, &t) || t > ((int64_t)1 << 31) ||
        !tc__mul_ok(t, p->K * g.Cg, &t) || !tc__mul_ok(t, (int64_t)p->esize, &t) ||
        t > CF_WPACK_CAP) {
        if (why)
            snprintf(why, n, "weight spectra would exceed %lld MiB",
                     (long long)(CF_WPACK_CAP >> 20));
        return 0;
    }
    return 1;
}

static size_t cf_workspace(const tc__problem *p, const tc__env *env) {
    cf_geom g;
    cf_geometry(p, &g);
    return (size_t)((g.Cg + env->threads) * g.nreal) * p->esize;
}

static size_t cf_wpack_size(const tc__problem *p, const tc__env *env) {
    cf_geom g;
    cf_geometry(p, &g);
    return (size_t)(p->K * g.Cg * g.nreal) * p->esize;
}

static double cf_estimate(const tc__problem *p, const tc__env *env) {
    cf_geom g;
    cf_geometry(p, &g);
    double n = (double)(g.L[0] * g.L[1] * g.L[2]);
    double lg = n > 2 ? log2(n) : 1.0;
    double f = (double)(g.nreal / 2);
    double peak = tc__peak_flops(env);
    double eff = p->dtype == TC_FLOAT32 ? 1.0 : 0.5;
    /* FFTW at ~9% of the vector peak (fft_fftw.c's measured rate) */
    double t_fft = (double)p->N * (double)(p->C + p->K) * 2.5 * n * lg /
                   (peak * 0.09 * eff);
    double macs = (double)p->N * (double)p->K * (double)g.Cg * f;
    double t_mac = macs * 8.0 / (peak * 0.25 * eff);
    double t_w = (double)p->N * (double)cf_wpack_size(p, env) / tc__peak_bandwidth(env);
    /* fixed costs: two parallel regions per (image, group), ~0.5 us per
     * FFTW call; they keep tiny layers (where the FFT's roundoff, relative
     * to the whole signal, shows on exact-zero outputs) on direct methods */
    double t_fixed = (double)p->N * p->G * 2 * 5e-6 + (double)p->N * (p->C + p->K) * 0.5e-6;
    return t_fft + t_mac + t_w + t_fixed;
}

static void cf_destroy(void *state) {
    cf_state *s = state;
    if (!s) return;
    tc__fftw_planner_lock();
    if (s->dtype == TC_FLOAT32) {
        if (s->fwd) fftwf_destroy_plan((fftwf_plan)s->fwd);
        if (s->inv) fftwf_destroy_plan((fftwf_plan)s->inv);
    } else {
        if (s->fwd) fftw_destroy_plan((fftw_plan)s->fwd);
        if (s->inv) fftw_destroy_plan((fftw_plan)s->inv);
    }
    tc__fftw_planner_unlock();
    free(s);
}

static tc_status cf_plan(const tc__problem *p, const tc__env *env, void **out) {
    cf_state *s = calloc(1, sizeof *s);
    if (!s) return tc__error(TC_ERR_OUT_OF_MEMORY, "cpu.conv.fft: out of memory");
    s->dtype = p->dtype;
    cf_geometry(p, &s->g);
    const cf_geom *g = &s->g;
    void *scratch = tc__alloc((size_t)g->nreal * p->esize);
    if (!scratch) {
        free(s);
        return tc__error(TC_ERR_OUT_OF_MEMORY, "cpu.conv.fft: out of memory");
    }
    int dims[3], rank = 0;
    for (int a = 0; a < 3; a++)
        if (g->L[a] > 1 || (a == 2 && rank == 0) || rank > 0) dims[rank++] = (int)g->L[a];
    unsigned flags = (env->flags & TC_PLAN_MEASURE) ? FFTW_MEASURE : FFTW_ESTIMATE;
    tc__fftw_planner_lock();
    if (p->dtype == TC_FLOAT32) {
        float *b = scratch;
        s->fwd = fftwf_plan_dft_r2c(rank, dims, b, (fftwf_complex *)b, flags);
        s->inv = fftwf_plan_dft_c2r(rank, dims, (fftwf_complex *)b, b, flags);
    } else {
        double *b = scratch;
        s->fwd = fftw_plan_dft_r2c(rank, dims, b, (fftw_complex *)b, flags);
        s->inv = fftw_plan_dft_c2r(rank, dims, (fftw_complex *)b, b, flags);
    }
    tc__fftw_planner_unlock();
    tc__free(scratch);
    if (!s->fwd || !s->inv) {
        cf_destroy(s);
        return tc__error(TC_ERR_BACKEND, "cpu.conv.fft: FFTW could not plan the transforms");
    }
    *out = s;
    return TC_OK;
}

/* ---- type-generic kernels ---- */
typedef struct cf_job {
    const tc__problem *p;
    const cf_state *s;
    const void *w;       /* wpack: caller weights; execute: spectra */
    void *dst;           /* wpack: spectra */
    const tc__args *a;
    int64_t n, gi;
} cf_job;

#define CF_KERNELS(T, SFX, R2C, C2R, PLAN, CPLX)                                 \
    static void cf_r2c_##SFX(const void *plan, T *b) {                          \
        R2C((PLAN)plan, b, (CPLX *)b);                                          \
    }                                                                           \
    static void cf_c2r_##SFX(const void *plan, T *b) {                          \
        C2R((PLAN)plan, (CPLX *)b, b);                                          \
    }                                                                           \
    /* weight spectra for pairs [b, e) of (k, c) */                             \
    static void cf_wpack_rng_##SFX(void *arg, int64_t b, int64_t e, int tid) {  \
        cf_job *j = arg;                                                        \
        const tc__problem *p = j->p;                                            \
        const cf_geom *g = &j->s->g;                                            \
        const int64_t m0 = p->msk[0], m1 = p->msk[1], m2 = p->msk[2];          \
        const T scale = (T)(1.0 / ((double)g->L[0] * g->L[1] * g->L[2]));       \
        for (int64_t kc = b; kc < e; kc++) {                                    \
            T *buf = (T *)j->dst + kc * g->nreal;                               \
            const T *wk = (const T *)j->w + kc * m0 * m1 * m2;                  \
            memset(buf, 0, (size_t)g->nreal * sizeof(T));                       \
            for (int64_t r0 = 0; r0 < m0; r0++)                                 \
                for (int64_t r1 = 0; r1 < m1; r1++)                             \
                    for (int64_t r2 = 0; r2 < m2; r2++)                         \
                        buf[(r0 * p->dil[0] * g->L[1] + r1 * p->dil[1]) * g->ld + \
                            r2 * p->dil[2]] = wk[(r0 * m1 + r1) * m2 + r2];     \
            cf_r2c_##SFX(j->s->fwd, buf);                                       \
            for (int64_t i = 0; i < g->nreal / 2; i++) {                        \
                buf[2 * i] *= scale;                                            \
                buf[2 * i + 1] *= -scale;                                       \
            }                                                                   \
        }                                                                       \
    }                                                                           \
    /* input spectra of channels [b, e) of group gi, image n */                 \
    static void cf_xspec_##SFX(void *arg, int64_t b, int64_t e, int tid) {      \
        cf_job *j = arg;                                                        \
        const tc__problem *p = j->p;                                            \
        const cf_geom *g = &j->s->g;                                            \
        const T cval = (T)p->cval;                                              \
        const int64_t in0 = p->in[0], in1 = p->in[1], in2 = p->in[2];           \
        for (int64_t c = b; c < e; c++) {                                       \
            T *buf = (T *)j->a->ws + c * g->nreal;                              \
            const T *x = (const T *)j->a->x +                                   \
                         (j->n * p->C + j->gi * g->Cg + c) * in0 * in1 * in2;   \
            for (int64_t i0 = 0; i0 < g->L[0]; i0++)                            \
                for (int64_t i1 = 0; i1 < g->L[1]; i1++) {                      \
                    T *d = buf + (i0 * g->L[1] + i1) * g->ld;                   \
                    int64_t b0 = tc__boundary_index(i0 - p->pad_lo[0], in0, p->mode); \
                    int64_t b1 = tc__boundary_index(i1 - p->pad_lo[1], in1, p->mode); \
                    int64_t i2 = 0;                                             \
                    if (i0 >= g->E[0] || i1 >= g->E[1]) {                       \
                        for (; i2 < g->ld; i2++) d[i2] = 0;                     \
                        continue;                                               \
                    }                                                           \
                    if (b0 < 0 || b1 < 0) {                                     \
                        for (; i2 < g->E[2]; i2++) d[i2] = cval;                \
                    } else {                                                    \
                        const T *row = x + (b0 * in1 + b1) * in2;               \
                        int64_t lo = p->pad_lo[2] < g->E[2] ? p->pad_lo[2] : g->E[2]; \
                        int64_t hi = p->pad_lo[2] + in2 < g->E[2] ? p->pad_lo[2] + in2 : g->E[2]; \
                        for (; i2 < lo; i2++) {                                 \
                            int64_t b2 = tc__boundary_index(i2 - p->pad_lo[2], in2, p->mode); \
                            d[i2] = b2 < 0 ? cval : row[b2];                    \
                        }                                                       \
                        for (; i2 < hi; i2++) d[i2] = row[i2 - p->pad_lo[2]];   \
                        for (; i2 < g->E[2]; i2++) {                            \
                            int64_t b2 = tc__boundary_index(i2 - p->pad_lo[2], in2, p->mode); \
                            d[i2] = b2 < 0 ? cval : row[b2];                    \
                        }                                                       \
                    }                                                           \
                    for (; i2 < g->ld; i2++) d[i2] = 0;                         \
                }                                                               \
            cf_r2c_##SFX(j->s->fwd, buf);                                       \
        }                                                                       \
    }                                                                           \
    /* output channels [b, e) of group gi, image n */                           \
    static void cf_out_##SFX(void *arg, int64_t b, int64_t e, int tid) {        \
        cf_job *j = arg;                                                        \
        const tc__problem *p = j->p;                                            \
        const cf_geom *g = &j->s->g;                                            \
        const int64_t F = g->L[0] * g->L[1] * g->ld / 2, FB = 1024;             \
        T *acc = (T *)j->a->ws + (g->Cg + tid) * g->nreal;                      \
        const T *X = (const T *)j->a->ws;                                       \
        const int64_t P = p->out[0] * p->out[1] * p->out[2];                    \
        for (int64_t k = b; k < e; k++) {                                       \
            int64_t kk = j->gi * g->Kg + k;                                     \
            const T *Wk = (const T *)j->w + kk * g->Cg * g->nreal;              \
            for (int64_t f0 = 0; f0 < F; f0 += FB) {                            \
                int64_t f1 = f0 + FB < F ? f0 + FB : F;                         \
                T *ac = acc + 2 * f0;                                           \
                for (int64_t f = 0; f < 2 * (f1 - f0); f++) ac[f] = 0;          \
                for (int64_t c = 0; c < g->Cg; c++) {                           \
                    const T *xc = X + c * g->nreal + 2 * f0;                    \
                    const T *wc = Wk + c * g->nreal + 2 * f0;                   \
                    for (int64_t f = 0; f < f1 - f0; f++) {                     \
                        T xr = xc[2 * f], xi = xc[2 * f + 1];                   \
                        T wr = wc[2 * f], wi = wc[2 * f + 1];                   \
                        ac[2 * f] += xr * wr - xi * wi;                         \
                        ac[2 * f + 1] += xr * wi + xi * wr;                     \
                    }                                                           \
                }                                                               \
            }                                                                   \
            for (int64_t f = 2 * F; f < g->nreal; f++) acc[f] = 0;              \
            cf_c2r_##SFX(j->s->inv, acc);                                       \
            T bias = p->has_bias ? ((const T *)j->a->bias)[kk] : (T)0;          \
            T *y = (T *)j->a->y + (j->n * p->K + kk) * P;                       \
            for (int64_t o0 = 0; o0 < p->out[0]; o0++)                          \
                for (int64_t o1 = 0; o1 < p->out[1]; o1++) {                    \
                    const T *src = acc + (o0 * p->stride[0] * g->L[1] +         \
                                          o1 * p->stride[1]) * g->ld;           \
                    T *dst = y + (o0 * p->out[1] + o1) * p->out[2];             \
                    for (int64_t o2 = 0; o2 < p->out[2]; o2++)                  \
                        dst[o2] = src[o2 * p->stride[2]] + bias;                \
                }                                                               \
        }                                                                       \
    }

CF_KERNELS(float, f32, fftwf_execute_dft_r2c, fftwf_execute_dft_c2r, fftwf_plan, fftwf_complex)
CF_KERNELS(double, f64, fftw_execute_dft_r2c, fftw_execute_dft_c2r, fftw_plan, fftw_complex)

static tc_status cf_wpack(const tc__problem *p, const tc__env *env, const void *state,
                          const void *w, void *dst) {
    if (!state) return tc__error(TC_ERR_INTERNAL, "cpu.conv.fft: weights packed without a plan");
    cf_job j = {.p = p, .s = state, .w = w, .dst = dst};
    int64_t pairs = p->K * (p->C / p->G);
    tc__parallel_for(env->threads, pairs,
                     p->dtype == TC_FLOAT32 ? cf_wpack_rng_f32 : cf_wpack_rng_f64, &j);
    return TC_OK;
}

static tc_status cf_execute(const tc__args *a) {
    const tc__problem *p = a->p;
    if (!a->state || !a->wpack)
        return tc__error(TC_ERR_INTERNAL, "cpu.conv.fft: no plan state or weight spectra");
    cf_job j = {.p = p, .s = a->state, .w = a->wpack, .a = a};
    int f32 = p->dtype == TC_FLOAT32;
    for (j.n = 0; j.n < p->N; j.n++)
        for (j.gi = 0; j.gi < p->G; j.gi++) {
            tc__parallel_for(a->threads, j.s->g.Cg, f32 ? cf_xspec_f32 : cf_xspec_f64, &j);
            tc__parallel_for(a->threads, j.s->g.Kg, f32 ? cf_out_f32 : cf_out_f64, &j);
        }
    return TC_OK;
}

#else /* !TC_HAVE_FFTW */
static int cf_available(void) { return 0; }
static int cf_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (why) snprintf(why, n, "built without FFTW");
    return 0;
}
static tc_status cf_execute(const tc__args *a) {
    return tc__error(TC_ERR_UNSUPPORTED, "cpu.conv.fft: built without FFTW");
}
#endif

const tc__solver tc__solver_cpu_conv_fft = {
    .name = "cpu.conv.fft",
    .backend = TC_BACKEND_CPU,
    .ops = TC_OP_CONV,
    .summary = "FFT convolution layer (FFTW): input spectra per channel, weight spectra packed once, frequency-domain channel sums; for large masks.",
    .available = cf_available,
    .applicable = cf_applicable,
#if TC_HAVE_FFTW
    .estimate = cf_estimate,
    .workspace = cf_workspace,
    .plan = cf_plan,
    .destroy = cf_destroy,
    .wpack_size = cf_wpack_size,
    .wpack = cf_wpack,
#endif
    .execute = cf_execute,
};
