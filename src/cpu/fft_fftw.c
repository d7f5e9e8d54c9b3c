/* fft_fftw.c - filter correlation through FFTW, overlap-save blocks.
 *
 * Lowered problem (internal.h): y[o] = sum_r w[r] X(o + r - pad_lo), X the
 * input extended by the boundary mode. Along every axis the outputs need the
 * extended input e[i] = X(i - pad_lo), i in [0, E) with E = out + m - 1.
 *
 * Overlap-save: the outputs are cut into blocks of B = L - m + 1 per axis.
 * A block gathers the L-long extended input segment that starts at its
 * first output (boundary resolved by tc__boundary_index while gathering, so
 * no padded copy of the whole input exists), transforms it (r2c, in place),
 * multiplies by conj(W)/prod(L) with W the r2c of the zero-padded mask, and
 * transforms back (c2r). A circular correlation c[j] = sum_r w[r] s[(j+r)
 * mod L] does not wrap for j <= L - m, so entries 0..B-1 are the outputs.
 *
 * Block size rule: per axis L is a 2,3,5,7-smooth FFT length, L >= m, at
 * most the smooth length covering the whole axis; the block buffer (reals,
 * last axis padded to 2*(L/2+1)) is capped at FFT_CAP_BYTES (1 MiB: half
 * the L2 of one core here; a 512^2 float block, just over, ran 25% slower
 * per element than 384^2), raised only when the mask alone needs more.
 * Among those, the model below (seconds per block x number of blocks, radix
 * penalty included) picks the cheapest; for 2D float32 it lands at
 * L ~ 6-12 x m (k15 -> 192, k31 -> 384, k63 -> 384).
 *
 * Threads take whole blocks (per-thread buffer in the workspace), so the
 * result is bit-identical for every thread count. The mask spectrum is
 * computed at plan time, or at every execute where the plan holds no mask
 * (p->mask == NULL): the valid-swap case, whose mask is the caller's input,
 * and plans made with TC_PLAN_MASK_AT_EXECUTE (the call's mask).
 *
 * FFTW's planner is not thread-safe: plan creation and destruction are
 * serialised by fft_lock. Execution uses the new-array functions on 64-byte
 * aligned buffers (as aligned as the planning buffer), which FFTW documents
 * as thread-safe. Calls to FFTW's planner elsewhere in the process are not
 * covered by fft_lock.
 *
 * Accuracy (measured, tests in the report): max |y - ref| / max(sum|w||x|)
 * about 1e-7 (float32) and 2e-16 (float64) for 2D blocks up to 512^2; error
 * grows like eps * log2(prod L). */
#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

/* Smallest 2,3,5,7-smooth length >= n (even when asked and n > 1), found
 * by enumerating 2^a 3^b 5^c 7^d directly: stepping n++ takes minutes near
 * 2^41, where smooth numbers are ~1e8 apart. */
int64_t tc__fft_smooth_length(int64_t n, int even) {
    if (n <= 1) return 1;
    const int64_t lim = INT64_MAX / 8;
    int64_t best = INT64_MAX;
    for (int64_t p7 = 1; p7 < lim; p7 *= 7)
        for (int64_t p5 = p7; p5 < lim; p5 *= 5)
            for (int64_t p3 = p5; p3 < lim; p3 *= 3) {
                int64_t v = p3;
                while (v < n || (even && v % 2)) {
                    if (v > lim / 2) { v = INT64_MAX; break; }
                    v *= 2;
                }
                if (v < best) best = v;
                if (p3 > n) break;
            }
    return best;
}

#if TC_HAVE_FFTW
#include <fftw3.h>
#include <pthread.h>

#define FFT_CAP_BYTES ((int64_t)1 << 20)

typedef struct fft_geom {
    int64_t L[3], B[3], T[3]; /* FFT length, outputs per block, blocks */
    int64_t E[3];             /* extended input length out + m - 1 */
    int64_t ld;               /* last axis of the buffer, 2*(L2/2+1) */
    int64_t nreal;            /* reals in one block buffer */
    int64_t nblocks;          /* N * T0 * T1 * T2 */
    size_t bufbytes;          /* nreal * esize rounded to 64 */
} fft_geom;

typedef struct fft_state {
    fft_geom g;
    void *fwd, *inv;          /* fftwf_plan or fftw_plan */
    void *W;                  /* conj(spectrum)/prod(L); NULL: per execute */
    tc_dtype dtype;
} fft_state;

static pthread_mutex_t fft_lock = PTHREAD_MUTEX_INITIALIZER;
/* The one FFTW planner lock of the library (cpu.conv.fft plans through it
 * too: FFTW's planner is global and not thread-safe). */
void tc__fftw_planner_lock(void) { pthread_mutex_lock(&fft_lock); }
void tc__fftw_planner_unlock(void) { pthread_mutex_unlock(&fft_lock); }

/* FFTW (ESTIMATE plans) is slower per N log N on lengths with odd
 * factors; measured 2D r2c+c2r pairs on one Xeon core, relative to 2^a
 * and 2^a * 3: 3^2 ~1.2x, 5 ~1.2-1.4x, 7 ~1.5-3x. */
static double fft_radix_penalty(int64_t l) {
    double pen = 1.0;
    int threes = 0;
    while (l % 3 == 0) { l /= 3; if (++threes > 1) pen *= 1.15; }
    while (l % 5 == 0) { l /= 5; pen *= 1.2; }
    while (l % 7 == 0) { l /= 7; pen *= 1.5; }
    return pen;
}

/* Model seconds of one block of prod(L) reals on one thread: two real
 * transforms (~2.5 N log2 N flops each at FFT_RATE of the per-thread peak,
 * i.e. ~18 GFLOP/s float32 on a 3 GHz AVX-512 core, measured: 0.28 ns per
 * N log2 N for the pair) times the radix penalty, plus a linear term for
 * gather, complex multiply and scatter (measured ~1.2 ns per element). */
#define FFT_RATE 0.093
static double fft_rate(const tc__problem *p, const tc__env *env) {
    double thr = tc__peak_flops(env) / env->threads;
    return thr * FFT_RATE * (p->dtype == TC_FLOAT32 ? 1.0 : 0.55);
}
static double fft_block_seconds_at(const int64_t L[3], const tc__problem *p, double rate) {
    double n = (double)(L[0] * L[1] * L[2]);
    double lg = n > 2 ? log2(n) : 1.0;
    double pen = fft_radix_penalty(L[0]) * fft_radix_penalty(L[1]) *
                 fft_radix_penalty(L[2]);
    double lin = n * (p->dtype == TC_FLOAT32 ? 1.2e-9 : 2.0e-9);
    return 2.0 * 2.5 * n * lg * pen / rate + lin;
}
static double fft_block_seconds(const int64_t L[3], const tc__problem *p,
                                const tc__env *env) {
    return fft_block_seconds_at(L, p, fft_rate(p, env));
}

/* threads = 1 while choosing L: the block size (hence every rounding) must
 * not depend on the thread count, so results are bit-identical for any. */
static double fft_total_seconds_at(const int64_t L[3], const tc__problem *p,
                                   double rate, int threads) {
    int64_t n = p->N;
    for (int a = 0; a < 3; a++) {
        int64_t b = L[a] - p->msk[a] + 1;
        n *= (p->out[a] + b - 1) / b;
    }
    int64_t rounds = (n + threads - 1) / threads;
    return (double)rounds * fft_block_seconds_at(L, p, rate);
}
static double fft_total_seconds(const int64_t L[3], const tc__problem *p,
                                const tc__env *env, int threads) {
    return fft_total_seconds_at(L, p, fft_rate(p, env), threads);
}

/* The lengths an axis may take, ascending: the 2,3,5,7-smooth numbers
 * (even ones on the last axis) from lo to hi, listed once per geometry
 * (tc__fft_smooth_length per step of the search below cost ~100 ms of
 * planning on a 128^3 volume). n: how many; NULL when they do not fit. */
static int fft_cmp64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}
static int64_t *fft_lengths(int64_t lo, int64_t hi, int even, int64_t *n) {
    int64_t cnt = 0, room = 64;
    int64_t *v = malloc((size_t)room * sizeof *v);
    if (!v) return NULL;
    for (int64_t p7 = 1; p7 <= hi; p7 = p7 > hi / 7 ? hi + 1 : p7 * 7)
        for (int64_t p5 = p7; p5 <= hi; p5 = p5 > hi / 5 ? hi + 1 : p5 * 5)
            for (int64_t p3 = p5; p3 <= hi; p3 = p3 > hi / 3 ? hi + 1 : p3 * 3)
                for (int64_t x = p3; x <= hi; x = x > hi / 2 ? hi + 1 : x * 2) {
                    if (x < lo || (even && x % 2 && x > 1)) continue;
                    if (cnt == room) {
                        int64_t *w = realloc(v, (size_t)(room *= 2) * sizeof *v);
                        if (!w) { free(v); return NULL; }
                        v = w;
                    }
                    v[cnt++] = x;
                }
    qsort(v, (size_t)cnt, sizeof *v, fft_cmp64);
    *n = cnt;
    return v;
}

/* Recursive search over axes a..2 for the cheapest L within cap reals;
 * axis a's lengths are len[a][0..nlen[a]) (NULL: stepped one by one). */
static void fft_search(int a, int64_t L[3], int64_t used, int64_t cap,
                       const int64_t lo[3], const int64_t hi[3],
                       int64_t *const len[3], const int64_t nlen[3],
                       const tc__problem *p, double rate,
                       int64_t best[3], double *best_t) {
    if (a == 3) {
        double t = fft_total_seconds_at(L, p, rate, 1);
        if (*best_t < 0 || t < *best_t) {
            *best_t = t;
            memcpy(best, L, 3 * sizeof *L);
        }
        return;
    }
    int64_t i = 0;
    for (int64_t l = lo[a]; l <= hi[a];
         l = len[a] ? (++i < nlen[a] ? len[a][i] : hi[a] + 1) : tc__fft_smooth_length(l + 1, a == 2)) {
        int64_t pad = a == 2 ? 2 * (l / 2 + 1) : l;
        if (used * pad > cap && l != lo[a]) break;
        L[a] = l;
        fft_search(a + 1, L, used * pad, cap, lo, hi, len, nlen, p, rate, best, best_t);
    }
}

/* The last geometry made on this thread (applicable, workspace, estimate
 * and init ask for the same problem's in turn), keyed by what it reads. */
typedef struct fft_memo {
    int valid;
    int64_t out[3], msk[3], N, esize;
    tc_dtype dtype;
    double rate;
    fft_geom g;
} fft_memo;
static _Thread_local fft_memo fft_last;

static void fft_geometry(const tc__problem *p, const tc__env *env, fft_geom *g) {
    int64_t lo[3], hi[3], L[3];
    int64_t minreal = 1;
    const double rate = fft_rate(p, env);
    fft_memo *m = &fft_last;
    if (m->valid && m->N == p->N && m->esize == (int64_t)p->esize && m->dtype == p->dtype &&
        m->rate == rate && !memcmp(m->out, p->out, sizeof m->out) && !memcmp(m->msk, p->msk, sizeof m->msk)) {
        *g = m->g;
        return;
    }
    memset(g, 0, sizeof *g);
    for (int a = 0; a < 3; a++) {
        g->E[a] = p->out[a] + p->msk[a] - 1;
        lo[a] = tc__fft_smooth_length(p->msk[a], a == 2);
        hi[a] = tc__fft_smooth_length(g->E[a], a == 2);
        if (hi[a] < lo[a]) hi[a] = lo[a];
        minreal *= a == 2 ? 2 * (lo[a] / 2 + 1) : lo[a];
    }
    int64_t cap = FFT_CAP_BYTES / (int64_t)p->esize;
    if (cap < 4 * minreal) cap = 4 * minreal; /* huge masks: room for B > 1 */
    /* the lengths the search can reach: up to cap (a longer one is taken
     * only as an axis's first, lo) */
    int64_t *len[3] = {NULL, NULL, NULL}, nlen[3] = {0, 0, 0};
    for (int a = 0; a < 3; a++) {
        int64_t top = hi[a] < cap ? hi[a] : cap;
        if (top < lo[a]) top = lo[a];
        len[a] = fft_lengths(lo[a], top, a == 2, &nlen[a]);
        if (len[a] && (nlen[a] == 0 || len[a][0] != lo[a])) { /* not the list stepping gives */
            free(len[a]);
            len[a] = NULL;
        }
    }
    double best_t = -1;
    fft_search(0, L, 1, cap, lo, hi, len, nlen, p, rate, g->L, &best_t);
    for (int a = 0; a < 3; a++) free(len[a]);
    g->nblocks = p->N;
    for (int a = 0; a < 3; a++) {
        g->B[a] = g->L[a] - p->msk[a] + 1;
        g->T[a] = (p->out[a] + g->B[a] - 1) / g->B[a];
        g->nblocks *= g->T[a];
    }
    g->ld = 2 * (g->L[2] / 2 + 1);
    g->nreal = g->L[0] * g->L[1] * g->ld;
    g->bufbytes = ((size_t)g->nreal * p->esize + 63) & ~(size_t)63;
    m->valid = 1;
    memcpy(m->out, p->out, sizeof m->out);
    memcpy(m->msk, p->msk, sizeof m->msk);
    m->N = p->N;
    m->esize = (int64_t)p->esize;
    m->dtype = p->dtype;
    m->rate = rate;
    m->g = *g;
}

static int fft_available(void) { return 1; }

static int fft_applicable(const tc__problem *p, const tc__env *e, char *why,
                          size_t n) {
    if (p->op != TC_OP_FILTER) {
        if (why) snprintf(why, n, "only the filter operation");
        return 0;
    }
    /* the transform is the same size as the block; beyond int range FFTW
     * cannot plan it */
    fft_geom g;
    fft_geometry(p, e, &g);
    if (g.nreal > (int64_t)1 << 30) {
        if (why) snprintf(why, n, "mask too large for one FFT block");
        return 0;
    }
    return 1;
}

static double fft_estimate(const tc__problem *p, const tc__env *e) {
    /* per-call masks (TC_PLAN_MASK_AT_EXECUTE): by name only (signal's
     * fftconvolve); the planner keeps a direct sum there, whose integer
     * results (ndimage on integer arrays, summed in float64) are exact */
    if (!p->mask && (e->flags & TC_PLAN_MASK_AT_EXECUTE)) return 1e30;
    fft_geom g;
    fft_geometry(p, e, &g);
    double t = fft_total_seconds(g.L, p, e, e->threads);
    if (!p->mask) t += fft_block_seconds(g.L, p, e) / 2; /* mask spectrum */
    /* first touch of input and output from memory */
    t += tc__problem_bytes(p) / tc__peak_bandwidth(e);
    /* ESTIMATE plans of some lengths (192^2 among them) run ~20% slower
     * than the model; erring 10% high keeps the crossover with the direct
     * solvers where it was measured (2D float32, 2 cores: k ~ 23) */
    return 1.1 * t;
}

static size_t fft_workspace(const tc__problem *p, const tc__env *e) {
    fft_geom g;
    fft_geometry(p, e, &g);
    int64_t thr = e->threads < g.nblocks ? e->threads : g.nblocks;
    return g.bufbytes * (size_t)(thr + (p->mask ? 0 : 1));
}

/* ---------------- typed kernels ---------------- */

/* Gathers the extended input segment [s, s+L) of one row: e = s + i is the
 * extended index, e - pad the input index; entries with e >= E are zero
 * (never read by a kept output, but must be finite). */
#define FFT_KERNELS(T, SFX)                                                      \
    static void fft_gather_row_##SFX(T *dst, const T *x, int64_t s, int64_t L,  \
                                     int64_t E, int64_t pad, int64_t n,         \
                                     tc_mode mode, T cval) {                    \
        int64_t stop = E - s < L ? E - s : L; /* i < stop are inside E */       \
        int64_t i = 0;                                                          \
        int64_t a = pad - s, b = n + pad - s; /* i in [a, b): interior */       \
        if (a < 0) a = 0;                                                       \
        if (b > stop) b = stop;                                                 \
        for (; i < stop && i < a; i++) {                                        \
            int64_t j = tc__boundary_index(s + i - pad, n, mode);               \
            dst[i] = j < 0 ? cval : x[j];                                       \
        }                                                                       \
        if (b > i) {                                                            \
            memcpy(dst + i, x + (s + i - pad), (size_t)(b - i) * sizeof(T));    \
            i = b;                                                              \
        }                                                                       \
        for (; i < stop; i++) {                                                 \
            int64_t j = tc__boundary_index(s + i - pad, n, mode);               \
            dst[i] = j < 0 ? cval : x[j];                                       \
        }                                                                       \
        for (; i < L; i++) dst[i] = 0;                                          \
    }                                                                           \
                                                                                \
    static void fft_gather_##SFX(T *buf, const tc__problem *p, const fft_geom *g,\
                                 const T *x, const int64_t s[3]) {              \
        const T cval = (T)p->cval;                                              \
        for (int64_t i0 = 0; i0 < g->L[0]; i0++) {                              \
            int64_t e0 = s[0] + i0;                                             \
            int64_t j0 = e0 < g->E[0]                                           \
                ? tc__boundary_index(e0 - p->pad_lo[0], p->in[0], p->mode) : -2;\
            for (int64_t i1 = 0; i1 < g->L[1]; i1++) {                          \
                int64_t e1 = s[1] + i1;                                         \
                int64_t j1 = e1 < g->E[1]                                       \
                    ? tc__boundary_index(e1 - p->pad_lo[1], p->in[1], p->mode)  \
                    : -2;                                                       \
                T *d = buf + (i0 * g->L[1] + i1) * g->ld;                       \
                if (j0 == -2 || j1 == -2) {                                     \
                    memset(d, 0, (size_t)g->L[2] * sizeof(T));                  \
                } else if (j0 < 0 || j1 < 0) {                                  \
                    int64_t stop = g->E[2] - s[2];                              \
                    for (int64_t i2 = 0; i2 < g->L[2]; i2++)                    \
                        d[i2] = i2 < stop ? cval : 0;                           \
                } else {                                                        \
                    fft_gather_row_##SFX(d, x + (j0 * p->in[1] + j1) * p->in[2],\
                                         s[2], g->L[2], g->E[2], p->pad_lo[2],  \
                                         p->in[2], p->mode, cval);              \
                }                                                               \
            }                                                                   \
        }                                                                       \
    }                                                                           \
                                                                                \
    static void fft_scatter_##SFX(T *y, const tc__problem *p, const fft_geom *g,\
                                  const T *buf, const int64_t s[3]) {           \
        int64_t n0 = p->out[0] - s[0], n1 = p->out[1] - s[1];                   \
        int64_t n2 = p->out[2] - s[2];                                          \
        if (n0 > g->B[0]) n0 = g->B[0];                                         \
        if (n1 > g->B[1]) n1 = g->B[1];                                         \
        if (n2 > g->B[2]) n2 = g->B[2];                                         \
        for (int64_t j0 = 0; j0 < n0; j0++)                                     \
            for (int64_t j1 = 0; j1 < n1; j1++)                                 \
                memcpy(y + ((s[0] + j0) * p->out[1] + s[1] + j1) * p->out[2] +  \
                           s[2],                                                \
                       buf + (j0 * g->L[1] + j1) * g->ld,                       \
                       (size_t)n2 * sizeof(T));                                 \
    }                                                                           \
                                                                                \
    /* x *= w, both interleaved complex arrays of nc entries */                 \
    static void fft_cmul_##SFX(T *restrict x, const T *restrict w, int64_t nc) {\
        for (int64_t i = 0; i < nc; i++) {                                      \
            T xr = x[2 * i], xi = x[2 * i + 1];                                 \
            T wr = w[2 * i], wi = w[2 * i + 1];                                 \
            x[2 * i] = xr * wr - xi * wi;                                       \
            x[2 * i + 1] = xr * wi + xi * wr;                                   \
        }                                                                       \
    }                                                                           \
                                                                                \
    /* W = conj(r2c(mask zero-padded)) / prod(L), computed in place in W */     \
    static void fft_spectrum_##SFX(T *W, const tc__problem *p, const fft_geom *g,\
                                   const T *mask, void *fwd) {                  \
        memset(W, 0, (size_t)g->nreal * sizeof(T));                             \
        for (int64_t r0 = 0; r0 < p->msk[0]; r0++)                              \
            for (int64_t r1 = 0; r1 < p->msk[1]; r1++)                          \
                memcpy(W + (r0 * g->L[1] + r1) * g->ld,                         \
                       mask + (r0 * p->msk[1] + r1) * p->msk[2],                \
                       (size_t)p->msk[2] * sizeof(T));                          \
        fft_r2c_##SFX(fwd, W);                                                  \
        T scale = (T)(1.0 / ((double)g->L[0] * g->L[1] * g->L[2]));             \
        for (int64_t i = 0; i < g->nreal / 2; i++) {                            \
            W[2 * i] *= scale;                                                  \
            W[2 * i + 1] *= -scale;                                             \
        }                                                                       \
    }

static void fft_r2c_f32(void *plan, float *b) {
    fftwf_execute_dft_r2c((fftwf_plan)plan, b, (fftwf_complex *)b);
}
static void fft_r2c_f64(void *plan, double *b) {
    fftw_execute_dft_r2c((fftw_plan)plan, b, (fftw_complex *)b);
}
static void fft_c2r_f32(void *plan, float *b) {
    fftwf_execute_dft_c2r((fftwf_plan)plan, (fftwf_complex *)b, b);
}
static void fft_c2r_f64(void *plan, double *b) {
    fftw_execute_dft_c2r((fftw_plan)plan, (fftw_complex *)b, b);
}

FFT_KERNELS(float, f32)
FFT_KERNELS(double, f64)

/* ---------------- plan / execute ---------------- */

static void fft_destroy(void *state) {
    fft_state *s = state;
    if (!s) return;
    pthread_mutex_lock(&fft_lock);
    if (s->dtype == TC_FLOAT32) {
        if (s->fwd) fftwf_destroy_plan((fftwf_plan)s->fwd);
        if (s->inv) fftwf_destroy_plan((fftwf_plan)s->inv);
    } else {
        if (s->fwd) fftw_destroy_plan((fftw_plan)s->fwd);
        if (s->inv) fftw_destroy_plan((fftw_plan)s->inv);
    }
    pthread_mutex_unlock(&fft_lock);
    tc__free(s->W);
    free(s);
}

static tc_status fft_plan(const tc__problem *p, const tc__env *env, void **out) {
    fft_state *s = calloc(1, sizeof *s);
    if (!s) return tc__error(TC_ERR_OUT_OF_MEMORY, "cpu.filter.fft: out of memory");
    s->dtype = p->dtype;
    fft_geometry(p, env, &s->g);
    const fft_geom *g = &s->g;
    /* planning scratch: 64-byte aligned like every execute buffer, so the
     * plan's alignment assumptions hold for the new-array calls */
    void *scratch = tc__alloc(g->bufbytes);
    if (p->mask) s->W = tc__alloc(g->bufbytes);
    if (!scratch || (p->mask && !s->W)) {
        size_t bytes = g->bufbytes;
        tc__free(scratch);
        fft_destroy(s);
        return tc__error(TC_ERR_OUT_OF_MEMORY,
                         "cpu.filter.fft: cannot allocate %zu bytes", bytes);
    }
    int dims[3], rank = 0;
    for (int a = 0; a < 3; a++)
        if (g->L[a] > 1 || (a == 2 && rank == 0) || rank > 0)
            dims[rank++] = (int)g->L[a];
    unsigned flags = (env->flags & TC_PLAN_MEASURE) ? FFTW_MEASURE : FFTW_ESTIMATE;
    pthread_mutex_lock(&fft_lock);
    if (p->dtype == TC_FLOAT32) {
        float *b = scratch;
        s->fwd = fftwf_plan_dft_r2c(rank, dims, b, (fftwf_complex *)b, flags);
        s->inv = fftwf_plan_dft_c2r(rank, dims, (fftwf_complex *)b, b, flags);
    } else {
        double *b = scratch;
        s->fwd = fftw_plan_dft_r2c(rank, dims, b, (fftw_complex *)b, flags);
        s->inv = fftw_plan_dft_c2r(rank, dims, (fftw_complex *)b, b, flags);
    }
    pthread_mutex_unlock(&fft_lock);
    tc__free(scratch);
    if (!s->fwd || !s->inv) {
        long long l0 = g->L[0], l1 = g->L[1], l2 = g->L[2];
        fft_destroy(s);
        return tc__error(TC_ERR_BACKEND,
                         "cpu.filter.fft: FFTW could not plan a %lldx%lldx%lld "
                         "transform", l0, l1, l2);
    }
    if (p->mask) {
        if (p->dtype == TC_FLOAT32) fft_spectrum_f32(s->W, p, g, p->mask, s->fwd);
        else fft_spectrum_f64(s->W, p, g, p->mask, s->fwd);
    }
    *out = s;
    return TC_OK;
}

typedef struct fft_job {
    const tc__args *a;
    const fft_state *s;
    const void *W;
    char *bufs;
} fft_job;

static void fft_blocks(void *arg, int64_t begin, int64_t end, int tid) {
    const fft_job *j = arg;
    const tc__problem *p = j->a->p;
    const fft_geom *g = &j->s->g;
    void *buf = j->bufs + (size_t)tid * g->bufbytes;
    const int64_t xplane = p->in[0] * p->in[1] * p->in[2];
    const int64_t yplane = p->out[0] * p->out[1] * p->out[2];
    const int64_t nc = g->nreal / 2;
    for (int64_t b = begin; b < end; b++) {
        int64_t t = b, s[3];
        for (int a = 2; a >= 0; a--) {
            s[a] = (t % g->T[a]) * g->B[a];
            t /= g->T[a];
        }
        int64_t n = t;
        if (p->dtype == TC_FLOAT32) {
            fft_gather_f32(buf, p, g, (const float *)j->a->x + n * xplane, s);
            fft_r2c_f32(j->s->fwd, buf);
            fft_cmul_f32(buf, j->W, nc);
            fft_c2r_f32(j->s->inv, buf);
            fft_scatter_f32((float *)j->a->y + n * yplane, p, g, buf, s);
        } else {
            fft_gather_f64(buf, p, g, (const double *)j->a->x + n * xplane, s);
            fft_r2c_f64(j->s->fwd, buf);
            fft_cmul_f64(buf, j->W, nc);
            fft_c2r_f64(j->s->inv, buf);
            fft_scatter_f64((double *)j->a->y + n * yplane, p, g, buf, s);
        }
    }
}

static tc_status fft_execute(const tc__args *a) {
    const tc__problem *p = a->p;
    const fft_state *s = a->state;
    if (!s) return tc__error(TC_ERR_INTERNAL, "cpu.filter.fft: plan state missing");
    fft_job j = {a, s, s->W, a->ws};
    if (!s->W) { /* valid-swap or mask-at-execute: the mask is this call's */
        void *W = a->ws;
        j.bufs = (char *)a->ws + s->g.bufbytes;
        if (p->dtype == TC_FLOAT32) fft_spectrum_f32(W, p, &s->g, a->w, s->fwd);
        else fft_spectrum_f64(W, p, &s->g, a->w, s->fwd);
        j.W = W;
    }
    tc__parallel_for(a->threads, s->g.nblocks, fft_blocks, &j);
    return TC_OK;
}
#endif /* TC_HAVE_FFTW */

#if !TC_HAVE_FFTW
static int fft_available(void) { return 0; }
static int fft_applicable(const tc__problem *p, const tc__env *e, char *why,
                          size_t n) {
    if (why && n) {
        strncpy(why, "built without FFTW", n - 1);
        why[n - 1] = '\0';
    }
    return 0;
}
static tc_status fft_execute(const tc__args *a) {
    return tc__error(TC_ERR_UNSUPPORTED, "cpu.filter.fft: built without FFTW");
}
#endif

const tc__solver tc__solver_cpu_fft_fftw = {
    .name = "cpu.filter.fft",
    .backend = TC_BACKEND_CPU,
    .ops = TC_OP_FILTER,
    .summary = "FFT correlation (FFTW r2c/c2r, overlap-save blocks, any mode); "
               "error ~1e-7 (f32) / 2e-16 (f64) of sum|w||x|.",
    .available = fft_available,
    .applicable = fft_applicable,
#if TC_HAVE_FFTW
    .estimate = fft_estimate,
    .workspace = fft_workspace,
    .plan = fft_plan,
    .destroy = fft_destroy,
#endif
    .execute = fft_execute,
    /* TC_PLAN_MASK_AT_EXECUTE: the spectrum of each call's mask (a->w), as
     * in the valid-swap case */
    .caps = TC__CAP_MASK_AT_EXECUTE,
};
