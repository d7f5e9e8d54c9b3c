/* stage.c - the core's conversion passes around a solver that lacks a
 * capability the problem needs (tc__solver.caps): float16 / bfloat16 to
 * float32 and back, channels-last to channels-first and back (x, y and
 * the residual; the weights one way, K x mask x C/G to K x C/G x mask),
 * and the fused epilogue act(acc + residual) (bias stays with the
 * solver). Each
 * pass reads and writes every element once, in tiles of 32 x 32 so that a
 * layout change reads and writes whole cache lines; F16C converts float16
 * eight at a time where the CPU has it. Also the public bulk conversions
 * tc_float_to_half and friends. */
#include "stage.h"

#include "half.h"

#include <stdio.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TC__X86 1
#else
#define TC__X86 0
#endif

/* ---------------- element runs: dtype <-> float / double ---------------- */
#if TC__X86
__attribute__((target("avx,f16c"))) static void f16_to_f32_f16c(float *d, const uint16_t *s,
                                                                 int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(s + i))));
    for (; i < n; i++) d[i] = tc__f16_to_f32(s[i]);
}
__attribute__((target("avx,f16c"))) static void f32_to_f16_f16c(uint16_t *d, const float *s,
                                                                 int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(d + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) d[i] = tc__f32_to_f16(s[i]);
}
/* every CPU with AVX2 has F16C (Haswell, Piledriver and later) */
static int tc__has_f16c(void) { return (tc__cpu_detect() & TC__CPU_AVX2) != 0; }
#endif

/* n elements from src (dtype t, element stride st) to floats */
static void run_to_f(float *d, const void *src, tc_dtype t, int64_t st, int64_t n) {
    if (t == TC_FLOAT32) {
        const float *s = src;
        for (int64_t i = 0; i < n; i++) d[i] = s[i * st];
    } else if (t == TC_FLOAT16) {
        const uint16_t *s = src;
#if TC__X86
        if (st == 1 && tc__has_f16c()) {
            f16_to_f32_f16c(d, s, n);
            return;
        }
#endif
        for (int64_t i = 0; i < n; i++) d[i] = tc__f16_to_f32(s[i * st]);
    } else if (t == TC_BFLOAT16) {
        const uint16_t *s = src;
        for (int64_t i = 0; i < n; i++) d[i] = tc__bf16_to_f32(s[i * st]);
    } else {
        const double *s = src;
        for (int64_t i = 0; i < n; i++) d[i] = (float)s[i * st];
    }
}
static void run_from_f(void *dst, tc_dtype t, int64_t st, const float *s, int64_t n) {
    if (t == TC_FLOAT32) {
        float *d = dst;
        for (int64_t i = 0; i < n; i++) d[i * st] = s[i];
    } else if (t == TC_FLOAT16) {
        uint16_t *d = dst;
#if TC__X86
        if (st == 1 && tc__has_f16c()) {
            f32_to_f16_f16c(d, s, n);
            return;
        }
#endif
        for (int64_t i = 0; i < n; i++) d[i * st] = tc__f32_to_f16(s[i]);
    } else if (t == TC_BFLOAT16) {
        uint16_t *d = dst;
        for (int64_t i = 0; i < n; i++) d[i * st] = tc__f32_to_bf16(s[i]);
    } else {
        double *d = dst;
        for (int64_t i = 0; i < n; i++) d[i * st] = s[i];
    }
}
static void run_to_d(double *d, const void *src, tc_dtype t, int64_t st, int64_t n) {
    for (int64_t i = 0; i < n; i++) d[i] = tc__load_d(src, i * st, t);
}
static void run_from_d(void *dst, tc_dtype t, int64_t st, const double *s, int64_t n) {
    for (int64_t i = 0; i < n; i++) tc__store_d(dst, i * st, t, s[i]);
}

static const void *at_c(const void *base, int64_t i, tc_dtype t) {
    return (const char *)base + i * (int64_t)tc_dtype_size(t);
}
static void *at(void *base, int64_t i, tc_dtype t) {
    return (char *)base + i * (int64_t)tc_dtype_size(t);
}

/* ---------------- dense conversion ---------------- */
typedef struct cvt_job {
    void *dst;
    tc_dtype dd;
    const void *src;
    tc_dtype sd;
} cvt_job;

enum { TC__RUN = 1024 };

static void cvt_range(void *arg, int64_t b, int64_t e, int tid) {
    const cvt_job *j = arg;
    (void)tid;
    for (int64_t i = b; i < e; i += TC__RUN) {
        int64_t n = e - i < TC__RUN ? e - i : TC__RUN;
        if (j->dd == TC_FLOAT64 || j->sd == TC_FLOAT64) {
            double buf[TC__RUN];
            run_to_d(buf, at_c(j->src, i, j->sd), j->sd, 1, n);
            run_from_d(at(j->dst, i, j->dd), j->dd, 1, buf, n);
        } else {
            float buf[TC__RUN];
            run_to_f(buf, at_c(j->src, i, j->sd), j->sd, 1, n);
            run_from_f(at(j->dst, i, j->dd), j->dd, 1, buf, n);
        }
    }
}

void tc__convert(void *dst, tc_dtype dd, const void *src, tc_dtype sd, int64_t n,
                 int threads) {
    if (n <= 0) return;
    if (dd == sd) {
        memcpy(dst, src, (size_t)n * tc_dtype_size(dd));
        return;
    }
    cvt_job j = {dst, dd, src, sd};
    tc__parallel_for(n < (1 << 16) ? 1 : threads, n, cvt_range, &j);
}

/* ---------------- tiled tensor passes ----------------
 * A tensor N x C x S is a stack of N matrices; channels-first stores each
 * as C rows of S, channels-last as S rows of C. Work items are (n, tile of
 * 32 channels x 32 positions). */
enum { TB = 32 };

typedef struct tile_job {
    void *dst;
    tc_dtype dd;
    tc_layout dl;
    const void *src;
    tc_dtype sd;
    tc_layout sl;
    const void *res; /* output pass: residual in dst's dtype and layout */
    tc_activation act;
    int epilogue;    /* output pass */
    int64_t N, C, S, tc, ts;
} tile_job;

/* offset of (n, c, s) in layout l */
static int64_t off_of(tc_layout l, int64_t C, int64_t S, int64_t n, int64_t c, int64_t s) {
    return l == TC_LAYOUT_CHANNELS_LAST ? (n * S + s) * C + c : (n * C + c) * S + s;
}

#define TC__TILE_BODY(T, TO, FROM, ACT)                                                      \
    T buf[TB][TB]; /* [c][s] */                                                              \
    T rb[TB];                                                                                \
    /* read: rows along the source's contiguous axis */                                      \
    if (j->sl == TC_LAYOUT_CHANNELS_FIRST)                                                   \
        for (int64_t c = 0; c < nc; c++)                                                     \
            TO(buf[c], at_c(j->src, off_of(j->sl, j->C, j->S, n, c0 + c, s0), j->sd), j->sd, \
               1, ns);                                                                       \
    else                                                                                     \
        for (int64_t s = 0; s < ns; s++) {                                                   \
            TO(rb, at_c(j->src, off_of(j->sl, j->C, j->S, n, c0, s0 + s), j->sd), j->sd, 1,  \
               nc);                                                                          \
            for (int64_t c = 0; c < nc; c++) buf[c][s] = rb[c];                              \
        }                                                                                    \
    /* write: rows along the destination's contiguous axis */                                \
    if (j->dl == TC_LAYOUT_CHANNELS_FIRST)                                                   \
        for (int64_t c = 0; c < nc; c++) {                                                   \
            int64_t o = off_of(j->dl, j->C, j->S, n, c0 + c, s0);                            \
            if (j->epilogue) {                                                               \
                if (j->res) {                                                                \
                    TO(rb, at_c(j->res, o, j->dd), j->dd, 1, ns);                            \
                    for (int64_t s = 0; s < ns; s++) buf[c][s] += rb[s];                     \
                }                                                                            \
                if (j->act)                                                                  \
                    for (int64_t s = 0; s < ns; s++) buf[c][s] = ACT(j->act, buf[c][s]);     \
            }                                                                                \
            FROM(at(j->dst, o, j->dd), j->dd, 1, buf[c], ns);                                \
        }                                                                                    \
    else                                                                                     \
        for (int64_t s = 0; s < ns; s++) {                                                   \
            int64_t o = off_of(j->dl, j->C, j->S, n, c0, s0 + s);                            \
            for (int64_t c = 0; c < nc; c++) rb[c] = buf[c][s];                              \
            if (j->epilogue) {                                                               \
                T r2[TB];                                                                    \
                if (j->res) {                                                                \
                    TO(r2, at_c(j->res, o, j->dd), j->dd, 1, nc);                            \
                    for (int64_t c = 0; c < nc; c++) rb[c] += r2[c];                         \
                }                                                                            \
                if (j->act)                                                                  \
                    for (int64_t c = 0; c < nc; c++) rb[c] = ACT(j->act, rb[c]);             \
            }                                                                                \
            FROM(at(j->dst, o, j->dd), j->dd, 1, rb, nc);                                    \
        }

static void tile_range(void *arg, int64_t b, int64_t e, int tid) {
    const tile_job *j = arg;
    (void)tid;
    const int wide = j->dd == TC_FLOAT64 || j->sd == TC_FLOAT64;
    for (int64_t t = b; t < e; t++) {
        int64_t n = t / (j->tc * j->ts), r = t % (j->tc * j->ts);
        int64_t c0 = (r / j->ts) * TB, s0 = (r % j->ts) * TB;
        int64_t nc = j->C - c0 < TB ? j->C - c0 : TB, ns = j->S - s0 < TB ? j->S - s0 : TB;
        if (wide) {
            TC__TILE_BODY(double, run_to_d, run_from_d, tc__act_d)
        } else {
            TC__TILE_BODY(float, run_to_f, run_from_f, tc__act_f)
        }
    }
}

static void tile_run(tile_job *j, int threads) {
    j->tc = (j->C + TB - 1) / TB;
    j->ts = (j->S + TB - 1) / TB;
    int64_t items = j->N * j->tc * j->ts;
    int64_t elems = j->N * j->C * j->S;
    tc__parallel_for(elems < (1 << 15) ? 1 : threads, items, tile_range, j);
}

void tc__convert_tensor(void *dst, tc_dtype dd, tc_layout dl, const void *src, tc_dtype sd,
                        tc_layout sl, int64_t N, int64_t C, int64_t S, int threads) {
    if (dl == sl || C == 1 || S == 1) {
        tc__convert(dst, dd, src, sd, N * C * S, threads);
        return;
    }
    tile_job j = {dst, dd, dl, src, sd, sl, NULL, TC_ACT_NONE, 0, N, C, S, 0, 0};
    tile_run(&j, threads);
}

/* The output pass where the solver's float32 output and y share the
 * layout (the in-place epilogue, or a dtype-only relay): one flat pass in
 * runs of TC__RUN, each loop simple enough to vectorize. The tiled pass
 * above took 23 ms for a ReLU over 8 x 256 x 56 x 56 floats on 2 Zen 5
 * cores, where torch.relu takes 0.35 ms. */
typedef struct flat_job {
    void *y;
    tc_dtype yd;
    const float *acc;
    const void *res; /* in y's dtype */
    tc_activation act;
    int64_t n;
} flat_job;

static void flat_range(void *arg, int64_t b, int64_t e, int tid) {
    const flat_job *j = arg;
    (void)tid;
    float buf[TC__RUN], rb[TC__RUN];
    const int f32 = j->yd == TC_FLOAT32;
    for (int64_t t = b; t < e; t++) {
        int64_t i0 = t * TC__RUN, n = j->n - i0 < TC__RUN ? j->n - i0 : TC__RUN;
        const float *a = j->acc + i0;
        float *d = f32 ? (float *)j->y + i0 : buf;
        if (j->res) {
            const float *r = rb;
            if (f32) r = (const float *)j->res + i0;
            else run_to_f(rb, at_c(j->res, i0, j->yd), j->yd, 1, n);
            for (int64_t i = 0; i < n; i++) d[i] = a[i] + r[i];
            a = d;
        }
        if (j->act == TC_ACT_RELU) {
            for (int64_t i = 0; i < n; i++) {
                float v = a[i];
                d[i] = v > 0 || v != v ? v : 0.0f;
            }
        } else if (j->act != TC_ACT_NONE) {
            for (int64_t i = 0; i < n; i++) d[i] = tc__act_f(j->act, a[i]);
        } else if (d != a) {
            memmove(d, a, (size_t)n * sizeof(float));
        }
        if (!f32) run_from_f(at(j->y, i0, j->yd), j->yd, 1, d, n);
    }
}

void tc__stage_output(void *y, tc_dtype yd, tc_layout yl, const void *acc, tc_dtype ad,
                      tc_layout al, const void *residual, tc_activation act, int64_t N,
                      int64_t K, int64_t S, int threads) {
    if (ad == TC_FLOAT32 && yd != TC_FLOAT64 && (yl == al || K == 1 || S == 1)) {
        flat_job f = {y, yd, acc, residual, act, N * K * S};
        if (f.n <= 0) return;
        int64_t items = (f.n + TC__RUN - 1) / TC__RUN;
        tc__parallel_for(f.n < (1 << 15) ? 1 : threads, items, flat_range, &f);
        return;
    }
    tile_job j = {y, yd, yl, acc, ad, al, residual, act, 1, N, K, S, 0, 0};
    tile_run(&j, threads);
}

/* ---------------- which passes, what they cost ---------------- */
unsigned tc__stage_bits(const tc__problem *p, unsigned caps) {
    unsigned b = 0;
    if (tc__dtype_is_half(p->dtype) && !(caps & TC__CAP_HALF)) b |= TC__STAGE_DTYPE;
    if (p->op == TC_OP_CONV) {
        if (p->layout == TC_LAYOUT_CHANNELS_LAST && !(caps & TC__CAP_CHANNELS_LAST))
            b |= TC__STAGE_LAYOUT;
        if ((p->act != TC_ACT_NONE || p->has_residual) && !(caps & TC__CAP_EPILOGUE))
            b |= TC__STAGE_EPILOGUE;
        if (p->wlayout == TC_LAYOUT_CHANNELS_LAST && !(caps & TC__CAP_WEIGHTS_CL))
            b |= TC__STAGE_WLAYOUT;
    }
    return b;
}

void tc__stage_problem(const tc__problem *p, unsigned caps, tc__problem *sp) {
    *sp = *p;
    unsigned b = tc__stage_bits(p, caps);
    if (b & TC__STAGE_DTYPE) {
        sp->dtype = TC_FLOAT32;
        sp->esize = 4;
        if (p->op == TC_OP_FILTER) sp->mask = p->mask_f32;
    }
    if (b & TC__STAGE_LAYOUT) sp->layout = TC_LAYOUT_CHANNELS_FIRST;
    if (b & TC__STAGE_WLAYOUT) sp->wlayout = TC_LAYOUT_CHANNELS_FIRST;
    if (b & TC__STAGE_EPILOGUE) {
        sp->act = TC_ACT_NONE;
        sp->has_residual = 0;
    }
}

int64_t tc__span(int64_t rows, int64_t cols, int64_t ld) {
    return rows > 0 && cols > 0 ? (rows - 1) * ld + cols : 0;
}
int64_t tc__gemm_a_span(const tc__problem *p) {
    return tc__span(p->trans_a ? p->k : p->m, p->trans_a ? p->m : p->k, p->lda);
}
int64_t tc__gemm_b_span(const tc__problem *p) {
    return tc__span(p->trans_b ? p->n : p->k, p->trans_b ? p->k : p->n, p->ldb);
}

tc__stage_counts tc__stage_buffers(const tc__problem *p, unsigned bits) {
    tc__stage_counts c = {0, 0, 0, 0};
    const int dt = (bits & TC__STAGE_DTYPE) != 0;
    const int relay = (bits & (TC__STAGE_DTYPE | TC__STAGE_LAYOUT)) != 0;
    const int epi = (bits & TC__STAGE_EPILOGUE) != 0;
    if (p->op == TC_OP_FILTER) {
        if (dt) {
            c.x = tc__x_count(p);
            c.y = tc__y_count(p);
        }
    } else if (p->op == TC_OP_CONV) {
        if (relay) c.x = tc__x_count(p);
        if (relay || (epi && p->has_residual)) c.y = tc__y_count(p);
        if (!epi && relay && p->has_residual) c.res = tc__y_count(p);
        if (dt) c.w = tc__w_count(p) + (p->has_bias ? p->K : 0);
        else if (bits & TC__STAGE_WLAYOUT) c.w = tc__w_count(p);
    } else if (dt) {
        c.x = tc__gemm_a_span(p);
        c.y = tc__span(p->m, p->n, p->ldc);
        c.w = tc__gemm_b_span(p);
    }
    return c;
}

double tc__stage_cost(const tc__problem *p, unsigned bits, tc_backend be, const tc__env *env) {
    if (!bits) return 0;
    double es = (double)p->esize, fs = bits & TC__STAGE_DTYPE ? 4.0 : es, bytes = 0;
    if (p->op == TC_OP_GEMM) {
        bytes = (es + fs) * ((double)p->m * p->k + (double)p->k * p->n) +
                (es + fs) * (double)p->m * p->n * (p->beta != 0 ? 2 : 1);
    } else {
        double nx = (double)tc__x_count(p), ny = (double)tc__y_count(p);
        if (bits & (TC__STAGE_DTYPE | TC__STAGE_LAYOUT)) bytes += (es + fs) * nx;
        /* output pass: read acc (+ residual), write y */
        if (bits & (TC__STAGE_DTYPE | TC__STAGE_LAYOUT | TC__STAGE_EPILOGUE))
            bytes += (fs + es + (p->has_residual ? es : 0)) * ny;
        /* the weights' pass: the dtype and the layout change in one */
        if (bits & (TC__STAGE_DTYPE | TC__STAGE_WLAYOUT))
            bytes += (es + fs) * (double)tc__w_count(p);
    }
    double bw = be == TC_BACKEND_CUDA ? 2.5e12 : tc__peak_bandwidth(env);
    return bytes / bw + (be == TC_BACKEND_CUDA ? 4e-6 : 0);
}

void tc__stage_describe(const tc__problem *p, unsigned bits, char *buf, size_t n) {
    char d[64] = "", e[64] = "";
    if (bits & TC__STAGE_DTYPE)
        snprintf(d, sizeof d, "%s %s->float32 and back",
                 p->op == TC_OP_GEMM ? "a,b,c" : p->op == TC_OP_FILTER ? "x,mask,y" : "x,w,bias,y",
                 tc_dtype_name(p->dtype));
    if (bits & TC__STAGE_EPILOGUE)
        snprintf(e, sizeof e, "epilogue pass (%s%s)", tc_activation_name(p->act),
                 p->has_residual ? " + residual" : "");
    const char *l = bits & TC__STAGE_LAYOUT ? "layout channels_last->channels_first and back" : "";
    const char *w = bits & TC__STAGE_WLAYOUT ? "weights channels_last->channels_first" : "";
    snprintf(buf, n, "%s%s%s%s%s%s%s", d, d[0] && l[0] ? "; " : "", l,
             (d[0] || l[0]) && e[0] ? "; " : "", e, (d[0] || l[0] || e[0]) && w[0] ? "; " : "",
             w);
}

/* ---------------- public bulk conversions ---------------- */
void tc_float_to_half(uint16_t *dst, const float *src, size_t n) {
    if (dst && src) run_from_f(dst, TC_FLOAT16, 1, src, (int64_t)n);
}
void tc_half_to_float(float *dst, const uint16_t *src, size_t n) {
    if (dst && src) run_to_f(dst, src, TC_FLOAT16, 1, (int64_t)n);
}
void tc_float_to_bfloat16(uint16_t *dst, const float *src, size_t n) {
    if (dst && src) run_from_f(dst, TC_BFLOAT16, 1, src, (int64_t)n);
}
void tc_bfloat16_to_float(float *dst, const uint16_t *src, size_t n) {
    if (dst && src) run_to_f(dst, src, TC_BFLOAT16, 1, (int64_t)n);
}
