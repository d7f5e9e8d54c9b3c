/*
 * bench_state.h - the driver's state, shared by bench.c (options, timing,
 * table) and cases.c (the suites: problems, runners, targets).
 */
#ifndef TC_BENCH_HARNESS_H
#define TC_BENCH_HARNESS_H

#include "bench.h"

#define BENCH_SUITE_FILTERS 1u
#define BENCH_SUITE_SEED3D 2u
#define BENCH_SUITE_GEMM 4u
#define BENCH_SUITE_DNN 8u /* conv layers: its own runner loop (dnn.c) */

/* Forced algorithms (and MEASURE's candidates) whose workspace exceeds
 * this are reported n/a. */
#define BENCH_WS_LIMIT ((size_t)2 << 30)
/* Cases above BENCH_PROBE_ABOVE FLOP probe each forced algorithm first on
 * a smaller problem (1/16 of the FLOP, at most BENCH_PROBE_FLOPS): one
 * predicted to take more than max_run_s per run is skipped, one predicted
 * slower than the case's budget (and found so by its warm-up) is not timed
 * in the rounds. */
/* Pause after each peer run so that its idle workers stop spinning. */
#define BENCH_PEER_GAP_US 10000
/* With --cache auto, CPU cases moving at least this many bytes (input read
 * + output written) time every sample from cold caches. */
#define BENCH_COLD_ABOVE ((double)(32u << 20))
enum { BENCH_CACHE_AUTO = 0, BENCH_CACHE_COLD = 1, BENCH_CACHE_WARM = 2 };
/* Spin on every CPU before each sample that follows no eviction. */
#define BENCH_BUSY_S 0.002
#define BENCH_PROBE_ABOVE 0.2e9
#define BENCH_PROBE_FLOPS 0.5e9

typedef struct bench_ctx {
    /* options */
    unsigned suites;
    int threads;
    int repeat;          /* most timed rounds per case */
    double budget_s;     /* stop a case's rounds after this, once >= 3 */
    const char *json_path, *plot_path, *case_filter;
    int quick, peers, measure;
    int cache;           /* BENCH_CACHE_* */
    size_t evict_bytes;  /* the eviction buffer (0: none could be made) */
    double max_run_s;    /* skip a forced algorithm predicted slower */
    double measure_budget_s; /* skip MEASURE planning predicted slower */
    double measure_total_s;  /* and once the run spent this much on it */
    double measure_spent_ms;
    double ref_gflops[2];    /* ref.conv.loops, ref.gemm.loops speed (MEASURE times them) */
    tc_backend backend;
    /* machine */
    int ncpu;
    bench_ceilings ceil;
    tc_context *ctx;     /* threads, backend */
    tc_context *ctx1;    /* 1 thread, backend */
    int tty;
    /* cases */
    bench_case **cases;
    int ncases;
    int current;         /* for the progress line */
    /* scipy (separate process, run once before the cases) */
    bench_scipy_job *scipy;
    int nscipy;
    char scipy_why[256];
    char scipy_version[64];
} bench_ctx;

/* cases.c */
/* Creates the cases of the selected suites (descriptions only). 0 or -1. */
int bench_make_cases(bench_ctx *b);
/* Allocates the case's data and sets up its runners (plans, peers). */
int bench_setup_case(bench_ctx *b, bench_case *c);
/* Plans with TC_PLAN_MEASURE when its predicted cost fits the budget. */
void bench_plan_measure(bench_ctx *b, bench_case *c);
/* Measures the reference solvers' speed (for MEASURE's predicted cost). */
void bench_measure_ref_speed(bench_ctx *b);
/* Frees the runners' state and the case's data; results stay. */
void bench_teardown_case(bench_case *c);

/* bench.c */
void bench_progress(bench_ctx *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
bench_runner *bench_new_runner(bench_case *c);

#endif /* TC_BENCH_HARNESS_H */
