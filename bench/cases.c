/*
 * cases.c - the suites of `tileconv bench`: problems, their runners
 * (tileconv auto, every applicable algorithm forced by name, the peers) and
 * the performance targets of the issue.
 *
 * Every filter case is a float32 correlate (OpenCV's filter2D and oneDNN's
 * convolution are correlations too; scipy's convolve only flips the mask,
 * which costs nothing), "same" output, mode constant with cval 0 unless the
 * case says otherwise. Data: uniform [-1, 1) from fixed seeds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_state.h"

/* ---------------------------------------------------------------------- */
/* tileconv runners                                                         */

typedef struct ours_state {
    tc_plan *plan;
    void *ws;
    float *y;
    const float *x, *b;
    int gemm;
} ours_state;

static int ours_run(void *p, char *err, size_t errn) {
    ours_state *s = p;
    tc_status st = s->gemm ? tc_execute_gemm(s->plan, s->y, s->x, s->b, s->ws)
                           : tc_execute_filter(s->plan, s->y, s->x, s->ws);
    if (st != TC_OK) {
        snprintf(err, errn, "%s", tc_last_error()[0] ? tc_last_error() : tc_status_string(st));
        return -1;
    }
    return 0;
}

static void ours_fini(void *p) {
    ours_state *s = p;
    if (!s) return;
    tc_plan_destroy(s->plan);
    free(s->ws);
    free(s->y);
    free(s);
}

static int64_t case_out_count(const bench_case *c) {
    if (c->op == OP_GEMM) return c->m * c->n;
    int64_t n = 1;
    for (int d = 0; d < c->nsp; d++) n *= c->shape[d];
    return n;
}

static void filter_desc(const bench_case *c, tc_mode mode, tc_filter_desc *d) {
    tc_filter_desc_init(d);
    d->dtype = TC_FLOAT32;
    d->ndim = c->nsp;
    for (int i = 0; i < c->nsp; i++) {
        d->shape[i] = c->shape[i];
        d->mask_shape[i] = c->mask[i];
    }
    d->kind = TC_FILTER_CORRELATE;
    d->output = TC_OUTPUT_SAME;
    d->mode = mode;
    d->cval = 0.0;
}

/* Times `algo` on a smaller problem of about BENCH_PROBE_FLOPS (each axis
 * scaled alike, the mask kept) and returns its GFLOP/s, or -1. */
static double probe_gflops(const bench_case *c, const char *algo, tc_context *ctx,
                           char *desc, size_t descn) {
    tc_plan_options po;
    tc_plan_options_init(&po);
    po.algorithm = algo;
    po.workspace_limit = BENCH_WS_LIMIT;
    tc_plan *p = NULL;
    float *y = NULL;
    double flops, rate = -1;
    if (c->op == OP_GEMM) {
        double s = cbrt(fmin(BENCH_PROBE_FLOPS, c->flops / 16) / c->flops);
        tc_gemm_desc d;
        tc_gemm_desc_init(&d);
        d.m = (int64_t)fmax(64, c->m * s);
        d.n = (int64_t)fmax(64, c->n * s);
        d.k = (int64_t)fmax(64, c->k * s);
        flops = 2.0 * d.m * d.n * d.k;
        snprintf(desc, descn, "%lldx%lldx%lld", (long long)d.m, (long long)d.n, (long long)d.k);
        y = bench_alloc((size_t)(d.m * d.n) * sizeof(float));
        if (!y || tc_plan_gemm(&p, ctx, &d, &po) != TC_OK) goto done;
        for (int i = 0; i < 2; i++) {
            double t0 = bench_now_ms();
            if (tc_execute_gemm(p, y, c->data[0], c->data[1], NULL) != TC_OK) goto done;
            rate = flops / ((bench_now_ms() - t0) * 1e6);
        }
    } else {
        double s = pow(fmin(BENCH_PROBE_FLOPS, c->flops / 16) / c->flops, 1.0 / c->nsp);
        bench_case pc;
        memset(&pc, 0, sizeof pc);
        pc.nsp = c->nsp;
        flops = 2;
        int o = 0;
        for (int d = 0; d < c->nsp; d++) {
            pc.mask[d] = c->mask[d];
            pc.shape[d] = (int64_t)fmax(2.0 * c->mask[d], c->shape[d] * s);
            if (pc.shape[d] > c->shape[d]) pc.shape[d] = c->shape[d];
            flops *= (double)pc.shape[d] * (double)c->mask[d];
            o += snprintf(desc + o, descn - (size_t)o, "%s%lld", d ? "x" : "", (long long)pc.shape[d]);
        }
        tc_filter_desc d;
        filter_desc(&pc, c->mode, &d);
        y = bench_alloc((size_t)case_out_count(&pc) * sizeof(float));
        if (!y || tc_plan_filter(&p, ctx, &d, c->data[1], &po) != TC_OK) goto done;
        for (int i = 0; i < 2; i++) {
            double t0 = bench_now_ms();
            if (tc_execute_filter(p, y, c->data[0], NULL) != TC_OK) goto done;
            rate = flops / ((bench_now_ms() - t0) * 1e6);
        }
    }
done:
    tc_plan_destroy(p);
    free(y);
    return rate;
}

/* Plans (ESTIMATE, or the forced algorithm) and adds one runner. */
static bench_runner *add_ours(bench_ctx *b, bench_case *c, int kind, const char *algo,
                              tc_context *ctx, int threads, tc_mode mode) {
    bench_runner *r = bench_new_runner(c);
    if (!r) return NULL;
    r->kind = kind;
    r->threads = threads;
    r->gpu = b->backend == TC_BACKEND_CUDA;
    if (kind == BK_AUTO) snprintf(r->name, sizeof r->name, "auto%s", threads == 1 && b->threads != 1 ? " (1 thread)" : "");
    else if (kind == BK_MODE) snprintf(r->name, sizeof r->name, "auto %s", tc_mode_name(mode));
    else snprintf(r->name, sizeof r->name, "%s%s", algo, threads == 1 && b->threads != 1 ? " (1 thread)" : "");
    ours_state *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(r->na, sizeof r->na, "out of memory");
        return r;
    }
    tc_plan_options po;
    tc_plan_options_init(&po);
    po.algorithm = kind == BK_FORCED ? algo : NULL;
    if (kind == BK_FORCED) po.workspace_limit = BENCH_WS_LIMIT;
    tc_status st;
    bench_progress(b, "planning %s", r->name);
    if (c->op == OP_GEMM) {
        tc_gemm_desc d;
        tc_gemm_desc_init(&d);
        d.m = c->m;
        d.n = c->n;
        d.k = c->k;
        s->gemm = 1;
        s->x = c->data[0];
        s->b = c->data[1];
        st = tc_plan_gemm(&s->plan, ctx, &d, &po);
    } else {
        tc_filter_desc d;
        filter_desc(c, mode, &d);
        s->x = c->data[0];
        st = tc_plan_filter(&s->plan, ctx, &d, c->data[1], &po);
    }
    if (st != TC_OK) {
        snprintf(r->na, sizeof r->na, "%s",
                 tc_last_error()[0] ? tc_last_error() : tc_status_string(st));
        free(s);
        return r;
    }
    if (kind == BK_FORCED && c->flops > BENCH_PROBE_ABOVE) {
        char desc[64];
        bench_progress(b, "probing %s on a smaller problem", r->name);
        double gf = probe_gflops(c, algo, ctx, desc, sizeof desc);
        if (gf > 0) {
            r->predicted_ms = c->flops / (gf * 1e6);
            snprintf(r->probe, sizeof r->probe, "%.2f GFLOP/s on a %s probe", gf, desc);
        }
    }
    size_t wsb = tc_plan_workspace_size(s->plan);
    s->ws = wsb ? bench_alloc(wsb) : NULL;
    s->y = bench_alloc((size_t)case_out_count(c) * sizeof(float));
    if ((wsb && !s->ws) || !s->y) {
        snprintf(r->na, sizeof r->na, "out of memory (workspace %zu bytes)", wsb);
        ours_fini(s);
        return r;
    }
    if (kind != BK_FORCED)
        snprintf(r->info, sizeof r->info, "= %s", tc_plan_algorithm(s->plan));
    if (wsb > ((size_t)64 << 20))
        snprintf(r->info + strlen(r->info), sizeof r->info - strlen(r->info),
                 "%sworkspace %.0f MB", r->info[0] ? ", " : "", (double)wsb / 1e6);
    r->run = ours_run;
    r->fini = ours_fini;
    r->st = s;
    r->y = s->y;
    r->ny = case_out_count(c);
    return r;
}

/* Adds one forced runner per registered algorithm for this operation and
 * backend (the reference solvers are not timed). */
static void add_forced_all(bench_ctx *b, bench_case *c) {
    unsigned op = c->op == OP_GEMM ? TC_OP_GEMM : TC_OP_FILTER;
    tc_backend want = b->backend == TC_BACKEND_CUDA ? TC_BACKEND_CUDA : TC_BACKEND_CPU;
    int n = tc_algorithm_count();
    for (int i = 0; i < n; i++) {
        tc_algorithm_info info;
        if (tc_algorithm_get(i, &info) != TC_OK) continue;
        if (!(info.ops & op) || info.backend != want) continue;
        if (strncmp(info.name, "ref.", 4) == 0) continue;
        if (!info.available) {
            bench_runner *r = bench_new_runner(c);
            if (!r) return;
            r->kind = BK_FORCED;
            snprintf(r->name, sizeof r->name, "%s", info.name);
            snprintf(r->na, sizeof r->na, "not available on this machine");
            continue;
        }
        /* the seed's single-thread AVX solver is timed on one thread */
        int one = c->seed && strstr(info.name, "rowshift") != NULL;
        if (c->op == OP_GEMM && strcmp(info.name, "cpu.gemm.blocked") == 0 && c->m > 1024) {
            bench_runner *r = bench_new_runner(c);
            if (!r) return;
            r->kind = BK_FORCED;
            snprintf(r->name, sizeof r->name, "%s", info.name);
            snprintf(r->na, sizeof r->na, "timed at 1024^3 only (baseline)");
            continue;
        }
        add_ours(b, c, BK_FORCED, info.name, one ? b->ctx1 : b->ctx, one ? 1 : b->threads,
                 c->mode);
    }
    /* Skip the hopeless ones: predicted over max_run_s per run and over 3x
     * the fastest prediction (so a competitive algorithm always runs). */
    double fastest = 0;
    for (int i = 0; i < c->nr; i++) {
        const bench_runner *r = &c->r[i];
        if (r->kind == BK_FORCED && !r->na[0] && r->predicted_ms > 0 &&
            (!fastest || r->predicted_ms < fastest))
            fastest = r->predicted_ms;
    }
    for (int i = 0; i < c->nr; i++) {
        bench_runner *r = &c->r[i];
        if (r->kind != BK_FORCED || r->na[0] || r->predicted_ms <= b->max_run_s * 1e3 ||
            r->predicted_ms <= 3 * fastest)
            continue;
        /* a copy: gcc's -Wrestrict took r->probe and r->na (two fields of
         * one runner) for overlapping */
        char probe[sizeof r->probe];
        memcpy(probe, r->probe, sizeof probe);
        probe[sizeof probe - 1] = '\0';
        snprintf(r->na, sizeof r->na, "skipped: one run predicted to take %.1f s (%s)",
                 r->predicted_ms / 1e3, probe);
        if (r->fini) r->fini(r->st);
        r->fini = NULL;
        r->st = NULL;
        r->run = NULL;
        r->y = NULL;
    }
}

/* Runs of one candidate in the planner's MEASURE (planner.c): one untimed,
 * then timed ones until 5, or 2 once 0.2 s were spent. */
static double measure_runs(double ms) {
    int r = 0;
    double total = 0;
    while (r < 5 && (r < 2 || total < 200)) {
        total += ms;
        r++;
    }
    return 1 + r;
}

void bench_measure_ref_speed(bench_ctx *b) {
    /* ref.conv.loops on 2D 256x256 k7, ref.gemm.loops on 512^3 (out of cache, as in
     * the cases) */
    bench_case c;
    memset(&c, 0, sizeof c);
    b->ref_gflops[0] = b->ref_gflops[1] = 0;
    for (int g = 0; g < 2; g++) {
        tc_plan_options po;
        tc_plan_options_init(&po);
        po.algorithm = g ? "ref.gemm.loops" : "ref.conv.loops";
        tc_plan *p = NULL;
        int64_t n = g ? 512 : 256;
        float *x = bench_alloc((size_t)(n * n) * sizeof(float));
        float *y = bench_alloc((size_t)(n * n) * sizeof(float));
        float *w = bench_alloc((size_t)(n * n) * sizeof(float));
        double flops;
        tc_status st = TC_ERR_OUT_OF_MEMORY;
        if (x && y && w) {
            bench_fill_random(x, n * n, 1);
            bench_fill_random(w, n * n, 2);
            if (g) {
                tc_gemm_desc d;
                tc_gemm_desc_init(&d);
                d.m = d.n = d.k = n;
                flops = 2.0 * n * n * n;
                st = tc_plan_gemm(&p, b->ctx, &d, &po);
            } else {
                c.nsp = 2;
                c.shape[0] = c.shape[1] = n;
                c.mask[0] = c.mask[1] = 7;
                tc_filter_desc d;
                filter_desc(&c, TC_MODE_CONSTANT, &d);
                flops = 2.0 * n * n * 49;
                st = tc_plan_filter(&p, b->ctx, &d, w, &po);
            }
        }
        if (st == TC_OK) {
            double best = 0;
            for (int i = 0; i < (g ? 2 : 3); i++) {
                double t0 = bench_now_ms();
                st = g ? tc_execute_gemm(p, y, x, w, NULL) : tc_execute_filter(p, y, x, NULL);
                double dt = bench_now_ms() - t0;
                if (st != TC_OK) break;
                if ((i || g) && (!best || dt < best)) best = dt;
            }
            if (st == TC_OK && best > 0) b->ref_gflops[g] = flops / (best * 1e6);
        }
        tc_plan_destroy(p);
        free(x);
        free(y);
        free(w);
    }
}

/* Plans with TC_PLAN_MEASURE (the planner times every candidate itself,
 * ref.* included) and records its choice and the planning time, unless the
 * prediction from this case's forced timings says it would take longer than
 * the MEASURE budget. The same workspace limit as the forced runs. */
void bench_plan_measure(bench_ctx *b, bench_case *c) {
    if (c->modes) return;
    if (!b->measure) {
        snprintf(c->measure_note, sizeof c->measure_note, "not run (--no-measure)");
        return;
    }
    double pred = 0;
    for (int i = 0; i < c->nr; i++) {
        const bench_runner *r = &c->r[i];
        if (r->kind != BK_FORCED) continue;
        double ms = r->n > 0 ? r->median_ms : r->predicted_ms;
        if (ms > 0) pred += ms * measure_runs(ms);
    }
    double rg = b->ref_gflops[c->op == OP_GEMM];
    if (rg > 0) {
        /* x2: the reference solvers slow down on large arrays (strided
         * walks out of cache) more than the small measurement shows */
        double ms = 2 * c->flops / (rg * 1e6);
        pred += ms * measure_runs(ms);
    }
    double left = b->measure_total_s * 1e3 - b->measure_spent_ms;
    if (pred <= b->measure_budget_s * 1e3 && pred > left) {
        snprintf(c->measure_note, sizeof c->measure_note,
                 "skipped: predicted %.0f s, this run's MEASURE budget (%.0f s) is spent",
                 pred / 1e3, b->measure_total_s);
        return;
    }
    if (pred > b->measure_budget_s * 1e3) {
        snprintf(c->measure_note, sizeof c->measure_note,
                 "skipped: predicted %.0f s (it times every candidate, %s at %.2f GFLOP/s "
                 "included)",
                 pred / 1e3, c->op == OP_GEMM ? "ref.gemm.loops" : "ref.conv.loops", rg);
        return;
    }
    tc_plan_options po;
    tc_plan_options_init(&po);
    po.flags = TC_PLAN_MEASURE;
    po.workspace_limit = BENCH_WS_LIMIT;
    tc_plan *p = NULL;
    tc_status st;
    bench_progress(b, "planning with TC_PLAN_MEASURE (predicted %.1f s)", pred / 1e3);
    double t0 = bench_now_ms();
    if (c->op == OP_GEMM) {
        tc_gemm_desc d;
        tc_gemm_desc_init(&d);
        d.m = c->m;
        d.n = c->n;
        d.k = c->k;
        st = tc_plan_gemm(&p, b->ctx, &d, &po);
    } else {
        tc_filter_desc d;
        filter_desc(c, c->mode, &d);
        st = tc_plan_filter(&p, b->ctx, &d, c->data[1], &po);
    }
    c->measure_plan_ms = bench_now_ms() - t0;
    b->measure_spent_ms += c->measure_plan_ms;
    if (st == TC_OK) snprintf(c->measure, sizeof c->measure, "%s", tc_plan_algorithm(p));
    else snprintf(c->measure_note, sizeof c->measure_note, "failed: %s", tc_last_error());
    tc_plan_destroy(p);
}

/* ---------------------------------------------------------------------- */
/* peers                                                                    */

__attribute__((unused)) static void add_peer_na(bench_case *c, const char *name, const char *why) {
    bench_runner *r = bench_new_runner(c);
    if (!r) return;
    r->kind = BK_PEER;
    snprintf(r->name, sizeof r->name, "%s", name);
    snprintf(r->na, sizeof r->na, "%s", why);
}

__attribute__((unused)) static bench_runner *peer_runner(bench_ctx *b, bench_case *c) {
    bench_runner *r = bench_new_runner(c);
    if (r) {
        r->kind = BK_PEER;
        r->threads = b->threads;
    }
    return r;
}

static void add_peers(bench_ctx *b, bench_case *c) {
    const float *x = c->data[0], *w = c->data[1];
    bench_runner *r;
    (void)x;
    (void)w;
    if (c->peers & BP_CV_FILTER2D) {
#if TC_BENCH_HAVE_OPENCV
        bench_progress(b, "setting up opencv.filter2D");
        r = peer_runner(b, c);
        if (r) {
            int64_t rows = c->nsp == 1 ? 1 : c->shape[0], cols = c->shape[c->nsp - 1];
            int kr = c->nsp == 1 ? 1 : (int)c->mask[0], kc = (int)c->mask[c->nsp - 1];
            if (peer_opencv_filter2d(r, x, rows, cols, w, kr, kc, b->threads))
                snprintf(r->name, sizeof r->name, "opencv.filter2D");
        }
#else
        add_peer_na(c, "opencv.filter2D", "not built (OpenCV not found or TC_BENCH_PEERS=OFF)");
#endif
    }
    if (c->peers & BP_CV_SEP) {
#if TC_BENCH_HAVE_OPENCV
        bench_progress(b, "setting up opencv.sepFilter2D");
        r = peer_runner(b, c);
        if (r) {
            const float *g = c->data[2];
            if (peer_opencv_sepfilter2d(r, x, c->shape[0], c->shape[1], g, g, (int)c->mask[0],
                                        b->threads))
                snprintf(r->name, sizeof r->name, "opencv.sepFilter2D");
        }
#else
        add_peer_na(c, "opencv.sepFilter2D", "not built (OpenCV not found or TC_BENCH_PEERS=OFF)");
#endif
    }
    if (c->peers & BP_FFTW) {
#if TC_BENCH_HAVE_FFTW
        bench_progress(b, "setting up fftw.bare (FFTW_MEASURE planning)");
        r = peer_runner(b, c);
        if (r) {
            if (peer_fftw_conv2d(r, x, c->shape[0], c->shape[1], w, (int)c->mask[0],
                                 (int)c->mask[1], b->threads))
                snprintf(r->name, sizeof r->name, "fftw.bare");
        }
#else
        add_peer_na(c, "fftw.bare", "not built (FFTW not found or TC_BENCH_PEERS=OFF)");
#endif
    }
    if (c->peers & BP_DNNL) {
        for (int any = 0; any < 2; any++) {
#if TC_BENCH_HAVE_DNNL
            bench_progress(b, "setting up onednn.%s", any ? "any" : "plain");
            r = peer_runner(b, c);
            if (r) {
                if (peer_dnnl_conv3d(r, x, c->shape, w, c->mask, any))
                    snprintf(r->name, sizeof r->name, "onednn.%s", any ? "any" : "plain");
                }
#else
            add_peer_na(c, any ? "onednn.any" : "onednn.plain",
                        "not built (oneDNN not found or TC_BENCH_PEERS=OFF)");
#endif
        }
    }
    if (c->peers & BP_BLAS) {
#if TC_BENCH_HAVE_OPENBLAS
        bench_progress(b, "setting up openblas.sgemm");
        r = peer_runner(b, c);
        if (r) {
            if (peer_blas_sgemm(r, c->data[0], c->data[1], c->m, c->n, c->k))
                snprintf(r->name, sizeof r->name, "openblas.sgemm");
        }
#else
        add_peer_na(c, "openblas.sgemm", "not built (OpenBLAS not found or TC_BENCH_PEERS=OFF)");
#endif
    }
    if (c->scipy >= 0) {
        r = bench_new_runner(c);
        if (r) {
            r->kind = BK_EXTERNAL;
            r->threads = 1;
            snprintf(r->name, sizeof r->name, "scipy.ndimage");
            const bench_scipy_job *j = &b->scipy[c->scipy];
            if (j->repeats > 0) {
                r->samples[0] = j->median_ms;
                r->n = 1;
                r->median_ms = r->min_ms = j->median_ms;
                snprintf(r->info, sizeof r->info,
                         "convolve, scipy %s, 1 thread, own process, median of %d",
                         b->scipy_version, j->repeats);
            } else {
                snprintf(r->na, sizeof r->na, "%s", b->scipy_why[0] ? b->scipy_why : "no timing");
            }
        }
    }
    if (c->seed) {
        static const char *names[3] = {"seed003 1-thread AVX", "seed003 32 threads",
                                       "seed003 GPU"};
        for (int i = 0; i < 3; i++) {
            r = bench_new_runner(c);
            if (!r) break;
            r->kind = BK_EXTERNAL;
            r->threads = i == 0 ? 1 : i == 1 ? 32 : 0;
            r->gpu = i == 2;
            snprintf(r->name, sizeof r->name, "%s", names[i]);
            snprintf(r->info, sizeof r->info, "published (their machine), 5-run mean");
            r->median_ms = r->min_ms = r->samples[0] = c->published_s[i] * 1e3;
            r->n = 1;
        }
    }
}

/* ---------------------------------------------------------------------- */
/* case descriptions                                                        */

static bench_case *new_case(bench_ctx *b, const char *suite) {
    bench_case **nc = realloc(b->cases, (size_t)(b->ncases + 1) * sizeof *nc);
    if (!nc) return NULL;
    b->cases = nc;
    bench_case *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->suite = suite;
    c->scipy = -1;
    c->planner_ok = -1;
    b->cases[b->ncases++] = c;
    return c;
}

static void add_target(bench_case *c, int kind, double value, const char *peer,
                       const char *ours) {
    if (c->nt >= BENCH_MAX_TARGETS) return;
    bench_target *t = &c->t[c->nt++];
    t->kind = kind;
    t->value = value;
    t->peer = peer;
    t->ours = ours;
}

/* the roofline target: bandwidth fraction bw where this machine's ridge
 * makes the case bandwidth-bound, FMA fraction fma where compute-bound */
static void add_target_roof(bench_case *c, double bw, double fma) {
    add_target(c, TG_ROOF, bw, NULL, NULL);
    if (c->nt > 0 && c->t[c->nt - 1].kind == TG_ROOF) c->t[c->nt - 1].value2 = fma;
}

static void add_scipy(bench_ctx *b, bench_case *c) {
    if (!b->peers || b->backend == TC_BACKEND_CUDA) return;
    bench_scipy_job *nj = realloc(b->scipy, (size_t)(b->nscipy + 1) * sizeof *nj);
    if (!nj) return;
    b->scipy = nj;
    bench_scipy_job *j = &b->scipy[b->nscipy];
    memset(j, 0, sizeof *j);
    j->id = c->id;
    j->nsp = c->nsp;
    for (int d = 0; d < c->nsp; d++) {
        j->shape[d] = c->shape[d];
        j->mask[d] = c->mask[d];
    }
    c->scipy = b->nscipy++;
}

static void set_filter(bench_case *c, int nsp, int64_t s0, int64_t s1, int64_t s2, int64_t k) {
    c->op = OP_FILTER;
    c->nsp = nsp;
    int64_t s[3] = {s0, s1, s2};
    double taps = 1, n = 1;
    for (int d = 0; d < nsp; d++) {
        c->shape[d] = s[d];
        c->mask[d] = k;
        taps *= (double)k;
        n *= (double)s[d];
    }
    c->mode = TC_MODE_CONSTANT;
    c->flops = 2.0 * taps * n;
    c->bytes = 2.0 * n * sizeof(float); /* read input + write output once */
}

static int want(const bench_ctx *b, const char *id) {
    return !b->case_filter || strstr(id, b->case_filter) != NULL;
}

static void make_filters(bench_ctx *b) {
    const int cuda = b->backend == TC_BACKEND_CUDA;
    static const int ks[5] = {3, 5, 7, 9, 15};
    for (int i = 0; i < 5; i++) {
        int k = ks[i];
        char id[48];
        snprintf(id, sizeof id, "2d-4096-k%d", k);
        if (want(b, id)) {
            bench_case *c = new_case(b, "filters");
            if (!c) return;
            snprintf(c->id, sizeof c->id, "%s", id);
            snprintf(c->label, sizeof c->label, "2D 4096x4096 k%d", k);
            set_filter(c, 2, 4096, 4096, 0, k);
            c->peers = BP_CV_FILTER2D;
            if (k == 3 || (k == 9 && !b->quick)) add_scipy(b, c);
            if (k <= 5) {
                add_target(c, TG_PCT_BW, 0.80, NULL, NULL);
                add_target(c, TG_SPEEDUP, 2.0, "opencv.filter2D", NULL);
            } else {
                add_target(c, TG_PCT_FMA, 0.60, NULL, NULL);
                if (k == 9) add_target(c, TG_SPEEDUP, 4.5, "opencv.filter2D", NULL);
                if (k == 15) add_target(c, TG_SPEEDUP, 8.0, "opencv.filter2D", NULL);
            }
        }
        snprintf(id, sizeof id, "2d-4096-k%d-modes", k);
        if (!cuda && want(b, id) && (!b->quick || k == 3 || k == 9)) {
            bench_case *c = new_case(b, "filters");
            if (!c) return;
            snprintf(c->id, sizeof c->id, "%s", id);
            snprintf(c->label, sizeof c->label, "2D 4096x4096 k%d, each mode vs constant", k);
            set_filter(c, 2, 4096, 4096, 0, k);
            c->modes = 1;
            add_target(c, TG_MODES, 1.10, NULL, NULL);
        }
    }
    static const int kb[2] = {31, 63};
    for (int i = 0; i < 2; i++) {
        char id[48];
        snprintf(id, sizeof id, "2d-4096-k%d", kb[i]);
        if (!want(b, id)) continue;
        bench_case *c = new_case(b, "filters");
        if (!c) return;
        snprintf(c->id, sizeof c->id, "%s", id);
        snprintf(c->label, sizeof c->label, "2D 4096x4096 k%d", kb[i]);
        set_filter(c, 2, 4096, 4096, 0, kb[i]);
        c->peers = BP_CV_FILTER2D | BP_FFTW;
        add_target(c, TG_SPEEDUP, 2.5, "opencv.filter2D", NULL);
        add_target(c, TG_VS_PEER, 1.2, "fftw.bare", "cpu.filter.fft");
    }
    if (want(b, "2d-4096-gauss15-sep")) {
        bench_case *c = new_case(b, "filters");
        if (!c) return;
        snprintf(c->id, sizeof c->id, "2d-4096-gauss15-sep");
        snprintf(c->label, sizeof c->label, "2D 4096x4096 separable gaussian k15");
        set_filter(c, 2, 4096, 4096, 0, 15);
        c->separable = 1;
        c->peers = BP_CV_SEP;
        add_target(c, TG_SPEEDUP, 4.5, "opencv.sepFilter2D", NULL);
    }
    /* 3D "same" filters (seed 003's subject): 128^3 and 256^3 x k3, k5.
     * k3 moves 8 bytes per 54 FLOP (6.75 FLOP/B: below the ridge of the
     * Intel and Zen 5 machines measured, above a Zen 4's 5-6.6, where it is
     * compute-bound), k5 250 FLOP per 8 bytes (compute-bound everywhere):
     * the target is 80% of copy or 60% of the FMA peak, whichever ceiling
     * binds on the machine; the modes cases time every boundary mode
     * against constant. */
    static const int64_t n3[2] = {128, 256}, k3[2] = {3, 5};
    for (int si = 0; si < 2; si++)
        for (int ki = 0; ki < 2; ki++) {
            const int64_t n = n3[si], k = k3[ki];
            char id[48];
            snprintf(id, sizeof id, "3d-%lld-k%lld", (long long)n, (long long)k);
            if (want(b, id) && (!b->quick || n * k <= 768)) {
                bench_case *c = new_case(b, "filters");
                if (!c) return;
                snprintf(c->id, sizeof c->id, "%s", id);
                snprintf(c->label, sizeof c->label, "3D %lld^3 k%lld", (long long)n, (long long)k);
                set_filter(c, 3, n, n, n, k);
                c->peers = BP_DNNL;
                if (n == 128 && k == 5) add_scipy(b, c);
                add_target_roof(c, 0.80, 0.60);
                if (n == 256 && k == 3) add_target(c, TG_SPEEDUP, 10.0, "onednn", NULL);
                if (n == 128 && k == 5) {
                    add_target(c, TG_SPEEDUP, 10.0, "onednn", NULL);
                    add_target(c, TG_MAX_MS, 2.0, NULL, NULL);
                }
            }
            snprintf(id, sizeof id, "3d-%lld-k%lld-modes", (long long)n, (long long)k);
            if (!cuda && want(b, id) && (!b->quick || n == 128)) {
                bench_case *c = new_case(b, "filters");
                if (!c) return;
                snprintf(c->id, sizeof c->id, "%s", id);
                snprintf(c->label, sizeof c->label, "3D %lld^3 k%lld, each mode vs constant",
                         (long long)n, (long long)k);
                set_filter(c, 3, n, n, n, k);
                c->modes = 1;
                add_target(c, TG_MODES, 1.05, NULL, NULL);
            }
        }
    if (want(b, "1d-2^24-k31")) {
        bench_case *c = new_case(b, "filters");
        if (!c) return;
        snprintf(c->id, sizeof c->id, "1d-2^24-k31");
        snprintf(c->label, sizeof c->label, "1D 2^24 k31");
        set_filter(c, 1, (int64_t)1 << 24, 0, 0, 31);
        c->peers = BP_CV_FILTER2D;
        add_scipy(b, c);
        add_target(c, TG_PCT_FMA, 0.50, NULL, NULL);
    }
}

static void make_seed3d(bench_ctx *b) {
    static const struct {
        int64_t d, h, w, k;
        double t1, t32, gpu;
    } t[5] = {
        {64, 64, 64, 3, 0.043356, 0.015965, 0.001355},
        {64, 64, 64, 3, 0.043580, 0.015729, 0.001354},
        {128, 128, 128, 5, 1.639774, 0.156257, 0.024552},
        {32, 64, 64, 5, 0.099092, 0.017671, 0.001594},
        {32, 64, 64, 3, 0.011944, 0.007685, 0.000374},
    };
    for (int i = 0; i < 5; i++) {
        char id[48];
        snprintf(id, sizeof id, "seed003-t%d", i + 1);
        if (!want(b, id)) continue;
        bench_case *c = new_case(b, "seed3d");
        if (!c) return;
        snprintf(c->id, sizeof c->id, "%s", id);
        snprintf(c->label, sizeof c->label, "seed003 test %d: %lldx%lldx%lld k%lld", i + 1,
                 (long long)t[i].d, (long long)t[i].h, (long long)t[i].w, (long long)t[i].k);
        set_filter(c, 3, t[i].d, t[i].h, t[i].w, t[i].k);
        c->seed = i + 1;
        c->peers = BP_DNNL;
        c->published_s[0] = t[i].t1;
        c->published_s[1] = t[i].t32;
        c->published_s[2] = t[i].gpu;
        if (i == 0 || i == 2 || i == 3) add_scipy(b, c); /* distinct shapes */
    }
}

static void make_gemm(bench_ctx *b) {
    static const int64_t sz[3] = {1024, 2048, 4096};
    for (int i = 0; i < 3; i++) {
        if (b->quick && sz[i] == 4096) continue;
        char id[48];
        snprintf(id, sizeof id, "sgemm-%lld", (long long)sz[i]);
        if (!want(b, id)) continue;
        bench_case *c = new_case(b, "gemm");
        if (!c) return;
        snprintf(c->id, sizeof c->id, "%s", id);
        snprintf(c->label, sizeof c->label, "SGEMM %lld^3", (long long)sz[i]);
        c->op = OP_GEMM;
        c->m = c->n = c->k = sz[i];
        c->flops = 2.0 * (double)sz[i] * (double)sz[i] * (double)sz[i];
        c->bytes = 3.0 * (double)sz[i] * (double)sz[i] * sizeof(float);
        c->peers = BP_BLAS;
        add_target(c, TG_PCT_FMA, 0.85, NULL, NULL);
        add_target(c, TG_SPEEDUP, 1.9, "openblas.sgemm", NULL);
    }
}

int bench_make_cases(bench_ctx *b) {
    if (b->suites & BENCH_SUITE_FILTERS) make_filters(b);
    if (b->backend != TC_BACKEND_CUDA) {
        if (b->suites & BENCH_SUITE_SEED3D) make_seed3d(b);
        if (b->suites & BENCH_SUITE_GEMM) make_gemm(b);
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* setup / teardown                                                         */

int bench_setup_case(bench_ctx *b, bench_case *c) {
    const int cuda = b->backend == TC_BACKEND_CUDA;
    if (c->op == OP_GEMM) {
        size_t na = (size_t)(c->m * c->k), nb = (size_t)(c->k * c->n);
        c->data[0] = bench_alloc(na * sizeof(float));
        c->data[1] = bench_alloc(nb * sizeof(float));
        if (!c->data[0] || !c->data[1]) return -1;
        bench_fill_random(c->data[0], (int64_t)na, 101);
        bench_fill_random(c->data[1], (int64_t)nb, 202);
    } else {
        int64_t nx = case_out_count(c), nw = 1;
        for (int d = 0; d < c->nsp; d++) nw *= c->mask[d];
        c->data[0] = bench_alloc((size_t)nx * sizeof(float));
        c->data[1] = bench_alloc((size_t)nw * sizeof(float));
        if (!c->data[0] || !c->data[1]) return -1;
        bench_fill_random(c->data[0], nx, 303 + (uint64_t)c->seed);
        if (c->separable) {
            /* OpenCV's default sigma for the size: 0.3 ((k-1)/2 - 1) + 0.8 */
            int k = (int)c->mask[0];
            float *g = bench_alloc((size_t)k * sizeof(float));
            if (!g) return -1;
            c->data[2] = g;
            double sigma = 0.3 * ((k - 1) * 0.5 - 1) + 0.8, sum = 0;
            for (int i = 0; i < k; i++) sum += g[i] = (float)exp(-0.5 * pow((i - k / 2) / sigma, 2));
            for (int i = 0; i < k; i++) g[i] = (float)(g[i] / sum);
            float *w = c->data[1];
            for (int i = 0; i < k; i++)
                for (int j = 0; j < k; j++) w[i * k + j] = g[i] * g[j];
        } else {
            bench_fill_random(c->data[1], nw, 404 + (uint64_t)c->seed);
        }
    }
    if (c->modes) {
        static const tc_mode modes[5] = {TC_MODE_CONSTANT, TC_MODE_REFLECT, TC_MODE_NEAREST,
                                         TC_MODE_MIRROR, TC_MODE_WRAP};
        for (int i = 0; i < 5; i++) {
            bench_runner *r = add_ours(b, c, BK_MODE, NULL, b->ctx, b->threads, modes[i]);
            if (r && i > 0) r->y = NULL; /* other results: no check */
        }
        return 0;
    }
    bench_runner *ar = add_ours(b, c, BK_AUTO, NULL, b->ctx, b->threads, c->mode);
    if (ar && !ar->na[0]) {
        const char *eq = strstr(ar->info, "= ");
        snprintf(c->estimate, sizeof c->estimate, "%.*s", (int)strcspn(eq ? eq + 2 : "", ","),
                 eq ? eq + 2 : "");
    }
    if (c->seed && b->threads != 1) add_ours(b, c, BK_AUTO, NULL, b->ctx1, 1, c->mode);
    add_forced_all(b, c);
    if (b->peers && !cuda) add_peers(b, c);
    return 0;
}

void bench_teardown_case(bench_case *c) {
    for (int i = 0; i < c->nr; i++) {
        bench_runner *r = &c->r[i];
        if (r->fini) r->fini(r->st);
        r->fini = NULL;
        r->st = NULL;
        r->run = NULL;
        r->y = NULL;
    }
    for (int i = 0; i < 4; i++) {
        free(c->data[i]);
        c->data[i] = NULL;
    }
}
