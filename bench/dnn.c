/*
 * dnn.c - `tileconv bench --suite dnn`: convolution layers (ResNet-50,
 * MobileNet, 3D, 1D) beside oneDNN, in one process.
 *
 * Per layer, the runners:
 *   auto              tileconv, the planner's ESTIMATE choice, weights set
 *                     on the plan once (tc_plan_conv_set_weights), NCHW in
 *                     and out: every layout conversion inside the time;
 *   <algorithm>       every other applicable CPU conv algorithm forced;
 *   auto.<mode>       auto with torch's reflect / replicate / circular
 *                     padding (3x3 and 1D layers with padding);
 *   onednn.any        oneDNN's own blocked layouts, input and weights
 *                     reordered once outside the time (a framework's view);
 *   onednn.plain      oneDNN on plain NCHW tensors.
 * Timing: one warm-up each, then rounds that run every runner once, each
 * round in a new shuffled order (so drift and the cache state a runner
 * inherits from the one before hit all alike), until `repeat` samples
 * each; median and best
 * reported. Peers get OMP_PROC_BIND=spread OMP_PLACES=cores (bench.c sets
 * them and re-executes before oneDNN loads). The FMA peak and the copy
 * bandwidth are measured in the same run; every output is compared with a
 * float64 tileconv run (max |y - y64| / max |y64|).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "bench.h"
#include "ceilings.h"
#include "bench_state.h"
#include "layers.h"
#include "tools.h"

typedef tool_layer dnn_layer; /* the suite: tools/layers.c */
#define DNN_MAXR 16

typedef struct dnn_ours {
    tc_plan *plan;
    float *y;
    const float *x;
    void *ws;
} dnn_ours;

static int dnn_ours_run(void *p, char *err, size_t errn) {
    dnn_ours *s = p;
    tc_status st = tc_execute_conv(s->plan, s->y, s->x, NULL, NULL, s->ws);
    if (st != TC_OK) {
        snprintf(err, errn, "%s", tc_last_error());
        return -1;
    }
    return 0;
}
static void dnn_ours_fini(void *p) {
    dnn_ours *s = p;
    if (!s) return;
    tc_plan_destroy(s->plan);
    free(s->y);
    free(s->ws);
    free(s);
}

static void dnn_desc(const dnn_layer *L, tc_dtype dt, tc_padding_mode pm, tc_conv_desc *d) {
    tool_layer_desc(L, dt, d);
    d->padding_mode = pm;
}

/* A tileconv runner: algo NULL = ESTIMATE. 0 on success; -1 with r->na. */
static int dnn_make_ours(bench_runner *r, const dnn_layer *L, tc_context *ctx, const char *algo,
                         tc_padding_mode pm, const float *x, const float *w, int64_t ny) {
    dnn_ours *s = calloc(1, sizeof *s);
    if (!s) return -1;
    tc_conv_desc d;
    dnn_desc(L, TC_FLOAT32, pm, &d);
    tc_plan_options o;
    tc_plan_options_init(&o);
    o.algorithm = algo;
    tc_status st = tc_plan_conv(&s->plan, ctx, &d, &o);
    if (st == TC_OK) st = tc_plan_conv_set_weights(s->plan, w, NULL);
    if (st != TC_OK) {
        snprintf(r->na, sizeof r->na, "%s", tc_last_error());
        dnn_ours_fini(s);
        return -1;
    }
    size_t wsb = tc_plan_workspace_size(s->plan);
    s->y = bench_alloc((size_t)ny * sizeof(float));
    s->ws = wsb ? bench_alloc(wsb) : NULL;
    s->x = x;
    if (!s->y || (wsb && !s->ws)) {
        snprintf(r->na, sizeof r->na, "out of memory");
        dnn_ours_fini(s);
        return -1;
    }
    static const char *const pmn[] = {"zeros", "reflect", "replicate", "circular"};
    if (!algo && pm == TC_PADDING_ZEROS) snprintf(r->name, sizeof r->name, "auto");
    else if (!algo) snprintf(r->name, sizeof r->name, "auto.%s", pmn[pm]);
    else snprintf(r->name, sizeof r->name, "%s", algo);
    snprintf(r->info, sizeof r->info, "%s", tc_plan_algorithm(s->plan));
    r->kind = algo ? BK_FORCED : pm == TC_PADDING_ZEROS ? BK_AUTO : BK_MODE;
    r->run = dnn_ours_run;
    r->fini = dnn_ours_fini;
    r->st = s;
    r->y = s->y;
    r->ny = ny;
    return 0;
}

static int dnn_cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int bench_dnn(int threads, int repeat, int quick, int peers, const char *json_path,
              const char *case_filter) {
    tc_context *ctx = NULL;
    if (tc_context_create(&ctx) != TC_OK || tc_context_set_threads(ctx, threads) != TC_OK ||
        tc_context_set_backend(ctx, TC_BACKEND_CPU) != TC_OK)
        return tool_lib_error(TC_ERR_INTERNAL, "bench: cannot create a context");
    FILE *js = NULL;
    if (json_path && !(js = fopen(json_path, "w"))) {
        tc_context_destroy(ctx);
        return tool_error("bench: cannot write '%s'", json_path);
    }
    char model[256];
    bench_cpu_model(model, sizeof model);
    tc_machine m;
    tc_machine_info(&m);
    tc_tool_ceilings ce;
    if (tc_tool_measure_ceilings_ex(threads, &ce) != 0) {
        if (js) fclose(js);
        tc_context_destroy(ctx);
        return tool_error("bench: cannot measure the ceilings");
    }
    printf("tileconv %s bench --suite dnn: %s (%s), %d threads, float32\n", tc_version(), model,
           m.uarch, threads);
    printf("ceilings (%d threads): FMA peak %.1f GFLOP/s (%s), copy %.1f GB/s\n", ce.threads,
           ce.flops / 1e9, ce.isa, ce.bytes_per_s / 1e9);
    printf("peer threads: OMP_NUM_THREADS=%s OMP_PROC_BIND=%s OMP_PLACES=%s\n",
           getenv("OMP_NUM_THREADS") ? getenv("OMP_NUM_THREADS") : "-",
           getenv("OMP_PROC_BIND") ? getenv("OMP_PROC_BIND") : "-",
           getenv("OMP_PLACES") ? getenv("OMP_PLACES") : "-");
    printf("auto and the forced algorithms: NCHW in and out, weights set on the plan once; "
           "onednn.any: blocked layouts, reorders outside the time\n\n");
    if (js)
        fprintf(js, "{\n  \"machine\": \"%s\", \"uarch\": \"%s\", \"threads\": %d,\n"
                    "  \"fma_peak_gflops\": %.2f, \"copy_gbs\": %.2f,\n  \"layers\": [",
                model, m.uarch, threads, ce.flops / 1e9, ce.bytes_per_s / 1e9);
    double geo_any = 0, geo_plain = 0;
    int ngeo_any = 0, ngeo_plain = 0, first_layer = 1;
    int reps = repeat > 0 ? repeat : quick ? 5 : 11;
    for (int li = 0; li < tool_dnn_nlayers; li++) {
        const dnn_layer *L = &tool_dnn_layers[li];
        if (case_filter && !strstr(L->id, case_filter)) continue;
        int64_t o = (L->in + 2 * L->pad - L->k) / L->stride + 1;
        int64_t sp = 1, osp = 1;
        for (int i = 0; i < L->nsp; i++) {
            sp *= L->in;
            osp *= o;
        }
        int64_t nx = L->N * L->C * sp, nw = L->K * (L->C / L->G), ny = L->N * L->K * osp;
        for (int i = 0; i < L->nsp; i++) nw *= L->k;
        double flops = 2.0 * (double)ny * (double)(L->C / L->G) * pow((double)L->k, L->nsp);
        float *x = bench_alloc((size_t)nx * sizeof(float)), *w = bench_alloc((size_t)nw * sizeof(float));
        double *x64 = malloc((size_t)nx * sizeof(double)), *w64 = malloc((size_t)nw * sizeof(double));
        double *y64 = malloc((size_t)ny * sizeof(double));
        if (!x || !w || !x64 || !w64 || !y64) {
            printf("%s: out of memory\n", L->id);
            free(x); free(w); free(x64); free(w64); free(y64);
            continue;
        }
        uint64_t seed = 0x9E3779B97F4A7C15ull * (uint64_t)(li + 1);
        for (int64_t i = 0; i < nx + nw; i++) {
            seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
            float v = (float)((double)(seed >> 11) * (2.0 / 9007199254740992.0) - 1.0);
            if (i < nx) { x[i] = v; x64[i] = v; }
            else { w[i - nx] = v; w64[i - nx] = v; }
        }
        /* float64 reference */
        {
            tc_conv_desc d;
            dnn_desc(L, TC_FLOAT64, TC_PADDING_ZEROS, &d);
            tc_plan *p64 = NULL;
            if (tc_plan_conv(&p64, ctx, &d, NULL) != TC_OK ||
                tc_execute_conv(p64, y64, x64, w64, NULL, NULL) != TC_OK) {
                printf("%s: float64 reference failed: %s\n", L->id, tc_last_error());
                memset(y64, 0, (size_t)ny * sizeof(double));
            }
            tc_plan_destroy(p64);
        }
        double ymax = 0;
        for (int64_t i = 0; i < ny; i++) ymax = fabs(y64[i]) > ymax ? fabs(y64[i]) : ymax;

        bench_runner R[DNN_MAXR];
        int nr = 0;
        memset(R, 0, sizeof R);
        dnn_make_ours(&R[nr++], L, ctx, NULL, TC_PADDING_ZEROS, x, w, ny);
        for (int i = 0; i < tc_algorithm_count() && nr < DNN_MAXR - 5; i++) {
            tc_algorithm_info ai;
            if (tc_algorithm_get(i, &ai) != TC_OK || !(ai.ops & TC_OP_CONV) ||
                ai.backend != TC_BACKEND_CPU || !ai.available || strncmp(ai.name, "ref.", 4) == 0)
                continue;
            bench_runner t;
            memset(&t, 0, sizeof t);
            if (dnn_make_ours(&t, L, ctx, ai.name, TC_PADDING_ZEROS, x, w, ny) == 0) R[nr++] = t;
        }
        if (L->pad > 0 && L->pad < L->in && L->k <= 5)
            for (int pm = 1; pm <= 3; pm++) {
                bench_runner t;
                memset(&t, 0, sizeof t);
                if (dnn_make_ours(&t, L, ctx, NULL, (tc_padding_mode)pm, x, w, ny) == 0) R[nr++] = t;
            }
#if TC_BENCH_HAVE_DNNL
        if (peers) {
            int64_t in3[3], k3[3], s3[3], d3[3], p3[3], o3[3];
            for (int i = 0; i < 3; i++) {
                in3[i] = L->in; k3[i] = L->k; s3[i] = L->stride; d3[i] = 1; p3[i] = L->pad; o3[i] = o;
            }
            for (int any = 1; any >= 0; any--) {
                bench_runner t;
                memset(&t, 0, sizeof t);
                if (peer_dnnl_layer(&t, L->nsp, L->N, L->C, L->K, L->G, in3, k3, s3, d3, p3, o3,
                                    x, w, any) == 0)
                    R[nr++] = t;
                else
                    printf("%s: onednn.%s not run: %s\n", L->id, any ? "any" : "plain", t.na);
            }
        }
#else
        (void)peers;
#endif
        /* warm-up, check */
        char err[256];
        for (int i = 0; i < nr; i++) {
            double t0 = bench_now_ms();
            if (R[i].run(R[i].st, err, sizeof err) != 0) {
                snprintf(R[i].na, sizeof R[i].na, "%s", err);
                continue;
            }
            R[i].warm_ms = bench_now_ms() - t0;
            R[i].check = -1;
            if (R[i].y && R[i].kind != BK_MODE && ymax > 0) {
                double e = 0;
                for (int64_t j = 0; j < ny; j++) {
                    double d = fabs((double)R[i].y[j] - y64[j]);
                    e = d > e || d != d ? d : e;
                }
                R[i].check = e / ymax;
            }
            /* and a second call: the first pays one-time costs (oneDNN's
             * JIT: 5-6 ms on the depthwise layer), which made a 0.15 ms
             * runner sit out after 3 rounds below, its median then taken
             * from the first, slowest rounds only */
            t0 = bench_now_ms();
            if (R[i].run(R[i].st, err, sizeof err) == 0) {
                double t2 = bench_now_ms() - t0;
                if (t2 < R[i].warm_ms) R[i].warm_ms = t2;
            }
        }
        /* rounds; runners far slower than the best warm-up sit out after 3 */
        double best_warm = 1e30;
        for (int i = 0; i < nr; i++)
            if (!R[i].na[0] && R[i].warm_ms < best_warm) best_warm = R[i].warm_ms;
        /* each round runs the runners in a new order (a seeded shuffle), so
         * no runner always inherits the caches of the same predecessor:
         * with a fixed order auto always ran right after onednn.plain
         * (whose im2col buffer evicts the caches) and read 5-25% slower
         * than the same algorithm forced) */
        int order[DNN_MAXR];
        uint64_t lcg = 0x9e3779b97f4a7c15ull;
        for (int rep = 0; rep < reps; rep++) {
            for (int k = 0; k < nr; k++) order[k] = k;
            for (int k = nr - 1; k > 0; k--) {
                lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
                const int j = (int)((lcg >> 33) % (uint64_t)(k + 1));
                const int t = order[k];
                order[k] = order[j];
                order[j] = t;
            }
            for (int k = 0; k < nr; k++) {
                const int i = order[k];
                if (R[i].na[0]) continue;
                if (rep >= 3 && R[i].warm_ms > 20 * best_warm) continue;
                double t0 = bench_now_ms();
                if (R[i].run(R[i].st, err, sizeof err) != 0) {
                    snprintf(R[i].na, sizeof R[i].na, "%s", err);
                    continue;
                }
                if (R[i].n < BENCH_MAX_SAMPLES) R[i].samples[R[i].n++] = bench_now_ms() - t0;
            }
        }
        int iauto = -1, iany = -1, iplain = -1;
        for (int i = 0; i < nr; i++) {
            if (R[i].n) {
                qsort(R[i].samples, (size_t)R[i].n, sizeof(double), dnn_cmp_d);
                R[i].median_ms = R[i].n % 2 ? R[i].samples[R[i].n / 2]
                                            : 0.5 * (R[i].samples[R[i].n / 2 - 1] + R[i].samples[R[i].n / 2]);
                R[i].min_ms = R[i].samples[0];
            }
            if (!strcmp(R[i].name, "auto")) iauto = i;
            if (!strcmp(R[i].name, "onednn.any")) iany = i;
            if (!strcmp(R[i].name, "onednn.plain")) iplain = i;
        }
        printf("== %s (%s): %.3f GFLOP\n", L->label, L->id, flops / 1e9);
        printf("  %-22s %9s %9s %9s %7s %10s  %s\n", "runner", "median_ms", "best_ms", "GFLOP/s",
               "%peak", "err_vs_f64", "detail");
        for (int i = 0; i < nr; i++) {
            if (R[i].na[0] || !R[i].n) {
                printf("  %-22s n/a: %s\n", R[i].name, R[i].na[0] ? R[i].na : "no samples");
                continue;
            }
            double gf = flops / (R[i].median_ms * 1e-3) / 1e9;
            char chk[24] = "-";
            if (R[i].check >= 0) snprintf(chk, sizeof chk, "%.1e", R[i].check);
            printf("  %-22s %9.3f %9.3f %9.1f %6.1f%% %10s  %s\n", R[i].name, R[i].median_ms,
                   R[i].min_ms, gf, 100.0 * gf * 1e9 / ce.flops, chk, R[i].info);
        }
        if (iauto >= 0 && R[iauto].n) {
            double a = R[iauto].median_ms;
            double bestf = 1e30;
            const char *bestn = "";
            for (int i = 0; i < nr; i++)
                if (R[i].kind == BK_FORCED && R[i].n && R[i].median_ms < bestf) {
                    bestf = R[i].median_ms;
                    bestn = R[i].name;
                }
            printf("  auto chose %s: %.2fx the best forced (%s)", R[iauto].info,
                   bestf < 1e30 ? a / bestf : 0.0, bestn);
            if (iany >= 0 && R[iany].n) {
                printf("; vs onednn.any %.2fx", R[iany].median_ms / a);
                geo_any += log(R[iany].median_ms / a);
                ngeo_any++;
            }
            if (iplain >= 0 && R[iplain].n) {
                printf("; vs onednn.plain %.2fx", R[iplain].median_ms / a);
                geo_plain += log(R[iplain].median_ms / a);
                ngeo_plain++;
            }
            for (int i = 0; i < nr; i++)
                if (R[i].kind == BK_MODE && R[i].n)
                    printf("; %s %.2fx zeros", R[i].name, R[i].median_ms / a);
            printf("\n\n");
        }
        if (js) {
            fprintf(js, "%s\n    {\"id\": \"%s\", \"label\": \"%s\", \"gflop\": %.6f, \"runners\": [",
                    first_layer ? "" : ",", L->id, L->label, flops / 1e9);
            first_layer = 0;
            int firstr = 1;
            for (int i = 0; i < nr; i++) {
                if (R[i].na[0] || !R[i].n) continue;
                fprintf(js, "%s\n      {\"name\": \"%s\", \"info\": \"%s\", \"median_ms\": %.5f, "
                            "\"best_ms\": %.5f, \"samples\": %d, \"err_vs_f64\": %.3e}",
                        firstr ? "" : ",", R[i].name, R[i].info, R[i].median_ms, R[i].min_ms,
                        R[i].n, R[i].check);
                firstr = 0;
            }
            fprintf(js, "]}");
        }
        for (int i = 0; i < nr; i++)
            if (R[i].fini) R[i].fini(R[i].st);
        free(x); free(w); free(x64); free(w64); free(y64);
    }
    if (ngeo_any)
        printf("geomean speed-up of auto over onednn.any: %.2fx over %d layers\n",
               exp(geo_any / ngeo_any), ngeo_any);
    if (ngeo_plain)
        printf("geomean speed-up of auto over onednn.plain: %.2fx over %d layers\n",
               exp(geo_plain / ngeo_plain), ngeo_plain);
    if (js) {
        fprintf(js, "\n  ],\n  \"geomean_vs_onednn_any\": %.4f\n}\n",
                ngeo_any ? exp(geo_any / ngeo_any) : 0.0);
        fclose(js);
    }
    tc_context_destroy(ctx);
    return TOOL_OK;
}
