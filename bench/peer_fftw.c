/*
 * peer_fftw.c - a bare FFTW convolution, the yardstick for tileconv's FFT
 * solver: the whole image in one transform, no blocking.
 *
 * y = correlate(x, w), "same" size, zero border: x is copied into a zeroed
 * P0 x P1 buffer at offset (kr/2, kc/2), with P the smallest 2,3,5,7-smooth
 * length >= size + k - 1 (so the circular correlation never wraps into the
 * outputs), transformed in place (r2c), multiplied by conj(W) / (P0 P1)
 * (W: r2c of the zero-padded mask, computed once at setup as tileconv does
 * at plan time), transformed back (c2r), and the rows of y copied out.
 * Timed: zero + copy in, r2c, multiply, c2r, copy out. FFTW's plans use
 * FFTW_MEASURE (planning time capped by peer_fftw_timelimit) and `threads`
 * threads (fftw3f_threads); the copies and the
 * multiply use OpenMP when the bench is built with it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fftw3.h>

#include "bench.h"

#ifdef _OPENMP
#define FW_PARALLEL_FOR _Pragma("omp parallel for schedule(static)")
#else
#define FW_PARALLEL_FOR
#endif

double peer_fftw_timelimit = 5.0; /* seconds of FFTW_MEASURE per plan */

typedef struct fftw_state {
    const float *x;
    float *y;
    int64_t rows, cols, P0, P1, ld; /* ld = 2 * (P1 / 2 + 1) reals */
    int64_t off0, off1;
    float *buf;                      /* P0 x ld reals, in place */
    fftwf_complex *W;                /* P0 x (P1/2+1), conj, scaled */
    fftwf_plan fwd, inv;
} fftw_state;

static int64_t smooth_len(int64_t n) {
    for (;; n++) {
        int64_t m = n;
        static const int f[4] = {2, 3, 5, 7};
        for (int i = 0; i < 4; i++)
            while (m % f[i] == 0) m /= f[i];
        if (m == 1) return n;
    }
}

static int fw_run(void *p, char *err, size_t errn) {
    fftw_state *s = p;
    (void)err;
    (void)errn;
    const int64_t rows = s->rows, cols = s->cols, ld = s->ld, P0 = s->P0;
    const int64_t nc = s->P1 / 2 + 1;
FW_PARALLEL_FOR
    for (int64_t i = 0; i < P0; i++) {
        float *row = s->buf + i * ld;
        int64_t xi = i - s->off0;
        if (xi < 0 || xi >= rows) {
            memset(row, 0, (size_t)ld * sizeof(float));
            continue;
        }
        memset(row, 0, (size_t)s->off1 * sizeof(float));
        memcpy(row + s->off1, s->x + xi * cols, (size_t)cols * sizeof(float));
        memset(row + s->off1 + cols, 0, (size_t)(ld - s->off1 - cols) * sizeof(float));
    }
    fftwf_execute_dft_r2c(s->fwd, s->buf, (fftwf_complex *)s->buf);
    fftwf_complex *B = (fftwf_complex *)s->buf;
FW_PARALLEL_FOR
    for (int64_t i = 0; i < P0; i++) {
        fftwf_complex *b = B + i * nc;
        const fftwf_complex *w = s->W + i * nc;
        for (int64_t j = 0; j < nc; j++) {
            float br = b[j][0], bi = b[j][1];
            b[j][0] = br * w[j][0] - bi * w[j][1];
            b[j][1] = br * w[j][1] + bi * w[j][0];
        }
    }
    fftwf_execute_dft_c2r(s->inv, (fftwf_complex *)s->buf, s->buf);
FW_PARALLEL_FOR
    for (int64_t i = 0; i < rows; i++)
        memcpy(s->y + i * cols, s->buf + i * ld, (size_t)cols * sizeof(float));
    return 0;
}

static void fw_fini(void *p) {
    fftw_state *s = p;
    if (!s) return;
    if (s->fwd) fftwf_destroy_plan(s->fwd);
    if (s->inv) fftwf_destroy_plan(s->inv);
    fftwf_free(s->buf);
    fftwf_free(s->W);
    free(s->y);
    free(s);
}

int peer_fftw_conv2d(bench_runner *r, const float *x, int64_t rows, int64_t cols,
                     const float *mask, int kr, int kc, int threads) {
    fftw_state *s = calloc(1, sizeof *s);
    if (!s) goto oom;
    s->x = x;
    s->rows = rows;
    s->cols = cols;
    s->P0 = smooth_len(rows + kr - 1);
    s->P1 = smooth_len(cols + kc - 1);
    s->ld = 2 * (s->P1 / 2 + 1);
    s->off0 = kr / 2;
    s->off1 = kc / 2;
    const int64_t nc = s->P1 / 2 + 1;
    s->y = bench_alloc((size_t)(rows * cols) * sizeof(float));
    s->buf = fftwf_alloc_real((size_t)(s->P0 * s->ld));
    s->W = fftwf_alloc_complex((size_t)(s->P0 * nc));
    if (!s->y || !s->buf || !s->W) goto oom;
#if TC_BENCH_HAVE_FFTW_THREADS
    static int threads_ready;
    if (!threads_ready) threads_ready = fftwf_init_threads();
    if (threads_ready) fftwf_plan_with_nthreads(threads);
#else
    (void)threads;
#endif
    /* The mask spectrum (untimed, FFTW_ESTIMATE plan on W itself). */
    float *wr = (float *)s->W;
    memset(wr, 0, (size_t)(s->P0 * nc) * sizeof(fftwf_complex));
    for (int a = 0; a < kr; a++)
        for (int b = 0; b < kc; b++) wr[a * 2 * nc + b] = mask[a * kc + b];
    fftwf_plan wp = fftwf_plan_dft_r2c_2d((int)s->P0, (int)s->P1, wr, s->W, FFTW_ESTIMATE);
    if (!wp) goto fail;
    fftwf_execute(wp);
    fftwf_destroy_plan(wp);
    const float scale = 1.0f / ((float)s->P0 * (float)s->P1);
    for (int64_t i = 0; i < s->P0 * nc; i++) {
        s->W[i][0] *= scale;
        s->W[i][1] *= -scale; /* conj: correlation */
    }
    /* FFTW_MEASURE of a 4200^2 transform can take half a minute: cap it */
    fftwf_set_timelimit(peer_fftw_timelimit);
    s->fwd = fftwf_plan_dft_r2c_2d((int)s->P0, (int)s->P1, s->buf, (fftwf_complex *)s->buf,
                                   FFTW_MEASURE);
    s->inv = fftwf_plan_dft_c2r_2d((int)s->P0, (int)s->P1, (fftwf_complex *)s->buf, s->buf,
                                   FFTW_MEASURE);
    fftwf_set_timelimit(FFTW_NO_TIMELIMIT);
#if TC_BENCH_HAVE_FFTW_THREADS
    /* Plans made later (tileconv's FFT solver) must stay single-threaded. */
    if (threads_ready) fftwf_plan_with_nthreads(1);
#endif
    if (!s->fwd || !s->inv) goto fail;
    snprintf(r->name, sizeof r->name, "fftw.bare");
    snprintf(r->info, sizeof r->info, "%s, padded %lldx%lld, %d threads%s",
             peer_fftw_version(), (long long)s->P0, (long long)s->P1,
#if TC_BENCH_HAVE_FFTW_THREADS
             threads,
#else
             1,
#endif
#ifdef _OPENMP
             ", OpenMP copies"
#else
             ""
#endif
    );
    r->run = fw_run;
    r->fini = fw_fini;
    r->st = s;
    r->y = s->y;
    r->ny = rows * cols;
    r->kind = BK_PEER;
    return 0;
oom:
    snprintf(r->na, sizeof r->na, "out of memory");
    fw_fini(s);
    return -1;
fail:
    snprintf(r->na, sizeof r->na, "FFTW could not plan %lldx%lld", (long long)s->P0,
             (long long)s->P1);
    fw_fini(s);
    return -1;
}

const char *peer_fftw_version(void) {
    static char buf[48];
    /* fftwf_version is "fftw-3.3.10-sse2-avx..." */
    const char *v = strchr(fftwf_version, '-');
    v = v ? v + 1 : fftwf_version;
    snprintf(buf, sizeof buf, "FFTW %.*s", (int)strcspn(v, "-"), v);
    return buf;
}
