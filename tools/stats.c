/*
 * stats.c - timing summary and JSON output. See stats.h.
 */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

double tool_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void tool_timing_summarise(tool_timing *t, double *ms, int64_t n) {
    double sum = 0;
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    for (int64_t i = 0; i < n; i++) sum += ms[i];
    t->repeats = n;
    t->min_ms = ms[0];
    t->max_ms = ms[n - 1];
    t->mean_ms = sum / (double)n;
    t->median_ms = (n % 2) ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

double tool_stats_gflops(const tool_stats *s) {
    double ms = s->t->median_ms;
    return ms > 0 ? s->flops / (ms * 1e6) : 0.0;
}

double tool_stats_gbytes(const tool_stats *s) {
    double ms = s->t->median_ms;
    return ms > 0 ? s->bytes / (ms * 1e6) : 0.0;
}

/* JSON has no NaN or infinity: write null for them. */
static void put_num(FILE *fp, const char *key, double v) {
    if (isfinite(v)) fprintf(fp, "  \"%s\": %.9g,\n", key, v);
    else fprintf(fp, "  \"%s\": null,\n", key);
}

static void put_str(FILE *fp, const char *key, const char *v) {
    fprintf(fp, "  \"%s\": \"", key);
    for (const unsigned char *p = (const unsigned char *)(v ? v : ""); *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(fp, "\\%c", *p);
        else if (*p < 0x20) fprintf(fp, "\\u%04x", *p);
        else fputc(*p, fp);
    }
    fputs("\",\n", fp);
}

static void put_shape(FILE *fp, const char *key, int n, const int64_t *v) {
    fprintf(fp, "  \"%s\": [", key);
    for (int i = 0; i < n; i++)
        fprintf(fp, "%s%lld", i ? ", " : "", (long long)v[i]);
    fputs("],\n", fp);
}

int tool_stats_write_json(FILE *fp, const tool_stats *s) {
    fputs("{\n", fp);
    put_str(fp, "command", s->command);
    put_str(fp, "backend", s->backend);
    put_str(fp, "algorithm", s->algorithm);
    put_str(fp, "dtype", s->dtype);
    fprintf(fp, "  \"threads\": %d,\n", s->threads);
    fprintf(fp, "  \"measure\": %s,\n", s->measure ? "true" : "false");
    put_shape(fp, "shape", s->ndim, s->shape);
    if (s->out_ndim) put_shape(fp, "output_shape", s->out_ndim, s->out_shape);
    if (s->mask_ndim) put_shape(fp, "mask_shape", s->mask_ndim, s->mask_shape);
    fprintf(fp, "  \"repeats\": %lld,\n", (long long)s->t->repeats);
    put_num(fp, "median_ms", s->t->median_ms);
    put_num(fp, "min_ms", s->t->min_ms);
    put_num(fp, "mean_ms", s->t->mean_ms);
    put_num(fp, "max_ms", s->t->max_ms);
    put_num(fp, "flops", s->flops);
    put_num(fp, "bytes", s->bytes);
    put_num(fp, "gflops", tool_stats_gflops(s));
    put_num(fp, "gbytes_per_s", tool_stats_gbytes(s));
    if (s->have_device) {
        put_num(fp, "device_median_ms", s->device_median_ms);
        put_num(fp, "device_min_ms", s->device_min_ms);
        fprintf(fp, "  \"device_workspace_bytes\": %zu,\n", s->device_workspace_bytes);
    }
    fprintf(fp, "  \"workspace_bytes\": %zu\n}\n", s->workspace_bytes);
    return ferror(fp) ? -1 : 0;
}

void tool_stats_print_line(FILE *fp, const tool_stats *s) {
    fprintf(fp,
            "algorithm=%s backend=%s dtype=%s threads=%d repeats=%lld "
            "median_ms=%.4f min_ms=%.4f gflops=%.3f gbytes_per_s=%.3f "
            "workspace_bytes=%zu\n",
            s->algorithm, s->backend, s->dtype, s->threads,
            (long long)s->t->repeats, s->t->median_ms, s->t->min_ms,
            tool_stats_gflops(s), tool_stats_gbytes(s), s->workspace_bytes);
    if (s->have_device)
        fprintf(fp, "device_median_ms=%.4f device_min_ms=%.4f (CUDA events, device-resident data)\n",
                s->device_median_ms, s->device_min_ms);
}
