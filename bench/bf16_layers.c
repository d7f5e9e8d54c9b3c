/*
 * bf16_layers.c - the dnn suite's convolution layers (bench/dnn.c) in
 * bfloat16, tileconv beside oneDNN's bf16 convolution, in one process.
 * Built and run by bench/bf16_layers.sh.
 *
 * Runners per layer:
 *   bf16.nhwc      tileconv, planner's choice (ESTIMATE), bfloat16,
 *                  channels-last in and out, weights set on the plan once;
 *   bf16.nchw      the same, channels-first;
 *   f32.nchw       tileconv float32 auto, channels-first (the dnn suite's
 *                  `auto` runner);
 *   onednn.nhwc    oneDNN bf16 on plain nhwc / ndhwc / nwc tensors
 *                  (torch's channels_last memory format);
 *   onednn.any     oneDNN bf16 in its own blocked layouts, input and
 *                  weights reordered once outside the time.
 * Timing: two warm-up calls each, then rounds running every runner once in
 * a new shuffled order, `reps` rounds; median reported. Every bf16 output
 * is compared with tileconv's float64 result on the same (bf16-rounded)
 * data: max |y - y64| / max |y64|.
 */
#include <dnnl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "layers.h" /* tools/ */
#include "tileconv.h"
#include "../src/core/knobs.h" /* the environment knobs */

typedef tool_layer layer; /* the dnn suite: tools/layers.c */
#define layers tool_dnn_layers
#define NL tool_dnn_nlayers
#define NR 5
#define MAXS 64

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}
static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct runner {
    char name[32], info[96], na[160];
    int kind; /* 0 tileconv, 1 oneDNN */
    tc_plan *plan;
    void *x, *y, *ws;
    dnnl_primitive_t conv;
    dnnl_stream_t strm;
    dnnl_memory_t src, wei, dst;
    double s[MAXS];
    int n;
    double med, min, err;
} runner;

static int run1(runner *r) {
    if (r->kind == 0) return tc_execute_conv(r->plan, r->y, r->x, NULL, NULL, r->ws) == TC_OK ? 0 : -1;
    dnnl_exec_arg_t a[3] = {{DNNL_ARG_SRC, r->src}, {DNNL_ARG_WEIGHTS, r->wei}, {DNNL_ARG_DST, r->dst}};
    if (dnnl_primitive_execute(r->conv, r->strm, 3, a) != dnnl_success) return -1;
    return dnnl_stream_wait(r->strm) == dnnl_success ? 0 : -1;
}

static void desc(const layer *L, tc_dtype dt, tc_layout lay, tc_conv_desc *d) {
    tool_layer_desc(L, dt, d);
    d->layout = lay;
}

static void *xalloc(size_t b) {
    void *p = NULL;
    if (posix_memalign(&p, 64, b ? b : 64)) return NULL;
    memset(p, 0, b);
    return p;
}

static int make_ours(runner *r, const char *name, const layer *L, tc_context *ctx, tc_dtype dt,
                     tc_layout lay, const void *x, const void *w, int64_t ny) {
    snprintf(r->name, sizeof r->name, "%s", name);
    r->kind = 0;
    tc_conv_desc d;
    desc(L, dt, lay, &d);
    if (tc_plan_conv(&r->plan, ctx, &d, NULL) != TC_OK ||
        tc_plan_conv_set_weights(r->plan, w, NULL) != TC_OK) {
        snprintf(r->na, sizeof r->na, "%s", tc_last_error());
        return -1;
    }
    size_t wsb = tc_plan_workspace_size(r->plan);
    r->ws = wsb ? xalloc(wsb) : NULL;
    r->y = xalloc((size_t)ny * tc_dtype_size(dt));
    r->x = (void *)x;
    const char *stg = tc_plan_staging(r->plan);
    snprintf(r->info, sizeof r->info, "%s%s%s", tc_plan_algorithm(r->plan), stg && stg[0] ? "; " : "",
             stg ? stg : "");
    return 0;
}

/* oneDNN bf16 forward inference; any = blocked layouts chosen by oneDNN */
static int make_dnnl(runner *r, const layer *L, dnnl_engine_t eng, int64_t o, const uint16_t *x_nhwc,
                     const uint16_t *w, int any) {
    snprintf(r->name, sizeof r->name, "onednn.%s", any ? "any" : "nhwc");
    r->kind = 1;
    int nsp = L->nsp;
    static const dnnl_format_tag_t act[4] = {dnnl_format_tag_undef, dnnl_nwc, dnnl_nhwc, dnnl_ndhwc};
    static const dnnl_format_tag_t wt[4] = {dnnl_format_tag_undef, dnnl_oiw, dnnl_oihw, dnnl_oidhw};
    static const dnnl_format_tag_t gwt[4] = {dnnl_format_tag_undef, dnnl_goiw, dnnl_goihw, dnnl_goidhw};
    dnnl_dims_t sd = {L->N, L->C}, dd = {L->N, L->K}, wd, st, dl, pl, pr;
    int wnd = L->G > 1 ? 3 + nsp : 2 + nsp;
    if (L->G > 1) {
        wd[0] = L->G; wd[1] = L->K / L->G; wd[2] = L->C / L->G;
    } else {
        wd[0] = L->K; wd[1] = L->C;
    }
    for (int i = 0; i < nsp; i++) {
        sd[2 + i] = L->in;
        dd[2 + i] = o;
        wd[wnd - nsp + i] = L->k;
        st[i] = L->stride;
        dl[i] = 0;
        pl[i] = L->pad;
        pr[i] = (o - 1) * L->stride + L->k - L->in - L->pad;
    }
    dnnl_format_tag_t wtag = L->G > 1 ? gwt[nsp] : wt[nsp], anyt = dnnl_format_tag_any;
    dnnl_memory_desc_t src_u, wei_u, src_md, wei_md, dst_md;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t s = dnnl_success;
#define CK(c) do { if (s == dnnl_success) s = (c); } while (0)
    CK(dnnl_memory_desc_init_by_tag(&src_u, 2 + nsp, sd, dnnl_bf16, act[nsp]));
    CK(dnnl_memory_desc_init_by_tag(&wei_u, wnd, wd, dnnl_bf16, wtag));
    CK(dnnl_memory_desc_init_by_tag(&src_md, 2 + nsp, sd, dnnl_bf16, any ? anyt : act[nsp]));
    CK(dnnl_memory_desc_init_by_tag(&wei_md, wnd, wd, dnnl_bf16, anyt));
    CK(dnnl_memory_desc_init_by_tag(&dst_md, 2 + nsp, dd, dnnl_bf16, any ? anyt : act[nsp]));
    dnnl_convolution_desc_t cd;
    CK(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct,
                                                  &src_md, &wei_md, NULL, &dst_md, st, dl, pl, pr));
    CK(dnnl_primitive_desc_create(&pd, &cd, NULL, eng, NULL));
    CK(dnnl_primitive_create(&r->conv, pd));
    CK(dnnl_stream_create(&r->strm, eng, dnnl_stream_default_flags));
    if (s != dnnl_success) {
        snprintf(r->na, sizeof r->na, "oneDNN setup failed (%d)", (int)s);
        if (pd) dnnl_primitive_desc_destroy(pd);
        return -1;
    }
    const char *impl = "?";
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    snprintf(r->info, sizeof r->info, "oneDNN %d.%d.%d %s", dnnl_version()->major,
             dnnl_version()->minor, dnnl_version()->patch, impl);
    const dnnl_memory_desc_t *qs = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t *qw = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *qd = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    CK(dnnl_memory_create(&r->src, qs, eng, DNNL_MEMORY_ALLOCATE));
    CK(dnnl_memory_create(&r->wei, qw, eng, DNNL_MEMORY_ALLOCATE));
    CK(dnnl_memory_create(&r->dst, qd, eng, DNNL_MEMORY_ALLOCATE));
    /* reorder the user's nhwc input and oihw weights in, once */
    const dnnl_memory_desc_t *umd[2] = {&src_u, &wei_u};
    const void *ud[2] = {x_nhwc, w};
    dnnl_memory_t to[2] = {r->src, r->wei};
    for (int i = 0; i < 2 && s == dnnl_success; i++) {
        dnnl_memory_t u = NULL;
        dnnl_primitive_desc_t rpd = NULL;
        dnnl_primitive_t rp = NULL;
        const dnnl_memory_desc_t *tmd;
        dnnl_memory_get_memory_desc(to[i], &tmd);
        CK(dnnl_memory_create(&u, umd[i], eng, (void *)ud[i]));
        CK(dnnl_reorder_primitive_desc_create(&rpd, umd[i], eng, tmd, eng, NULL));
        CK(dnnl_primitive_create(&rp, rpd));
        dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, u}, {DNNL_ARG_TO, to[i]}};
        CK(dnnl_primitive_execute(rp, r->strm, 2, a));
        CK(dnnl_stream_wait(r->strm));
        if (rp) dnnl_primitive_destroy(rp);
        if (rpd) dnnl_primitive_desc_destroy(rpd);
        if (u) dnnl_memory_destroy(u);
    }
    dnnl_primitive_desc_destroy(pd);
    if (s != dnnl_success) {
        snprintf(r->na, sizeof r->na, "oneDNN reorder failed (%d)", (int)s);
        return -1;
    }
    return 0;
}

/* bf16 / f32 output of a runner as float32 in NCDHW order */
static void out_f32(const runner *r, const layer *L, int64_t osp, float *o, dnnl_engine_t eng) {
    int64_t ny = L->N * L->K * osp;
    if (r->kind == 1) { /* reorder dst to plain nchw bf16 */
        uint16_t *t = xalloc((size_t)ny * 2);
        const dnnl_memory_desc_t *qd;
        dnnl_memory_get_memory_desc(r->dst, &qd);
        static const dnnl_format_tag_t pl[4] = {dnnl_format_tag_undef, dnnl_ncw, dnnl_nchw, dnnl_ncdhw};
        dnnl_memory_desc_t umd;
        dnnl_dims_t dd = {L->N, L->K};
        int64_t o1 = (int64_t)llround(pow((double)osp, 1.0 / L->nsp));
        for (int i = 0; i < L->nsp; i++) dd[2 + i] = o1;
        dnnl_memory_desc_init_by_tag(&umd, 2 + L->nsp, dd, dnnl_bf16, pl[L->nsp]);
        dnnl_memory_t u = NULL;
        dnnl_primitive_desc_t rpd = NULL;
        dnnl_primitive_t rp = NULL;
        dnnl_memory_create(&u, &umd, eng, t);
        dnnl_reorder_primitive_desc_create(&rpd, qd, eng, &umd, eng, NULL);
        dnnl_primitive_create(&rp, rpd);
        dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, r->dst}, {DNNL_ARG_TO, u}};
        dnnl_primitive_execute(rp, r->strm, 2, a);
        dnnl_stream_wait(r->strm);
        dnnl_primitive_destroy(rp);
        dnnl_primitive_desc_destroy(rpd);
        dnnl_memory_destroy(u);
        tc_bfloat16_to_float(o, t, (size_t)ny);
        free(t);
        return;
    }
    if (!strncmp(r->name, "f32", 3)) {
        memcpy(o, r->y, (size_t)ny * 4);
        return;
    }
    float *t = xalloc((size_t)ny * 4);
    tc_bfloat16_to_float(t, r->y, (size_t)ny);
    if (strstr(r->name, "nhwc")) {
        for (int64_t n = 0; n < L->N; n++)
            for (int64_t p = 0; p < osp; p++)
                for (int64_t k = 0; k < L->K; k++) o[(n * L->K + k) * osp + p] = t[(n * osp + p) * L->K + k];
    } else {
        memcpy(o, t, (size_t)ny * 4);
    }
    free(t);
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 0, reps = argc > 2 ? atoi(argv[2]) : 21;
    const char *filter = argc > 3 ? argv[3] : NULL;
    if (reps > MAXS) reps = MAXS;
    tc_context *ctx = NULL;
    tc_context_create(&ctx);
    tc_context_set_threads(ctx, threads);
    tc_context_set_backend(ctx, TC_BACKEND_CPU);
    dnnl_engine_t eng;
    dnnl_engine_create(&eng, dnnl_cpu, 0);
    tc_machine m;
    tc_machine_info(&m);
    printf("bf16 layers: %d threads (tileconv), OMP_NUM_THREADS=%s OMP_PROC_BIND=%s OMP_PLACES=%s, "
           "%d rounds, median ms\n",
           tc_context_threads(ctx), getenv("OMP_NUM_THREADS") ? getenv("OMP_NUM_THREADS") : "-",
           getenv("OMP_PROC_BIND") ? getenv("OMP_PROC_BIND") : "-",
           getenv("OMP_PLACES") ? getenv("OMP_PLACES") : "-", reps);
    printf("%-16s %10s %10s %10s %10s %10s %7s %7s %9s %9s\n", "layer", "bf16.nhwc", "bf16.nchw",
           "f32.nchw", "dnnl.nhwc", "dnnl.any", "vs_dnnl", "vs_f32", "err_ours", "err_dnnl");
    double geo = 0;
    int ngeo = 0;
    for (int li = 0; li < NL; li++) {
        const layer *L = &layers[li];
        if (filter && !strstr(L->id, filter)) continue;
        int64_t o = (L->in + 2 * L->pad - L->k) / L->stride + 1, sp = 1, osp = 1;
        for (int i = 0; i < L->nsp; i++) {
            sp *= L->in;
            osp *= o;
        }
        int64_t nx = L->N * L->C * sp, nw = L->K * (L->C / L->G), ny = L->N * L->K * osp;
        for (int i = 0; i < L->nsp; i++) nw *= L->k;
        float *xf = xalloc((size_t)nx * 4), *wf = xalloc((size_t)nw * 4);
        uint16_t *xb = xalloc((size_t)nx * 2), *xbl = xalloc((size_t)nx * 2), *wb = xalloc((size_t)nw * 2);
        double *x64 = xalloc((size_t)nx * 8), *w64 = xalloc((size_t)nw * 8), *y64 = xalloc((size_t)ny * 8);
        float *yo = xalloc((size_t)ny * 4);
        uint64_t seed = 0x9E3779B97F4A7C15ull * (uint64_t)(li + 1);
        for (int64_t i = 0; i < nx + nw; i++) {
            seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
            float v = (float)((double)(seed >> 11) * (2.0 / 9007199254740992.0) - 1.0);
            if (i < nx) xf[i] = v; else wf[i - nx] = v;
        }
        tc_float_to_bfloat16(xb, xf, (size_t)nx);
        tc_float_to_bfloat16(wb, wf, (size_t)nw);
        tc_bfloat16_to_float(xf, xb, (size_t)nx); /* every runner sees the same values */
        tc_bfloat16_to_float(wf, wb, (size_t)nw);
        for (int64_t i = 0; i < nx; i++) x64[i] = xf[i];
        for (int64_t i = 0; i < nw; i++) w64[i] = wf[i];
        for (int64_t n = 0; n < L->N; n++)
            for (int64_t c = 0; c < L->C; c++)
                for (int64_t p = 0; p < sp; p++) xbl[(n * sp + p) * L->C + c] = xb[(n * L->C + c) * sp + p];
        {
            tc_conv_desc d;
            desc(L, TC_FLOAT64, TC_LAYOUT_CHANNELS_FIRST, &d);
            tc_plan *p64 = NULL;
            if (tc_plan_conv(&p64, ctx, &d, NULL) != TC_OK || tc_execute_conv(p64, y64, x64, w64, NULL, NULL) != TC_OK)
                printf("%s: float64 reference failed: %s\n", L->id, tc_last_error());
            tc_plan_destroy(p64);
        }
        double ymax = 0;
        for (int64_t i = 0; i < ny; i++) ymax = fabs(y64[i]) > ymax ? fabs(y64[i]) : ymax;
        runner R[NR];
        memset(R, 0, sizeof R);
        make_ours(&R[0], "bf16.nhwc", L, ctx, TC_BFLOAT16, TC_LAYOUT_CHANNELS_LAST, xbl, wb, ny);
        make_ours(&R[1], "bf16.nchw", L, ctx, TC_BFLOAT16, TC_LAYOUT_CHANNELS_FIRST, xb, wb, ny);
        make_ours(&R[2], "f32.nchw", L, ctx, TC_FLOAT32, TC_LAYOUT_CHANNELS_FIRST, xf, wf, ny);
        if (tc__knob_get(TC__KNOB_BENCH_BF16_NO_PEER)) {
            snprintf(R[3].na, sizeof R[3].na, "TILECONV_BENCH_BF16_NO_PEER");
            snprintf(R[4].na, sizeof R[4].na, "TILECONV_BENCH_BF16_NO_PEER");
        } else {
            make_dnnl(&R[3], L, eng, o, xbl, wb, 0);
            make_dnnl(&R[4], L, eng, o, xbl, wb, 1);
        }
        for (int i = 0; i < NR; i++) {
            R[i].err = -1;
            if (R[i].na[0]) continue;
            if (run1(&R[i]) || run1(&R[i])) {
                snprintf(R[i].na, sizeof R[i].na, "run failed: %s", tc_last_error());
                continue;
            }
            out_f32(&R[i], L, osp, yo, eng);
            double e = 0;
            for (int64_t j = 0; j < ny; j++) {
                double dd = fabs((double)yo[j] - y64[j]);
                e = dd > e || dd != dd ? dd : e;
            }
            R[i].err = ymax > 0 ? e / ymax : e;
        }
        uint64_t lcg = 0x9e3779b97f4a7c15ull;
        for (int rep = 0; rep < reps; rep++) {
            int ord[NR];
            for (int k = 0; k < NR; k++) ord[k] = k;
            for (int k = NR - 1; k > 0; k--) {
                lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
                int j = (int)((lcg >> 33) % (uint64_t)(k + 1)), t = ord[k];
                ord[k] = ord[j];
                ord[j] = t;
            }
            for (int k = 0; k < NR; k++) {
                runner *r = &R[ord[k]];
                if (r->na[0]) continue;
                double t0 = now_ms();
                run1(r);
                r->s[r->n++] = now_ms() - t0;
            }
        }
        for (int i = 0; i < NR; i++) {
            R[i].med = -1;
            if (!R[i].n) continue;
            qsort(R[i].s, (size_t)R[i].n, sizeof(double), cmpd);
            R[i].min = R[i].s[0];
            R[i].med = R[i].n % 2 ? R[i].s[R[i].n / 2] : 0.5 * (R[i].s[R[i].n / 2 - 1] + R[i].s[R[i].n / 2]);
        }
        double dn = R[3].med > 0 && (R[4].med <= 0 || R[3].med < R[4].med) ? R[3].med : R[4].med;
        double errd = R[3].med > 0 && (R[4].med <= 0 || R[3].med < R[4].med) ? R[3].err : R[4].err;
        printf("%-16s %10.4f %10.4f %10.4f %10.4f %10.4f %6.2fx %6.2fx %9.1e %9.1e\n", L->id, R[0].med,
               R[1].med, R[2].med, R[3].med, R[4].med, R[0].med > 0 && dn > 0 ? dn / R[0].med : 0,
               R[0].med > 0 ? R[2].med / R[0].med : 0, R[0].err, errd);
        printf("%-16s %10.4f %10.4f %10.4f %10.4f %10.4f  (best of %d)\n", "", R[0].min, R[1].min,
               R[2].min, R[3].min, R[4].min, reps);
        for (int i = 0; i < NR; i++)
            printf("    %-11s %s%s\n", R[i].name, R[i].na[0] ? "n/a: " : "", R[i].na[0] ? R[i].na : R[i].info);
        if (R[0].med > 0 && dn > 0) {
            geo += log(dn / R[0].med);
            ngeo++;
        }
        for (int i = 0; i < NR; i++) {
            if (R[i].kind == 0) {
                tc_plan_destroy(R[i].plan);
                free(R[i].y);
                free(R[i].ws);
            } else {
                if (R[i].conv) dnnl_primitive_destroy(R[i].conv);
                if (R[i].src) dnnl_memory_destroy(R[i].src);
                if (R[i].wei) dnnl_memory_destroy(R[i].wei);
                if (R[i].dst) dnnl_memory_destroy(R[i].dst);
                if (R[i].strm) dnnl_stream_destroy(R[i].strm);
            }
        }
        free(xf); free(wf); free(xb); free(xbl); free(wb); free(x64); free(w64); free(y64); free(yo);
    }
    if (ngeo) printf("geomean bf16.nhwc vs the faster oneDNN bf16: %.3fx over %d layers\n", exp(geo / ngeo), ngeo);
    dnnl_engine_destroy(eng);
    tc_context_destroy(ctx);
    return 0;
}
