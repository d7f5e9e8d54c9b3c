/*
 * ab_filter.c - `tileconv-ab`: two builds of libtileconv in one process,
 * the same filter planned in each, their executes alternated (the order
 * swapped every round), so that a change is timed against the form before
 * it under the same load: on a shared VM the ratio holds where absolute
 * times drift. Checks the two outputs are bitwise equal.
 *
 * usage: tileconv-ab OLD.so NEW.so D H W K [threads [repeat [mode [algorithm]]]]
 *   a D x H x W float32 volume (D = 1: 2D), a K^3 (K^2) correlation mask;
 *   threads default 2, repeat 30, mode constant, algorithm
 *   cpu.filter.direct-avx512. Prints min and median of each and the
 *   median ratio.
 * Build two trees (e.g. a `git worktree` of the older commit) and pass
 * their build/libtileconv.so. Not a test.
 */
#include "tileconv.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct ab_lib {
    tc_status (*context_create)(tc_context **);
    tc_status (*set_threads)(tc_context *, int);
    void (*desc_init)(tc_filter_desc *);
    void (*options_init)(tc_plan_options *);
    tc_status (*plan_filter)(tc_plan **, tc_context *, const tc_filter_desc *, const void *,
                             const tc_plan_options *);
    size_t (*workspace_size)(const tc_plan *);
    tc_status (*execute)(const tc_plan *, void *, const void *, void *);
    tc_status (*mode_parse)(const char *, tc_mode *);
    const char *(*last_error)(void);
    tc_plan *plan;
    void *ws;
} ab_lib;

static double ab_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int ab_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int ab_sym(void *h, const char *name, void *out) {
    void *f = dlsym(h, name);
    if (!f) {
        fprintf(stderr, "tileconv-ab: %s not found: %s\n", name, dlerror());
        return 0;
    }
    memcpy(out, &f, sizeof f);
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: tileconv-ab OLD.so NEW.so D H W K [threads [repeat [mode "
                        "[algorithm]]]]\n");
        return 2;
    }
    const int64_t D = atol(argv[3]), H = atol(argv[4]), W = atol(argv[5]);
    const int K = atoi(argv[6]), T = argc > 7 ? atoi(argv[7]) : 2,
              R = argc > 8 ? atoi(argv[8]) : 30;
    const char *mode = argc > 9 ? argv[9] : "constant";
    const char *algo = argc > 10 ? argv[10] : "cpu.filter.direct-avx512";
    if (D < 1 || H < 1 || W < 1 || K < 1 || T < 1 || R < 1 || D * H * W > ((int64_t)1 << 31)) {
        fprintf(stderr, "tileconv-ab: bad size, mask, threads or repeat\n");
        return 2;
    }
    const int nd = D > 1 ? 3 : 2;
    const size_t n = (size_t)(D * H * W), nm = nd == 3 ? (size_t)K * K * K : (size_t)K * K;
    float *x = malloc(n * sizeof *x), *y[2] = {malloc(n * sizeof(float)), malloc(n * sizeof(float))};
    float *m = malloc(nm * sizeof *m);
    double *t[2] = {malloc((size_t)R * sizeof(double)), malloc((size_t)R * sizeof(double))};
    if (!x || !y[0] || !y[1] || !m || !t[0] || !t[1]) {
        fprintf(stderr, "tileconv-ab: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < n; i++) x[i] = (float)((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
    for (size_t i = 0; i < nm; i++) m[i] = (float)((i * 40503u) % 97) / 97.0f - 0.3f;
    ab_lib L[2];
    for (int l = 0; l < 2; l++) {
        void *h = dlopen(argv[1 + l], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "tileconv-ab: %s\n", dlerror());
            return 1;
        }
        ab_lib *b = &L[l];
        if (!ab_sym(h, "tc_context_create", &b->context_create) ||
            !ab_sym(h, "tc_context_set_threads", &b->set_threads) ||
            !ab_sym(h, "tc_filter_desc_init", &b->desc_init) ||
            !ab_sym(h, "tc_plan_options_init", &b->options_init) ||
            !ab_sym(h, "tc_plan_filter", &b->plan_filter) ||
            !ab_sym(h, "tc_plan_workspace_size", &b->workspace_size) ||
            !ab_sym(h, "tc_execute_filter", &b->execute) ||
            !ab_sym(h, "tc_mode_parse", &b->mode_parse) ||
            !ab_sym(h, "tc_last_error", &b->last_error))
            return 1;
        tc_context *ctx;
        tc_filter_desc d;
        tc_plan_options o;
        tc_mode md;
        if (b->mode_parse(mode, &md) != TC_OK) {
            fprintf(stderr, "tileconv-ab: %s\n", b->last_error());
            return 2;
        }
        if (b->context_create(&ctx) != TC_OK || b->set_threads(ctx, T) != TC_OK) {
            fprintf(stderr, "tileconv-ab: %s\n", b->last_error());
            return 1;
        }
        b->desc_init(&d);
        d.dtype = TC_FLOAT32;
        d.ndim = nd;
        int64_t shp[3] = {D, H, W};
        for (int i = 0; i < nd; i++) {
            d.shape[i] = shp[3 - nd + i];
            d.mask_shape[i] = K;
        }
        d.mode = md;
        d.kind = TC_FILTER_CORRELATE;
        b->options_init(&o);
        o.algorithm = algo;
        if (b->plan_filter(&b->plan, ctx, &d, m, &o) != TC_OK) {
            fprintf(stderr, "tileconv-ab: %s: plan: %s\n", argv[1 + l], b->last_error());
            return 1;
        }
        size_t ws = b->workspace_size(b->plan);
        b->ws = ws ? aligned_alloc(64, (ws + 63) / 64 * 64) : NULL;
        if (ws && !b->ws) {
            fprintf(stderr, "tileconv-ab: out of memory\n");
            return 1;
        }
    }
    for (int w = 0; w < 3; w++)
        for (int l = 0; l < 2; l++) L[l].execute(L[l].plan, y[l], x, L[l].ws);
    const int same = memcmp(y[0], y[1], n * sizeof(float)) == 0;
    for (int r = 0; r < R; r++)
        for (int k = 0; k < 2; k++) {
            const int l = (r & 1) ? 1 - k : k;
            double a = ab_now();
            L[l].execute(L[l].plan, y[l], x, L[l].ws);
            t[l][r] = ab_now() - a;
        }
    for (int l = 0; l < 2; l++) qsort(t[l], (size_t)R, sizeof(double), ab_cmp);
    printf("%s %ldx%ldx%ld k%d %s, %d threads, %d rounds: old min %.3f med %.3f ms | new min "
           "%.3f med %.3f ms | old/new median %.2f; outputs %s\n",
           algo, (long)D, (long)H, (long)W, K, mode, T, R, t[0][0] * 1e3, t[0][R / 2] * 1e3,
           t[1][0] * 1e3, t[1][R / 2] * 1e3, t[0][R / 2] / t[1][R / 2],
           same ? "bitwise equal" : "DIFFER");
    return same ? 0 : 1;
}
