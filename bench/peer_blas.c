/*
 * peer_blas.c - OpenBLAS cblas_sgemm peer for `tileconv bench`:
 * C = A B, row-major, no transposes, alpha 1, beta 0, the same problem as
 * tileconv's SGEMM case. Threads: OPENBLAS_NUM_THREADS is set by the bench
 * before the process starts; its workers are pinned after the warm-up.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cblas.h>

#include "bench.h"

typedef struct blas_state {
    const float *a, *b;
    float *c;
    int m, n, k;
} blas_state;

static int blas_run(void *p, char *err, size_t errn) {
    blas_state *s = p;
    (void)err;
    (void)errn;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s->m, s->n, s->k, 1.0f, s->a,
                s->k, s->b, s->n, 0.0f, s->c, s->n);
    return 0;
}

static void blas_fini(void *p) {
    blas_state *s = p;
    if (!s) return;
    free(s->c);
    free(s);
}

int peer_blas_sgemm(bench_runner *r, const float *a, const float *b, int64_t m,
                    int64_t n, int64_t k) {
    if (m > 0x7fffffff || n > 0x7fffffff || k > 0x7fffffff) {
        snprintf(r->na, sizeof r->na, "sizes too large for 32-bit BLAS");
        return -1;
    }
    blas_state *s = calloc(1, sizeof *s);
    if (!s || !(s->c = bench_alloc((size_t)(m * n) * sizeof(float)))) {
        free(s);
        snprintf(r->na, sizeof r->na, "out of memory");
        return -1;
    }
    s->a = a;
    s->b = b;
    s->m = (int)m;
    s->n = (int)n;
    s->k = (int)k;
    snprintf(r->name, sizeof r->name, "openblas.sgemm");
    snprintf(r->info, sizeof r->info, "%s, core %s, %d threads", peer_blas_version(),
             openblas_get_corename(), openblas_get_num_threads());
    r->run = blas_run;
    r->fini = blas_fini;
    r->st = s;
    r->y = s->c;
    r->ny = m * n;
    r->kind = BK_PEER;
    return 0;
}

const char *peer_blas_version(void) {
    static char buf[96];
    snprintf(buf, sizeof buf, "%s", openblas_get_config());
    return buf;
}
