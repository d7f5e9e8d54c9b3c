/*
 * bench.h - `tileconv bench`: what the harness (bench.c, cases.c, report.c,
 * sys.c) and the peers (peer_*.c, peer_opencv.cpp) share.
 *
 * A CASE is one problem (2D 4096^2 k9, SGEMM 2048^3, ...). It holds
 * RUNNERS: tileconv's automatic choice, every applicable algorithm forced by
 * name, and the peers. All runners of a case are warmed up once (their
 * outputs checked against the first runner's), then timed in rounds, one run
 * of each runner per round, so ours and the peers alternate and see the same
 * machine state. The median over the rounds is reported.
 */
#ifndef TC_BENCH_H
#define TC_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "tileconv.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BENCH_MAX_RUNNERS 24
#define BENCH_MAX_SAMPLES 64
#define BENCH_MAX_TARGETS 6

enum bench_kind {
    BK_AUTO = 0,     /* tileconv, planner's ESTIMATE choice */
    BK_FORCED = 1,   /* tileconv, algorithm forced by name */
    BK_MODE = 2,     /* tileconv auto in another boundary mode */
    BK_PEER = 3,     /* another library, same process */
    BK_EXTERNAL = 4, /* timed elsewhere (scipy process, published numbers) */
};

typedef struct bench_runner {
    char name[64];     /* "auto", "cpu.filter.direct-halo", "opencv.filter2D" */
    char info[160];    /* detail: chosen algorithm, peer implementation */
    int kind;          /* enum bench_kind */
    int threads;
    int gpu;           /* runs on the GPU: no CPU roofline percentages */
    char na[256];      /* non-empty: not run; the reason */
    /* One execution. Returns 0, or -1 with a message in err. */
    int (*run)(void *st, char *err, size_t errn);
    void (*fini)(void *st);
    void *st;
    const float *y;    /* output (dense, C order) for the check, or NULL */
    int64_t ny;
    double samples[BENCH_MAX_SAMPLES];
    int n;             /* samples taken */
    double median_ms, min_ms;
    double check;      /* max|y - yref| / max|yref|; < 0: not checked */
    int check_ref;     /* 1 on the runner whose output is the reference */
    double warm_ms;    /* the warm-up run */
    int warm_only;     /* slower than the case budget: the warm-up is its
                          one sample, it sits out the rounds */
    int inner;         /* back-to-back runs per sample */
    double predicted_ms; /* from a probe on a smaller problem, 0 if none */
    char probe[96];      /* what the probe measured */
} bench_runner;

enum bench_target_kind {
    TG_PCT_BW = 0,    /* our best >= value x copy bandwidth */
    TG_PCT_FMA = 1,   /* our best >= value x FMA peak */
    TG_SPEEDUP = 2,   /* peer time / our best time >= value */
    TG_VS_PEER = 3,   /* runner `ours` time / peer time <= value */
    TG_MODES = 4,     /* every mode runner / constant runner <= value */
    TG_MAX_MS = 5,    /* our best <= value ms */
    TG_ROOF = 6,      /* bandwidth-bound on this machine (FLOP/byte below the
                         measured ridge, FMA peak / copy bandwidth): our best
                         >= value x copy bandwidth; compute-bound: >= value2
                         x FMA peak */
};

typedef struct bench_target {
    int kind;
    double value;
    double value2;     /* TG_ROOF: the FMA-peak fraction */
    const char *peer;  /* runner name prefix (TG_SPEEDUP, TG_VS_PEER) */
    const char *ours;  /* TG_VS_PEER: our runner name */
    /* results */
    int evaluated;     /* 0: could not (runner missing / n/a) */
    double got;
    int met;
    char goal[64];     /* ">= 2x opencv.filter2D" */
    char text[256];    /* "2.31x faster than opencv.filter2D (target >= 2x)" */
} bench_target;

enum bench_op { OP_FILTER = 0, OP_GEMM = 1 };

#define BP_CV_FILTER2D 1u
#define BP_CV_SEP 2u
#define BP_DNNL 4u
#define BP_BLAS 8u
#define BP_FFTW 16u

typedef struct bench_case {
    char id[48];       /* "2d-4096-k9" */
    char label[96];    /* "2D 4096x4096 k9" */
    const char *suite;
    int op;
    /* filter */
    int nsp;           /* 1, 2, 3 */
    int64_t shape[3];  /* nsp entries */
    int64_t mask[3];
    tc_mode mode;
    int modes;         /* 1: the runners are auto in each boundary mode */
    int separable;     /* the mask is a gaussian outer product */
    int seed;          /* seed003 test number, 0 otherwise */
    /* gemm */
    int64_t m, n, k;
    double flops, bytes;
    unsigned peers;      /* BP_* bits: which peers this case runs */
    int scipy;           /* index into the scipy jobs, -1 none */
    double published_s[3]; /* seed003: 1 thread AVX, 32 threads, GPU */
    void *data[4];       /* owned: input, mask, ... (freed at teardown) */
    /* runners and results */
    bench_runner r[BENCH_MAX_RUNNERS];
    int nr;
    int rounds;
    int cold;            /* every sample followed an eviction of the caches */
    double wall_s;       /* setup + timing + MEASURE planning */
    char estimate[64];   /* planner's ESTIMATE choice */
    char measure[64];    /* planner's MEASURE choice, or "" */
    char measure_note[160];
    double measure_plan_ms;
    double auto_ms;      /* median of the auto runner, 0 if none */
    double best_ms;      /* best of ours (auto + forced) */
    char best_name[64];
    double best_forced_ms;
    char best_forced[64];
    int planner_ok;      /* -1 n/a, 0 auto > 1.2 x best forced (by the
                            median and by the best run), 1 within */
    double planner_min_ratio; /* choice / best forced, best runs */
    double choice_ms;    /* median of the ESTIMATE choice forced (or auto) */
    bench_target t[BENCH_MAX_TARGETS];
    int nt;
} bench_case;

typedef struct bench_ceilings {
    double flops;        /* FLOP/s */
    double bytes_per_s;  /* copy bandwidth, read + write */
    const char *isa;
    const char *copy_method;
    int threads;
    int pinned;
} bench_ceilings;

/* ---- sys.c ---- */
/* Pins the calling thread to one CPU (0 ok). */
int bench_pin_self(int cpu);
/* The calling thread's CPU list ("0,1") / setting it from such a list. */
int bench_affinity_string(char *buf, size_t n);
int bench_affinity_restore(const char *list);
/* Pins every thread of this process that may run on more than one CPU
 * (peer libraries' workers), except the caller, round-robin to CPUs
 * 1..ncpu-1 (0 when ncpu is 1). Returns the number pinned. */
int bench_pin_stray_threads(int ncpu);
/* Runs argv (argv[0] a path) with all CPUs allowed, stdout captured into
 * *out (malloc'd, NUL-terminated). Returns the exit status, or -1. */
int bench_spawn_capture(char *const argv[], char **out);
double bench_now_ms(void);
/* a label or message printed into dst (n bytes), cut to fit: for the
 * table's names and error texts, where a shortened text is acceptable */
void bench_label(char *dst, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* 64-byte aligned, free(); from BENCH_HUGE_ABOVE bytes 2 MiB aligned with
 * MADV_HUGEPAGE */
#define BENCH_HUGE_ABOVE ((size_t)4 << 20)
void *bench_alloc(size_t bytes);
void bench_fill_random(float *p, int64_t n, uint64_t seed);
void bench_cpu_model(char *buf, size_t n);
/* 1-minute load average, or -1. Other processes make timings noisy. */
double bench_loadavg(void);

/* ---- peers: each fills r (run, fini, st, y, ny, info) and returns 0, or
 * writes the reason into r->na and returns -1. ---- */
int peer_opencv_filter2d(bench_runner *r, const float *x, int64_t rows,
                         int64_t cols, const float *mask, int kr, int kc,
                         int threads);
int peer_opencv_sepfilter2d(bench_runner *r, const float *x, int64_t rows,
                            int64_t cols, const float *kx, const float *ky,
                            int k, int threads);
const char *peer_opencv_version(void);
/* Sets OpenCV's thread count and starts its pool (TBB sizes it from the
 * affinity mask of the first call: call before pinning the main thread). */
void peer_opencv_init(int threads);
int peer_dnnl_conv3d(bench_runner *r, const float *x, const int64_t in[3],
                     const float *w, const int64_t k[3], int any_layout);
const char *peer_dnnl_version(void);
int peer_dnnl_layer(bench_runner *r, int nsp, int64_t N, int64_t C, int64_t K, int64_t G,
                    const int64_t in[3], const int64_t k[3], const int64_t stride[3],
                    const int64_t dil[3], const int64_t pad[3], const int64_t out[3],
                    const float *x, const float *w, int any_layout);
/* tileconv bench --suite dnn (dnn.c): the convolution-layer suite beside
 * oneDNN; its own table and JSON. */
int bench_dnn(int threads, int repeat, int quick, int peers, const char *json_path,
              const char *case_filter);
int peer_blas_sgemm(bench_runner *r, const float *a, const float *b,
                    int64_t m, int64_t n, int64_t k);
const char *peer_blas_version(void);
int peer_fftw_conv2d(bench_runner *r, const float *x, int64_t rows,
                     int64_t cols, const float *mask, int kr, int kc,
                     int threads);
const char *peer_fftw_version(void);
extern double peer_fftw_timelimit; /* FFTW_MEASURE seconds per plan */

/* ---- peer_scipy.c: scipy.ndimage.convolve in a separate process ---- */
typedef struct bench_scipy_job {
    const char *id;
    int nsp;
    int64_t shape[3], mask[3];
    /* results */
    double median_ms;
    int repeats;
} bench_scipy_job;
/* Times the jobs with /usr/bin/python3 bench/peer_scipy.py. Returns 0, or
 * -1 with the reason in why. */
int bench_scipy_run(bench_scipy_job *jobs, int n, double budget_s,
                    int repeat, char *why, size_t whyn, char *version,
                    size_t versionn);

/* ---- report.c ---- */
typedef struct bench_report {
    const char *command;
    const char *cpu_model;
    int ncpu;
    int threads;
    const char *backend;
    const char *algorithms; /* comma-separated list present */
    const char *peers;
    double load_start, load_end; /* 1-minute load averages */
    const bench_ceilings *ceil;
    bench_case *const *cases;
    int ncases;
    int planner_ok, planner_n;
    int targets_met, targets_n;
} bench_report;
int bench_write_json(const char *path, const bench_report *rep);
int bench_write_svg(const char *path, const bench_report *rep);

/* Ratio helpers shared by bench.c and report.c. */
double bench_gflops(const bench_case *c, double ms);
double bench_gbs(const bench_case *c, double ms);

#ifdef __cplusplus
}
#endif
#endif /* TC_BENCH_H */
