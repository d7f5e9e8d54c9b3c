/*
 * stats.h - execute timing and the --stats JSON record.
 */
#ifndef TC_TOOLS_STATS_H
#define TC_TOOLS_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct tool_timing {
    int64_t repeats; /* timed executes (0 when timing was not asked for) */
    double median_ms, min_ms, max_ms, mean_ms;
} tool_timing;

/* Monotonic clock in milliseconds. */
double tool_now_ms(void);
/* Summarises n >= 1 samples (sorts ms in place). */
void tool_timing_summarise(tool_timing *t, double *ms, int64_t n);

typedef struct tool_stats {
    const char *command;   /* "filter", "conv", "gemm" */
    const char *backend;
    const char *algorithm;
    const char *dtype;     /* "float32" / "float64" */
    int threads;
    int measure;           /* --measure given */
    int ndim;              /* input shape */
    const int64_t *shape;
    int out_ndim;          /* output shape (0 to omit) */
    const int64_t *out_shape;
    int mask_ndim;         /* mask / weight shape (0 to omit) */
    const int64_t *mask_shape;
    double flops, bytes;   /* per execute, from the plan */
    size_t workspace_bytes;
    size_t device_workspace_bytes; /* CUDA plans: tc_plan_device_workspace_size */
    const tool_timing *t;
    /* plans on the CUDA backend: the host operands for the device-resident
     * timing (tc_cuda_time_plan) that tool_run_report adds: filter x; conv
     * x (weights set on the plan); gemm A = x, B = w */
    const void *device_x, *device_w;
    int have_device;       /* device_* below are set */
    double device_median_ms, device_min_ms;
} tool_stats;

/* GFLOP/s and GB/s at the median time (0 when the time is 0). */
double tool_stats_gflops(const tool_stats *s);
double tool_stats_gbytes(const tool_stats *s);
/* Writes one JSON object and a newline. Returns 0 or -1 on write error. */
int tool_stats_write_json(FILE *fp, const tool_stats *s);
/* Prints the one-line summary "algorithm=... backend=... median_ms=..." */
void tool_stats_print_line(FILE *fp, const tool_stats *s);

#endif /* TC_TOOLS_STATS_H */
