/*
 * analyze_layers.c - `tileconv analyze --layers`: seed 002's cost arithmetic
 * for convolution layers, beside what the planner picks and (--measure)
 * what every applicable algorithm takes.
 *
 * Per layer (float32; N, C, K, groups G, spatial in, kernel R = prod(m),
 * output positions P, Cg = C/G):
 *   FLOPs        2 N K P Cg R (multiply-add = 2)
 *   bytes        4 (x + w + y): the minimum, each array once
 *   intensity    FLOPs / bytes, against the ridge point peak / bandwidth
 *   im2col       column buffer N G (Cg R) P elements, and its ratio to the
 *                input (R / stride^d: 27x for 3x3x3, as seed 002 says)
 *   Filter2Row   the filter unrolled into a (K P) x (C H W) matrix (per
 *                image, seed 002): dense GEMV FLOPs 2 K P C HW = the direct
 *                FLOPs times HW / R; it pays only when the kernel covers the
 *                input (HW <= R: one output), and its matrix then holds
 *                K C R elements
 *   Winograd     F(m x m, 3 x 3), m = 2, 4, 6, for 3x3 stride-1 dilation-1
 *                2D layers and 3D kd x 3 x 3 ones (the depth taps summed
 *                directly, each input slice transformed once; cpu.conv.winograd-f4
 *                does F(4,3) so): alpha = m + 2, tiles N [OD] ceil(OH/m) ceil(OW/m),
 *                multiplies per output Cg alpha^2 / m^2 against 9 Cg (the
 *                reduction 9 m^2 / alpha^2: 2.25, 4, 5.06), transformed
 *                input alpha^2 C tiles, weights alpha^2 K Cg, output
 *                alpha^2 K tiles elements; the weights a call reads:
 *                36 K Cg kd floats transformed (cpu.conv.winograd-f4) or
 *                9 K Cg kd raw (cpu.conv.winograd-f4-raw transforms them in
 *                the call)
 *   FFT          per axis L = the smallest 2,3,5,7-smooth length >= (out-1)
 *                stride + span (what cpu.conv.fft uses), N (C + K) real
 *                transforms of prod(L) (~2.5 L log2 L FLOPs each), N K Cg
 *                complex multiply-adds per frequency, weight spectra K Cg
 *                prod(L)/2 complex values
 * and the planner's ESTIMATE choice; --measure forces every applicable CPU
 * conv algorithm (weights set on the plan once) and reports its median.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyze.h"
#include "ceilings.h"
#include "layers.h"
#include "tileconv.h"

typedef struct al_layer {
    char id[48];
    int nsp;
    int64_t N, C, K, G, in[3], m[3], stride, pad, dil;
} al_layer;

/* A suite layer (tools/layers.c) as an al_layer. */
static void al_from_suite(al_layer *L, const tool_layer *S) {
    memset(L, 0, sizeof *L);
    snprintf(L->id, sizeof L->id, "%s", S->id);
    L->nsp = S->nsp;
    L->N = S->N;
    L->C = S->C;
    L->K = S->K;
    L->G = S->G;
    for (int i = 0; i < S->nsp; i++) {
        L->in[i] = S->in;
        L->m[i] = S->k;
    }
    L->stride = S->stride;
    L->pad = S->pad;
    L->dil = 1;
}

static int64_t al_smooth(int64_t n) { /* smallest 2,3,5,7-smooth >= n */
    if (n <= 1) return 1;
    for (int64_t v = n;; v++) {
        int64_t r = v;
        for (int p = 2; p <= 7; p++)
            while (r % p == 0) r /= p;
        if (r == 1) return v;
    }
}

typedef struct al_result {
    al_layer L;
    int64_t out[3], P, Cg, R, HW;
    double flops, bytes, intensity;
    double im2col_elems, im2col_ratio;
    double f2r_elems, f2r_flops, f2r_ratio;
    int f2r_pays;
    int wino_ok;
    double wino_tiles[3], wino_red[3], wino_in[3], wino_w[3], wino_out[3];
    int64_t fft_L[3];
    double fft_flops, fft_wspec;
    char estimate[64];
    int nmeas;
    char mname[16][40];
    double mms[16];
} al_result;

static void al_compute(al_result *r, const al_layer *L) {
    memset(r, 0, sizeof *r);
    r->L = *L;
    r->P = 1;
    r->R = 1;
    r->HW = 1;
    for (int i = 0; i < L->nsp; i++) {
        int64_t span = (L->m[i] - 1) * L->dil + 1;
        r->out[i] = (L->in[i] + 2 * L->pad - span) / L->stride + 1;
        r->P *= r->out[i];
        r->R *= L->m[i];
        r->HW *= L->in[i];
    }
    r->Cg = L->C / L->G;
    r->flops = 2.0 * L->N * L->K * (double)r->P * r->Cg * r->R;
    double nx = (double)L->N * L->C * r->HW, nw = (double)L->K * r->Cg * r->R,
           ny = (double)L->N * L->K * r->P;
    r->bytes = 4.0 * (nx + nw + ny);
    r->intensity = r->flops / r->bytes;
    r->im2col_elems = (double)L->N * L->G * (double)(r->Cg * r->R) * (double)r->P;
    r->im2col_ratio = r->im2col_elems / nx;
    /* Filter2Row, per image: (K P) x (C HW) dense, grouped layers block-diagonal */
    r->f2r_elems = (double)L->K * r->P * (double)r->Cg * (double)r->HW;
    r->f2r_flops = 2.0 * L->N * r->f2r_elems;
    r->f2r_ratio = r->f2r_flops / r->flops;
    r->f2r_pays = r->f2r_ratio <= 1.0;
    /* 2D 3x3, or 3D kd x 3 x 3 (Winograd over the last two axes, the depth
     * taps summed directly: each input slice transformed once) */
    int ha = L->nsp - 2; /* the first of the two Winograd axes */
    r->wino_ok = L->nsp >= 2 && L->m[ha] == 3 && L->m[ha + 1] == 3 && L->stride == 1 &&
                 L->dil == 1;
    for (int k = 0; k < 3 && r->wino_ok; k++) {
        int m = 2 * (k + 1), a = m + 2;
        double t2 = ceil((double)r->out[ha] / m) * ceil((double)r->out[ha + 1] / m);
        double od = ha ? (double)r->out[0] : 1.0, id = ha ? (double)L->in[0] : 1.0;
        double kd = ha ? (double)L->m[0] : 1.0;
        double tiles = (double)L->N * od * t2;
        r->wino_tiles[k] = tiles;
        r->wino_red[k] = 9.0 * m * m / (double)(a * a);
        r->wino_in[k] = (double)a * a * L->C * (double)L->N * id * t2;
        r->wino_w[k] = (double)a * a * L->K * r->Cg * kd;
        r->wino_out[k] = (double)a * a * L->K * tiles;
    }
    double nL = 1;
    for (int i = 0; i < 3; i++) r->fft_L[i] = 1;
    for (int i = 0; i < L->nsp; i++) {
        int64_t E = (r->out[i] - 1) * L->stride + (L->m[i] - 1) * L->dil + 1;
        r->fft_L[i] = al_smooth(E);
        nL *= (double)r->fft_L[i];
    }
    double F = nL / 2 + 1;
    r->fft_flops = (double)L->N * (L->C + L->K) * 2.5 * nL * log2(nL > 2 ? nL : 2) +
                   8.0 * L->N * L->K * (double)r->Cg * F;
    r->fft_wspec = (double)L->K * r->Cg * F;
}

static void al_desc(const al_layer *L, tc_conv_desc *d) {
    tc_conv_desc_init(d);
    d->nspatial = L->nsp;
    d->batch = L->N;
    d->in_channels = L->C;
    d->out_channels = L->K;
    d->groups = L->G;
    for (int i = 0; i < L->nsp; i++) {
        d->in_size[i] = L->in[i];
        d->kernel_size[i] = L->m[i];
        d->stride[i] = L->stride;
        d->padding[i] = L->pad;
        d->dilation[i] = L->dil;
    }
}

static double al_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int al_cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void al_plan(al_result *r, tc_context *ctx, int measure) {
    tc_conv_desc d;
    al_desc(&r->L, &d);
    tc_plan *pl = NULL;
    if (tc_plan_conv(&pl, ctx, &d, NULL) == TC_OK) {
        snprintf(r->estimate, sizeof r->estimate, "%s", tc_plan_algorithm(pl));
        tc_plan_destroy(pl);
    } else {
        snprintf(r->estimate, sizeof r->estimate, "none");
    }
    if (!measure) return;
    const al_layer *L = &r->L;
    size_t nx = (size_t)(L->N * L->C * r->HW), nw = (size_t)(L->K * r->Cg * r->R),
           ny = (size_t)(L->N * L->K * r->P);
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *y = malloc(ny * 4);
    if (!x || !w || !y) goto out;
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < nx + nw; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        float v = (float)((double)(s >> 11) * (2.0 / 9007199254740992.0) - 1.0);
        if (i < nx) x[i] = v;
        else w[i - nx] = v;
    }
    for (int i = 0; i < tc_algorithm_count() && r->nmeas < 16; i++) {
        tc_algorithm_info ai;
        if (tc_algorithm_get(i, &ai) != TC_OK || !(ai.ops & TC_OP_CONV) ||
            ai.backend != TC_BACKEND_CPU || !ai.available || !strncmp(ai.name, "ref.", 4))
            continue;
        tc_plan_options o;
        tc_plan_options_init(&o);
        o.algorithm = ai.name;
        if (tc_plan_conv(&pl, ctx, &d, &o) != TC_OK) continue;
        double t[5];
        int ok = tc_plan_conv_set_weights(pl, w, NULL) == TC_OK &&
                 tc_execute_conv(pl, y, x, NULL, NULL, NULL) == TC_OK;
        double t0 = al_now_ms();
        int reps = 0;
        for (; ok && reps < 5; reps++) {
            double a = al_now_ms();
            ok = tc_execute_conv(pl, y, x, NULL, NULL, NULL) == TC_OK;
            t[reps] = al_now_ms() - a;
            if (al_now_ms() - t0 > 3000) { reps++; break; } /* slow algorithms: fewer */
        }
        tc_plan_destroy(pl);
        if (!ok || reps == 0) continue;
        qsort(t, (size_t)reps, sizeof(double), al_cmpd);
        snprintf(r->mname[r->nmeas], sizeof r->mname[0], "%s", ai.name);
        r->mms[r->nmeas++] = t[reps / 2];
    }
out:
    free(x);
    free(w);
    free(y);
}

/* "N,C,K,G,H[xW[xD]],k,stride,pad[,dil]" */
static int al_parse(const char *s, al_layer *L) {
    memset(L, 0, sizeof *L);
    long long n, c, k, g, st, pad, dil = 1, kk;
    char sp[64];
    int got = sscanf(s, "%lld,%lld,%lld,%lld,%63[0-9x],%lld,%lld,%lld,%lld", &n, &c, &k, &g, sp,
                     &kk, &st, &pad, &dil);
    if (got < 8) return -1;
    L->N = n; L->C = c; L->K = k; L->G = g; L->stride = st; L->pad = pad; L->dil = dil;
    L->nsp = 0;
    for (char *t = strtok(sp, "x"); t && L->nsp < 3; t = strtok(NULL, "x")) {
        L->in[L->nsp] = strtoll(t, NULL, 10);
        L->m[L->nsp] = kk;
        L->nsp++;
    }
    if (L->nsp < 1 || n < 1 || c < 1 || k < 1 || g < 1 || c % g || k % g || kk < 1 || st < 1 ||
        pad < 0 || dil < 1)
        return -1;
    for (int i = 0; i < L->nsp; i++)
        if (L->in[i] < 1 || L->in[i] + 2 * pad < (kk - 1) * dil + 1) return -1;
    snprintf(L->id, sizeof L->id, "layer");
    return 0;
}

static void al_print(FILE *o, const al_result *r, double ridge) {
    const al_layer *L = &r->L;
    fprintf(o, "== %s: N%lld C%lld K%lld G%lld in", L->id, (long long)L->N, (long long)L->C,
            (long long)L->K, (long long)L->G);
    for (int i = 0; i < L->nsp; i++) fprintf(o, "%s%lld", i ? "x" : " ", (long long)L->in[i]);
    fprintf(o, " k");
    for (int i = 0; i < L->nsp; i++) fprintf(o, "%s%lld", i ? "x" : " ", (long long)L->m[i]);
    fprintf(o, " stride %lld pad %lld dil %lld -> out", (long long)L->stride, (long long)L->pad,
            (long long)L->dil);
    for (int i = 0; i < L->nsp; i++) fprintf(o, "%s%lld", i ? "x" : " ", (long long)r->out[i]);
    fprintf(o, "\n  direct: %.4g GFLOP, %.4g MB at least, %.1f FLOP/byte (ridge %.1f: %s)\n",
            r->flops / 1e9, r->bytes / 1e6, r->intensity, ridge,
            r->intensity >= ridge ? "compute-bound" : "memory-bound");
    fprintf(o, "  im2col: column buffer %.4g M elements (%.4g MB), %.3gx the input\n",
            r->im2col_elems / 1e6, r->im2col_elems * 4 / 1e6, r->im2col_ratio);
    fprintf(o, "  Filter2Row: %.4g M-element matrix per image, dense GEMV %.3gx the direct "
               "FLOPs (H*W/R = %lld/%lld): %s\n",
            r->f2r_elems / 1e6, r->f2r_ratio, (long long)r->HW, (long long)r->R,
            r->f2r_pays ? "pays (the kernel covers the input)" : "does not pay");
    if (r->wino_ok)
        for (int k = 0; k < 3; k++)
            fprintf(o, "  Winograd F(%dx%d,3x3): %.0f tiles, %.2fx fewer multiplies; transformed "
                       "input %.4g M, weights %.4g M, output %.4g M elements\n",
                    2 * (k + 1), 2 * (k + 1), r->wino_tiles[k], r->wino_red[k],
                    r->wino_in[k] / 1e6, r->wino_w[k] / 1e6, r->wino_out[k] / 1e6);
    if (r->wino_ok)
        fprintf(o, "  Winograd weights read per call: %.4g MB transformed for F(4x4,3x3) "
                   "(cpu.conv.winograd-f4) or %.4g MB raw, transformed in the call "
                   "(cpu.conv.winograd-f4-raw: 4x fewer bytes, ~%.3g M transformed values per "
                   "pass over the weights)\n",
                r->wino_w[1] * 4 / 1e6, r->wino_w[1] * 4 / 1e6 / 4, r->wino_w[1] / 1e6);
    else
        fprintf(o, "  Winograd: n/a (3x3 in the last two axes, stride 1, dilation 1 only)\n");
    fprintf(o, "  FFT: L =");
    for (int i = 0; i < L->nsp; i++) fprintf(o, "%s%lld", i ? "x" : " ", (long long)r->fft_L[i]);
    fprintf(o, ", %.4g GFLOP (%.3gx direct), weight spectra %.4g M complex\n", r->fft_flops / 1e9,
            r->fft_flops / r->flops, r->fft_wspec / 1e6);
    fprintf(o, "  planner (ESTIMATE): %s\n", r->estimate);
    for (int i = 0; i < r->nmeas; i++)
        fprintf(o, "  measured %-22s %9.3f ms  %7.1f GFLOP/s\n", r->mname[i], r->mms[i],
                r->flops / (r->mms[i] * 1e-3) / 1e9);
}

static void al_json(FILE *f, const al_result *r, int first) {
    const al_layer *L = &r->L;
    fprintf(f, "%s\n    {\"id\": \"%s\", \"N\": %lld, \"C\": %lld, \"K\": %lld, \"G\": %lld, "
               "\"in\": [", first ? "" : ",", L->id, (long long)L->N, (long long)L->C,
            (long long)L->K, (long long)L->G);
    for (int i = 0; i < L->nsp; i++) fprintf(f, "%s%lld", i ? ", " : "", (long long)L->in[i]);
    fprintf(f, "], \"kernel\": [");
    for (int i = 0; i < L->nsp; i++) fprintf(f, "%s%lld", i ? ", " : "", (long long)L->m[i]);
    fprintf(f, "], \"stride\": %lld, \"pad\": %lld, \"dil\": %lld, \"out\": [", (long long)L->stride,
            (long long)L->pad, (long long)L->dil);
    for (int i = 0; i < L->nsp; i++) fprintf(f, "%s%lld", i ? ", " : "", (long long)r->out[i]);
    fprintf(f, "],\n     \"flops\": %.17g, \"bytes\": %.17g, \"intensity\": %.17g,"
               " \"im2col_elements\": %.17g, \"im2col_ratio\": %.17g,"
               " \"filter2row_elements\": %.17g, \"filter2row_flops\": %.17g,"
               " \"filter2row_ratio\": %.17g, \"filter2row_pays\": %s,\n     \"winograd\": [",
            r->flops, r->bytes, r->intensity, r->im2col_elems, r->im2col_ratio, r->f2r_elems,
            r->f2r_flops, r->f2r_ratio, r->f2r_pays ? "true" : "false");
    for (int k = 0; k < 3 && r->wino_ok; k++)
        fprintf(f, "%s{\"m\": %d, \"tiles\": %.17g, \"reduction\": %.17g, \"input\": %.17g, "
                   "\"weights\": %.17g, \"output\": %.17g}",
                k ? ", " : "", 2 * (k + 1), r->wino_tiles[k], r->wino_red[k], r->wino_in[k],
                r->wino_w[k], r->wino_out[k]);
    fprintf(f, "],\n     \"fft_L\": [");
    for (int i = 0; i < L->nsp; i++) fprintf(f, "%s%lld", i ? ", " : "", (long long)r->fft_L[i]);
    fprintf(f, "], \"fft_flops\": %.17g, \"fft_weight_spectra\": %.17g, \"estimate\": \"%s\", "
               "\"measured_ms\": {",
            r->fft_flops, r->fft_wspec, r->estimate);
    for (int i = 0; i < r->nmeas; i++)
        fprintf(f, "%s\"%s\": %.5f", i ? ", " : "", r->mname[i], r->mms[i]);
    fprintf(f, "}}");
}

int tc_tool_analyze_layers(int argc, char **argv) {
    int measure = 0, threads = 0, ceil_measure = 1, nl = 0;
    const char *json_path = NULL;
    al_layer given[16];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--layers")) continue;
        if (!strcmp(a, "--measure")) measure = 1;
        else if (!strcmp(a, "--no-measure")) ceil_measure = 0;
        else if (!strcmp(a, "--json") && i + 1 < argc) json_path = argv[++i];
        else if (!strcmp(a, "--threads") && i + 1 < argc) {
            char *end;
            long t = strtol(argv[++i], &end, 10);
            if (*end || t < 1 || t > 4096) {
                fprintf(stderr, "tileconv: analyze: --threads '%s', must be 1..4096\n", argv[i]);
                return 2;
            }
            threads = (int)t;
        } else if (!strcmp(a, "--layer") && i + 1 < argc) {
            if (nl >= 16 || al_parse(argv[++i], &given[nl]) != 0) {
                fprintf(stderr, "tileconv: analyze: --layer '%s': expected N,C,K,G,H[xW[xD]],"
                                "k,stride,pad[,dil] with groups dividing C and K and the kernel "
                                "inside the padded input\n", argv[i]);
                return 2;
            }
            snprintf(given[nl].id, sizeof given[nl].id, "layer%d", nl + 1);
            nl++;
        } else {
            fprintf(stderr, "tileconv: analyze: --layers: unknown or incomplete option '%s' "
                            "(see 'tileconv analyze --help')\n", a);
            return 2;
        }
    }
    FILE *js = NULL;
    if (json_path && !(js = fopen(json_path, "w"))) {
        fprintf(stderr, "tileconv: analyze: cannot write '%s': %s\n", json_path, strerror(errno));
        return 1;
    }
    tc_context *ctx = NULL;
    tc_context_create(&ctx);
    if (threads) tc_context_set_threads(ctx, threads);
    int nthreads = threads ? threads : tc_cpu_count();
    tc_machine m;
    tc_machine_info(&m);
    double peak = m.flops_per_core * nthreads, bw = m.bytes_per_s > 0 ? m.bytes_per_s : 30e9;
    const char *src = m.measured ? m.ceilings_source : "model defaults";
    if (ceil_measure) {
        tc_tool_ceilings ce;
        if (tc_tool_measure_ceilings_ex(nthreads, &ce) == 0) {
            peak = ce.flops;
            bw = ce.bytes_per_s;
            src = "measured now";
        }
    }
    double ridge = peak / bw;
    printf("tileconv analyze --layers: %s \"%s\" (%s), %d threads: FMA peak %.1f GFLOP/s, "
           "copy %.1f GB/s (%s), ridge %.1f FLOP/byte\n\n",
           m.vendor, m.model, m.uarch, nthreads, peak / 1e9, bw / 1e9, src, ridge);
    if (js)
        fprintf(js, "{\n  \"tool\": \"tileconv analyze --layers\", \"cpu\": \"%s\", \"uarch\": \"%s\","
                    " \"threads\": %d, \"peak_flops\": %.6g, \"bytes_per_s\": %.6g, \"ridge\": %.6g,"
                    "\n  \"layers\": [",
                m.model, m.uarch, nthreads, peak, bw, ridge);
    int n = nl ? nl : tool_dnn_nlayers;
    for (int i = 0; i < n; i++) {
        al_result *r = malloc(sizeof *r);
        if (!r) break;
        al_layer S;
        if (!nl) al_from_suite(&S, &tool_dnn_layers[i]);
        al_compute(r, nl ? &given[i] : &S);
        al_plan(r, ctx, measure);
        al_print(stdout, r, ridge);
        if (js) al_json(js, r, i == 0);
        free(r);
    }
    if (js) {
        fprintf(js, "\n  ]\n}\n");
        fclose(js);
    }
    tc_context_destroy(ctx);
    return 0;
}
