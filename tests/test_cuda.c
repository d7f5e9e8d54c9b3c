/*
 * test_cuda.c - every CUDA solver x shapes x boundary modes x output kinds
 * against the CPU reference ("ref.conv.loops" / "ref.gemm.loops"), through the public
 * API, with host pointers and with device pointers.
 *
 * Without a usable GPU (or in a build without CUDA) the GPU cases are
 * skipped with the reason printed, and the fallback rules are checked
 * instead: forcing a CUDA algorithm fails with TC_ERR_NO_DEVICE, a context
 * that asks for CUDA fails at plan time, AUTO falls back to the CPU.
 *
 * Outputs are poisoned with NaN before each run, inputs are seeded random
 * values in +-[0.1, 1) (never zero). The error measure is
 * max|out - ref| / max|ref| per case. Every execute on
 * device pointers is called behind a host function that holds its stream
 * (gate_shut): it must return before the stream runs, since on device
 * pointers the call only enqueues. Problems the solvers have no kernels for
 * (float16 / bfloat16, channels-last, the fused epilogue) run each solver
 * through the core's staging, on host and on device arrays, against the
 * reference run natively (run_conv_staged_all, run_filter_half_all,
 * run_gemm_half_all).
 *
 * Environment: TILECONV_TEST_SEED, TILECONV_TEST_QUICK (small table, for the
 * sanitizers), TILECONV_TEST_VERBOSE (see harness.h), TILECONV_TEST_CUDA_CONV_ONLY=1
 * (the conv-layer cases only), TILECONV_TEST_CUDA_GEMM_ONLY=1 (the GEMM cases
 * only), TILECONV_TEST_CUDA_FILTER_ONLY=1 (the API and filter cases only; =half:
 * the float16 / bfloat16 filter cases only; =separable: cuda.filter.separable's
 * forms only),
 * TILECONV_TEST_CUDA_CONV_SOLVER=name (the conv
 * cases of that solver only), TILECONV_TEST_GATE_S (seconds the stream is held
 * for the enqueue check, default 5); TILECONV_CUDA_CHUNK_BYTES is set
 * to 1 unless given (one batch item per pipelined chunk).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tileconv.h"
#include "../src/cuda/cuda_direct_tile.h" /* cuda.filter.direct's variant table */

#if TC_TEST_CUDA
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#endif

static const char *const filter_solvers[] = {
    "cuda.filter.direct", "cuda.filter.separable", "cuda.filter.fft", "cuda.filter.seed-basic1d",
    "cuda.filter.seed-const1d", "cuda.filter.seed-tiled1d-in", "cuda.filter.seed-tiled1d-out",
    "cuda.filter.seed-const2d", "cuda.filter.seed-tiled2d-pitch", "cuda.filter.seed-texture2d",
    "cuda.filter.seed-tiled3d", "cuda.filter.tc-3xtf32",
};
#define NFS (int)(sizeof filter_solvers / sizeof filter_solvers[0])
/* TF32 solvers ("-tf32") are planned with TC_PLAN_ALLOW_TF32 and held to
 * 5e-3 of max|ref|; the split-precision "-3xtf32" to the FP32 bound */
static const char *const gemm_solvers[] = {"cuda.gemm.simt", "cuda.gemm.wgmma-tf32", "cuda.gemm.seed-naive",
                                           "cuda.gemm.seed-tiled", "cuda.gemm.wgmma-3xtf32"};
#define NGS (int)(sizeof gemm_solvers / sizeof gemm_solvers[0])

#if TC_TEST_CUDA
/* ---------------- "the call only enqueues" ----------------
 * On device pointers an execute must return without waiting for its
 * stream (include/tileconv.h, "CUDA execution"). The check: a host
 * function enqueued first on the plan's stream (the calling thread's
 * cudaStreamPerThread) holds the stream until the test opens a gate, or
 * for gate_s seconds (TILECONV_TEST_GATE_S, default 5); the execute is called
 * behind it, and must return while the gate is still shut. An execute
 * that synchronises its stream returns only after the gate function gives
 * up, and fails the case. */
static atomic_int gate_open, gate_state; /* state: 0 holding, 1 released, 2 gave up */
static double gate_s = 5.0;
static void CUDART_CB gate_fn(void *arg) {
    (void)arg;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!atomic_load(&gate_open)) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) > gate_s) {
            atomic_store(&gate_state, 2);
            return;
        }
        struct timespec d = {0, 200000};
        nanosleep(&d, NULL);
    }
    atomic_store(&gate_state, 1);
}
/* shut the gate on the calling thread's default stream; 0 if that failed
 * or under TILECONV_TEST_QUICK (the sanitizer runs, where an instrumented launch
 * may wait on its own) */
static int gate_shut(void) {
    if (th_g.quick) return 0;
    const char *e = tc__knob_get(TC__KNOB_TEST_GATE_S);
    if (e && atof(e) > 0) gate_s = atof(e);
    atomic_store(&gate_open, 0);
    atomic_store(&gate_state, 0);
    return cudaLaunchHostFunc(cudaStreamPerThread, gate_fn, NULL) == cudaSuccess;
}
/* open it; returns 1 if the gate was still holding (the call in between
 * only enqueued) */
static int gate_release(void) {
    const int holding = atomic_load(&gate_state) == 0;
    atomic_store(&gate_open, 1);
    return holding;
}
/* after the execute: open a gate shut before it (gated, from gate_shut),
 * failing the case if the execute waited for its stream */
#define GATE_CHECK(gated)                                                                          \
    do {                                                                                           \
        if (gated)                                                                                 \
            CHECK(gate_release(), "execute on device pointers waited for its stream (it must "   \
                                  "only enqueue)");                                               \
    } while (0)
#endif

static long n_na; /* solver x case pairs the solver does not apply to */

/* ---------------- filter cases ---------------- */
typedef struct fcase {
    int nsp;            /* spatial rank */
    int64_t batch;      /* leading axis (1 = none) */
    int64_t shape[3];   /* spatial */
    int64_t mask[3];
    int rank1;          /* separable mask */
    tc_output_kind out;
    int64_t origin0;    /* origin on the last axis (SAME only) */
} fcase;

static const fcase fcases[] = {
    /* 1D */
    {1, 1, {1000}, {3}, 0, TC_OUTPUT_SAME, 0},
    {1, 1, {1}, {5}, 0, TC_OUTPUT_SAME, 0},
    {1, 1, {7}, {4}, 0, TC_OUTPUT_SAME, 1},
    {1, 3, {4099}, {31}, 0, TC_OUTPUT_SAME, -7},
    {1, 1, {3000}, {63}, 0, TC_OUTPUT_SAME, 0},
    {1, 1, {2500}, {101}, 0, TC_OUTPUT_SAME, 0},
    {1, 1, {700}, {9}, 0, TC_OUTPUT_FULL, 0},
    {1, 1, {700}, {10}, 0, TC_OUTPUT_VALID, 0},
    {1, 1, {40}, {3000}, 0, TC_OUTPUT_SAME, 0}, /* mask larger than input */
    {1, 1, {30}, {50}, 0, TC_OUTPUT_VALID, 0},  /* valid, operands swapped */
    /* 2D */
    {2, 1, {67, 131}, {3, 3}, 0, TC_OUTPUT_SAME, 0},
    {2, 1, {1, 1}, {3, 3}, 0, TC_OUTPUT_SAME, 0},
    {2, 2, {130, 257}, {5, 5}, 1, TC_OUTPUT_SAME, 0},
    {2, 1, {70, 140}, {7, 7}, 0, TC_OUTPUT_SAME, 2},
    {2, 1, {33, 45}, {2, 4}, 0, TC_OUTPUT_SAME, 0},
    {2, 1, {66, 129}, {1, 5}, 0, TC_OUTPUT_SAME, 0},
    {2, 1, {66, 129}, {9, 3}, 1, TC_OUTPUT_SAME, 0},
    {2, 1, {100, 150}, {15, 15}, 0, TC_OUTPUT_SAME, 0},
    {2, 1, {80, 90}, {17, 17}, 1, TC_OUTPUT_SAME, 0},
    {2, 1, {64, 70}, {11, 11}, 0, TC_OUTPUT_FULL, 0},
    {2, 1, {64, 70}, {13, 13}, 0, TC_OUTPUT_VALID, 0},
    {2, 1, {5, 7}, {9, 9}, 0, TC_OUTPUT_SAME, 0},
    /* 3D */
    {3, 1, {17, 33, 130}, {3, 3, 3}, 0, TC_OUTPUT_SAME, 0},
    {3, 1, {9, 40, 20}, {5, 5, 5}, 1, TC_OUTPUT_SAME, 0},
    {3, 1, {12, 20, 140}, {7, 7, 7}, 0, TC_OUTPUT_SAME, 0},
    {3, 2, {6, 7, 8}, {2, 3, 4}, 0, TC_OUTPUT_SAME, 0},
    {3, 1, {10, 20, 30}, {1, 3, 3}, 0, TC_OUTPUT_SAME, 0},
    {3, 1, {10, 20, 30}, {3, 1, 1}, 0, TC_OUTPUT_SAME, 0},
    {3, 1, {16, 16, 16}, {5, 5, 5}, 0, TC_OUTPUT_FULL, 0},
    {3, 2, {20, 30, 50}, {3, 3, 3}, 0, TC_OUTPUT_SAME, 0}, /* narrow tiles (width <= 64) */
    {3, 1, {12, 20, 61}, {7, 7, 7}, 0, TC_OUTPUT_SAME, 3},
    {2, 1, {50, 301}, {9, 9}, 0, TC_OUTPUT_SAME, -2},      /* rolled compute, odd width */
    {2, 1, {37, 64}, {8, 8}, 0, TC_OUTPUT_SAME, 0},        /* guarded rolled bucket */
    {1, 2, {20}, {31}, 0, TC_OUTPUT_SAME, 3},              /* below the mask and one tile */
    {3, 1, {2, 9, 37}, {3, 3, 3}, 0, TC_OUTPUT_SAME, 0},   /* depth below the mask */
    /* rank 1: cuda.filter.separable's fused x + y kernel (x and y masks of
     * 2..33 taps) at awkward sizes, and past its limit */
    {2, 1, {100, 300}, {9, 17}, 1, TC_OUTPUT_SAME, 0},     /* 16-byte loads, interior tiles */
    {2, 3, {45, 1}, {9, 3}, 1, TC_OUTPUT_SAME, 0},         /* 1 wide */
    {2, 1, {1, 301}, {7, 5}, 1, TC_OUTPUT_SAME, 2},        /* 1 high, odd width */
    {2, 1, {90, 141}, {33, 33}, 1, TC_OUTPUT_SAME, -3},    /* the fused limit */
    {2, 1, {70, 131}, {34, 6}, 1, TC_OUTPUT_SAME, 0},      /* past it: per-axis */
    {2, 1, {64, 200}, {5, 9}, 1, TC_OUTPUT_VALID, 0},
    {3, 1, {40, 200, 130}, {1, 9, 5}, 1, TC_OUTPUT_SAME, 0}, /* 40 planes: strips of several steps */
    {3, 2, {11, 37, 150}, {5, 7, 13}, 1, TC_OUTPUT_SAME, 1}, /* fused x + y, then z */
    {3, 1, {6, 40, 50}, {3, 33, 25}, 1, TC_OUTPUT_SAME, 0},
    {3, 1, {6, 5, 3}, {3, 3, 3}, 1, TC_OUTPUT_FULL, 0},
    /* cuda.filter.direct's lean 1D tiles (4096 outputs a tile at NG 4): each
     * 1D tap count of the table (#38-#43) over several tiles and items, the
     * last tile partial (3 and 63 taps had one tile, 7 and 15 no case) */
    {1, 3, {9001}, {3}, 0, TC_OUTPUT_SAME, 1},
    {1, 2, {8200}, {7}, 0, TC_OUTPUT_SAME, -3},
    {1, 1, {12290}, {15}, 0, TC_OUTPUT_SAME, 5},
    {1, 2, {5000}, {63}, 0, TC_OUTPUT_SAME, -20},
    /* more items than a GPU holds blocks (1100 > 8 x 132): the fused z
     * windows (cuda.filter.separable =1 and =3) stream the whole depth, 10
     * output planes a block (the other cases give them 1 or 2) */
    {3, 1100, {10, 6, 9}, {3, 3, 3}, 1, TC_OUTPUT_SAME, 0},
    /* 13^3 rank 1: sep_zreg's unguarded kernel at its report row's size (of
     * the unguarded ones only 5^3 ran), sep_fused_xyz's ring of 13 planes,
     * a depth below the mask */
    {3, 1, {8, 20, 70}, {13, 13, 13}, 1, TC_OUTPUT_SAME, 4},
    /* 2D rows of a multiple of 4 elements (16-byte aligned) over more than
     * two lean tiles (128 or 256 columns): the lean 2D forms' 16-byte
     * interior copies (#44-#54) */
    {2, 1, {37, 1028}, {3, 3}, 0, TC_OUTPUT_SAME, 1},
    {2, 1, {21, 900}, {5, 5}, 0, TC_OUTPUT_SAME, 0},
    {2, 1, {19, 776}, {7, 7}, 0, TC_OUTPUT_SAME, -2},
    /* cuda.filter.tc-3xtf32 (2D from 81 taps, 3D 5..7 planes): odd sizes over
     * many 64 x 64 tiles, each k-block count (KB 2..5: 9, 15, 19x25, 33
     * columns), a batch, 6 planes, and a 3D volume of several xy tiles whose
     * blocks stream two or more output planes each (the register z window) */
    {2, 1, {1000, 777}, {15, 15}, 0, TC_OUTPUT_SAME, 1},
    {2, 2, {97, 201}, {9, 9}, 0, TC_OUTPUT_SAME, -1},
    {2, 1, {70, 200}, {19, 25}, 0, TC_OUTPUT_SAME, 3},
    {3, 1, {67, 45, 38}, {5, 5, 5}, 0, TC_OUTPUT_SAME, 0},
    {3, 1, {30, 130, 200}, {5, 5, 5}, 0, TC_OUTPUT_SAME, 1},
    {3, 1, {20, 33, 70}, {6, 5, 9}, 0, TC_OUTPUT_SAME, 2},
    /* the row stream (=4): 17 x 17 over 9 warp strips (two blocks, the last
     * strip partial) and several row segments; aligned rows of 1028 (16-byte
     * copies, an edge vector at each end) with an origin */
    {2, 1, {150, 1100}, {17, 17}, 1, TC_OUTPUT_SAME, 0},
    {2, 1, {97, 1028}, {13, 13}, 1, TC_OUTPUT_SAME, -3},
};
#define NFC (int)(sizeof fcases / sizeof fcases[0])

static const tc_mode modes[] = {TC_MODE_CONSTANT, TC_MODE_NEAREST, TC_MODE_REFLECT,
                                TC_MODE_MIRROR, TC_MODE_WRAP};

static void fill(float *a, int64_t n, th_rng *r) {
    for (int64_t i = 0; i < n; i++) a[i] = (float)th_value(r);
}

static void make_mask(const fcase *c, float *m, th_rng *r) {
    int64_t ms[3] = {1, 1, 1};
    for (int i = 0; i < c->nsp; i++) ms[3 - c->nsp + i] = c->mask[i];
    int64_t n = ms[0] * ms[1] * ms[2];
    if (!c->rank1) {
        fill(m, n, r);
        return;
    }
    float f[3][64];
    for (int a = 0; a < 3; a++) fill(f[a], ms[a], r);
    for (int64_t i = 0; i < ms[0]; i++)
        for (int64_t j = 0; j < ms[1]; j++)
            for (int64_t k = 0; k < ms[2]; k++)
                m[(i * ms[1] + j) * ms[2] + k] = f[0][i] * f[1][j] * f[2][k];
}

static double rel_err(const float *out, const float *ref, int64_t n, int64_t *bad) {
    double dmax = 0, rmax = 0;
    *bad = -1;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs((double)out[i] - (double)ref[i]);
        if (!(d == d) || !isfinite(out[i])) { *bad = i; return INFINITY; }
        if (d > dmax) dmax = d;
        if (fabs(ref[i]) > rmax) rmax = fabs(ref[i]);
    }
    return rmax > 0 ? dmax / rmax : dmax;
}

#if TC_TEST_CUDA
/* Runs the plan on device copies (elements of es bytes: 4 float32, 8
 * float64); returns a tc_status or -1 on CUDA error. */
static int exec_device(const tc_plan *pl, void *y, const void *x, int64_t nx, int64_t ny,
                       size_t es) {
    void *dx = NULL, *dy = NULL;
    int rc = -1;
    if (cudaMalloc(&dx, (size_t)nx * es) != cudaSuccess) goto out;
    if (cudaMalloc(&dy, (size_t)ny * es) != cudaSuccess) goto out;
    if (cudaMemcpy(dx, x, (size_t)nx * es, cudaMemcpyHostToDevice) != cudaSuccess) goto out;
    if (cudaMemset(dy, 0xff, (size_t)ny * es) != cudaSuccess) goto out; /* NaN */
    /* the seed solvers (cuda.*.seed-*, the course notes' kernels as they
     * wrote them) are documented to synchronise: __constant__ masks shared
     * by all plans, pitched and texture copies made per call */
    const int gated = !strstr(tc_plan_algorithm(pl), ".seed-") && gate_shut();
    rc = tc_execute_filter(pl, dy, dx, NULL);
    GATE_CHECK(gated);
    if (rc == TC_OK) {
        if (cudaDeviceSynchronize() != cudaSuccess ||
            cudaMemcpy(y, dy, (size_t)ny * es, cudaMemcpyDeviceToHost) != cudaSuccess)
            rc = -1;
    }
out:
    cudaFree(dx);
    cudaFree(dy);
    return rc;
}

/* A TC_PLAN_MASK_AT_EXECUTE plan on device copies of x and of the mask m
 * (nm elements) and of -m: both executes enqueued behind the gate (neither
 * may wait: the mask stays on the device), into y and y2; -m must give
 * exactly -y (negation is exact in every rounding), so a mask kept from
 * the call before, or a stale copy, fails. */
static int exec_device_mask(const tc_plan *pl, void *y, void *y2, const void *x, const void *m,
                            int64_t nx, int64_t ny, int64_t nm, size_t es) {
    void *dx = NULL, *dy = NULL, *dy2 = NULL, *dm = NULL, *dm2 = NULL, *neg = malloc((size_t)nm * es);
    int rc = -1;
    if (!neg) goto out;
    for (int64_t i = 0; i < nm; i++) {
        if (es == 8) ((double *)neg)[i] = -((const double *)m)[i];
        else ((float *)neg)[i] = -((const float *)m)[i];
    }
    if (cudaMalloc(&dx, (size_t)nx * es) != cudaSuccess) goto out;
    if (cudaMalloc(&dy, (size_t)ny * es) != cudaSuccess) goto out;
    if (cudaMalloc(&dy2, (size_t)ny * es) != cudaSuccess) goto out;
    if (cudaMalloc(&dm, (size_t)nm * es) != cudaSuccess) goto out;
    if (cudaMalloc(&dm2, (size_t)nm * es) != cudaSuccess) goto out;
    if (cudaMemcpy(dx, x, (size_t)nx * es, cudaMemcpyHostToDevice) != cudaSuccess) goto out;
    if (cudaMemcpy(dm, m, (size_t)nm * es, cudaMemcpyHostToDevice) != cudaSuccess) goto out;
    if (cudaMemcpy(dm2, neg, (size_t)nm * es, cudaMemcpyHostToDevice) != cudaSuccess) goto out;
    if (cudaMemset(dy, 0xff, (size_t)ny * es) != cudaSuccess) goto out; /* NaN */
    if (cudaMemset(dy2, 0xff, (size_t)ny * es) != cudaSuccess) goto out;
    const int gated = gate_shut();
    rc = tc_execute_filter_mask(pl, dy, dx, dm, NULL);
    if (rc == TC_OK) rc = tc_execute_filter_mask(pl, dy2, dx, dm2, NULL);
    GATE_CHECK(gated);
    if (rc == TC_OK) {
        if (cudaDeviceSynchronize() != cudaSuccess ||
            cudaMemcpy(y, dy, (size_t)ny * es, cudaMemcpyDeviceToHost) != cudaSuccess ||
            cudaMemcpy(y2, dy2, (size_t)ny * es, cudaMemcpyDeviceToHost) != cudaSuccess)
            rc = -1;
    }
out:
    cudaFree(dx);
    cudaFree(dy);
    cudaFree(dy2);
    cudaFree(dm);
    cudaFree(dm2);
    free(neg);
    return rc;
}
#endif

/* Set: run_filter_case plans with TC_PLAN_MASK_AT_EXECUTE (no mask) and
 * runs tc_execute_filter_mask: host pointers with the host mask, or device
 * pointers with a device mask (exec_device_mask); algorithms that take
 * their mask at plan time, the swapped valid case and float16 are not
 * applicable and not counted. */
static int g_mexec;

/* When set, run_filter_case runs this solver only, and returns before
 * computing the reference when it does not apply (the variant sweep). */
static const char *only_solver = NULL;

/* The description of filter case ci in mode mi (dtype float32); 0 when
 * the pair is not run (full / valid outputs run once, as mi 0). */
/* case c's shape, mask shape and output kind into d (its leading batch
 * axis where batch > 1) */
static void fcase_shape(const fcase *c, tc_filter_desc *d) {
    int lead = c->batch > 1;
    d->ndim = c->nsp + lead;
    d->nspatial = c->nsp;
    if (lead) d->shape[0] = c->batch;
    for (int i = 0; i < c->nsp; i++) {
        d->shape[lead + i] = c->shape[i];
        d->mask_shape[i] = c->mask[i];
    }
    d->output = c->out;
}

static int filter_desc_for(int ci, int mi, tc_filter_desc *d) {
    const fcase *c = &fcases[ci];
    tc_filter_desc_init(d);
    d->dtype = TC_FLOAT32;
    fcase_shape(c, d);
    d->kind = (ci + mi) % 2 ? TC_FILTER_CONVOLVE : TC_FILTER_CORRELATE;
    if (c->out == TC_OUTPUT_SAME) {
        d->mode = modes[mi];
        d->cval = 0.375;
        d->origin[c->nsp - 1] = c->origin0;
    } else if (mi != 0) {
        return 0; /* full/valid: mode does not apply; run once */
    }
    return 1;
}

/* ---------------- filters in float32 and float64 ----------------
 * Filter case ci in mode mi on every CUDA filter solver that takes the
 * dtype (float64: cuda.filter.direct, cuda.filter.separable,
 * cuda.filter.fft; the seed solvers are float32 only), against
 * ref.conv.loops in the same dtype, on host or device pointers; outputs
 * poisoned with NaN first. Error measure: max|out - ref| / max(max|x|
 * sum|m|, max|ref|) (float sums: the error grows ~ sqrt(taps) times the
 * terms' magnitude, max|x| * sum|m|; measured against max|ref|, a case
 * whose outputs cancel read 4.4e-6 against 4e-6 on every CUDA filter
 * solver: 1D reflect convolve). Bounds (docs/semantics.md): float32 4e-6,
 * times sqrt(taps / 64) past 64 taps, 5x that for cuda.filter.fft;
 * float64 direct summation 1e-13 (same taps factor), cuda.filter.fft
 * 1e-12 * log2(F), F the transform's size, taken here as prod 2 (out + m -
 * 1) >= F (a 2,3,5,7-smooth size is below twice its length). Inputs are
 * drawn in double (th_value) and rounded once for float32. */
static void run_filter_case(int ci, int mi, int device_ptrs, tc_dtype dt) {
    const fcase *c = &fcases[ci];
    const int f64 = dt == TC_FLOAT64;
    const size_t es = f64 ? 8 : 4;
    tc_filter_desc d;
    if (!filter_desc_for(ci, mi, &d)) return;
    d.dtype = dt;
    th_rng r = th_rng_for((uint64_t)((f64 ? 64000 : 0) + ci * 131 + mi * 7 + device_ptrs));
    int64_t nx = 1, nm = 1, ms[3] = {1, 1, 1};
    for (int i = 0; i < d.ndim; i++) nx *= d.shape[i];
    for (int i = 0; i < c->nsp; i++) {
        nm *= c->mask[i];
        ms[3 - c->nsp + i] = c->mask[i];
    }
    double *xd = malloc((size_t)nx * 8), *md = malloc((size_t)nm * 8);
    for (int64_t i = 0; i < nx; i++) xd[i] = th_value(&r);
    if (c->rank1) { /* separable: a product of three vectors */
        double f[3][64];
        for (int a = 0; a < 3; a++)
            for (int64_t i = 0; i < ms[a]; i++) f[a][i] = th_value(&r);
        for (int64_t i = 0; i < ms[0]; i++)
            for (int64_t j = 0; j < ms[1]; j++)
                for (int64_t k = 0; k < ms[2]; k++)
                    md[(i * ms[1] + j) * ms[2] + k] = f[0][i] * f[1][j] * f[2][k];
    } else {
        for (int64_t i = 0; i < nm; i++) md[i] = th_value(&r);
    }
    void *x = xd, *m = md;
    if (!f64) { /* rounded once, in place */
        float *xf = (float *)xd, *mf = (float *)md;
        for (int64_t i = 0; i < nx; i++) xf[i] = (float)xd[i];
        for (int64_t i = 0; i < nm; i++) mf[i] = (float)md[i];
    }
#define TC_FVAL(p, i) (f64 ? ((const double *)(p))[i] : (double)((const float *)(p))[i])
    if (only_solver) {
        tc_plan_options po;
        tc_plan_options_init(&po);
        po.algorithm = only_solver;
        po.flags = g_mexec ? TC_PLAN_MASK_AT_EXECUTE : 0u;
        tc_plan *pp = NULL;
        tc_status ps = tc_plan_filter(&pp, NULL, &d, g_mexec ? NULL : m, &po);
        tc_plan_destroy(pp);
        if (ps == TC_ERR_NOT_APPLICABLE || (g_mexec && ps == TC_ERR_UNSUPPORTED)) {
            free(xd); free(md);
            return;
        }
    }
    tc_plan_options o;
    tc_plan_options_init(&o);
    o.algorithm = "ref.conv.loops";
    tc_plan *rp = NULL;
    if (tc_plan_filter(&rp, NULL, &d, m, &o) != TC_OK) {
        printf("%s reference plan failed for case %d: %s\n", tc_dtype_name(dt), ci, tc_last_error());
        th_g.failed++;
        free(xd); free(md);
        return;
    }
    int ond;
    int64_t osh[TC_MAX_DIMS];
    tc_plan_output_shape(rp, &ond, osh);
    int64_t ny = 1;
    for (int i = 0; i < ond; i++) ny *= osh[i];
    void *ref = malloc((size_t)ny * es), *y = malloc((size_t)ny * es);
    void *y2 = malloc((size_t)ny * es); /* TC_PLAN_MASK_AT_EXECUTE on device pointers: -m */
    tc_execute_filter(rp, ref, x, NULL);
    tc_plan_destroy(rp);
    double rmax = 0, xmax = 0, msum = 0, fb = 1;
    for (int64_t i = 0; i < ny; i++) rmax = fmax(rmax, fabs(TC_FVAL(ref, i)));
    for (int64_t i = 0; i < nx; i++) xmax = fmax(xmax, fabs(TC_FVAL(x, i)));
    for (int64_t i = 0; i < nm; i++) msum += fabs(TC_FVAL(m, i));
    if (d.mode == TC_MODE_CONSTANT && fabs(d.cval) > xmax) xmax = fabs(d.cval);
    for (int i = 0; i < c->nsp; i++) fb *= 2.0 * (double)(osh[ond - c->nsp + i] + c->mask[i] - 1);
    const double scale = xmax * msum > rmax ? xmax * msum : rmax;
    for (int s = 0; s < NFS; s++) {
        if (only_solver && strcmp(only_solver, filter_solvers[s]) != 0) continue;
        tc_plan_options_init(&o);
        o.algorithm = filter_solvers[s];
        o.flags = g_mexec ? TC_PLAN_MASK_AT_EXECUTE : 0u;
        tc_plan *pl = NULL;
        tc_status st = tc_plan_filter(&pl, NULL, &d, g_mexec ? NULL : m, &o);
        if (st == TC_ERR_NOT_APPLICABLE || (g_mexec && st == TC_ERR_UNSUPPORTED)) {
            n_na++;
            continue;
        }
        TH_BEGIN("%s%s%s%s %s %dD case %d (%lld..x%lld, mask %lld..x%lld) %s %s %s", filter_solvers[s],
                 g_mexec ? " mask-at-execute" : "",
                 only_solver ? " variant " : "",
                 only_solver && tc__knob_get(TC__KNOB_CUDA_DIRECT_VARIANT) ? tc__knob_get(TC__KNOB_CUDA_DIRECT_VARIANT) : "",
                 f64 ? "f64" : "f32", c->nsp, ci, (long long)c->shape[0],
                 (long long)c->shape[c->nsp - 1], (long long)c->mask[0],
                 (long long)c->mask[c->nsp - 1],
                 c->out == TC_OUTPUT_SAME ? tc_mode_name(d.mode)
                                          : c->out == TC_OUTPUT_FULL ? "full" : "valid",
                 d.kind == TC_FILTER_CONVOLVE ? "convolve" : "correlate",
                 device_ptrs ? "device-ptr" : "host-ptr");
        if (!CHECK_STATUS(st, TC_OK)) { TH_END(); continue; }
        memset(y, 0xff, (size_t)ny * es); /* NaN in both dtypes */
        memset(y2, 0xff, (size_t)ny * es);
        int rc, neg = 0;
#if TC_TEST_CUDA
        if (device_ptrs && g_mexec) {
            rc = exec_device_mask(pl, y, y2, x, m, nx, ny, nm, es);
            neg = 1;
        } else if (device_ptrs) {
            rc = exec_device(pl, y, x, nx, ny, (int)es);
        } else
#endif
            rc = g_mexec ? tc_execute_filter_mask(pl, y, x, m, NULL) : tc_execute_filter(pl, y, x, NULL);
        CHECK(rc == TC_OK, "execute: rc %d, %s", rc, tc_last_error());
        if (rc == TC_OK && neg) { /* the second call's mask -m: exactly -y */
            int64_t off = -1;
            for (int64_t i = 0; i < ny && off < 0; i++)
                if (!(TC_FVAL(y2, i) == -TC_FVAL(y, i))) off = i;
            CHECK(off < 0, "the second execute (mask -m) did not give -y: at %lld %.9g, first gave %.9g",
                  (long long)off, off >= 0 ? TC_FVAL(y2, off) : 0.0, off >= 0 ? TC_FVAL(y, off) : 0.0);
        }
        if (rc == TC_OK) {
            int64_t bad = -1;
            double dmax = 0;
            for (int64_t i = 0; i < ny && bad < 0; i++) {
                const double v = TC_FVAL(y, i), df = fabs(v - TC_FVAL(ref, i));
                if (!(df == df) || !isfinite(v)) bad = i;
                else if (df > dmax) dmax = df;
            }
            const double e = bad >= 0 ? INFINITY : scale > 0 ? dmax / scale : dmax;
            const double taps = (double)nm, tf = taps > 64 ? sqrt(taps / 64) : 1;
            const int fft = strcmp(filter_solvers[s], "cuda.filter.fft") == 0;
            const double tol = f64 ? (fft ? 1e-12 * log2(fb) : 1e-13 * tf) : 4e-6 * tf * (fft ? 5 : 1);
            CHECK(e <= tol, "rel err %.3g > %.3g%s%lld", e, tol,
                  bad >= 0 ? ", unwritten/NaN at " : "", (long long)bad);
        }
        tc_plan_destroy(pl);
        TH_END();
    }
#undef TC_FVAL
    free(xd); free(md); free(ref); free(y); free(y2);
}

/* float64 cuda.filter.fft: on a CUDA context ESTIMATE keeps cuda.filter.direct
 * for a 3x3 mask and takes the FFT for a 63x63 one (2048^2); the plan's
 * device workspace holds E and X in the dtype's bytes (F >= L = out + m - 1
 * reals and F/2 + 1 complex values: 8 and 16 bytes in float64, 4 and 8 in
 * float32) */
static void run_filter_f64_planner_checks(void) {
    TH_BEGIN("float64 filter planner and cuda.filter.fft device workspace");
    tc_context *ctx = NULL;
    if (CHECK_STATUS(tc_context_create(&ctx), TC_OK) &&
        CHECK_STATUS(tc_context_set_backend(ctx, TC_BACKEND_CUDA), TC_OK)) {
        static const int64_t ks[2] = {3, 63};
        double *m = malloc(63 * 63 * sizeof(double));
        th_rng r = th_rng_for(64064);
        for (int i = 0; i < 63 * 63; i++) m[i] = th_value(&r);
        for (int k = 0; k < 2; k++) {
            tc_filter_desc d;
            tc_filter_desc_init(&d);
            d.dtype = TC_FLOAT64;
            d.ndim = 2;
            d.shape[0] = d.shape[1] = 2048;
            d.mask_shape[0] = d.mask_shape[1] = ks[k];
            tc_plan *pl = NULL;
            if (CHECK_STATUS(tc_plan_filter(&pl, ctx, &d, m, NULL), TC_OK)) {
                const int fft = strcmp(tc_plan_algorithm(pl), "cuda.filter.fft") == 0;
                CHECK(k ? fft : !fft, "2048^2 float64, %lldx%lld mask: ESTIMATE chose %s",
                      (long long)ks[k], (long long)ks[k], tc_plan_algorithm(pl));
            }
            tc_plan_destroy(pl);
        }
        size_t ws[2] = {0, 0};
        for (int f64 = 0; f64 < 2; f64++) {
            tc_filter_desc d;
            tc_filter_desc_init(&d);
            d.dtype = f64 ? TC_FLOAT64 : TC_FLOAT32;
            d.ndim = 1;
            d.shape[0] = 1000;
            d.mask_shape[0] = 101;
            float mf[101];
            for (int i = 0; i < 101; i++) mf[i] = (float)m[i];
            tc_plan_options o;
            tc_plan_options_init(&o);
            o.algorithm = "cuda.filter.fft";
            tc_plan *pl = NULL;
            if (CHECK_STATUS(tc_plan_filter(&pl, ctx, &d, f64 ? (const void *)m : mf, &o), TC_OK)) {
                const size_t L = 1000 + 101 - 1, es = f64 ? 8 : 4;
                ws[f64] = tc_plan_device_workspace_size(pl);
                CHECK(ws[f64] >= L * es + (L / 2 + 1) * 2 * es,
                      "%s device workspace %zu bytes, below E and X (%zu)",
                      f64 ? "float64" : "float32", ws[f64], L * es + (L / 2 + 1) * 2 * es);
            }
            tc_plan_destroy(pl);
        }
        CHECK(ws[1] > ws[0], "float64 device workspace %zu not above float32's %zu", ws[1], ws[0]);
        free(m);
    }
    tc_context_destroy(ctx);
    TH_END();
}

/* ---------------- non-finite inputs ----------------
 * An Inf or NaN in the input must reach exactly the outputs whose true
 * footprint covers it, as in the reference (a mask padded with zero taps
 * would turn neighbours into 0 * Inf = NaN). Masks of sizes that have no
 * exact kernel variant (4x4, 6, 2x3x4) are the point. cuda.filter.fft is left
 * out: a transform spreads a non-finite value over the whole block. */
typedef struct nfcase {
    int nsp;
    int64_t shape[3], mask[3];
} nfcase;
static const nfcase nfcases[] = {
    {1, {300}, {6}},           {1, {300}, {7}},         {1, {500}, {40}},
    {2, {37, 45}, {4, 4}},     {2, {37, 45}, {3, 3}},   {2, {40, 150}, {3, 7}},
    {3, {9, 10, 11}, {2, 3, 4}}, {3, {9, 10, 130}, {3, 3, 3}},
};
#define NNF (int)(sizeof nfcases / sizeof nfcases[0])

/* cuda.filter.tc-3xtf32's masks (its exact fallback for tiles that read a
 * non-finite value), run on that solver only */
static const nfcase nfcases_tc[] = {
    {2, {37, 45}, {9, 9}}, {2, {70, 150}, {15, 15}}, {3, {9, 10, 30}, {5, 5, 5}},
};
#define NNFT (int)(sizeof nfcases_tc / sizeof nfcases_tc[0])

static void run_nonfinite_case_of(const nfcase *c, int ci, int mi, const char *only);
static void run_nonfinite_case(int ci, int mi) { run_nonfinite_case_of(&nfcases[ci], ci, mi, NULL); }
static void run_nonfinite_case_of(const nfcase *c, int ci, int mi, const char *only) {
    tc_filter_desc d;
    tc_filter_desc_init(&d);
    d.dtype = TC_FLOAT32;
    d.ndim = c->nsp;
    int64_t nx = 1, nm = 1;
    for (int i = 0; i < c->nsp; i++) {
        d.shape[i] = c->shape[i];
        d.mask_shape[i] = c->mask[i];
        nx *= c->shape[i];
        nm *= c->mask[i];
    }
    d.mode = mi ? TC_MODE_REFLECT : TC_MODE_CONSTANT;
    d.cval = 0.25;
    th_rng r = th_rng_for((uint64_t)(5000 + ci * 11 + mi));
    float *x = malloc((size_t)nx * 4), *m = malloc((size_t)nm * 4);
    float *ref = malloc((size_t)nx * 4), *y = malloc((size_t)nx * 4);
    fill(x, nx, &r);
    fill(m, nm, &r);
    x[nx / 3] = INFINITY; /* interior */
    x[1] = NAN;           /* near the first edge */
    x[nx - 2] = -INFINITY;
    tc_plan_options o;
    tc_plan_options_init(&o);
    o.algorithm = "ref.conv.loops";
    tc_plan *rp = NULL;
    if (tc_plan_filter(&rp, NULL, &d, m, &o) != TC_OK) {
        printf("reference plan failed: %s\n", tc_last_error());
        th_g.failed++;
        free(x); free(m); free(ref); free(y);
        return;
    }
    tc_execute_filter(rp, ref, x, NULL);
    tc_plan_destroy(rp);
    for (int s = 0; s < NFS; s++) {
        if (strcmp(filter_solvers[s], "cuda.filter.fft") == 0) continue;
        if (only && strcmp(filter_solvers[s], only) != 0) continue;
        tc_plan_options_init(&o);
        o.algorithm = filter_solvers[s];
        tc_plan *pl = NULL;
        tc_status st = tc_plan_filter(&pl, NULL, &d, m, &o);
        if (st == TC_ERR_NOT_APPLICABLE) { n_na++; continue; }
        TH_BEGIN("%s non-finite input %dD shape ..x%lld mask %lld..x%lld %s", filter_solvers[s],
                 c->nsp, (long long)c->shape[c->nsp - 1], (long long)c->mask[0],
                 (long long)c->mask[c->nsp - 1], tc_mode_name(d.mode));
        if (!CHECK_STATUS(st, TC_OK)) { TH_END(); continue; }
        for (int64_t i = 0; i < nx; i++) y[i] = 12345.f;
        int rc = tc_execute_filter(pl, y, x, NULL);
        CHECK(rc == TC_OK, "execute: rc %d, %s", rc, tc_last_error());
        if (rc == TC_OK) {
            int64_t bad = -1, nonfin = 0;
            double dmax = 0, rmax = 0;
            for (int64_t i = 0; i < nx && bad < 0; i++) {
                if (isnan(ref[i])) { nonfin++; if (!isnan(y[i])) bad = i; continue; }
                if (isinf(ref[i])) { nonfin++; if (y[i] != ref[i]) bad = i; continue; }
                if (!isfinite(y[i])) { bad = i; continue; }
                double df = fabs((double)y[i] - ref[i]);
                if (df > dmax) dmax = df;
                if (fabs(ref[i]) > rmax) rmax = fabs(ref[i]);
            }
            CHECK(bad < 0, "element %lld: got %g, reference %g", (long long)bad,
                  bad >= 0 ? y[bad] : 0.0, bad >= 0 ? ref[bad] : 0.0);
            CHECK(nonfin > 0, "the reference has no non-finite output (test broken)");
            CHECK(rmax == 0 || dmax / rmax <= 1e-5, "rel err %.3g on the finite outputs",
                  dmax / rmax);
        }
        tc_plan_destroy(pl);
        TH_END();
    }
    free(x); free(m); free(ref); free(y);
}

/* ---------------- cuda.filter.tc-3xtf32 on hard data ----------------
 * Inputs of a wide exponent range (|x| in 2^[-12, 12), |w| in 2^[-6, 6),
 * random signs) and a mask of zero sum (outputs that cancel): the 3xTF32
 * tensor-core solver and cuda.filter.direct (float32 FFMA) on the same
 * float32 data, against ref.conv.loops in float64 on that data. Printed for
 * both: the max relative error max |y - ref| / |ref| (over outputs with
 * |ref| > 0; dominated by the outputs that cancel most) and the error
 * against the sum of absolute products, max |y - ref| / sum |w| |x| (the
 * float32 bound's scale, docs/semantics.md; that sum is the float64
 * reference filter of |x| with |w|). The tensor-core solver's must be at
 * most twice the CUDA-core kernel's on the second measure (plus 2^-30, for
 * a direct kernel that happens to be near exact); on the first, which the
 * few outputs that cancel most decide, at most 4x (a numpy model of both
 * kernels on such data, 9 draws at 15x15, 9x9 and 5^3: 0.46-2.3x the FFMA
 * kernel's on the first measure, 0.46-0.94x on the second). */
static void run_filter_tc_accuracy(void) {
    static const struct {
        int nsp;
        int64_t shape[3], mask[3];
        tc_mode mode;
    } hc[] = {
        {2, {300, 257}, {15, 15}, TC_MODE_REFLECT},
        {2, {211, 190}, {9, 9}, TC_MODE_CONSTANT},
        {3, {40, 50, 60}, {5, 5, 5}, TC_MODE_WRAP},
    };
    static const char *const algos[2] = {"cuda.filter.tc-3xtf32", "cuda.filter.direct"};
    for (int ci = 0; ci < (int)(sizeof hc / sizeof hc[0]); ci++) {
        TH_BEGIN("cuda.filter.tc-3xtf32 vs cuda.filter.direct, hard data (wide exponents, zero-sum "
                 "mask): %dD %lld..x%lld mask %lld..x%lld %s",
                 hc[ci].nsp, (long long)hc[ci].shape[0], (long long)hc[ci].shape[hc[ci].nsp - 1],
                 (long long)hc[ci].mask[0], (long long)hc[ci].mask[hc[ci].nsp - 1],
                 tc_mode_name(hc[ci].mode));
        tc_filter_desc d;
        tc_filter_desc_init(&d);
        d.ndim = hc[ci].nsp;
        d.mode = hc[ci].mode;
        int64_t nx = 1, nm = 1;
        for (int i = 0; i < d.ndim; i++) {
            d.shape[i] = hc[ci].shape[i];
            d.mask_shape[i] = hc[ci].mask[i];
            nx *= d.shape[i];
            nm *= d.mask_shape[i];
        }
        th_rng r = th_rng_for((uint64_t)(9300 + ci));
        float *x = malloc((size_t)nx * 4), *m = malloc((size_t)nm * 4), *y = malloc((size_t)nx * 4);
        double *xd = malloc((size_t)nx * 8), *md = malloc((size_t)nm * 8);
        double *xa = malloc((size_t)nx * 8), *ma = malloc((size_t)nm * 8);
        double *ref = malloc((size_t)nx * 8), *aref = malloc((size_t)nx * 8);
        for (int64_t i = 0; i < nx; i++)
            x[i] = (float)(th_value(&r) * ldexp(1.0, (int)th_int(&r, -12, 11)));
        double msum = 0;
        for (int64_t i = 0; i < nm; i++) {
            m[i] = (float)(th_value(&r) * ldexp(1.0, (int)th_int(&r, -6, 5)));
            msum += m[i];
        }
        /* zero sum: the last tap takes the rest (rounded once to float32) */
        m[nm - 1] = (float)((double)m[nm - 1] - msum);
        for (int64_t i = 0; i < nx; i++) { xd[i] = x[i]; xa[i] = fabs(xd[i]); }
        for (int64_t i = 0; i < nm; i++) { md[i] = m[i]; ma[i] = fabs(md[i]); }
        tc_plan_options o;
        tc_plan_options_init(&o);
        o.algorithm = "ref.conv.loops";
        d.dtype = TC_FLOAT64;
        tc_plan *rp = NULL, *ap = NULL;
        int ok = CHECK_STATUS(tc_plan_filter(&rp, NULL, &d, md, &o), TC_OK) &&
                 CHECK_STATUS(tc_plan_filter(&ap, NULL, &d, ma, &o), TC_OK) &&
                 CHECK_STATUS(tc_execute_filter(rp, ref, xd, NULL), TC_OK) &&
                 CHECK_STATUS(tc_execute_filter(ap, aref, xa, NULL), TC_OK);
        tc_plan_destroy(rp);
        tc_plan_destroy(ap);
        /* erel: the plain max relative error, decided by the outputs that
         * cancel most (noise: which form wins there varies with the draw);
         * ereq: the max relative error over outputs with |ref| >= 2^-10 sum
         * |w||x| (at most 10 bits cancelled), the one compared */
        double erel[2] = {0, 0}, eabs[2] = {0, 0}, ereq[2] = {0, 0};
        d.dtype = TC_FLOAT32;
        for (int s = 0; s < 2 && ok; s++) {
            tc_plan_options_init(&o);
            o.algorithm = algos[s];
            tc_plan *pl = NULL;
            ok = CHECK_STATUS(tc_plan_filter(&pl, NULL, &d, m, &o), TC_OK);
            for (int64_t i = 0; i < nx; i++) y[i] = NAN;
            if (ok) ok = CHECK_STATUS(tc_execute_filter(pl, y, x, NULL), TC_OK);
            tc_plan_destroy(pl);
            for (int64_t i = 0; i < nx && ok; i++) {
                const double df = fabs((double)y[i] - ref[i]);
                if (!(df == df)) {
                    ok = CHECK(0, "%s: output %lld is %g (reference %g)", algos[s], (long long)i,
                               y[i], ref[i]);
                    break;
                }
                if (ref[i] != 0 && df / fabs(ref[i]) > erel[s]) erel[s] = df / fabs(ref[i]);
                if (fabs(ref[i]) >= ldexp(aref[i], -10) && ref[i] != 0 && df / fabs(ref[i]) > ereq[s])
                    ereq[s] = df / fabs(ref[i]);
                if (aref[i] > 0 && df / aref[i] > eabs[s]) eabs[s] = df / aref[i];
            }
        }
        if (ok) {
            printf("    max |y - ref| / |ref|: tc-3xtf32 %.3g, direct %.3g (where |ref| >= 2^-10 sum |w||x|: "
                   "%.3g, %.3g); max |y - ref| / sum |w||x|: tc-3xtf32 %.3g, direct %.3g\n",
                   erel[0], erel[1], ereq[0], ereq[1], eabs[0], eabs[1]);
            CHECK(eabs[0] <= 2 * eabs[1] + ldexp(1.0, -30),
                  "error / sum |w||x| %.3g > 2x cuda.filter.direct's %.3g", eabs[0], eabs[1]);
            CHECK(ereq[0] <= 4 * ereq[1] + ldexp(1.0, -30),
                  "max relative error where at most 10 bits cancel %.3g > 4x cuda.filter.direct's %.3g",
                  ereq[0], ereq[1]);
        }
        free(x); free(m); free(y); free(xd); free(md); free(xa); free(ma); free(ref); free(aref);
        TH_END();
    }
}

/* ---------------- gemm cases ---------------- */
typedef struct gcase {
    int64_t m, n, k;
    int ta, tb, pad; /* pad: extra columns in lda/ldb/ldc */
    double alpha, beta;
} gcase;

static const gcase gcases[] = {
    {1, 1, 1, 0, 0, 0, 1, 0},
    {17, 33, 9, 0, 0, 0, 1, 0},     /* m != n != k: the seed's index bug */
    {33, 9, 17, 0, 0, 0, 1, 0},
    {128, 128, 128, 0, 0, 0, 1, 0},
    {200, 304, 520, 0, 0, 0, 1, 0}, /* fast path, m edge */
    {130, 260, 67, 0, 0, 0, 0.5, 0},
    {257, 129, 300, 0, 0, 4, 1, 0.5},
    {64, 96, 40, 1, 0, 0, 1, 0},
    {64, 96, 40, 0, 1, 0, 1, 0},
    {65, 97, 41, 1, 1, 3, -1.5, 2},
    {300, 8, 1000, 0, 0, 0, 1, 0},
    /* cuda.gemm.wgmma-tf32 (lda, ldb multiples of 4): m, n and k off
     * the 128 / 128 / 32 tile; beta and padded rows; an odd number of k
     * tiles (the pipeline's last stage alone); one tile smaller than a box */
    {131, 260, 100, 0, 0, 0, 1, 0},
    {256, 384, 96, 0, 0, 4, 0.75, -1},
    {517, 132, 1040, 0, 0, 0, 1, 0},
    {3, 4, 8, 0, 0, 0, 2, 0},
    /* the cluster forms (two blocks along n): an odd number of
     * n-tiles (the second block of the last pair past n) over more than
     * one raster group of m-tiles */
    {1100, 300, 70, 0, 0, 0, 1, 0},
    {2100, 600, 36, 0, 0, 4, 1, 0.5},
    /* cuda.gemm.simt's interior blocks (whole tiles, k a multiple
     * of 16: copies without tests) beside edge blocks in one grid */
    {160, 192, 48, 0, 0, 0, 1, 0},
    {300, 400, 272, 0, 0, 4, 1, 0.5},
    /* cuda.gemm.wgmma-tf32's split tail (a capped grid leaving a
     * partial last round: the 256 x 128 cluster forms split 3 tiles on a
     * grid of 2; k of 37 k-steps split unevenly), with beta */
    {700, 650, 1180, 0, 0, 0, 1, 0.5},
    {190, 520, 96, 0, 0, 0, 1, 0.5}, /* small enough for the sanitizer runs */
    /* cuda.gemm.simt on interior blocks only (whole 128 x 128
     * tiles, k a multiple of 32): an odd number of 32-deep k tiles, and a
     * single k tile (the pipeline's prologue is all there is) */
    {384, 256, 160, 0, 0, 0, 1, 0.5},
    {256, 128, 32, 0, 0, 0, 1, 0},
    /* one interior 256 x 128 block (k a multiple of 32: 9 and
     * 18 k tiles, past the 4-stage prologues), with padded rows and beta
     * (written for a 256 x 128 form, removed; kept for cuda.gemm.wgmma-tf32's
     * 256-row form and the 128 x 128 kernel's interior loop) */
    {256, 128, 288, 0, 0, 4, 1, 0.5},
};
#define NGC (int)(sizeof gcases / sizeof gcases[0])

/* Executes gemm plan pl on the host arrays A, B, C, or (device_ptrs) on
 * device copies of them (na, nb, nc elements of es bytes) with C copied
 * back, failing the case if the execute waited for its stream. Returns the
 * status, -1 when a CUDA call failed. */
static int exec_gemm(const tc_plan *pl, void *C, const void *A, const void *B, int64_t na,
                     int64_t nb, int64_t nc, size_t es, int device_ptrs) {
#if TC_TEST_CUDA
    if (device_ptrs) {
        void *dA = NULL, *dB = NULL, *dC = NULL;
        int rc = -1;
        if (cudaMalloc(&dA, na * es) == cudaSuccess && cudaMalloc(&dB, nb * es) == cudaSuccess &&
            cudaMalloc(&dC, nc * es) == cudaSuccess &&
            cudaMemcpy(dA, A, na * es, cudaMemcpyHostToDevice) == cudaSuccess &&
            cudaMemcpy(dB, B, nb * es, cudaMemcpyHostToDevice) == cudaSuccess &&
            cudaMemcpy(dC, C, nc * es, cudaMemcpyHostToDevice) == cudaSuccess) {
            const int gated = gate_shut();
            rc = tc_execute_gemm(pl, dC, dA, dB, NULL);
            GATE_CHECK(gated);
            if (rc == TC_OK && (cudaDeviceSynchronize() != cudaSuccess ||
                                cudaMemcpy(C, dC, nc * es, cudaMemcpyDeviceToHost) != cudaSuccess))
                rc = -1;
        }
        cudaFree(dA); cudaFree(dB); cudaFree(dC);
        return rc;
    }
#else
    (void)na; (void)nb; (void)nc; (void)es; (void)device_ptrs;
#endif
    return tc_execute_gemm(pl, C, A, B, NULL);
}

static void run_gemm_case(int gi, int device_ptrs) {
    const gcase *c = &gcases[gi];
    tc_gemm_desc d;
    tc_gemm_desc_init(&d);
    d.dtype = TC_FLOAT32;
    d.m = c->m; d.n = c->n; d.k = c->k;
    d.trans_a = c->ta; d.trans_b = c->tb;
    int64_t ar = c->ta ? c->k : c->m, ac = c->ta ? c->m : c->k;
    int64_t br = c->tb ? c->n : c->k, bc = c->tb ? c->k : c->n;
    d.lda = ac + c->pad; d.ldb = bc + c->pad; d.ldc = c->n + c->pad;
    d.alpha = c->alpha; d.beta = c->beta;
    int64_t na = ar * d.lda, nb = br * d.ldb, nc = c->m * d.ldc;
    th_rng r = th_rng_for(1000 + gi);
    float *A = malloc(na * 4), *B = malloc(nb * 4), *C0 = malloc(nc * 4), *ref = malloc(nc * 4),
          *C = malloc(nc * 4);
    fill(A, na, &r); fill(B, nb, &r); fill(C0, nc, &r);
    if (c->beta == 0) for (int64_t i = 0; i < nc; i++) C0[i] = NAN; /* must not be read */
    tc_plan_options ro;
    tc_plan_options_init(&ro);
    ro.algorithm = "ref.gemm.loops";
    tc_plan *rp;
    if (tc_plan_gemm(&rp, NULL, &d, &ro) != TC_OK) {
        printf("ref.gemm.loops plan failed: %s\n", tc_last_error());
        th_g.failed++;
        return;
    }
    memcpy(ref, C0, nc * 4);
    tc_execute_gemm(rp, ref, A, B, NULL);
    tc_plan_destroy(rp);
    for (int s = 0; s < NGS; s++) {
        tc_plan_options o;
        tc_plan_options_init(&o);
        o.algorithm = gemm_solvers[s];
        const int tf32 = strstr(gemm_solvers[s], "tf32") != NULL && !strstr(gemm_solvers[s], "3xtf32");
        if (tf32) o.flags |= TC_PLAN_ALLOW_TF32;
        tc_plan *pl;
        tc_status st = tc_plan_gemm(&pl, NULL, &d, &o);
        if (st == TC_ERR_NOT_APPLICABLE) { n_na++; continue; }
        TH_BEGIN("%s m=%lld n=%lld k=%lld ta=%d tb=%d pad=%d beta=%g %s", gemm_solvers[s],
                 (long long)c->m, (long long)c->n, (long long)c->k, c->ta, c->tb, c->pad,
                 c->beta, device_ptrs ? "device-ptr" : "host-ptr");
        if (!CHECK_STATUS(st, TC_OK)) { TH_END(); continue; }
        memcpy(C, C0, nc * 4);
        const int rc = exec_gemm(pl, C, A, B, na, nb, nc, 4, device_ptrs);
        CHECK(rc == TC_OK, "execute: rc %d, %s", rc, tc_last_error());
        if (rc == TC_OK) {
            /* compare the m x n block; the padding columns must be untouched */
            double dmax = 0, rmax = 0;
            int64_t bad = -1;
            for (int64_t i = 0; i < c->m; i++)
                for (int64_t j = 0; j < d.ldc; j++) {
                    int64_t e = i * d.ldc + j;
                    if (j >= c->n) {
                        if (!(memcmp(&C[e], &C0[e], 4) == 0) && bad < 0) bad = e;
                        continue;
                    }
                    double df = fabs((double)C[e] - ref[e]);
                    if (!isfinite(C[e]) && bad < 0) bad = e;
                    if (df > dmax) dmax = df;
                    if (fabs(ref[e]) > rmax) rmax = fabs(ref[e]);
                }
            double err = rmax > 0 ? dmax / rmax : dmax;
            CHECK(bad < 0, "element %lld wrong or NaN (padding written or C read with beta=0)",
                  (long long)bad);
            CHECK(err <= (tf32 ? 5e-3 : 2e-5), "rel err %.3g", err);
        }
        tc_plan_destroy(pl);
        TH_END();
    }
    free(A); free(B); free(C0); free(ref); free(C);
}


/* K x Cg x S weights (elements of es bytes) to K x S x Cg: weight_layout
 * channels-last */
static void wl_to_cl(void *dst, const void *src, int64_t K, int64_t Cg, int64_t S, size_t es) {
    for (int64_t k = 0; k < K; k++)
        for (int64_t c = 0; c < Cg; c++)
            for (int64_t i = 0; i < S; i++)
                memcpy((char *)dst + (size_t)((k * S + i) * Cg + c) * es,
                       (const char *)src + (size_t)((k * Cg + c) * S + i) * es, es);
}

/* ---------------- conv layers: every CUDA conv solver vs ref.conv.loops ------- */
typedef struct ccase {
    int nsp;
    int64_t N, C, K, G, n[3], m[3], stride, dil, pad;
    tc_padding_mode pm;
    int bias;
} ccase;
static const ccase ccases[] = {
    {2, 2, 5, 7, 1, {13, 11}, {3, 3}, 1, 1, 1, TC_PADDING_ZEROS, 1},
    {2, 1, 16, 130, 1, {9, 10}, {3, 3}, 1, 1, 1, TC_PADDING_REFLECT, 0}, /* K > 128 */
    {2, 1, 3, 24, 1, {37, 41}, {7, 7}, 2, 1, 3, TC_PADDING_ZEROS, 1},    /* conv1-like */
    {2, 3, 12, 18, 3, {8, 9}, {3, 2}, 1, 2, 2, TC_PADDING_CIRCULAR, 1},  /* groups, dil */
    {2, 2, 8, 8, 8, {15, 14}, {3, 3}, 2, 1, 1, TC_PADDING_REPLICATE, 1}, /* depthwise */
    {2, 1, 6, 12, 6, {9, 9}, {3, 3}, 1, 1, 1, TC_PADDING_REFLECT, 0},    /* dw x2 */
    {1, 3, 9, 11, 1, {300}, {5}, 1, 1, 2, TC_PADDING_CIRCULAR, 1},
    {3, 1, 4, 6, 1, {5, 6, 7}, {3, 3, 3}, 1, 1, 1, TC_PADDING_REPLICATE, 1},
    {2, 2, 40, 33, 1, {17, 15}, {1, 1}, 1, 1, 0, TC_PADDING_ZEROS, 1},   /* 1x1, R < BK */
    /* the tiled implicit GEMM's paths */
    {2, 2, 256, 160, 1, {5, 6}, {3, 3}, 1, 1, 1, TC_PADDING_ZEROS, 1},   /* split-K, K % 128 */
    {2, 3, 64, 64, 1, {16, 16}, {1, 1}, 1, 1, 0, TC_PADDING_ZEROS, 1},   /* 1x1 16-byte path */
    {2, 2, 32, 96, 2, {12, 12}, {1, 1}, 1, 1, 0, TC_PADDING_ZEROS, 0},   /* grouped 1x1 */
    {2, 2, 7, 20, 1, {20, 23}, {3, 3}, 2, 2, 3, TC_PADDING_REFLECT, 1},  /* stride + dil */
    {3, 2, 5, 9, 1, {6, 7, 8}, {3, 3, 3}, 1, 1, 1, TC_PADDING_CIRCULAR, 0},
    {1, 2, 16, 200, 1, {100}, {9}, 1, 3, 12, TC_PADDING_REPLICATE, 1},  /* 1D dilated */
    {2, 4, 16, 64, 1, {30, 31}, {3, 3}, 1, 1, 1, TC_PADDING_REPLICATE, 1}, /* BM 64 gather */
    {2, 2, 24, 40, 1, {9, 11}, {5, 5}, 1, 1, 2, TC_PADDING_ZEROS, 1},   /* A 16-byte, edges */
    {3, 1, 1, 3, 1, {14, 14, 14}, {13, 13, 13}, 1, 1, 6, TC_PADDING_ZEROS, 1}, /* > 2048 taps */
    {1, 2, 4, 8, 4, {50}, {5}, 2, 2, 4, TC_PADDING_REFLECT, 1},          /* depthwise 1D */
    {2, 2, 8, 8, 8, {20, 17}, {5, 5}, 1, 1, 2, TC_PADDING_CIRCULAR, 1},  /* depthwise 5x5 */
    /* the tiled depthwise kernel (planes per block, row bands) */
    {2, 2, 5, 5, 5, {10, 10}, {3, 3}, 1, 1, 1, TC_PADDING_ZEROS, 1},    /* dw: 8 planes a block */
    {2, 1, 2, 2, 2, {150, 80}, {3, 3}, 1, 1, 1, TC_PADDING_REFLECT, 1},  /* dw: row bands */
    {2, 2, 3, 6, 3, {13, 12}, {3, 3}, 1, 2, 2, TC_PADDING_CIRCULAR, 0},  /* dw: dilation, x2 */
    {2, 3, 4, 4, 4, {9, 11}, {5, 5}, 2, 1, 2, TC_PADDING_ZEROS, 1},      /* dw: 5x5 stride 2 */
    {3, 1, 4, 4, 4, {5, 6, 7}, {3, 3, 3}, 1, 1, 1, TC_PADDING_REPLICATE, 1}, /* dw 3D */
    /* the zero-padding gather's tap bitmask (R <= 64) and past it */
    {2, 1, 4, 12, 1, {12, 13}, {8, 8}, 1, 1, 3, TC_PADDING_ZEROS, 0},   /* R = 64 */
    {2, 2, 5, 20, 1, {16, 15}, {9, 9}, 1, 1, 4, TC_PADDING_ZEROS, 1},   /* R = 81 */
    {2, 1, 128, 130, 1, {6, 7}, {3, 3}, 1, 1, 1, TC_PADDING_ZEROS, 1},  /* row table, split-K */
    {2, 1, 512, 40, 1, {4, 5}, {3, 3}, 1, 1, 1, TC_PADDING_ZEROS, 1},   /* Rl > the row table */
    /* cuda.conv.winograd-f4(2) (3x3 stride 1): partial tiles, C and K
     * off multiples of 4/16/32, several GEMM column and row tiles, groups,
     * pad 2, 3D with kd = 2 */
    {2, 3, 37, 45, 1, {29, 27}, {3, 3}, 1, 1, 1, TC_PADDING_REFLECT, 1},
    {2, 2, 12, 18, 3, {11, 13}, {3, 3}, 1, 1, 1, TC_PADDING_CIRCULAR, 1}, /* groups */
    {2, 1, 20, 24, 1, {10, 9}, {3, 3}, 1, 1, 2, TC_PADDING_ZEROS, 0},    /* pad 2 */
    {2, 2, 70, 140, 1, {15, 17}, {3, 3}, 1, 1, 1, TC_PADDING_REPLICATE, 1},
    {3, 2, 6, 10, 2, {5, 9, 10}, {2, 3, 3}, 1, 1, 1, TC_PADDING_REFLECT, 1}, /* 3D kd 2 */
    /* layers with blocks for a wave, where TF32 plans run the shifted views
     * with TMA copies by default (sv_default): the 64-channel tile with
     * C % 32 != 0 (the channel box past C), the 128-channel tile with
     * K % 128 != 0 */
    {2, 18, 40, 64, 1, {28, 28}, {3, 3}, 1, 1, 1, TC_PADDING_ZEROS, 1},
    {2, 20, 128, 130, 1, {16, 16}, {3, 3}, 1, 1, 1, TC_PADDING_ZEROS, 0},
    /* the 1x1 stream: C % 32 != 0 over several 32-channel chunks, two
     * 64-channel tiles with K % 64 != 0, P % 128 != 0 */
    {2, 3, 72, 100, 1, {20, 36}, {1, 1}, 1, 1, 0, TC_PADDING_ZEROS, 1},
    /* the 1x1 stream's wgmma form: four 64-channel stages, each two
     * 32-channel blocks of the swizzled weights, Cg % 64 != 0, K % 64 != 0 */
    {2, 2, 200, 70, 1, {10, 30}, {1, 1}, 1, 1, 0, TC_PADDING_ZEROS, 1},
    /* Cg % 4 != 0: the 1x1 stream's weights element by element, not cp.async */
    {2, 2, 30, 20, 1, {8, 10}, {1, 1}, 1, 1, 0, TC_PADDING_ZEROS, 1},
    /* 64 x 448 weights past the 1x1 stream's shared memory: the tiled
     * kernel takes the layer */
    {2, 2, 400, 40, 1, {8, 8}, {1, 1}, 1, 1, 0, TC_PADDING_ZEROS, 1},
    /* the depth ring (3D, the plane ring, resident weights; the default
     * for zero-padded 3D TF32 layers with C/G <= 32): two 32-channel
     * output tiles with K % 32 != 0 and a one-row last band; dilation 2
     * (five planes a view, six slots) with C past the box's 32 channels
     * read as zeros; groups of 32 channels; kd = 2 with one warpgroup */
    {3, 2, 32, 40, 1, {9, 10, 11}, {3, 3, 3}, 1, 1, 1, TC_PADDING_ZEROS, 1},
    {3, 3, 12, 20, 1, {7, 6, 13}, {3, 3, 3}, 1, 2, 2, TC_PADDING_ZEROS, 0},
    {3, 1, 64, 48, 2, {5, 6, 7}, {3, 3, 3}, 1, 1, 1, TC_PADDING_ZEROS, 1},
    {3, 2, 8, 16, 1, {6, 4, 5}, {2, 3, 3}, 1, 1, 1, TC_PADDING_ZEROS, 1},
    /* the 1x1 stream: tiles across images with channels past Cg, two
     * 64-channel output
     * tiles; groups with the last tile past N * P; Cg % 4 != 0 (weights
     * element by element); five 64-channel stages a tile */
    {2, 3, 72, 100, 1, {16, 24}, {1, 1}, 1, 1, 0, TC_PADDING_ZEROS, 1},
    {2, 2, 40, 24, 2, {8, 12}, {1, 1}, 1, 1, 0, TC_PADDING_ZEROS, 1},
    {2, 2, 30, 20, 1, {8, 12}, {1, 1}, 1, 1, 0, TC_PADDING_ZEROS, 0},
    {2, 1, 320, 64, 1, {8, 16}, {1, 1}, 1, 1, 0, TC_PADDING_ZEROS, 1},
    /* 16 positions an image: a tile over eight images */
    {2, 9, 64, 32, 1, {4, 4}, {1, 1}, 1, 1, 0, TC_PADDING_ZEROS, 1},
    /* cuda.conv.igemm-3xtf32's shifted views (2D, stride 1, zero padding):
     * groups with C/G = 32 and K/G past the 64-channel tile; the 32-channel
     * tile with C past the first 32-channel box; dilation 2, pad 2 */
    {2, 2, 64, 80, 2, {10, 13}, {3, 3}, 1, 1, 1, TC_PADDING_ZEROS, 1},
    {2, 2, 36, 20, 1, {11, 17}, {3, 3}, 1, 1, 1, TC_PADDING_ZEROS, 1},
    {2, 2, 16, 24, 1, {14, 12}, {3, 3}, 1, 2, 2, TC_PADDING_ZEROS, 0},
    /* 2D layers cuda.conv.fft runs fused by default (E 49..64
     * on both axes): reflect, and circular with stride, dilation, groups */
    {2, 2, 6, 10, 1, {56, 52}, {5, 5}, 1, 1, 2, TC_PADDING_REFLECT, 1},
    {2, 3, 4, 6, 2, {60, 57}, {3, 3}, 2, 2, 2, TC_PADDING_CIRCULAR, 1},
};
#define NCC (int)(sizeof ccases / sizeof ccases[0])
static const char *const conv_solvers[] = {"cuda.conv.igemm", "cuda.conv.igemm-tf32",
                                           "cuda.conv.igemm-3xtf32",
                                           "cuda.conv.depthwise", "cuda.conv.winograd-f4",
                                           "cuda.conv.winograd-f2", "cuda.conv.winograd-f2-tf32",
                                           "cuda.conv.fft"};
#define NCS (int)(sizeof conv_solvers / sizeof conv_solvers[0])

/* generic = 1: the fp32 solvers with their generic kernels forced
 * (TILECONV_CUDA_CONV_GENERIC), so the fallbacks stay tested. TF32 solvers are
 * planned with TC_PLAN_ALLOW_TF32 and held to 5e-3 of max|ref| (ref.conv.loops
 * accumulates in double), Winograd to 1e-4, the others to 2e-5: the split-
 * precision cuda.conv.igemm-3xtf32 too (planned without TC_PLAN_ALLOW_TF32),
 * and to 4x cuda.conv.igemm's error on the same data (2e-6 where that is
 * below 5e-7); both errors printed ("  3xtf32 conv case"). */
/* set: the conv cases run that solver alone (TILECONV_TEST_CUDA_CONV_SOLVER=name:
 * sanitizer runs of one solver) */
static const char *conv_only_solver;
/* one conv case's problem: the descriptor, seeded inputs, and ref.conv.loops's
 * output (ref, ny elements; NULL after a failure, counted); free with
 * conv_data_free */
typedef struct cdata {
    tc_conv_desc d;
    int64_t nx, nw, ny;
    float *x, *w, *b, *ref;
} cdata;
static void conv_data_free(cdata *cd) {
    free(cd->x); free(cd->w); free(cd->b); free(cd->ref);
}
static int conv_data(int ci, cdata *cd) {
    const ccase *c = &ccases[ci];
    memset(cd, 0, sizeof *cd);
    tc_conv_desc d;
    tc_conv_desc_init(&d);
    d.nspatial = c->nsp;
    d.batch = c->N; d.in_channels = c->C; d.out_channels = c->K; d.groups = c->G;
    int64_t nx = c->N * c->C, nw = c->K * (c->C / c->G);
    for (int i = 0; i < c->nsp; i++) {
        d.in_size[i] = c->n[i]; d.kernel_size[i] = c->m[i];
        d.stride[i] = c->stride; d.dilation[i] = c->dil; d.padding[i] = c->pad;
        nx *= c->n[i];
        nw *= c->m[i];
    }
    d.padding_mode = c->pm;
    d.has_bias = c->bias;
    cd->d = d;
    th_rng r = th_rng_for(3000 + ci);
    cd->x = malloc(nx * 4); cd->w = malloc(nw * 4); cd->b = malloc(c->K * 4);
    fill(cd->x, nx, &r); fill(cd->w, nw, &r); fill(cd->b, c->K, &r);
    cd->nx = nx; cd->nw = nw;
    tc_plan_options ro;
    tc_plan_options_init(&ro);
    ro.algorithm = "ref.conv.loops";
    tc_plan *rp = NULL;
    if (tc_plan_conv(&rp, NULL, &cd->d, &ro) != TC_OK) {
        printf("ref.conv.loops plan failed: %s\n", tc_last_error());
        th_g.failed++;
        conv_data_free(cd);
        return 0;
    }
    int nd;
    int64_t os[TC_MAX_DIMS], ny = 1;
    tc_plan_output_shape(rp, &nd, os);
    for (int i = 0; i < nd; i++) ny *= os[i];
    cd->ny = ny;
    cd->ref = malloc(ny * 4);
    tc_execute_conv(rp, cd->ref, cd->x, cd->w, c->bias ? cd->b : NULL, NULL);
    tc_plan_destroy(rp);
    return 1;
}

/* wcl = 1: the weights K x mask x C/G (weight_layout channels-last), the
 * reference's from the K x C/G x mask ones; the CUDA solvers get them
 * reordered by the core (host or device staging) or read them directly
 * (TC__CAP_WEIGHTS_CL) */
static void run_conv_case(int ci, int device_ptrs, int generic, int wcl) {
    const ccase *c = &ccases[ci];
    cdata cd;
    if (!conv_data(ci, &cd)) return;
    tc_conv_desc d = cd.d;
    const int64_t nx = cd.nx, nw = cd.nw, ny = cd.ny;
    (void)nx; /* the device-pointer path's (CUDA builds) */
    (void)nw;
    float *x = cd.x, *w = cd.w, *b = cd.b, *ref = cd.ref, *y = malloc(ny * 4);
    float *wt = NULL;
    if (wcl) {
        d.weight_layout = TC_LAYOUT_CHANNELS_LAST;
        wt = malloc(nw * 4);
        wl_to_cl(wt, w, c->K, c->C / c->G, nw / (c->K * (c->C / c->G)), 4);
        w = wt;
    }
    if (generic) setenv("TILECONV_CUDA_CONV_GENERIC", "1", 1);
    double e_simt = -1; /* cuda.conv.igemm's error, for the 3xTF32 comparison */
    for (int s = 0; s < NCS; s++) {
        const int x3 = strstr(conv_solvers[s], "3xtf32") != NULL;
        const int tf32 = strstr(conv_solvers[s], "tf32") != NULL && !x3;
        if (generic && (tf32 || x3)) continue;
        if (conv_only_solver && strcmp(conv_solvers[s], conv_only_solver)) continue;
        tc_plan_options o;
        tc_plan_options_init(&o);
        o.algorithm = conv_solvers[s];
        if (tf32) o.flags |= TC_PLAN_ALLOW_TF32;
        tc_plan *pl = NULL;
        tc_status st = tc_plan_conv(&pl, NULL, &d, &o);
        if (st == TC_ERR_NOT_APPLICABLE) { n_na++; continue; }
        TH_BEGIN("%s%s conv case %d (%dD N%lld C%lld K%lld G%lld)%s %s", conv_solvers[s],
                 generic ? " (generic kernel)" : "", ci, c->nsp,
                 (long long)c->N, (long long)c->C, (long long)c->K, (long long)c->G,
                 wcl ? " weights channels_last" : "", device_ptrs ? "device-ptr" : "host-ptr");
        if (!CHECK_STATUS(st, TC_OK)) { TH_END(); continue; }
        for (int64_t i = 0; i < ny; i++) y[i] = NAN;
        int rc = -1;
#if TC_TEST_CUDA
        if (device_ptrs) {
            float *dx = NULL, *dw = NULL, *db = NULL, *dy = NULL;
            if (cudaMalloc((void **)&dx, nx * 4) == cudaSuccess &&
                cudaMalloc((void **)&dw, nw * 4) == cudaSuccess &&
                cudaMalloc((void **)&db, c->K * 4) == cudaSuccess &&
                cudaMalloc((void **)&dy, ny * 4) == cudaSuccess &&
                cudaMemcpy(dx, x, nx * 4, cudaMemcpyHostToDevice) == cudaSuccess &&
                cudaMemcpy(dw, w, nw * 4, cudaMemcpyHostToDevice) == cudaSuccess &&
                cudaMemcpy(db, b, c->K * 4, cudaMemcpyHostToDevice) == cudaSuccess) {
                const int gated = gate_shut();
                rc = tc_execute_conv(pl, dy, dx, dw, c->bias ? db : NULL, NULL);
                GATE_CHECK(gated);
                if (rc == TC_OK && (cudaDeviceSynchronize() != cudaSuccess ||
                                    cudaMemcpy(y, dy, ny * 4, cudaMemcpyDeviceToHost) != cudaSuccess))
                    rc = -1;
            }
            cudaFree(dx); cudaFree(dw); cudaFree(db); cudaFree(dy);
        } else
#endif
            rc = tc_execute_conv(pl, y, x, w, c->bias ? b : NULL, NULL);
        CHECK(rc == TC_OK, "execute: rc %d, %s", rc, tc_last_error());
        if (rc == TC_OK) {
            double dmax = 0, rmax = 0;
            int64_t bad = -1;
            for (int64_t i = 0; i < ny; i++) {
                double df = fabs((double)y[i] - ref[i]);
                if (!isfinite(y[i]) && bad < 0) bad = i;
                if (df > dmax) dmax = df;
                if (fabs(ref[i]) > rmax) rmax = fabs(ref[i]);
            }
            CHECK(bad < 0, "element %lld not written or not finite", (long long)bad);
            /* Winograd and FFT: the GPU bound of docs/semantics.md (1e-4) */
            double tol = tf32                                   ? 5e-3
                         : strstr(conv_solvers[s], "winograd") ||
                                 strstr(conv_solvers[s], "fft") ? 1e-4
                                                                : 2e-5;
            CHECK(dmax <= tol * (rmax > 1 ? rmax : 1), "rel err %.3g > %.0e",
                  dmax / (rmax > 0 ? rmax : 1), tol);
            if (th_g.verbose)
                printf("    %s case %d: rel err %.3g\n", conv_solvers[s], ci,
                       dmax / (rmax > 0 ? rmax : 1));
            const double rel = dmax / (rmax > 1 ? rmax : 1);
            if (!strcmp(conv_solvers[s], "cuda.conv.igemm")) e_simt = rel;
            if (x3 && e_simt >= 0) {
                if (!device_ptrs)
                    printf("  3xtf32 conv case %d (Rl %lld): rel err 3xtf32 %.3g, simt %.3g\n", ci,
                           (long long)(nw / c->K), rel, e_simt);
                CHECK(rel <= (e_simt < 5e-7 ? 2e-6 : 4 * e_simt),
                      "3xtf32 rel err %.3g against cuda.conv.igemm's %.3g", rel, e_simt);
            }
        }
        tc_plan_destroy(pl);
        TH_END();
    }
    if (generic) unsetenv("TILECONV_CUDA_CONV_GENERIC");
    conv_data_free(&cd);
    free(y);
    free(wt);
}

/* ---------------- staged problems: float16 / bfloat16, channels-last, epilogue ----
 * The CUDA conv, filter and gemm solvers run float32 channels-first
 * problems without the fused epilogue; for the others the core stages the
 * problem (src/core/stage.c on host arrays, src/cuda/cuda_stage.cu on
 * device arrays): operands converted to float32 / channels-first, the
 * solver run, and one output pass y = act(acc + residual) back to the
 * dtype and layout. Each solver forced on such problems, host and device
 * pointers (device calls behind the enqueue gate), against ref.conv.loops /
 * ref.gemm.loops, which run every dtype, layout and epilogue natively on the
 * same rounded inputs. Each output's error is measured against its
 * magnitude sum (the reference of |x|, |w|, |b| plus |residual|; for gemm
 * |alpha| |A| |B| + |beta| |C|): 1e-2 for bfloat16, 2e-3 for float16 (the
 * two outputs' roundings can differ by one unit in the last place, at most
 * 2^-7 / 2^-10 of that sum; the rest are float32 sums), float32 as
 * run_conv_case; TF32 solvers 5e-3, Winograd and FFT twice the half bound
 * (float32: five times). */
static void *to_dtype(const float *f, int64_t n, tc_dtype dt) {
    void *o = malloc((size_t)(n > 0 ? n : 1) * tc_dtype_size(dt));
    if (dt == TC_FLOAT16) tc_float_to_half(o, f, (size_t)n);
    else if (dt == TC_BFLOAT16) tc_float_to_bfloat16(o, f, (size_t)n);
    else memcpy(o, f, (size_t)n * 4); /* float32 */
    return o;
}
static void from_dtype(float *f, const void *src, int64_t n, tc_dtype dt) {
    if (dt == TC_FLOAT16) tc_half_to_float(f, src, (size_t)n);
    else if (dt == TC_BFLOAT16) tc_bfloat16_to_float(f, src, (size_t)n);
    else memcpy(f, src, (size_t)n * 4);
}
/* values rounded to dt, as float */
static void round_to(float *f, int64_t n, tc_dtype dt) {
    void *q = to_dtype(f, n, dt);
    from_dtype(f, q, n, dt);
    free(q);
}
static double half_tol(tc_dtype dt) { return dt == TC_BFLOAT16 ? 1e-2 : 2e-3; }
/* max over outputs of |y - ref| / mag (mag floored at 1e-3 of its largest);
 * *bad: first output not finite, or -1 */
static double mag_err(const float *y, const float *ref, const float *mag, int64_t n,
                      int64_t *bad) {
    double mmax = 0, e = 0;
    *bad = -1;
    for (int64_t i = 0; i < n; i++) mmax = mag[i] > mmax ? mag[i] : mmax;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(y[i])) {
            if (*bad < 0) *bad = i;
            continue;
        }
        double m = mag[i] > 1e-3 * mmax ? mag[i] : 1e-3 * mmax;
        double d = fabs((double)y[i] - (double)ref[i]) / (m > 0 ? m : 1);
        e = d > e ? d : e;
    }
    return e;
}

typedef struct svariant {
    tc_dtype dt;
    tc_layout layout;
    tc_activation act;
    int inplace; /* residual == y */
    int wcl;     /* weights K x mask x C/G (weight_layout channels-last) */
    int nores;   /* no residual */
} svariant;
static const svariant svariants[] = {
    {TC_FLOAT16, TC_LAYOUT_CHANNELS_LAST, TC_ACT_RELU, 0, 0, 0},
    {TC_BFLOAT16, TC_LAYOUT_CHANNELS_LAST, TC_ACT_RELU, 0, 0, 0},
    {TC_FLOAT32, TC_LAYOUT_CHANNELS_FIRST, TC_ACT_SILU, 1, 0, 0},
    /* channels-last weights: with the dtype and the epilogue staged, and
     * as the only staged pass (float32 channels-first, no epilogue) */
    {TC_FLOAT16, TC_LAYOUT_CHANNELS_FIRST, TC_ACT_TANH, 0, 1, 0},
    {TC_BFLOAT16, TC_LAYOUT_CHANNELS_LAST, TC_ACT_NONE, 1, 1, 0},
    {TC_FLOAT32, TC_LAYOUT_CHANNELS_FIRST, TC_ACT_NONE, 0, 1, 1},
};
#define NSV (int)(sizeof svariants / sizeof svariants[0])
/* layers every staged solver takes at least one of (3x3 stride 1 for
 * Winograd, depthwise, groups without bias, 3D, 1D with stride 2) */
static const ccase scases[] = {
    {2, 2, 5, 7, 1, {13, 11}, {3, 3}, 1, 1, 1, TC_PADDING_ZEROS, 1},
    {2, 2, 8, 8, 8, {15, 14}, {3, 3}, 1, 1, 1, TC_PADDING_REPLICATE, 1},
    {2, 2, 12, 18, 3, {11, 13}, {3, 3}, 1, 1, 1, TC_PADDING_CIRCULAR, 0},
    {3, 1, 4, 6, 1, {5, 6, 7}, {3, 3, 3}, 1, 1, 1, TC_PADDING_REFLECT, 1},
    {1, 2, 9, 11, 1, {70}, {5}, 2, 1, 2, TC_PADDING_ZEROS, 1},
};
#define NSC (int)(sizeof scases / sizeof scases[0])

/* one staged conv problem: the operands in the dtype (q*), as float (f*),
 * ref.conv.loops's output and the magnitude sums as float */
typedef struct sdata {
    tc_conv_desc d;
    int64_t nx, nw, ny, K;
    void *qx, *qw, *qb, *qr;
    float *ref, *mag;
} sdata;
static void sdata_free(sdata *s) {
    free(s->qx); free(s->qw); free(s->qb); free(s->qr); free(s->ref); free(s->mag);
}
static int sdata_make(int ci, const svariant *v, sdata *s) {
    const ccase *c = &scases[ci];
    memset(s, 0, sizeof *s);
    tc_conv_desc d;
    tc_conv_desc_init(&d);
    d.dtype = v->dt;
    d.nspatial = c->nsp;
    d.batch = c->N; d.in_channels = c->C; d.out_channels = c->K; d.groups = c->G;
    int64_t nx = c->N * c->C, nw = c->K * (c->C / c->G);
    for (int i = 0; i < c->nsp; i++) {
        d.in_size[i] = c->n[i]; d.kernel_size[i] = c->m[i];
        d.stride[i] = c->stride; d.dilation[i] = c->dil; d.padding[i] = c->pad;
        nx *= c->n[i];
        nw *= c->m[i];
    }
    d.padding_mode = c->pm;
    d.has_bias = c->bias;
    d.layout = v->layout;
    d.activation = v->act;
    d.has_residual = !v->nores;
    d.weight_layout = v->wcl ? TC_LAYOUT_CHANNELS_LAST : TC_LAYOUT_CHANNELS_FIRST;
    s->d = d;
    s->nx = nx; s->nw = nw; s->K = c->K;
    tc_plan_options ro;
    tc_plan_options_init(&ro);
    ro.algorithm = "ref.conv.loops";
    tc_plan *rp = NULL, *mp = NULL;
    tc_conv_desc rd = d; /* the reference: the weights K x C/G x mask */
    rd.weight_layout = TC_LAYOUT_CHANNELS_FIRST;
    tc_conv_desc md = rd; /* magnitudes: float32, same layout, no epilogue */
    md.dtype = TC_FLOAT32;
    md.activation = TC_ACT_NONE;
    md.has_residual = 0;
    if (tc_plan_conv(&rp, NULL, &rd, &ro) != TC_OK || tc_plan_conv(&mp, NULL, &md, &ro) != TC_OK) {
        printf("ref.conv.loops plan failed (staged case %d): %s\n", ci, tc_last_error());
        th_g.failed++;
        tc_plan_destroy(rp);
        return 0;
    }
    int nd;
    int64_t os[TC_MAX_DIMS], ny = 1;
    tc_plan_output_shape(rp, &nd, os);
    for (int i = 0; i < nd; i++) ny *= os[i];
    s->ny = ny;
    th_rng r = th_rng_for(7000 + ci * 8 + (uint64_t)(v - svariants));
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *b = malloc(c->K * 4), *res = malloc(ny * 4);
    fill(x, nx, &r); fill(w, nw, &r); fill(b, c->K, &r); fill(res, ny, &r);
    s->qx = to_dtype(x, nx, v->dt); s->qw = to_dtype(w, nw, v->dt);
    s->qb = to_dtype(b, c->K, v->dt); s->qr = to_dtype(res, ny, v->dt);
    round_to(x, nx, v->dt); round_to(w, nw, v->dt); round_to(b, c->K, v->dt);
    round_to(res, ny, v->dt);
    void *qy = malloc((size_t)ny * tc_dtype_size(v->dt));
    s->ref = malloc(ny * 4);
    s->mag = malloc(ny * 4);
    tc_status st = tc_execute_conv_residual(rp, qy, s->qx, s->qw, c->bias ? s->qb : NULL,
                                            v->nores ? NULL : s->qr, NULL);
    from_dtype(s->ref, qy, ny, v->dt);
    if (v->wcl) { /* what the solvers get: K x mask x C/G */
        const size_t es = tc_dtype_size(v->dt);
        void *qt = malloc((size_t)nw * es);
        wl_to_cl(qt, s->qw, c->K, c->C / c->G, nw / (c->K * (c->C / c->G)), es);
        free(s->qw);
        s->qw = qt;
    }
    for (int64_t i = 0; i < nx; i++) x[i] = fabsf(x[i]);
    for (int64_t i = 0; i < nw; i++) w[i] = fabsf(w[i]);
    for (int64_t i = 0; i < c->K; i++) b[i] = fabsf(b[i]);
    if (st == TC_OK) st = tc_execute_conv(mp, s->mag, x, w, c->bias ? b : NULL, NULL);
    for (int64_t i = 0; i < ny; i++) s->mag[i] += v->nores ? 0.f : fabsf(res[i]);
    free(x); free(w); free(b); free(res); free(qy);
    tc_plan_destroy(rp);
    tc_plan_destroy(mp);
    if (st != TC_OK) {
        printf("ref.conv.loops execute failed (staged case %d): %s\n", ci, tc_last_error());
        th_g.failed++;
        sdata_free(s);
        return 0;
    }
    return 1;
}

/* One execute of a staged conv plan into qy (ny elements of the dtype):
 * host or device pointers; own = 1: the plan's weights (set before). In
 * place: y starts as the residual and is passed as it. */
static int staged_conv_exec(const tc_plan *pl, const sdata *s, const svariant *v, int device_ptrs,
                            int own, void *qy) {
    const size_t es = tc_dtype_size(v->dt);
    const size_t xb = (size_t)s->nx * es, wb = (size_t)s->nw * es, bb = (size_t)s->K * es,
                 yb = (size_t)s->ny * es;
    const int bias = s->d.has_bias;
    if (v->inplace) memcpy(qy, s->qr, yb);
    else memset(qy, 0xff, yb); /* NaN in every dtype */
    if (!device_ptrs)
        return tc_execute_conv_residual(pl, qy, s->qx, own ? NULL : s->qw,
                                        own || !bias ? NULL : s->qb,
                                        v->nores ? NULL : v->inplace ? qy : s->qr, NULL);
    int rc = -1;
#if TC_TEST_CUDA
    void *dx = NULL, *dw = NULL, *db = NULL, *dy = NULL, *dr = NULL;
    if (cudaMalloc(&dx, xb) == cudaSuccess && cudaMalloc(&dw, wb) == cudaSuccess &&
        cudaMalloc(&db, bb) == cudaSuccess && cudaMalloc(&dy, yb) == cudaSuccess &&
        cudaMalloc(&dr, yb) == cudaSuccess &&
        cudaMemcpy(dx, s->qx, xb, cudaMemcpyHostToDevice) == cudaSuccess &&
        cudaMemcpy(dw, s->qw, wb, cudaMemcpyHostToDevice) == cudaSuccess &&
        cudaMemcpy(db, s->qb, bb, cudaMemcpyHostToDevice) == cudaSuccess &&
        cudaMemcpy(dr, s->qr, yb, cudaMemcpyHostToDevice) == cudaSuccess &&
        cudaMemcpy(dy, qy, yb, cudaMemcpyHostToDevice) == cudaSuccess) {
        /* the plan's weights are host memory: their copy waits, no gate */
        const int gated = !own && gate_shut();
        rc = tc_execute_conv_residual(pl, dy, dx, own ? NULL : dw, own || !bias ? NULL : db,
                                      v->nores ? NULL : v->inplace ? dy : dr, NULL);
        GATE_CHECK(gated);
        if (rc == TC_OK && (cudaDeviceSynchronize() != cudaSuccess ||
                            cudaMemcpy(qy, dy, yb, cudaMemcpyDeviceToHost) != cudaSuccess))
            rc = -1;
    }
    cudaFree(dx); cudaFree(dw); cudaFree(db); cudaFree(dy); cudaFree(dr);
#else
    (void)xb; (void)wb; (void)bb; (void)pl;
#endif
    return rc;
}

static void run_conv_staged(int ci, int vi, int device_ptrs) {
    const ccase *c = &scases[ci];
    const svariant *v = &svariants[vi];
    sdata s;
    if (!sdata_make(ci, v, &s)) return;
    const size_t es = tc_dtype_size(v->dt);
    void *qy = malloc((size_t)s.ny * es);
    float *y = malloc(s.ny * 4);
    for (int si = 0; si < NCS; si++) {
        const char *name = conv_solvers[si];
        if (conv_only_solver && strcmp(name, conv_only_solver)) continue;
        const int tf32 = strstr(name, "tf32") != NULL && !strstr(name, "3xtf32");
        const int approx = strstr(name, "winograd") || strstr(name, "fft");
        tc_plan_options o;
        tc_plan_options_init(&o);
        o.algorithm = name;
        if (tf32) o.flags |= TC_PLAN_ALLOW_TF32;
        tc_plan *pl = NULL;
        tc_status st = tc_plan_conv(&pl, NULL, &s.d, &o);
        if (st == TC_ERR_NOT_APPLICABLE) { n_na++; continue; }
        double tol = v->dt == TC_FLOAT32 ? 2e-5 : half_tol(v->dt);
        if (approx) tol *= v->dt == TC_FLOAT32 ? 5 : 2;
        if (tf32 && tol < 5e-3) tol = 5e-3;
        for (int own = 0; own < 2; own++) {
            TH_BEGIN("%s staged conv case %d (%dD N%lld C%lld K%lld G%lld) %s %s %s%s%s%s %s",
                     name, ci, c->nsp, (long long)c->N, (long long)c->C, (long long)c->K,
                     (long long)c->G, tc_dtype_name(v->dt), tc_layout_name(v->layout),
                     tc_activation_name(v->act),
                     v->nores ? "" : v->inplace ? " residual in place" : " residual",
                     v->wcl ? " weights channels_last" : "", own ? " plan weights" : "",
                     device_ptrs ? "device-ptr" : "host-ptr");
            if (!CHECK_STATUS(st, TC_OK)) { TH_END(); break; }
            CHECK(tc_plan_staging(pl)[0] != 0, "plan runs %s without staging", name);
            int rc = TC_OK;
            if (own) {
                rc = tc_plan_conv_set_weights(pl, s.qw, s.d.has_bias ? s.qb : NULL);
                CHECK(rc == TC_OK, "set weights: rc %d, %s", rc, tc_last_error());
            }
            if (rc == TC_OK) {
                rc = staged_conv_exec(pl, &s, v, device_ptrs, own, qy);
                CHECK(rc == TC_OK, "execute: rc %d, %s", rc, tc_last_error());
            }
            if (rc == TC_OK) {
                int64_t bad;
                from_dtype(y, qy, s.ny, v->dt);
                double e = mag_err(y, s.ref, s.mag, s.ny, &bad);
                CHECK(bad < 0, "element %lld not written or not finite", (long long)bad);
                CHECK(e <= tol, "err %.3g of the magnitude sum > %.0e", e, tol);
                if (th_g.verbose) printf("    %s staged case %d: err %.3g\n", name, ci, e);
            }
            TH_END();
        }
        tc_plan_destroy(pl);
    }
    free(qy);
    free(y);
    sdata_free(&s);
}

static void run_conv_staged_all(void) {
    for (int ci = 0; ci < NSC; ci++) {
        if (th_g.quick && ci >= 2) break;
        for (int vi = 0; vi < NSV; vi++) {
            run_conv_staged(ci, vi, 0);
#if TC_TEST_CUDA
            run_conv_staged(ci, vi, 1);
#endif
        }
    }
}

/* ---------------- cuda.conv.igemm-half: native float16 / bfloat16 ----------
 * The one CUDA solver that runs half-precision channels-last layers and the
 * fused epilogue itself (no staging): awkward layers (C/G not a multiple of
 * 8, K past one tile, 1x1, 1D, 3D, groups, stride, dilation) in both dtypes,
 * with and without a residual (in place too) and several activations, host
 * and device pointers (device calls behind the enqueue gate), every tile
 * configuration forced on one layer, against ref.conv.loops run natively on the
 * same rounded inputs; error as run_conv_staged (of the magnitude sum).
 * cuda.conv.igemm-half-halo (3x3, stride 1, C and K multiples of 64) runs
 * the cases it applies to (tiles across image ends, two channel chunks, a
 * tile spanning several small images, padding 0 and 1), with one and with
 * two shared-memory stages; cuda.conv.igemm-half-shifted (stride 1, C a
 * multiple of 8, one group or C/G a multiple of 64) the cases it applies to
 * (1D, 3D, dilation, groups, rows wider than a 128-position tile, a
 * partial last channel chunk, K past a tile; merged: the conv1-like case,
 * stride 2, C = 3, a strided 1D layer; 1x1 layers as GEMM rows; phases:
 * 3x3/2 and 1x1/2 with many channels, 3x3/2 with two channel chunks: four
 * phase patches in each of two buffers) in each tile configuration;
 * cuda.conv.igemm-half-stream (1x1 at stride 1, and the merged layers) the
 * cases it applies to (rows not a multiple of the tile, C = 40 / 64 / 128 /
 * 256, K = 64 / 72 / 128 / 136 / 192, 1D to 3D, two groups of 64
 * channels; strided 1x1: stride 2 and 3, several row blocks an image, rows
 * of 100 outputs, the 1x1/2 case above; the conv1-like merged
 * cases) in both tile configurations and with one and two blocks a slice of
 * output channels (many tiles a block: each ring's stages reused). */
static const ccase hcases[] = {
    {2, 2, 24, 40, 1, {13, 11}, {3, 3}, 1, 1, 1, TC_PADDING_ZEROS, 1},
    {2, 1, 3, 20, 1, {37, 41}, {7, 7}, 2, 1, 3, TC_PADDING_ZEROS, 1}, /* conv1-like */
    {2, 3, 12, 18, 3, {8, 9}, {3, 2}, 1, 2, 2, TC_PADDING_ZEROS, 1},  /* groups, dil */
    {2, 2, 64, 130, 1, {9, 10}, {3, 3}, 1, 1, 1, TC_PADDING_ZEROS, 0}, /* K > 128 */
    {2, 2, 40, 72, 1, {11, 13}, {1, 1}, 1, 1, 0, TC_PADDING_ZEROS, 1}, /* 1x1 */
    {3, 1, 16, 12, 1, {5, 6, 7}, {3, 3, 3}, 1, 1, 1, TC_PADDING_ZEROS, 1},
    {1, 2, 9, 11, 1, {70}, {5}, 2, 1, 2, TC_PADDING_ZEROS, 1},
    {2, 2, 64, 64, 1, {13, 21}, {3, 3}, 1, 1, 1, TC_PADDING_ZEROS, 1},   /* halo */
    {2, 3, 128, 128, 1, {17, 30}, {3, 3}, 1, 1, 0, TC_PADDING_ZEROS, 1}, /* halo, pad 0 */
    {2, 5, 64, 128, 1, {7, 9}, {3, 3}, 1, 1, 1, TC_PADDING_ZEROS, 0},    /* halo, small images */
    {2, 2, 32, 136, 1, {12, 12}, {3, 3}, 1, 1, 1, TC_PADDING_ZEROS, 1}, /* every tile config */
    {2, 2, 128, 96, 2, {9, 11}, {3, 3}, 1, 2, 2, TC_PADDING_ZEROS, 1},  /* shifted: groups, dil */
    {2, 1, 72, 40, 1, {5, 150}, {3, 5}, 1, 1, 2, TC_PADDING_ZEROS, 1},  /* shifted: wide rows */
    {1, 3, 16, 24, 1, {90}, {7}, 1, 1, 3, TC_PADDING_ZEROS, 0},         /* shifted: 1D */
    {2, 2, 8, 24, 1, {15, 17}, {3, 3}, 2, 1, 1, TC_PADDING_ZEROS, 1},   /* shifted merged: stride 2 */
    {2, 2, 3, 16, 1, {19, 23}, {5, 5}, 1, 1, 2, TC_PADDING_ZEROS, 0},   /* shifted merged: C = 3 */
    {2, 2, 256, 136, 1, {7, 7}, {1, 1}, 1, 1, 0, TC_PADDING_ZEROS, 1},  /* shifted 1x1: 4 chunks */
    {2, 2, 64, 72, 1, {15, 17}, {3, 3}, 2, 1, 1, TC_PADDING_ZEROS, 1},  /* shifted phases: 3x3/2 */
    {2, 2, 128, 40, 1, {14, 13}, {1, 1}, 2, 1, 0, TC_PADDING_ZEROS, 0}, /* shifted phases: 1x1/2 */
    {2, 1, 128, 40, 1, {15, 17}, {3, 3}, 2, 1, 1, TC_PADDING_ZEROS, 1}, /* shifted phases, 2 chunks */
    {2, 3, 256, 192, 1, {21, 23}, {1, 1}, 1, 1, 0, TC_PADDING_ZEROS, 1}, /* stream 1x1: K 192 */
    {3, 2, 64, 128, 1, {5, 9, 11}, {1, 1, 1}, 1, 1, 0, TC_PADDING_ZEROS, 0}, /* stream 1x1: 3D */
    {1, 2, 128, 64, 1, {300}, {1}, 1, 1, 0, TC_PADDING_ZEROS, 1},         /* stream 1x1: 1D */
    {2, 2, 128, 96, 2, {9, 11}, {1, 1}, 1, 1, 0, TC_PADDING_ZEROS, 1},    /* stream 1x1: groups */
    {2, 3, 256, 136, 1, {23, 29}, {1, 1}, 2, 1, 0, TC_PADDING_ZEROS, 1}, /* stream 1x1/2: row blocks */
    {2, 2, 64, 64, 1, {20, 31}, {1, 1}, 3, 1, 0, TC_PADDING_ZEROS, 1},    /* stream 1x1/3 */
    {2, 1, 64, 72, 1, {4, 200}, {1, 1}, 2, 1, 0, TC_PADDING_ZEROS, 0},    /* stream 1x1/2: rows of 100 */
    {2, 2, 3, 64, 1, {45, 39}, {7, 7}, 2, 1, 3, TC_PADDING_ZEROS, 1},   /* stream merged: conv1, K 64 */
    {2, 2, 192, 136, 1, {6, 7}, {3, 3}, 1, 1, 1, TC_PADDING_ZEROS, 1},  /* shifted split-k: 3 chunks, K > BN */
};
#define NHC (int)(sizeof hcases / sizeof hcases[0])
#define HC_ALLCFG 10 /* hcases' "every tile config" case */
typedef struct hvariant {
    tc_dtype dt;
    tc_activation act;
    int res; /* 0 none, 1 separate, 2 in place */
    int wcl; /* weights K x mask x C/G (weight_layout channels-last): read
                directly by a solver with TC__CAP_WEIGHTS_CL, else reordered
                by the core (the only staging the plan may then have) */
} hvariant;
static const hvariant hvariants[] = {
    {TC_FLOAT16, TC_ACT_RELU, 1, 0}, {TC_BFLOAT16, TC_ACT_GELU, 2, 1},
    {TC_FLOAT16, TC_ACT_NONE, 0, 1}, {TC_BFLOAT16, TC_ACT_SILU, 1, 0},
    {TC_FLOAT16, TC_ACT_TANH, 2, 0}, {TC_BFLOAT16, TC_ACT_RELU6, 0, 0},
};
#define NHV (int)(sizeof hvariants / sizeof hvariants[0])

static void run_conv_half_native(const char *name, int ci, int vi, const char *cfg) {
    const ccase *c = &hcases[ci];
    const hvariant *v = &hvariants[vi];
    tc_conv_desc d;
    tc_conv_desc_init(&d);
    d.dtype = v->dt;
    d.nspatial = c->nsp;
    d.batch = c->N; d.in_channels = c->C; d.out_channels = c->K; d.groups = c->G;
    int64_t nx = c->N * c->C, nw = c->K * (c->C / c->G);
    for (int i = 0; i < c->nsp; i++) {
        d.in_size[i] = c->n[i]; d.kernel_size[i] = c->m[i];
        d.stride[i] = c->stride; d.dilation[i] = c->dil; d.padding[i] = c->pad;
        nx *= c->n[i];
        nw *= c->m[i];
    }
    d.padding_mode = c->pm;
    d.has_bias = c->bias;
    d.layout = TC_LAYOUT_CHANNELS_LAST;
    d.activation = v->act;
    d.has_residual = v->res != 0;
    d.weight_layout = v->wcl ? TC_LAYOUT_CHANNELS_LAST : TC_LAYOUT_CHANNELS_FIRST;
    tc_conv_desc rd = d; /* the reference: the weights K x C/G x mask */
    rd.weight_layout = TC_LAYOUT_CHANNELS_FIRST;
    tc_plan_options ro, o;
    tc_plan_options_init(&ro);
    ro.algorithm = "ref.conv.loops";
    tc_plan_options_init(&o);
    o.algorithm = name;
    tc_plan *rp = NULL, *mp = NULL, *pl = NULL;
    /* cfg: the tile configuration, or the halo kernel's stages (set before
     * the applicability test: a configuration may not fit the layer) */
    const char *knob = !strcmp(name, "cuda.conv.igemm-half")       ? "TILECONV_CUDA_HALF_CFG"
                       : !strcmp(name, "cuda.conv.igemm-half-halo") ? "TILECONV_CUDA_HALF_HALO_STAGES"
                       : !strcmp(name, "cuda.conv.igemm-half-stream")
                           ? (cfg && cfg[0] == 'b' ? "TILECONV_CUDA_HALF_STREAM_BLOCKS"
                                                   : "TILECONV_CUDA_HALF_STREAM_CFG")
                           : "TILECONV_CUDA_HALF_SHIFTED_CFG";
    char cfgb[8] = "";
    const char *cfgv = cfg && cfg[0] == 'b' ? cfg + 1 : cfg; /* "b<n>": blocks a slice */
    /* the shifted kernel's "<cfg>k": that configuration split-k (two blocks a tile) */
    const int ks2 = cfg && !strcmp(name, "cuda.conv.igemm-half-shifted") && cfg[0] && cfg[1] == 'k';
    if (ks2) {
        cfgb[0] = cfg[0];
        cfgv = cfgb;
        setenv("TILECONV_CUDA_HALF_SHIFTED_KS", "2", 1);
    }
    if (cfg) setenv(knob, cfgv, 1);
    if (strcmp(name, "cuda.conv.igemm-half")) { /* the others: where they apply */
        if (tc_plan_conv(&pl, NULL, &d, &o) == TC_ERR_NOT_APPLICABLE) {
            n_na++;
            if (cfg) unsetenv(knob);
            if (ks2) unsetenv("TILECONV_CUDA_HALF_SHIFTED_KS");
            return;
        }
        tc_plan_destroy(pl);
        pl = NULL;
    }
    tc_conv_desc md = rd; /* magnitudes: float32, same layout, no epilogue */
    md.dtype = TC_FLOAT32;
    md.activation = TC_ACT_NONE;
    md.has_residual = 0;
    TH_BEGIN("%s case %d (%dD N%lld C%lld K%lld G%lld) %s %s%s%s%s", name, ci, c->nsp,
             (long long)c->N, (long long)c->C, (long long)c->K, (long long)c->G,
             tc_dtype_name(v->dt), tc_activation_name(v->act),
             v->res == 2 ? " residual in place" : v->res ? " residual" : "",
             v->wcl ? " weights channels_last" : "", cfg ? cfg : "");
    tc_status st = tc_plan_conv(&rp, NULL, &rd, &ro);
    if (st == TC_OK) st = tc_plan_conv(&mp, NULL, &md, &ro);
    CHECK(st == TC_OK, "ref.conv.loops plan: %s", tc_last_error());
    tc_status pst = tc_plan_conv(&pl, NULL, &d, &o);
    CHECK_STATUS(pst, TC_OK);
    if (st == TC_OK && pst == TC_OK) {
        /* channels-last weights: read directly (TC__CAP_WEIGHTS_CL) or
         * reordered by the core, nothing else staged */
        CHECK(tc_plan_staging(pl)[0] == 0 ||
                  (v->wcl && !strcmp(tc_plan_staging(pl), "weights channels_last->channels_first")),
              "%s staged: %s", name, tc_plan_staging(pl));
        int nd;
        int64_t os[TC_MAX_DIMS], ny = 1;
        tc_plan_output_shape(rp, &nd, os);
        for (int i = 0; i < nd; i++) ny *= os[i];
        const size_t es = tc_dtype_size(v->dt);
        th_rng r = th_rng_for(9000 + ci * 16 + vi);
        float *x = malloc(nx * 4), *w = malloc(nw * 4), *b = malloc(c->K * 4),
              *res = malloc(ny * 4), *ref = malloc(ny * 4), *mag = malloc(ny * 4),
              *y = malloc(ny * 4);
        fill(x, nx, &r); fill(w, nw, &r); fill(b, c->K, &r); fill(res, ny, &r);
        void *qx = to_dtype(x, nx, v->dt), *qw = to_dtype(w, nw, v->dt),
             *qb = to_dtype(b, c->K, v->dt), *qr = to_dtype(res, ny, v->dt);
        void *qref = malloc(ny * es), *qy = malloc(ny * es);
        round_to(x, nx, v->dt); round_to(w, nw, v->dt); round_to(b, c->K, v->dt);
        round_to(res, ny, v->dt);
        const void *qbias = c->bias ? qb : NULL;
        st = tc_execute_conv_residual(rp, qref, qx, qw, qbias, v->res ? qr : NULL, NULL);
        if (v->wcl) { /* what the solver gets: K x mask x C/G */
            void *qt = malloc((size_t)nw * es);
            wl_to_cl(qt, qw, c->K, c->C / c->G, nw / (c->K * (c->C / c->G)), es);
            free(qw);
            qw = qt;
        }
        for (int64_t i = 0; i < nx; i++) x[i] = fabsf(x[i]);
        for (int64_t i = 0; i < nw; i++) w[i] = fabsf(w[i]);
        for (int64_t i = 0; i < c->K; i++) b[i] = fabsf(b[i]);
        if (st == TC_OK) st = tc_execute_conv(mp, mag, x, w, c->bias ? b : NULL, NULL);
        CHECK(st == TC_OK, "ref.conv.loops execute: %s", tc_last_error());
        from_dtype(ref, qref, ny, v->dt);
        for (int64_t i = 0; i < ny; i++) mag[i] += v->res ? fabsf(res[i]) : 0.f;
        /* host, then device pointers; then both again with the plan's own
         * weights (packed once, held on the device); last, device pointers
         * with a host residual (staged beside the device y) */
        for (int it = 0; it < 4 + (v->res == 1) && st == TC_OK; it++) {
            const int dev = it == 4 || (it & 1), own = it >= 2;
            const size_t yb = (size_t)ny * es;
            if (it == 2) {
                tc_status wst = tc_plan_conv_set_weights(pl, qw, qbias);
                CHECK(wst == TC_OK, "set weights: %s", tc_last_error());
                if (wst != TC_OK) break;
            }
            if (v->res == 2) memcpy(qy, qr, yb);
            else memset(qy, 0xff, yb); /* NaN in both dtypes */
            int rc = -1;
            if (!dev) {
                rc = tc_execute_conv_residual(pl, qy, qx, own ? NULL : qw, own ? NULL : qbias,
                                              v->res == 2 ? qy : v->res ? qr : NULL, NULL);
            } else {
#if TC_TEST_CUDA
                void *dx = NULL, *dw = NULL, *db = NULL, *dy = NULL, *dr = NULL;
                if (cudaMalloc(&dx, nx * es) == cudaSuccess && cudaMalloc(&dw, nw * es) == cudaSuccess &&
                    cudaMalloc(&db, c->K * es) == cudaSuccess && cudaMalloc(&dy, yb) == cudaSuccess &&
                    cudaMalloc(&dr, yb) == cudaSuccess &&
                    cudaMemcpy(dx, qx, nx * es, cudaMemcpyHostToDevice) == cudaSuccess &&
                    cudaMemcpy(dw, qw, nw * es, cudaMemcpyHostToDevice) == cudaSuccess &&
                    cudaMemcpy(db, qb, c->K * es, cudaMemcpyHostToDevice) == cudaSuccess &&
                    cudaMemcpy(dr, qr, yb, cudaMemcpyHostToDevice) == cudaSuccess &&
                    cudaMemcpy(dy, qy, yb, cudaMemcpyHostToDevice) == cudaSuccess) {
                    /* a host residual is copied in synchronously: no gate */
                    const int gated = it < 4 && gate_shut();
                    rc = tc_execute_conv_residual(pl, dy, dx, own ? NULL : dw,
                                                  own || !c->bias ? NULL : db,
                                                  v->res == 2 ? dy : v->res ? (it == 4 ? qr : dr) : NULL,
                                                  NULL);
                    GATE_CHECK(gated);
                    if (rc == TC_OK && (cudaDeviceSynchronize() != cudaSuccess ||
                                        cudaMemcpy(qy, dy, yb, cudaMemcpyDeviceToHost) != cudaSuccess))
                        rc = -1;
                }
                cudaFree(dx); cudaFree(dw); cudaFree(db); cudaFree(dy); cudaFree(dr);
#else
                continue;
#endif
            }
            const char *how = it == 0   ? "host"
                              : it == 1 ? "device"
                              : it == 2 ? "host, plan weights"
                              : it == 3 ? "device, plan weights"
                                        : "device, plan weights, host residual";
            CHECK(rc == TC_OK, "execute (%s pointers): rc %d, %s", how, rc, tc_last_error());
            if (rc != TC_OK) continue;
            int64_t bad;
            from_dtype(y, qy, ny, v->dt);
            double e = mag_err(y, ref, mag, ny, &bad);
            CHECK(bad < 0, "%s pointers: element %lld not written or not finite", how,
                  (long long)bad);
            CHECK(e <= half_tol(v->dt), "%s pointers: err %.3g of the magnitude sum > %.0e", how,
                  e, half_tol(v->dt));
            if (th_g.verbose) printf("    %s case %d %s: err %.3g\n", name, ci, how, e);
        }
        free(x); free(w); free(b); free(res); free(ref); free(mag); free(y);
        free(qx); free(qw); free(qb); free(qr); free(qref); free(qy);
    }
    TH_END();
    if (cfg) unsetenv(knob);
    if (ks2) unsetenv("TILECONV_CUDA_HALF_SHIFTED_KS");
    tc_plan_destroy(rp);
    tc_plan_destroy(mp);
    tc_plan_destroy(pl);
}

static void run_conv_half_native_all(void) {
    static const char *const names[] = {"cuda.conv.igemm-half", "cuda.conv.igemm-half-halo",
                                        "cuda.conv.igemm-half-shifted", "cuda.conv.igemm-half-stream"};
    if (conv_only_solver && strcmp(conv_only_solver, names[0]) && strcmp(conv_only_solver, names[1]) &&
        strcmp(conv_only_solver, names[2]) && strcmp(conv_only_solver, names[3]))
        return;
    tc_plan_options o;
    tc_plan_options_init(&o);
    o.algorithm = "cuda.conv.igemm-half";
    tc_conv_desc d;
    tc_conv_desc_init(&d);
    d.dtype = TC_FLOAT16;
    d.layout = TC_LAYOUT_CHANNELS_LAST;
    d.nspatial = 2; d.batch = 1; d.in_channels = 8; d.out_channels = 8;
    d.in_size[0] = d.in_size[1] = 8; d.kernel_size[0] = d.kernel_size[1] = 3;
    tc_plan *pl = NULL;
    if (tc_plan_conv(&pl, NULL, &d, &o) == TC_ERR_NOT_APPLICABLE) { /* not Hopper's sm_90a */
        printf("cuda.conv.igemm-half not applicable here: %s\n", tc_last_error());
        n_na++;
        return;
    }
    tc_plan_destroy(pl);
    for (int si = 0; si < 4; si++) {
        if (conv_only_solver && strcmp(conv_only_solver, names[si])) continue;
        const long na0 = n_na;
        long calls = 0;
        for (int ci = 0; ci < NHC; ci++)
            for (int vi = 0; vi < NHV; vi++) {
                if (th_g.quick && (ci + vi) % 3) continue;
                calls += ci == HC_ALLCFG && si == 0 ? 3 : si == 1 ? 2 : si == 2 ? 8 : si == 3 ? 4 : 1; /* runs below */
                if (ci == HC_ALLCFG && si == 0) { /* every tile configuration */
                    static const char *const cfgs[] = {"0", "1", "2"};
                    for (int k = 0; k < 3; k++) run_conv_half_native(names[si], ci, vi, cfgs[k]);
                } else if (si == 2) { /* every tile configuration that fits (0-3), each
                                         also split-k where the layer has two chunks or more */
                    static const char *const cfgs[] = {"0", "1", "2", "3", "0k", "1k", "2k", "3k"};
                    for (int k = 0; k < 8; k++) run_conv_half_native(names[si], ci, vi, cfgs[k]);
                } else if (si == 3) { /* both tile configurations; one and two
                                         blocks a slice (many tiles a block: each
                                         ring's stages reused across tiles) */
                    static const char *const cfgs[] = {"0", "1", "b1", "b2"};
                    for (int k = 0; k < 4; k++) run_conv_half_native(names[si], ci, vi, cfgs[k]);
                } else if (si == 1) { /* one and two stages */
                    run_conv_half_native(names[si], ci, vi, "1");
                    run_conv_half_native(names[si], ci, vi, "2");
                } else {
                    run_conv_half_native(names[si], ci, vi, NULL);
                }
            }
        TH_BEGIN("%s applies to some of the cases", names[si]);
        CHECK(n_na - na0 < calls, "%s applied to none of its cases", names[si]);
        TH_END();
    }
}

/* float16 filters (dense arrays: strided device arrays are refused), the
 * CUDA filter solvers forced, against ref.conv.loops in float16; error against
 * max|x| * sum|m| (2e-3) */
static const fcase hfcases[] = {
    {1, 1, {1000}, {3}, 0, TC_OUTPUT_SAME, 0},
    {1, 3, {4099}, {31}, 0, TC_OUTPUT_SAME, -7},
    {2, 1, {67, 131}, {3, 3}, 0, TC_OUTPUT_SAME, 0},
    {2, 2, {130, 257}, {5, 5}, 1, TC_OUTPUT_SAME, 0},
    {2, 1, {64, 70}, {11, 11}, 0, TC_OUTPUT_FULL, 0},
    {3, 1, {17, 33, 130}, {3, 3, 3}, 0, TC_OUTPUT_SAME, 0},
};
#define NHF (int)(sizeof hfcases / sizeof hfcases[0])
static void run_filter_half(int ci, int device_ptrs) {
    const fcase *c = &hfcases[ci];
    const tc_dtype dt = TC_FLOAT16;
    tc_filter_desc d;
    tc_filter_desc_init(&d);
    d.dtype = dt;
    fcase_shape(c, &d);
    d.kind = ci % 2 ? TC_FILTER_CONVOLVE : TC_FILTER_CORRELATE;
    if (c->out == TC_OUTPUT_SAME) {
        d.mode = ci % 2 ? TC_MODE_REFLECT : TC_MODE_CONSTANT;
        d.cval = 0.375;
        d.origin[c->nsp - 1] = c->origin0;
    }
    th_rng r = th_rng_for((uint64_t)(8000 + ci * 2 + device_ptrs));
    int64_t nx = 1, nm = 1;
    for (int i = 0; i < d.ndim; i++) nx *= d.shape[i];
    for (int i = 0; i < c->nsp; i++) nm *= c->mask[i];
    float *x = malloc(nx * 4), *m = malloc(nm * 4);
    fill(x, nx, &r);
    make_mask(c, m, &r);
    round_to(x, nx, dt);
    round_to(m, nm, dt);
    void *qx = to_dtype(x, nx, dt), *qm = to_dtype(m, nm, dt);
    double xmax = 0.375, msum = 0;
    for (int64_t i = 0; i < nx; i++) xmax = fabs(x[i]) > xmax ? fabs(x[i]) : xmax;
    for (int64_t i = 0; i < nm; i++) msum += fabs(m[i]);
    tc_plan_options ro;
    tc_plan_options_init(&ro);
    ro.algorithm = "ref.conv.loops";
    tc_plan *rp = NULL;
    if (tc_plan_filter(&rp, NULL, &d, qm, &ro) != TC_OK) {
        printf("ref.conv.loops float16 filter plan failed (case %d): %s\n", ci, tc_last_error());
        th_g.failed++;
        free(x); free(m); free(qx); free(qm);
        return;
    }
    int ond;
    int64_t osh[TC_MAX_DIMS], ny = 1;
    tc_plan_output_shape(rp, &ond, osh);
    for (int i = 0; i < ond; i++) ny *= osh[i];
    void *qref = malloc(ny * 2), *qy = malloc(ny * 2);
    float *ref = malloc(ny * 4), *y = malloc(ny * 4);
    tc_execute_filter(rp, qref, qx, NULL);
    tc_plan_destroy(rp);
    from_dtype(ref, qref, ny, dt);
    for (int s = 0; s < NFS; s++) {
        tc_plan_options o;
        tc_plan_options_init(&o);
        o.algorithm = filter_solvers[s];
        tc_plan *pl = NULL;
        tc_status st = tc_plan_filter(&pl, NULL, &d, qm, &o);
        if (st == TC_ERR_NOT_APPLICABLE) { n_na++; continue; }
        TH_BEGIN("%s float16 %dD case %d (%lld..x%lld, mask %lld..x%lld) %s", filter_solvers[s],
                 c->nsp, ci, (long long)c->shape[0], (long long)c->shape[c->nsp - 1],
                 (long long)c->mask[0], (long long)c->mask[c->nsp - 1],
                 device_ptrs ? "device-ptr" : "host-ptr");
        if (!CHECK_STATUS(st, TC_OK)) { TH_END(); continue; }
        memset(qy, 0xff, ny * 2);
        int rc = -1;
#if TC_TEST_CUDA
        if (device_ptrs) {
            void *dx = NULL, *dy = NULL;
            if (cudaMalloc(&dx, nx * 2) == cudaSuccess && cudaMalloc(&dy, ny * 2) == cudaSuccess &&
                cudaMemcpy(dx, qx, nx * 2, cudaMemcpyHostToDevice) == cudaSuccess &&
                cudaMemset(dy, 0xff, ny * 2) == cudaSuccess) {
                const int gated = !strstr(filter_solvers[s], ".seed-") && gate_shut();
                rc = tc_execute_filter(pl, dy, dx, NULL);
                GATE_CHECK(gated);
                if (rc == TC_OK && (cudaDeviceSynchronize() != cudaSuccess ||
                                    cudaMemcpy(qy, dy, ny * 2, cudaMemcpyDeviceToHost) != cudaSuccess))
                    rc = -1;
            }
            cudaFree(dx); cudaFree(dy);
        } else
#endif
            rc = tc_execute_filter(pl, qy, qx, NULL);
        CHECK(rc == TC_OK, "execute: rc %d, %s", rc, tc_last_error());
        if (rc == TC_OK) {
            from_dtype(y, qy, ny, dt);
            double dmax = 0;
            int64_t bad = -1;
            for (int64_t i = 0; i < ny; i++) {
                if (!isfinite(y[i])) { if (bad < 0) bad = i; continue; }
                double df = fabs((double)y[i] - ref[i]);
                dmax = df > dmax ? df : dmax;
            }
            double e = dmax / (xmax * msum);
            CHECK(bad < 0, "element %lld not written or not finite", (long long)bad);
            CHECK(e <= 2e-3, "err %.3g of max|x| sum|m| > 2e-3", e);
        }
        tc_plan_destroy(pl);
        TH_END();
    }
    free(x); free(m); free(qx); free(qm); free(qref); free(qy); free(ref); free(y);
}
static void run_filter_half_all(void) {
    for (int ci = 0; ci < NHF; ci++) {
        if (th_g.quick && ci % 2) continue;
        run_filter_half(ci, 0);
#if TC_TEST_CUDA
        run_filter_half(ci, 1);
#endif
    }
}

/* ---------------- cuda.filter.direct-half: native float16 / bfloat16 filters ----
 * The filter case table (fcases: every mode, full / valid, host and device
 * pointers) and hnfcases (rows of a multiple of 8 elements: the 16-byte
 * cp.async windows and stores, several tiles a persistent block, 3D chunks
 * of several planes; grids past 65535 blocks on y or z), in float16 and
 * bfloat16, against ref.conv.loops in float64 on the same rounded inputs.
 * Bound per element (docs/semantics.md "Element types": float32 sums, one
 * rounding of the output):
 * |y - y64| <= u |y64| + (1 + u) e32, u = 2^-11 (float16) or 2^-8
 * (bfloat16), e32 = 4e-6 max|x| sum|m| (times sqrt(taps / 64) past 64
 * taps), the float32 sum's bound of run_filter_case. hnfcases also run on
 * device pointers one element past a 16-byte boundary (vec_in / vec_out
 * off: element loads and stores on rows of a multiple of 8), the elements
 * just before and after y checked untouched. Constant mode takes cval
 * 0.375 (held by both dtypes: the fast kernels) on even cases and 0.1
 * (held by neither: the generic kernel) on odd ones. */
static const fcase hnfcases[] = {
    {2, 2, {100, 264}, {3, 3}, 0, TC_OUTPUT_SAME, 0},
    {2, 1, {70, 520}, {5, 5}, 0, TC_OUTPUT_SAME, 1},
    {2, 2, {45, 512}, {7, 7}, 0, TC_OUTPUT_SAME, -2},
    {2, 2, {1030, 2056}, {3, 3}, 0, TC_OUTPUT_SAME, 0}, /* several tiles a block */
    {3, 1, {9, 40, 264}, {3, 3, 3}, 0, TC_OUTPUT_SAME, 0},
    {3, 1, {16, 512, 1024}, {3, 3, 3}, 0, TC_OUTPUT_SAME, 0}, /* chunks of 2+ planes */
    {1, 3, {20000}, {3}, 0, TC_OUTPUT_SAME, 0},
    {1, 1, {4104}, {31}, 0, TC_OUTPUT_SAME, 5},
    {1, 1, {8192}, {15}, 0, TC_OUTPUT_FULL, 0},
    {2, 1, {64, 136}, {1, 9}, 0, TC_OUTPUT_SAME, 0},
    {3, 2, {6, 16, 512}, {1, 5, 5}, 0, TC_OUTPUT_SAME, 0},
    /* slots refilled after they were computed (the barrier that ends each
     * tile or plane): ~10 1D and ~5 2D tiles a block (3 blocks an SM), ring
     * chunks of 7 planes in 4 slots (528 xy tiles: one chunk a tile); the
     * 2D tiles (12) and the ring (15) run in quick mode too. Grids past
     * 65535 blocks (TC__CU_FOR_GRID's split; batch 1: host arrays are not
     * chunked): generic 75000 row blocks, generic 66000 planes, the ring's
     * 65537 row tiles */
    {2, 1, {4000, 264}, {1, 3}, 0, TC_OUTPUT_SAME, 0},
    {2, 1, {64000, 8}, {3, 3}, 0, TC_OUTPUT_SAME, 0},
    {2, 1, {600000, 3}, {2, 2}, 0, TC_OUTPUT_SAME, 0},
    {3, 1, {66000, 1, 1}, {2, 1, 1}, 0, TC_OUTPUT_SAME, 0},
    {3, 1, {7, 16896, 8}, {3, 3, 3}, 0, TC_OUTPUT_SAME, 0},
    {3, 1, {1, 2097160, 1}, {3, 3, 3}, 0, TC_OUTPUT_SAME, 0},
    /* full / valid outputs on the 2D and 3D fast kernels (pad 4, 0, 2, 0;
     * 16-byte input rows on the first and last, output rows on the others) */
    {2, 1, {45, 296}, {5, 5}, 0, TC_OUTPUT_FULL, 0},
    {2, 1, {40, 262}, {7, 7}, 0, TC_OUTPUT_VALID, 0},
    {3, 1, {5, 20, 38}, {3, 3, 3}, 0, TC_OUTPUT_FULL, 0},
    {3, 1, {9, 20, 40}, {3, 3, 3}, 0, TC_OUTPUT_VALID, 0},
};
#define NHNF (int)(sizeof hnfcases / sizeof hnfcases[0])

/* The element-wise bound on qy (dtype dt) against the float64 reference */
static void check_half_native(const void *qy, const double *ref, int64_t ny, tc_dtype dt, double e32) {
    const double u = dt == TC_BFLOAT16 ? 1.0 / 256 : 1.0 / 2048;
    float *y = malloc((size_t)(ny > 0 ? ny : 1) * 4);
    from_dtype(y, qy, ny, dt);
    int64_t bad = -1, wi = 0;
    double worst = 0, wdf = 0, wtol = 0;
    for (int64_t i = 0; i < ny; i++) {
        if (!isfinite(y[i])) { bad = i; break; }
        const double df = fabs((double)y[i] - ref[i]), tol = u * fabs(ref[i]) + (1 + u) * e32;
        if (df > worst * tol) { worst = df / tol; wi = i; wdf = df; wtol = tol; }
    }
    CHECK(bad < 0, "element %lld not written or not finite", (long long)bad);
    CHECK(bad >= 0 || worst <= 1, "element %lld: |y - y64| %.3g > bound %.3g (y64 %.6g)", (long long)wi,
          wdf, wtol, ny > 0 ? ref[wi] : 0.0);
    free(y);
}

static void run_filter_half_native(const fcase *c, int ci, int mi, tc_dtype dt, int main_table) {
    tc_filter_desc d;
    tc_filter_desc_init(&d);
    fcase_shape(c, &d);
    d.kind = (ci + mi) % 2 ? TC_FILTER_CONVOLVE : TC_FILTER_CORRELATE;
    if (c->out == TC_OUTPUT_SAME) {
        d.mode = modes[mi];
        d.cval = ci % 2 ? 0.1 : 0.375;
        d.origin[c->nsp - 1] = c->origin0;
    } else if (mi != 0) {
        return;
    }
    th_rng r = th_rng_for((uint64_t)(90000 + main_table * 7000 + ci * 131 + mi * 7 + (dt == TC_BFLOAT16)));
    int64_t nx = 1, nm = 1;
    for (int i = 0; i < d.ndim; i++) nx *= d.shape[i];
    for (int i = 0; i < c->nsp; i++) nm *= c->mask[i];
    float *x = malloc((size_t)nx * 4), *m = malloc((size_t)nm * 4);
    fill(x, nx, &r);
    make_mask(c, m, &r);
    round_to(x, nx, dt);
    round_to(m, nm, dt);
    void *qx = to_dtype(x, nx, dt), *qm = to_dtype(m, nm, dt);
    double *x64 = malloc((size_t)nx * 8), *m64 = malloc((size_t)nm * 8);
    double xmax = d.mode == TC_MODE_CONSTANT ? fabs(d.cval) : 0, msum = 0;
    for (int64_t i = 0; i < nx; i++) { x64[i] = x[i]; xmax = fmax(xmax, fabs(x64[i])); }
    for (int64_t i = 0; i < nm; i++) { m64[i] = m[i]; msum += fabs(m64[i]); }
    const double e32 = 4e-6 * (nm > 64 ? sqrt((double)nm / 64) : 1) * xmax * msum;
    tc_filter_desc d64 = d;
    d64.dtype = TC_FLOAT64;
    d.dtype = dt;
    tc_plan_options o;
    tc_plan_options_init(&o);
    o.algorithm = "ref.conv.loops";
    tc_plan *rp = NULL, *pl = NULL;
    double *ref = NULL;
    void *qy = NULL;
    int64_t ny = 1;
    if (tc_plan_filter(&rp, NULL, &d64, m64, &o) != TC_OK) {
        printf("ref.conv.loops float64 plan failed (half-native case %d): %s\n", ci, tc_last_error());
        th_g.failed++;
        goto out;
    }
    int ond;
    int64_t osh[TC_MAX_DIMS];
    tc_plan_output_shape(rp, &ond, osh);
    for (int i = 0; i < ond; i++) ny *= osh[i];
    ref = malloc((size_t)ny * 8);
    qy = malloc((size_t)ny * 2);
    tc_execute_filter(rp, ref, x64, NULL);
    o.algorithm = "cuda.filter.direct-half";
    const tc_status st = tc_plan_filter(&pl, NULL, &d, qm, &o);
    const int swap = c->out == TC_OUTPUT_VALID && c->mask[c->nsp - 1] > c->shape[c->nsp - 1];
    for (int dev = 0; dev < 3; dev++) { /* host, device, device + 1 element (2-byte aligned) */
#if !TC_TEST_CUDA
        if (dev) break;
#endif
        if (dev && swap) break; /* the core packs the caller's input on the host */
        if (dev == 2 && main_table) break;
        TH_BEGIN("cuda.filter.direct-half %s %dD %s case %d (%lld..x%lld, mask %lld..x%lld) %s %s%s %s",
                 tc_dtype_name(dt), c->nsp, main_table ? "fcases" : "hnfcases", ci,
                 (long long)c->shape[0], (long long)c->shape[c->nsp - 1], (long long)c->mask[0],
                 (long long)c->mask[c->nsp - 1],
                 c->out == TC_OUTPUT_SAME ? tc_mode_name(d.mode)
                                          : c->out == TC_OUTPUT_FULL ? "full" : "valid",
                 d.kind == TC_FILTER_CONVOLVE ? "convolve" : "correlate",
                 d.mode == TC_MODE_CONSTANT && c->out == TC_OUTPUT_SAME ? (ci % 2 ? " cval 0.1" : " cval 0.375") : "",
                 dev == 2 ? "device-ptr+2B" : dev ? "device-ptr" : "host-ptr");
        if (!CHECK_STATUS(st, TC_OK)) { TH_END(); break; }
        memset(qy, 0xff, (size_t)ny * 2); /* NaN in both dtypes */
        int rc = -1;
#if TC_TEST_CUDA
        if (dev) {
            void *dx = NULL, *dy = NULL;
            const size_t o1 = dev == 2; /* guard elements before and after the arrays */
            uint16_t guard[2] = {0xffff, 0xffff};
            if (cudaMalloc(&dx, (size_t)(nx + 2 * o1) * 2) == cudaSuccess &&
                cudaMalloc(&dy, (size_t)(ny + 2 * o1) * 2) == cudaSuccess &&
                cudaMemcpy((char *)dx + 2 * o1, qx, (size_t)nx * 2, cudaMemcpyHostToDevice) == cudaSuccess &&
                cudaMemset(dy, 0xff, (size_t)(ny + 2 * o1) * 2) == cudaSuccess) {
                const int gated = gate_shut();
                rc = tc_execute_filter(pl, (char *)dy + 2 * o1, (char *)dx + 2 * o1, NULL);
                GATE_CHECK(gated);
                if (rc == TC_OK && (cudaDeviceSynchronize() != cudaSuccess ||
                                    cudaMemcpy(qy, (char *)dy + 2 * o1, (size_t)ny * 2,
                                               cudaMemcpyDeviceToHost) != cudaSuccess ||
                                    (o1 && (cudaMemcpy(&guard[0], dy, 2, cudaMemcpyDeviceToHost) != cudaSuccess ||
                                            cudaMemcpy(&guard[1], (char *)dy + 2 * (ny + 1), 2,
                                                       cudaMemcpyDeviceToHost) != cudaSuccess))))
                    rc = -1;
                CHECK(guard[0] == 0xffff && guard[1] == 0xffff, "written outside y: %04x before, %04x after",
                      guard[0], guard[1]);
            }
            cudaFree(dx);
            cudaFree(dy);
        } else
#endif
            rc = tc_execute_filter(pl, qy, qx, NULL);
        CHECK(rc == TC_OK, "execute: rc %d, %s", rc, tc_last_error());
        if (rc == TC_OK) check_half_native(qy, ref, ny, dt, e32);
        TH_END();
    }
out:
    tc_plan_destroy(rp);
    tc_plan_destroy(pl);
    free(x); free(m); free(qx); free(qm); free(x64); free(m64); free(ref); free(qy);
}

static void run_filter_half_native_all(void) {
    for (int t = 0; t < 2; t++) {
        const int nc = t ? NFC : NHNF;
        for (int dti = 0; dti < 2; dti++)
            for (int ci = 0; ci < nc; ci++) {
                const fcase *c = t ? &fcases[ci] : &hnfcases[ci];
                int64_t n = c->batch;
                for (int i = 0; i < c->nsp; i++) n *= c->shape[i];
                for (int mi = 0; mi < 5; mi++) {
                    if (th_g.quick && (ci % 3 || mi % 2)) continue;
                    if (n > (1 << 21) && mi % 2) continue; /* large: constant, reflect, wrap */
                    run_filter_half_native(c, ci, mi, dti ? TC_BFLOAT16 : TC_FLOAT16, t);
                }
            }
    }
    /* the 3D plane ring's tuning forms on the 3D cases of both tables (the
     * half table's rows are 16-byte aligned: the cp.async and edge-chunk
     * paths), three modes each: 2 rows a thread (TILECONV_CUDA_HALF_RING_RY=2,
     * float16), two input planes ahead (_AHEAD=2, bfloat16: chunks of one
     * plane to many), the full edge map in both types (_EDGE=0; the
     * deferred edge column is the default), the modes other than constant
     * the edge form applies to */
    static const struct {
        const char *knob, *val;
        int m0, dm;
        tc_dtype dt;
    } forms[] = {{"TILECONV_CUDA_HALF_RING_RY", "2", 0, 2, TC_FLOAT16},
                 {"TILECONV_CUDA_HALF_RING_AHEAD", "2", 1, 2, TC_BFLOAT16},
                 {"TILECONV_CUDA_HALF_RING_EDGE", "0", 1, 1, TC_BFLOAT16},
                 {"TILECONV_CUDA_HALF_RING_EDGE", "0", 1, 1, TC_FLOAT16}};
    for (int f = 0; f < (int)(sizeof forms / sizeof forms[0]); f++) {
        setenv(forms[f].knob, forms[f].val, 1);
        for (int t = 0; t < 2; t++) {
            const int nc = t ? NFC : NHNF;
            for (int ci = 0; ci < nc; ci++) {
                const fcase *c = t ? &fcases[ci] : &hnfcases[ci];
                if (c->nsp != 3 || (th_g.quick && ci % 3)) continue;
                const int64_t n = c->batch * c->shape[0] * c->shape[1] * c->shape[2];
                for (int mi = forms[f].m0; mi < 5; mi += forms[f].dm)
                    if (n <= (1 << 21) || mi == forms[f].m0 + forms[f].dm) /* large: one mode */
                        run_filter_half_native(c, ci, mi, forms[f].dt, t);
            }
        }
        unsetenv(forms[f].knob);
    }
}

/* float16 GEMM (cuda.gemm.simt, cuda.gemm.wgmma-tf32: A, B and C staged to float32
 * with their row strides), against ref.gemm.loops in float16; error against
 * |alpha| |A| |B| + |beta| |C| (2e-3); C's padding columns untouched */
static const gcase hgcases[] = {
    {17, 33, 9, 0, 0, 0, 1, 0},
    {65, 97, 41, 1, 1, 3, -1.5, 2},
    {257, 129, 300, 0, 0, 4, 1, 0.5},
    {131, 260, 100, 0, 1, 0, 1, 0},
};
#define NHG (int)(sizeof hgcases / sizeof hgcases[0])
static void run_gemm_half(int gi, int device_ptrs) {
    const gcase *c = &hgcases[gi];
    const tc_dtype dt = TC_FLOAT16;
    tc_gemm_desc d;
    tc_gemm_desc_init(&d);
    d.dtype = dt;
    d.m = c->m; d.n = c->n; d.k = c->k;
    d.trans_a = c->ta; d.trans_b = c->tb;
    int64_t ar = c->ta ? c->k : c->m, ac = c->ta ? c->m : c->k;
    int64_t br = c->tb ? c->n : c->k, bc = c->tb ? c->k : c->n;
    d.lda = ac + c->pad; d.ldb = bc + c->pad; d.ldc = c->n + c->pad;
    d.alpha = c->alpha; d.beta = c->beta;
    int64_t na = ar * d.lda, nb = br * d.ldb, nc = c->m * d.ldc;
    th_rng r = th_rng_for(9000 + gi);
    float *A = malloc(na * 4), *B = malloc(nb * 4), *C0 = malloc(nc * 4), *mag = malloc(nc * 4),
          *ref = malloc(nc * 4), *C = malloc(nc * 4);
    fill(A, na, &r); fill(B, nb, &r); fill(C0, nc, &r);
    if (c->beta == 0) for (int64_t i = 0; i < nc; i++) C0[i] = NAN; /* must not be read */
    round_to(A, na, dt); round_to(B, nb, dt); round_to(C0, nc, dt);
    uint16_t *qA = to_dtype(A, na, dt), *qB = to_dtype(B, nb, dt), *qC0 = to_dtype(C0, nc, dt),
             *qref = malloc(nc * 2), *qC = malloc(nc * 2);
    tc_plan_options ro;
    tc_plan_options_init(&ro);
    ro.algorithm = "ref.gemm.loops";
    tc_plan *rp = NULL, *mp = NULL;
    tc_gemm_desc md = d;
    md.dtype = TC_FLOAT32;
    md.alpha = fabs(c->alpha);
    md.beta = fabs(c->beta);
    if (tc_plan_gemm(&rp, NULL, &d, &ro) != TC_OK || tc_plan_gemm(&mp, NULL, &md, &ro) != TC_OK) {
        printf("ref.gemm.loops plan failed: %s\n", tc_last_error());
        th_g.failed++;
        tc_plan_destroy(rp);
        goto done;
    }
    memcpy(qref, qC0, nc * 2);
    tc_execute_gemm(rp, qref, qA, qB, NULL);
    from_dtype(ref, qref, nc, dt);
    for (int64_t i = 0; i < na; i++) A[i] = fabsf(A[i]);
    for (int64_t i = 0; i < nb; i++) B[i] = fabsf(B[i]);
    for (int64_t i = 0; i < nc; i++) mag[i] = fabsf(C0[i]);
    tc_execute_gemm(mp, mag, A, B, NULL);
    tc_plan_destroy(rp);
    tc_plan_destroy(mp);
    static const char *const hsolvers[] = {"cuda.gemm.simt", "cuda.gemm.wgmma-tf32"};
    for (int s = 0; s < 2; s++) {
        tc_plan_options o;
        tc_plan_options_init(&o);
        o.algorithm = hsolvers[s];
        const int tf32 = strstr(hsolvers[s], "tf32") != NULL;
        if (tf32) o.flags |= TC_PLAN_ALLOW_TF32;
        tc_plan *pl;
        tc_status st = tc_plan_gemm(&pl, NULL, &d, &o);
        if (st == TC_ERR_NOT_APPLICABLE) { n_na++; continue; }
        TH_BEGIN("%s float16 m=%lld n=%lld k=%lld ta=%d tb=%d pad=%d beta=%g %s", hsolvers[s],
                 (long long)c->m, (long long)c->n, (long long)c->k, c->ta, c->tb, c->pad,
                 c->beta, device_ptrs ? "device-ptr" : "host-ptr");
        if (!CHECK_STATUS(st, TC_OK)) { TH_END(); continue; }
        memcpy(qC, qC0, nc * 2);
        const int rc = exec_gemm(pl, qC, qA, qB, na, nb, nc, 2, device_ptrs);
        CHECK(rc == TC_OK, "execute: rc %d, %s", rc, tc_last_error());
        if (rc == TC_OK) {
            from_dtype(C, qC, nc, dt);
            double e = 0;
            int64_t bad = -1;
            for (int64_t i = 0; i < c->m; i++)
                for (int64_t j = 0; j < d.ldc; j++) {
                    int64_t k = i * d.ldc + j;
                    if (j >= c->n) {
                        if (qC[k] != qC0[k] && bad < 0) bad = k;
                        continue;
                    }
                    if (!isfinite(C[k])) { if (bad < 0) bad = k; continue; }
                    double df = fabs((double)C[k] - ref[k]) / (mag[k] > 0 ? mag[k] : 1);
                    e = df > e ? df : e;
                }
            CHECK(bad < 0, "element %lld wrong or NaN (padding written or C read with beta=0)",
                  (long long)bad);
            CHECK(e <= (tf32 ? 5e-3 : 2e-3), "err %.3g of the magnitude sum", e);
        }
        tc_plan_destroy(pl);
        TH_END();
    }
done:
    free(A); free(B); free(C0); free(mag); free(ref); free(C);
    free(qA); free(qB); free(qC0); free(qref); free(qC);
}
static void run_gemm_half_all(void) {
    for (int gi = 0; gi < NHG; gi++) {
        if (th_g.quick && gi % 2) continue;
        run_gemm_half(gi, 0);
#if TC_TEST_CUDA
        run_gemm_half(gi, 1);
#endif
    }
}

#if TC_TEST_CUDA
/* ---------------- concurrent executes of one conv plan ----------------
 * Plans may be executed from several threads at once (include/tileconv.h).
 * CTHREADS threads each run one plan CITERS times on their own device
 * buffers, on their own default stream, the output poisoned (NaN bytes)
 * before every execute, with no synchronisation between the calls; each
 * thread's last output must match ref.conv.loops. A call that shared a buffer
 * with another thread's call in flight (a plan-owned scratch, a cuFFT
 * work area) would leave a wrong or poisoned output. */
enum { CTHREADS = 4, CITERS = 6 };
/* what a thread saw: the first place of each thread's record */
typedef struct tresult {
    int rc;        /* the first failing status, or -1 for a CUDA call */
    double err;    /* max|y - ref| / max|ref| */
    int64_t bad;   /* first element not finite, or -1 */
    char msg[256]; /* tc_last_error() of the failing call (it is per thread) */
} tresult;
static void tresult_init(tresult *r) {
    r->rc = -1;
    r->bad = -1;
    r->err = 0;
    snprintf(r->msg, sizeof r->msg, "a CUDA call failed");
}
/* CTHREADS threads running fn on items[i] (records of size bytes, a
 * tresult first), joined, each record checked against tol */
static void run_threads(void *(*fn)(void *), void *items, size_t size, double tol) {
    pthread_t th[CTHREADS];
    int started[CTHREADS];
    for (int i = 0; i < CTHREADS; i++)
        started[i] = pthread_create(&th[i], NULL, fn, (char *)items + i * size) == 0;
    for (int i = 0; i < CTHREADS; i++) {
        CHECK(started[i], "pthread_create failed");
        if (!started[i]) continue;
        pthread_join(th[i], NULL);
        const tresult *r = (const tresult *)((char *)items + i * size);
        CHECK(r->rc == TC_OK, "thread %d: execute rc %d, %s", i, r->rc, r->msg);
        if (r->rc == TC_OK) {
            CHECK(r->bad < 0, "thread %d: element %lld not written or not finite", i, (long long)r->bad);
            CHECK(r->err <= tol, "thread %d: rel err %.3g > %.0e", i, r->err, tol);
        }
    }
}
typedef struct cthread {
    tresult r;
    tc_plan *pl;
    const cdata *cd;
} cthread;
static void *conv_thread(void *arg) {
    cthread *t = (cthread *)arg;
    const cdata *cd = t->cd;
    float *dx = NULL, *dw = NULL, *db = NULL, *dy = NULL, *y = malloc(cd->ny * 4);
    tresult_init(&t->r);
    cudaStream_t s = cudaStreamPerThread;
    if (y && cudaMalloc((void **)&dx, cd->nx * 4) == cudaSuccess &&
        cudaMalloc((void **)&dw, cd->nw * 4) == cudaSuccess &&
        cudaMalloc((void **)&db, cd->d.out_channels * 4) == cudaSuccess &&
        cudaMalloc((void **)&dy, cd->ny * 4) == cudaSuccess &&
        cudaMemcpyAsync(dx, cd->x, cd->nx * 4, cudaMemcpyHostToDevice, s) == cudaSuccess &&
        cudaMemcpyAsync(dw, cd->w, cd->nw * 4, cudaMemcpyHostToDevice, s) == cudaSuccess &&
        cudaMemcpyAsync(db, cd->b, cd->d.out_channels * 4, cudaMemcpyHostToDevice, s) == cudaSuccess) {
        int rc = TC_OK;
        for (int it = 0; it < CITERS && rc == TC_OK; it++) {
            if (cudaMemsetAsync(dy, 0xff, cd->ny * 4, s) != cudaSuccess) { rc = -1; break; }
            rc = tc_execute_conv(t->pl, dy, dx, dw, cd->d.has_bias ? db : NULL, NULL);
            if (rc != TC_OK) snprintf(t->r.msg, sizeof t->r.msg, "%s", tc_last_error());
        }
        if (rc == TC_OK && (cudaStreamSynchronize(s) != cudaSuccess ||
                            cudaMemcpy(y, dy, cd->ny * 4, cudaMemcpyDeviceToHost) != cudaSuccess))
            rc = -1;
        t->r.rc = rc;
        if (rc == TC_OK) {
            double dmax = 0, rmax = 0;
            for (int64_t i = 0; i < cd->ny; i++) {
                if (!isfinite(y[i]) && t->r.bad < 0) t->r.bad = i;
                double df = fabs((double)y[i] - cd->ref[i]);
                if (df > dmax) dmax = df;
                if (fabs(cd->ref[i]) > rmax) rmax = fabs(cd->ref[i]);
            }
            t->r.err = dmax / (rmax > 1 ? rmax : 1);
        }
    }
    cudaFree(dx); cudaFree(dw); cudaFree(db); cudaFree(dy);
    free(y);
    return NULL;
}
/* every CUDA conv solver on two cases (one the fused FFT form takes by
 * default), cuda.conv.fft also with each form forced */
static void run_conv_concurrent(void) {
    if (tc__knob_get(TC__KNOB_TEST_CUDA_TF32_KERNEL)) return;
    const int cases[] = {0, NCC - 2};
    for (int k = 0; k < 2; k++) {
        cdata cd;
        if (!conv_data(cases[k], &cd)) continue;
        for (int s = 0; s < NCS + 2; s++) {
            /* the last two: cuda.conv.fft with the fused form off, then on */
            const char *name = s < NCS ? conv_solvers[s] : "cuda.conv.fft";
            const char *fused = s < NCS ? NULL : s == NCS ? "0" : "1";
            if (conv_only_solver && strcmp(name, conv_only_solver)) continue;
            const int tf32 = strstr(name, "tf32") != NULL && !strstr(name, "3xtf32");
            if (fused) setenv("TILECONV_CUDA_CONV_FFT_FUSED", fused, 1);
            tc_plan_options o;
            tc_plan_options_init(&o);
            o.algorithm = name;
            if (tf32) o.flags |= TC_PLAN_ALLOW_TF32;
            tc_plan *pl = NULL;
            tc_status st = tc_plan_conv(&pl, NULL, &cd.d, &o);
            if (fused) unsetenv("TILECONV_CUDA_CONV_FFT_FUSED");
            if (st == TC_ERR_NOT_APPLICABLE) { n_na++; continue; }
            TH_BEGIN("%s%s%s conv case %d: %d threads x %d executes of one plan, device pointers",
                     name, fused ? " fused=" : "", fused ? fused : "", cases[k], CTHREADS, CITERS);
            if (!CHECK_STATUS(st, TC_OK)) { TH_END(); continue; }
            cthread t[CTHREADS];
            for (int i = 0; i < CTHREADS; i++) {
                t[i].pl = pl;
                t[i].cd = &cd;
            }
            run_threads(conv_thread, t, sizeof t[0],
                        tf32 ? 5e-3 : strstr(name, "winograd") || strstr(name, "fft") ? 1e-4 : 2e-5);
            tc_plan_destroy(pl);
            TH_END();
        }
        conv_data_free(&cd);
    }
}

/* the same for filters: the non-seed filter solvers on a 2D reflect case
 * (a 13 x 11 mask, so cuda.filter.fft applies), CTHREADS threads x CITERS
 * executes of one plan on device pointers */
typedef struct fthread {
    tresult r;
    tc_plan *pl;
    const float *x, *ref;
    int64_t n;
} fthread;
static void *filter_thread(void *arg) {
    fthread *t = (fthread *)arg;
    float *dx = NULL, *dy = NULL, *y = malloc(t->n * 4);
    cudaStream_t s = cudaStreamPerThread;
    tresult_init(&t->r);
    if (y && cudaMalloc((void **)&dx, t->n * 4) == cudaSuccess &&
        cudaMalloc((void **)&dy, t->n * 4) == cudaSuccess &&
        cudaMemcpyAsync(dx, t->x, t->n * 4, cudaMemcpyHostToDevice, s) == cudaSuccess) {
        int rc = TC_OK;
        for (int it = 0; it < CITERS && rc == TC_OK; it++) {
            if (cudaMemsetAsync(dy, 0xff, t->n * 4, s) != cudaSuccess) { rc = -1; break; }
            rc = tc_execute_filter(t->pl, dy, dx, NULL);
            if (rc != TC_OK) snprintf(t->r.msg, sizeof t->r.msg, "%s", tc_last_error());
        }
        if (rc == TC_OK && (cudaStreamSynchronize(s) != cudaSuccess ||
                            cudaMemcpy(y, dy, t->n * 4, cudaMemcpyDeviceToHost) != cudaSuccess))
            rc = -1;
        t->r.rc = rc;
        if (rc == TC_OK) t->r.err = rel_err(y, t->ref, t->n, &t->r.bad);
    }
    cudaFree(dx); cudaFree(dy);
    free(y);
    return NULL;
}
static void run_filter_concurrent(void) {
    enum { H = 150, W = 131, MH = 13, MW = 11 };
    tc_filter_desc d;
    tc_filter_desc_init(&d);
    d.ndim = 2;
    d.shape[0] = H; d.shape[1] = W;
    d.mask_shape[0] = MH; d.mask_shape[1] = MW;
    d.mode = TC_MODE_REFLECT;
    th_rng r = th_rng_for(7100);
    float *x = malloc(H * W * 4), *m = malloc(MH * MW * 4), *ref = malloc(H * W * 4);
    fill(x, H * W, &r);
    fill(m, MH * MW, &r);
    tc_plan_options ro;
    tc_plan_options_init(&ro);
    ro.algorithm = "ref.conv.loops";
    tc_plan *rp = NULL;
    if (tc_plan_filter(&rp, NULL, &d, m, &ro) != TC_OK || tc_execute_filter(rp, ref, x, NULL) != TC_OK) {
        printf("filter reference failed: %s\n", tc_last_error());
        th_g.failed++;
    } else {
        for (int si = 0; si < NFS; si++) {
            if (strstr(filter_solvers[si], ".seed-")) continue;
            tc_plan_options o;
            tc_plan_options_init(&o);
            o.algorithm = filter_solvers[si];
            tc_plan *pl = NULL;
            tc_status st = tc_plan_filter(&pl, NULL, &d, m, &o);
            if (st == TC_ERR_NOT_APPLICABLE) { n_na++; continue; }
            TH_BEGIN("%s 2D %dx%d mask %dx%d: %d threads x %d executes of one plan, device pointers",
                     filter_solvers[si], H, W, MH, MW, CTHREADS, CITERS);
            if (!CHECK_STATUS(st, TC_OK)) { TH_END(); continue; }
            fthread t[CTHREADS];
            for (int i = 0; i < CTHREADS; i++) {
                t[i].pl = pl; t[i].x = x; t[i].ref = ref; t[i].n = H * W;
            }
            run_threads(filter_thread, t, sizeof t[0], 1e-4);
            tc_plan_destroy(pl);
            TH_END();
        }
    }
    tc_plan_destroy(rp);
    free(x); free(m); free(ref);
}
#endif

/* ---------------- no-GPU rules ---------------- */
static void run_fallback_checks(void) {
    tc_filter_desc d;
    tc_filter_desc_init(&d);
    d.ndim = 2;
    d.shape[0] = 16; d.shape[1] = 16;
    d.mask_shape[0] = 3; d.mask_shape[1] = 3;
    float m[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    TH_BEGIN("no GPU: forced cuda.filter.direct fails with TC_ERR_NO_DEVICE or NOT_FOUND");
    tc_plan_options o;
    tc_plan_options_init(&o);
    o.algorithm = "cuda.filter.direct";
    tc_plan *pl = NULL;
    tc_status st = tc_plan_filter(&pl, NULL, &d, m, &o);
    /* NOT_FOUND in a build without CUDA (the solver is not compiled) */
    CHECK(st == TC_ERR_NO_DEVICE || st == TC_ERR_NOT_FOUND, "status %s: %s",
          tc_status_string(st), tc_last_error());
    tc_plan_destroy(pl);
    TH_END();

    TH_BEGIN("no GPU: context backend cuda fails with TC_ERR_NO_DEVICE");
    tc_context *ctx = NULL;
    CHECK_STATUS(tc_context_create(&ctx), TC_OK);
    CHECK_STATUS(tc_context_set_backend(ctx, TC_BACKEND_CUDA), TC_OK);
    pl = NULL;
    st = tc_plan_filter(&pl, ctx, &d, m, NULL);
    CHECK_STATUS(st, TC_ERR_NO_DEVICE);
    tc_plan_destroy(pl);
    tc_context_destroy(ctx);
    TH_END();

    TH_BEGIN("no GPU: auto falls back to the CPU");
    pl = NULL;
    st = tc_plan_filter(&pl, NULL, &d, m, NULL);
    if (CHECK_STATUS(st, TC_OK))
        CHECK(tc_plan_backend(pl) == TC_BACKEND_CPU, "chose %s", tc_plan_algorithm(pl));
    tc_plan_destroy(pl);
    TH_END();

    TH_BEGIN("no GPU: TC_PLAN_MASK_AT_EXECUTE: forced cuda.filter.direct fails, auto runs on the CPU");
    tc_plan_options_init(&o);
    o.algorithm = "cuda.filter.direct";
    o.flags = TC_PLAN_MASK_AT_EXECUTE;
    pl = NULL;
    st = tc_plan_filter(&pl, NULL, &d, NULL, &o);
    CHECK(st == TC_ERR_NO_DEVICE || st == TC_ERR_NOT_FOUND, "status %s: %s",
          tc_status_string(st), tc_last_error());
    tc_plan_destroy(pl);
    o.algorithm = NULL;
    pl = NULL;
    st = tc_plan_filter(&pl, NULL, &d, NULL, &o);
    if (CHECK_STATUS(st, TC_OK)) {
        CHECK(tc_plan_backend(pl) == TC_BACKEND_CPU, "chose %s", tc_plan_algorithm(pl));
        static float x[256], y[256];
        for (int i = 0; i < 256; i++) x[i] = (float)(i % 7) - 3.0f;
        if (CHECK_STATUS(tc_execute_filter_mask(pl, y, x, m, NULL), TC_OK))
            CHECK(y[17] == y[17], "output not written");
    }
    tc_plan_destroy(pl);
    TH_END();

    TH_BEGIN("no GPU: kernel report returns TC_ERR_NO_DEVICE");
    char buf[64];
    CHECK_STATUS(tc_cuda_kernel_report(buf, sizeof buf), TC_ERR_NO_DEVICE);
    TH_END();
}

static void run_gpu_api_checks(void) {
    TH_BEGIN("kernel report");
    char *buf = malloc(1 << 16);
    tc_status st = tc_cuda_kernel_report(buf, 1 << 16);
    if (CHECK_STATUS(st, TC_OK)) {
        CHECK(strstr(buf, "cuda.filter.direct") != NULL, "report lacks cuda.filter.direct");
        CHECK(strstr(buf, "cuda.conv.fft multiply") != NULL, "report lacks cuda.conv.fft");
        CHECK(strstr(buf, "cuda.filter.fft multiply f64") != NULL,
              "report lacks cuda.filter.fft's float64 kernels");
        /* tc__cu_max_clusters, as cuda.gemm.wgmma-tf32's launch asks it */
        CHECK(strstr(buf, "clusters of 4 resident: ") != NULL,
              "report lacks cuda.gemm.wgmma-tf32's resident 2x2 clusters");
        if (th_g.verbose) fputs(buf, stdout);
    }
    CHECK_STATUS(tc_cuda_kernel_report(buf, 10), TC_ERR_INVALID_ARGUMENT);
    free(buf);
    TH_END();

    TH_BEGIN("auto picks a CUDA algorithm for a large 2D filter");
    tc_filter_desc d;
    tc_filter_desc_init(&d);
    d.ndim = 2;
    d.shape[0] = 2048; d.shape[1] = 2048;
    d.mask_shape[0] = 5; d.mask_shape[1] = 5;
    float m[25];
    th_rng r = th_rng_for(99);
    fill(m, 25, &r);
    tc_plan *pl = NULL;
    st = tc_plan_filter(&pl, NULL, &d, m, NULL);
    if (CHECK_STATUS(st, TC_OK))
        CHECK(tc_plan_backend(pl) == TC_BACKEND_CUDA, "chose %s", tc_plan_algorithm(pl));
    tc_plan_destroy(pl);
    TH_END();

    TH_BEGIN("tc_cuda_time_filter times a cuda.filter.direct plan on device data");
    {
        tc_filter_desc td;
        tc_filter_desc_init(&td);
        td.ndim = 2;
        td.shape[0] = 512; td.shape[1] = 512;
        td.mask_shape[0] = 5; td.mask_shape[1] = 5;
        tc_plan_options to;
        tc_plan_options_init(&to);
        to.algorithm = "cuda.filter.direct";
        tc_plan *tp = NULL;
        float *tx = malloc(512 * 512 * 4);
        fill(tx, 512 * 512, &r);
        double med = -1, mn = -1;
        if (CHECK_STATUS(tc_plan_filter(&tp, NULL, &td, m, &to), TC_OK) &&
            CHECK_STATUS(tc_cuda_time_filter(tp, tx, 7, &med, &mn), TC_OK))
            CHECK(med > 0 && mn > 0 && mn <= med && med < 1000, "median %g ms, min %g ms", med, mn);
        tc_plan_destroy(tp);
        free(tx);
    }
    TH_END();

    TH_BEGIN("tc_cuda_time_plan times a cuda.gemm.simt plan on device data");
    {
        tc_gemm_desc gd;
        tc_gemm_desc_init(&gd);
        gd.m = 300; gd.n = 200; gd.k = 100;
        tc_plan_options to;
        tc_plan_options_init(&to);
        to.algorithm = "cuda.gemm.simt";
        tc_plan *tp = NULL;
        float *ta = malloc(300 * 100 * 4), *tb = malloc(100 * 200 * 4);
        fill(ta, 300 * 100, &r);
        fill(tb, 100 * 200, &r);
        double med = -1, mn = -1;
        if (CHECK_STATUS(tc_plan_gemm(&tp, NULL, &gd, &to), TC_OK) &&
            CHECK_STATUS(tc_cuda_time_plan(tp, ta, tb, NULL, 7, &med, &mn), TC_OK))
            CHECK(med > 0 && mn > 0 && mn <= med && med < 1000, "median %g ms, min %g ms", med, mn);
        tc_plan_destroy(tp);
        free(ta);
        free(tb);
    }
    TH_END();

#if TC_TEST_CUDA
    TH_BEGIN("tc_plan_set_cuda_stream: work on the caller's stream, bit-identical");
    {
        tc_filter_desc td;
        tc_filter_desc_init(&td);
        td.ndim = 2;
        td.shape[0] = 300; td.shape[1] = 517;
        td.mask_shape[0] = 5; td.mask_shape[1] = 5;
        td.mode = TC_MODE_REFLECT;
        const int64_t n = 300 * 517;
        tc_plan_options to;
        tc_plan_options_init(&to);
        to.algorithm = "cuda.filter.direct";
        tc_plan *tp = NULL;
        float *hx = malloc((size_t)n * 4), *h1 = malloc((size_t)n * 4), *h2 = malloc((size_t)n * 4),
              *h3 = malloc((size_t)n * 4);
        float *dx = NULL, *dy = NULL;
        cudaStream_t S = NULL;
        fill(hx, n, &r);
        int ok = hx && h1 && h2 && h3 &&
                 cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking) == cudaSuccess &&
                 cudaMalloc((void **)&dx, (size_t)n * 4) == cudaSuccess &&
                 cudaMalloc((void **)&dy, (size_t)n * 4) == cudaSuccess;
        CHECK(ok, "setup (host memory, stream, device memory)");
        if (ok && CHECK_STATUS(tc_plan_filter(&tp, NULL, &td, m, &to), TC_OK)) {
            /* the default stream's result on host arrays */
            CHECK_STATUS(tc_execute_filter(tp, h1, hx, NULL), TC_OK);
            CHECK_STATUS(tc_plan_set_cuda_stream(tp, S), TC_OK);
            /* device arrays: copy in, execute and copy out all on S; the
             * host waits for S only */
            cudaMemsetAsync(dy, 0xff, (size_t)n * 4, S);
            cudaMemcpyAsync(dx, hx, (size_t)n * 4, cudaMemcpyHostToDevice, S);
            CHECK_STATUS(tc_execute_filter(tp, dy, dx, NULL), TC_OK);
            cudaMemcpyAsync(h2, dy, (size_t)n * 4, cudaMemcpyDeviceToHost, S);
            CHECK(cudaStreamSynchronize(S) == cudaSuccess, "stream sync");
            /* host arrays staged through S */
            CHECK_STATUS(tc_execute_filter(tp, h3, hx, NULL), TC_OK);
            CHECK(memcmp(h1, h2, (size_t)n * 4) == 0, "device arrays on the stream differ");
            CHECK(memcmp(h1, h3, (size_t)n * 4) == 0, "host arrays on the stream differ");
            double med = -1, mn = -1;
            if (CHECK_STATUS(tc_cuda_time_filter(tp, hx, 5, &med, &mn), TC_OK))
                CHECK(med > 0 && mn > 0 && mn <= med, "median %g ms, min %g ms", med, mn);
            CHECK_STATUS(tc_plan_set_cuda_stream(tp, NULL), TC_OK);
        }
        tc_plan_destroy(tp);
        cudaFree(dx);
        cudaFree(dy);
        if (S) cudaStreamDestroy(S);
        free(hx); free(h1); free(h2); free(h3);
    }
    TH_END();
#endif

    TH_BEGIN("const seed rejects an oversized mask with a reason");
    tc_filter_desc_init(&d);
    d.ndim = 1;
    d.shape[0] = 10000;
    d.mask_shape[0] = 5000;
    float *big = malloc(5000 * 4);
    fill(big, 5000, &r);
    tc_plan_options o;
    tc_plan_options_init(&o);
    o.algorithm = "cuda.filter.seed-const1d";
    pl = NULL;
    st = tc_plan_filter(&pl, NULL, &d, big, &o);
    CHECK_STATUS(st, TC_ERR_NOT_APPLICABLE);
    CHECK(strstr(tc_last_error(), "__constant__") != NULL, "message '%s'", tc_last_error());
    tc_plan_destroy(pl);
    free(big);
    TH_END();
}

/* cuda.gemm.wgmma-tf32: the planner takes it only under TC_PLAN_ALLOW_TF32 (on a
 * device that runs it), and an execute on device arrays that are not
 * 16-byte aligned (its tensor copies cannot read them) runs cuda.gemm.simt's
 * kernel and still gives the product. */
#if TC_TEST_CUDA
/* A forced GEMM algorithm on device arrays one float past 16-byte
 * alignment (the tensor-core kernels need 16-byte rows: the solver must
 * fall back, not fault), against ref.gemm.loops within tol of max|C|. */
static void check_gemm_unaligned(const char *algo, unsigned flags, const tc_gemm_desc *dd,
                                 uint64_t seed, double tol) {
    tc_gemm_desc d = *dd;
    tc_plan_options o;
    tc_plan_options_init(&o);
    o.algorithm = algo;
    o.flags = flags;
    tc_plan *pl = NULL;
    if (tc_plan_gemm(&pl, NULL, &d, &o) != TC_OK) {
        printf("SKIP %s unaligned check: %s\n", algo, tc_last_error());
        th_g.skipped++;
        return;
    }
    TH_BEGIN("%s on device arrays one float past 16-byte alignment", algo);
    const int64_t na = d.m * d.lda, nb = d.k * d.ldb, nc = d.m * d.ldc;
    th_rng r = th_rng_for(seed);
    float *A = malloc(na * 4), *B = malloc(nb * 4), *C = malloc(nc * 4), *ref = malloc(nc * 4);
    fill(A, na, &r); fill(B, nb, &r);
    tc_plan_options ro;
    tc_plan_options_init(&ro);
    ro.algorithm = "ref.gemm.loops";
    tc_plan *rp = NULL;
    if (CHECK_STATUS(tc_plan_gemm(&rp, NULL, &d, &ro), TC_OK)) {
        tc_execute_gemm(rp, ref, A, B, NULL);
        float *dA = NULL, *dB = NULL, *dC = NULL;
        int ok = cudaMalloc((void **)&dA, (na + 1) * 4) == cudaSuccess &&
                 cudaMalloc((void **)&dB, (nb + 1) * 4) == cudaSuccess &&
                 cudaMalloc((void **)&dC, nc * 4) == cudaSuccess &&
                 cudaMemcpy(dA + 1, A, na * 4, cudaMemcpyHostToDevice) == cudaSuccess &&
                 cudaMemcpy(dB + 1, B, nb * 4, cudaMemcpyHostToDevice) == cudaSuccess;
        CHECK(ok, "device buffers");
        if (ok) {
            tc_status st = tc_execute_gemm(pl, dC, dA + 1, dB + 1, NULL);
            CHECK_STATUS(st, TC_OK);
            if (st == TC_OK && cudaMemcpy(C, dC, nc * 4, cudaMemcpyDeviceToHost) == cudaSuccess) {
                double dmax = 0, rmax = 0;
                for (int64_t i = 0; i < nc; i++) {
                    double df = fabs((double)C[i] - ref[i]);
                    if (!(df <= dmax)) dmax = df;
                    if (fabs(ref[i]) > rmax) rmax = fabs(ref[i]);
                }
                CHECK(dmax / rmax <= tol, "rel err %.3g", dmax / rmax);
            }
        }
        cudaFree(dA); cudaFree(dB); cudaFree(dC);
    }
    tc_plan_destroy(rp);
    free(A); free(B); free(C); free(ref);
    TH_END();
    tc_plan_destroy(pl);
}
#endif

static void run_gemm_tf32_checks(void) {
    tc_gemm_desc d;
    tc_gemm_desc_init(&d);
    d.dtype = TC_FLOAT32;
    d.m = 96; d.n = 160; d.k = 72;
    d.lda = d.k; d.ldb = d.n; d.ldc = d.n;
    TH_BEGIN("gemm planner: cuda.gemm.wgmma-tf32 only under TC_PLAN_ALLOW_TF32");
    {
        tc_plan_options o;
        tc_plan_options_init(&o);
        tc_plan *pl = NULL;
        if (CHECK_STATUS(tc_plan_gemm(&pl, NULL, &d, &o), TC_OK))
            CHECK(strstr(tc_plan_algorithm(pl), "tf32") == NULL, "fp32 plan chose %s",
                  tc_plan_algorithm(pl));
        tc_plan_destroy(pl);
        o.algorithm = "cuda.gemm.wgmma-tf32";
        pl = NULL;
        CHECK(tc_plan_gemm(&pl, NULL, &d, &o) != TC_OK, "cuda.gemm.wgmma-tf32 planned without the flag");
        tc_plan_destroy(pl);
    }
    TH_END();
#if TC_TEST_CUDA
    check_gemm_unaligned("cuda.gemm.wgmma-tf32", TC_PLAN_ALLOW_TF32, &d, 77, 5e-3);
#endif
}

/* ---------------- cuda.gemm.wgmma-3xtf32 (split-precision TF32) ----------------
 * The forced solver against a float64 product computed here, beside
 * cuda.gemm.simt (strict FP32) and cuda.gemm.wgmma-tf32 on the same data:
 * max|C - C64| / max|C64| of 3xTF32 no larger than simt's where k >= 1024
 * (where the planner may pick it), elsewhere within 4x simt's (or 2e-6
 * where simt's is below 5e-7: at small k simt's one rounding a product
 * beats the split's 2^-22 residual), and at most 1/16 of the TF32
 * solver's; each case's three errors printed. Sizes off the 128 x 128 x 32 tile, padded rows, alpha and
 * beta, a long k, more tiles than the grid has blocks (the persistent walk);
 * data: uniform +-[0.1, 1), a wide exponent range (2^-24 .. 2^24), and
 * values next to TF32's rounding boundaries (low 13 mantissa bits at, just
 * below and just above the tie 0x1000, all ones: hi's carry into the
 * exponent). Then the planner: never below k = 1024 nor with
 * TC_PLAN_DIRECT, at 2048^3 its float32 choice where it runs; it refuses
 * transposes and odd lda with a reason, and device arrays off 16-byte alignment run
 * cuda.gemm.simt's kernel. */
#define G3_PLANNER_MIN_K 1024 /* src/cuda/cuda_gemm_3xtf32.cu: G3_MIN_K */
typedef struct g3case {
    int64_t m, n, k;
    int pad, data; /* data: 0 uniform, 1 wide exponents, 2 TF32 rounding boundaries */
    double alpha, beta;
} g3case;
static const g3case g3cases[] = {
    {1, 1, 1, 0, 0, 1, 0},          {3, 5, 7, 0, 0, 1, 0},        {17, 33, 9, 4, 0, 1, 0.5},
    {131, 260, 100, 0, 0, 1, 0},    {200, 129, 515, 4, 0, -1.5, 0.5},
    {257, 130, 1000, 0, 0, 1, 0},   {129, 385, 67, 3, 0, 0.5, 2}, {300, 8, 4000, 0, 0, 1, 0},
    {2000, 1100, 36, 0, 0, 1, 0.25}, /* 144 tiles: more than an H200 has SMs */
    {131, 260, 100, 0, 1, 1, 0},    {257, 130, 1000, 4, 1, 1, 0.5},
    {131, 260, 100, 0, 2, 1, 0},    {257, 130, 1000, 0, 2, -1, 0.5}, {64, 64, 2048, 0, 2, 1, 0},
    /* k >= 1024 (where the planner may pick it): each kind of data */
    {384, 520, 2048, 0, 0, 1, 0},   {384, 520, 2048, 4, 1, 1, 0}, {384, 520, 2048, 0, 2, 1, 0},
    {256, 256, 1024, 0, 1, -1, 0.5},
};
#define NG3 (int)(sizeof g3cases / sizeof g3cases[0])
static float g3_value(th_rng *r, int data) {
    if (data == 1) { /* sign x [1, 2) x 2^e, e in [-24, 24] */
        const double v = ldexp(th_uniform(r, 1.0, 2.0), (int)th_int(r, -24, 24));
        return (float)((th_next(r) & 1) ? v : -v);
    }
    if (data == 2) { /* exponent 2^-3 .. 2^3, random top 10 mantissa bits, chosen low 13 */
        static const uint32_t low[] = {0x1000, 0x0fff, 0x1001, 0x1fff, 0x0001, 0x17ff, 0x0800};
        uint32_t mant = ((uint32_t)th_int(r, 0, 1023) << 13) | low[th_int(r, 0, 6)];
        if (th_int(r, 0, 15) == 0) mant = 0x7fffff; /* rounds up into the next binade */
        const uint32_t u = (th_next(r) & 1 ? 0x80000000u : 0u) | ((uint32_t)(127 + th_int(r, -3, 3)) << 23) | mant;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    return (float)th_value(r);
}
/* one solver on the case's data (host arrays): max|C - C64| / max|C64|,
 * -1 where it does not apply, -2 where it failed (a CHECK says why) */
static double g3_run(const char *algo, unsigned flags, const tc_gemm_desc *d, const float *A,
                     const float *B, const float *C0, const double *ref, float *C) {
    tc_plan_options o;
    tc_plan_options_init(&o);
    o.algorithm = algo;
    o.flags = flags;
    tc_plan *pl = NULL;
    tc_status st = tc_plan_gemm(&pl, NULL, d, &o);
    if (st == TC_ERR_NOT_APPLICABLE) return -1;
    if (!CHECK_STATUS(st, TC_OK)) return -2;
    memcpy(C, C0, (size_t)(d->m * d->ldc) * 4);
    st = tc_execute_gemm(pl, C, A, B, NULL);
    tc_plan_destroy(pl);
    if (!CHECK(st == TC_OK, "%s execute: %s", algo, tc_last_error())) return -2;
    double dmax = 0, rmax = 0;
    for (int64_t i = 0; i < d->m; i++)
        for (int64_t j = 0; j < d->n; j++) {
            const double df = fabs((double)C[i * d->ldc + j] - ref[i * d->ldc + j]);
            if (!(df <= dmax)) dmax = df; /* NaN stays */
            if (fabs(ref[i * d->ldc + j]) > rmax) rmax = fabs(ref[i * d->ldc + j]);
        }
    return rmax > 0 ? dmax / rmax : dmax;
}
static void run_gemm_3xtf32_checks(void) {
    const char *g3 = "cuda.gemm.wgmma-3xtf32";
    for (int ci = 0; ci < NG3; ci++) {
        const g3case *c = &g3cases[ci];
        if (th_g.quick && c->m * c->n * c->k > 10000000) continue;
        tc_gemm_desc d;
        tc_gemm_desc_init(&d);
        d.dtype = TC_FLOAT32;
        d.m = c->m; d.n = c->n; d.k = c->k;
        d.lda = (c->k + 3) / 4 * 4 + (c->pad ? 4 : 0);
        d.ldb = (c->n + 3) / 4 * 4 + (c->pad ? 4 : 0);
        d.ldc = c->n + c->pad;
        d.alpha = c->alpha; d.beta = c->beta;
        const int64_t na = d.m * d.lda, nb = d.k * d.ldb, nc = d.m * d.ldc;
        float *A = malloc(na * 4), *B = malloc(nb * 4), *C0 = malloc(nc * 4), *C = malloc(nc * 4);
        double *ref = malloc(nc * 8), *row = malloc(d.n * 8);
        th_rng r = th_rng_for(3300 + ci);
        for (int64_t i = 0; i < na; i++) A[i] = g3_value(&r, c->data);
        for (int64_t i = 0; i < nb; i++) B[i] = g3_value(&r, c->data);
        for (int64_t i = 0; i < nc; i++) C0[i] = c->beta != 0 ? g3_value(&r, c->data) : NAN;
        for (int64_t i = 0; i < d.m; i++) { /* float64: alpha A B + beta C0 */
            for (int64_t j = 0; j < d.n; j++) row[j] = 0;
            for (int64_t p = 0; p < d.k; p++) {
                const double a = A[i * d.lda + p];
                const float *b = B + p * d.ldb;
                for (int64_t j = 0; j < d.n; j++) row[j] += a * b[j];
            }
            for (int64_t j = 0; j < d.n; j++)
                ref[i * d.ldc + j] = c->alpha * row[j] + (c->beta != 0 ? c->beta * C0[i * d.ldc + j] : 0.0);
        }
        TH_BEGIN("%s m=%lld n=%lld k=%lld pad=%d alpha=%g beta=%g data=%s", g3, (long long)c->m,
                 (long long)c->n, (long long)c->k, c->pad, c->alpha, c->beta,
                 c->data == 0 ? "uniform" : c->data == 1 ? "wide-exponents" : "tf32-boundaries");
        const double e3 = g3_run(g3, 0, &d, A, B, C0, ref, C);
        if (e3 == -1) {
            TH_SKIP("%s does not apply here: %s", g3, tc_last_error());
        } else if (e3 >= 0) {
            const double es = g3_run("cuda.gemm.simt", 0, &d, A, B, C0, ref, C);
            const double et = g3_run("cuda.gemm.wgmma-tf32", TC_PLAN_ALLOW_TF32, &d, A, B, C0, ref, C);
            printf("  3xtf32 m=%lld n=%lld k=%lld data=%d: rel err 3xtf32 %.3g, simt %.3g, tf32 %.3g\n",
                   (long long)c->m, (long long)c->n, (long long)c->k, c->data, e3, es, et);
            if (es >= 0 && c->k >= G3_PLANNER_MIN_K) {
                /* where the planner may pick it: no larger than simt's */
                CHECK(e3 <= es, "k=%lld: 3xTF32 rel err %.3g above simt's %.3g", (long long)c->k,
                      e3, es);
            } else if (es >= 0) {
                const double bound = 4 * es > 2e-6 ? 4 * es : 2e-6;
                CHECK(e3 <= bound, "3xTF32 rel err %.3g above %.3g (simt's %.3g)", e3, bound, es);
            }
            if (et > 1e-5) CHECK(e3 <= et / 16, "3xTF32 rel err %.3g not far below TF32's %.3g", e3, et);
        }
        TH_END();
        free(A); free(B); free(C0); free(C); free(ref); free(row);
    }
    /* the planner: never below k = 1024 or with TC_PLAN_DIRECT; at 2048^3
     * on a device that runs it, the default float32 choice (TF32, where
     * allowed, is faster still); it refuses what it cannot do, with a reason */
    TH_BEGIN("%s: planner choice; transposes and odd lda refused", g3);
    {
        tc_gemm_desc d;
        tc_gemm_desc_init(&d);
        d.dtype = TC_FLOAT32;
        d.m = 256; d.n = 256; d.k = 256;
        d.lda = d.ldb = d.ldc = 256;
        tc_gemm_desc big = d;
        big.m = big.n = big.k = big.lda = big.ldb = big.ldc = 2048;
        tc_plan_options fo;
        tc_plan_options_init(&fo);
        fo.algorithm = g3;
        tc_plan *fp = NULL;
        const int runs = tc_plan_gemm(&fp, NULL, &big, &fo) == TC_OK;
        tc_plan_destroy(fp);
        for (int f = 0; f < 4; f++) {
            tc_plan_options o;
            tc_plan_options_init(&o);
            o.flags = f == 1 ? TC_PLAN_ALLOW_TF32 : f == 3 ? TC_PLAN_DIRECT : 0;
            tc_plan *pl = NULL;
            const tc_gemm_desc *dd = f >= 2 ? &big : &d;
            if (CHECK_STATUS(tc_plan_gemm(&pl, NULL, dd, &o), TC_OK)) {
                const int chose = strcmp(tc_plan_algorithm(pl), g3) == 0;
                if (f == 2)
                    CHECK(chose == runs, "2048^3: the planner chose %s where %s runs (%d)",
                          tc_plan_algorithm(pl), g3, runs);
                else
                    CHECK(!chose, "the planner chose %s (k %lld, flags %u)", g3, (long long)dd->k,
                          o.flags);
            }
            tc_plan_destroy(pl);
        }
        tc_plan_options o;
        tc_plan_options_init(&o);
        o.algorithm = g3;
        tc_plan *pl = NULL;
        tc_status st = tc_plan_gemm(&pl, NULL, &d, &o);
        tc_plan_destroy(st == TC_OK ? pl : NULL);
        if (st == TC_OK) { /* a device that runs it: the refusals */
            d.trans_a = 1;
            pl = NULL;
            st = tc_plan_gemm(&pl, NULL, &d, &o);
            CHECK(st == TC_ERR_NOT_APPLICABLE && strstr(tc_last_error(), "transposed"),
                  "trans_a: status %d, %s", (int)st, tc_last_error());
            tc_plan_destroy(st == TC_OK ? pl : NULL);
            d.trans_a = 0;
            d.lda = 258;
            pl = NULL;
            st = tc_plan_gemm(&pl, NULL, &d, &o);
            CHECK(st == TC_ERR_NOT_APPLICABLE && strstr(tc_last_error(), "lda"), "lda 258: status %d, %s",
                  (int)st, tc_last_error());
            tc_plan_destroy(st == TC_OK ? pl : NULL);
        }
    }
    TH_END();
#if TC_TEST_CUDA
    /* device arrays one float past 16-byte alignment: cuda.gemm.simt's kernel */
    tc_gemm_desc d;
    tc_gemm_desc_init(&d);
    d.dtype = TC_FLOAT32;
    d.m = 96; d.n = 160; d.k = 72;
    d.lda = d.k; d.ldb = d.n; d.ldc = d.n;
    check_gemm_unaligned(g3, 0, &d, 3377, 2e-5);
#endif
}

/* The GEMM kernels' other forms on every GEMM case: cuda.gemm.wgmma-tf32's
 * (TILECONV_CUDA_GEMM_TF32_BM=128/256 rows a block, TILECONV_CUDA_GEMM_TF32_CL=1/2/4
 * blocks a cluster: 1 x 2 sharing A, 2 x 2 sharing A and B; the cases
 * include odd numbers of m- and n-tiles, so a cluster's last blocks lie
 * past m or n), with its persistent grid as planned and capped at one
 * and three clusters (TILECONV_CUDA_GEMM_TF32_GRID: several tiles a cluster, the
 * stages running on across tiles). Under TILECONV_TEST_QUICK (the sanitizer
 * runs: racecheck does not get through the full set in 65-150 s on the
 * H200) the forms run only on cases up to 10M multiply-adds, the capped
 * grids on those up to 100k outputs. The other solvers run again; the
 * variables change only cuda.gemm.wgmma-tf32. Then every case again with
 * cuda.gemm.simt forced to BK = 16 and 32 (TILECONV_CUDA_GEMM_FP32_BK). */
static void run_gemm_variants(void) {
    static const char *forms[][2] = {{"128", "1"}, {"256", "1"}, {"128", "2"},
                                     {"256", "2"}, {"128", "4"}, {"256", "4"}};
    /* the capped grids; the last two with the split tail forced (3 parts
     * of each tile of a partial last round: partial sums through the
     * workspace, added by k_gemm_tf32_sum) */
    static const char *grids[] = {NULL, "1", "3", "2", "3"};
    for (int gr = 0; gr < 5; gr++)
        for (int f = 0; f < 6; f++) {
            if (gr && f != 0 && f != 3 && f != 5) continue; /* the capped grids: one form a cluster size */
            printf("gemm cases with TILECONV_CUDA_GEMM_TF32_BM=%s TILECONV_CUDA_GEMM_TF32_CL=%s GRID=%s%s\n",
                   forms[f][0], forms[f][1], grids[gr] ? grids[gr] : "planned",
                   gr >= 3 ? " SPLIT=3" : "");
            setenv("TILECONV_CUDA_GEMM_TF32_BM", forms[f][0], 1);
            setenv("TILECONV_CUDA_GEMM_TF32_CL", forms[f][1], 1);
            if (grids[gr])
                setenv("TILECONV_CUDA_GEMM_TF32_GRID", grids[gr], 1);
            else
                unsetenv("TILECONV_CUDA_GEMM_TF32_GRID");
            if (gr >= 3)
                setenv("TILECONV_CUDA_GEMM_TF32_SPLIT", "3", 1);
            else
                unsetenv("TILECONV_CUDA_GEMM_TF32_SPLIT");
            for (int gi = 0; gi < NGC; gi++)
                if (!th_g.quick || (gcases[gi].m * gcases[gi].n * gcases[gi].k <= 10000000 &&
                                    (!gr || gcases[gi].m * gcases[gi].n <= 100000)))
                    run_gemm_case(gi, 0);
        }
    unsetenv("TILECONV_CUDA_GEMM_TF32_BM");
    unsetenv("TILECONV_CUDA_GEMM_TF32_CL");
    unsetenv("TILECONV_CUDA_GEMM_TF32_GRID");
    unsetenv("TILECONV_CUDA_GEMM_TF32_SPLIT");
    /* cuda.gemm.simt at each k depth on every case (by default BK 32 takes k a
     * multiple of 32, BK 16 the others) */
    static const char *bks[] = {"16", "32"};
    for (int b = 0; b < 2; b++) {
        printf("gemm cases with TILECONV_CUDA_GEMM_FP32_BK=%s\n", bks[b]);
        setenv("TILECONV_CUDA_GEMM_FP32_BK", bks[b], 1);
        for (int gi = 0; gi < NGC; gi++)
            if (!th_g.quick || gcases[gi].m * gcases[gi].n * gcases[gi].k <= 10000000) run_gemm_case(gi, 0);
    }
    unsetenv("TILECONV_CUDA_GEMM_FP32_BK");
}

/* The planner takes the TF32 kernel only when the flags allow it. */
static void run_conv_planner_checks(void) {
    tc_conv_desc d;
    tc_conv_desc_init(&d);
    d.nspatial = 2;
    d.batch = 8; d.in_channels = 128; d.out_channels = 128;
    d.in_size[0] = d.in_size[1] = 28;
    d.kernel_size[0] = d.kernel_size[1] = 3;
    d.padding[0] = d.padding[1] = 1;
    tc_context *ctx = NULL;
    TH_BEGIN("conv planner: TF32 only under TC_PLAN_ALLOW_TF32");
    if (CHECK_STATUS(tc_context_create(&ctx), TC_OK) &&
        CHECK_STATUS(tc_context_set_backend(ctx, TC_BACKEND_CUDA), TC_OK)) {
        tc_plan_options o;
        tc_plan_options_init(&o);
        tc_plan *pl = NULL;
        if (CHECK_STATUS(tc_plan_conv(&pl, ctx, &d, &o), TC_OK))
            CHECK(strstr(tc_plan_algorithm(pl), "tf32") == NULL, "fp32 plan chose %s",
                  tc_plan_algorithm(pl));
        tc_plan_destroy(pl);
        pl = NULL;
        o.flags = TC_PLAN_ALLOW_TF32;
        if (CHECK_STATUS(tc_plan_conv(&pl, ctx, &d, &o), TC_OK))
            CHECK(strstr(tc_plan_algorithm(pl), "-tf32") != NULL, "TF32 plan chose %s",
                  tc_plan_algorithm(pl));
        tc_plan_destroy(pl);
        pl = NULL;
        o.flags = 0;
        o.algorithm = "cuda.conv.igemm-tf32";
        CHECK_STATUS(tc_plan_conv(&pl, ctx, &d, &o), TC_ERR_NOT_APPLICABLE);
        tc_plan_destroy(pl);
        /* a stride-2 depthwise layer stays on cuda.conv.depthwise with and
         * without TF32 (an estimate without the blocks' fixed cost chose
         * the implicit GEMM there, 4.7x slower) */
        tc_conv_desc dd = d;
        dd.batch = 32; dd.groups = 128;
        dd.in_size[0] = dd.in_size[1] = 56;
        dd.stride[0] = dd.stride[1] = 2;
        for (int f = 0; f < 2; f++) {
            tc_plan_options_init(&o);
            o.flags = f ? TC_PLAN_ALLOW_TF32 : 0;
            pl = NULL;
            if (CHECK_STATUS(tc_plan_conv(&pl, ctx, &dd, &o), TC_OK))
                CHECK(strcmp(tc_plan_algorithm(pl), "cuda.conv.depthwise") == 0,
                      "depthwise plan (flags %u) chose %s", o.flags, tc_plan_algorithm(pl));
            tc_plan_destroy(pl);
        }
        /* a 31x31 mask takes cuda.conv.fft with and without TF32 (H200:
         * 0.154 ms against 2.70 for cuda.conv.igemm and 1.79 for
         * cuda.conv.igemm-tf32); the 3x3 layer above never does */
        tc_conv_desc df = d;
        df.batch = 4; df.in_channels = df.out_channels = 16;
        df.in_size[0] = df.in_size[1] = 128;
        df.kernel_size[0] = df.kernel_size[1] = 31;
        df.padding[0] = df.padding[1] = 15;
        for (int f = 0; f < 2; f++) {
            tc_plan_options_init(&o);
            o.flags = f ? TC_PLAN_ALLOW_TF32 : 0;
            pl = NULL;
            if (CHECK_STATUS(tc_plan_conv(&pl, ctx, &df, &o), TC_OK)) {
                CHECK(strcmp(tc_plan_algorithm(pl), "cuda.conv.fft") == 0,
                      "31x31 plan (flags %u) chose %s", o.flags, tc_plan_algorithm(pl));
                /* its spectra at least: 16 x 16 weights and 4 x 32 planes of
                 * 160 x 162 floats (L = 158 -> 160) */
                CHECK(tc_plan_device_workspace_size(pl) >= (size_t)(256 + 128) * 160 * 162 * 4,
                      "cuda.conv.fft reports %zu bytes of device workspace",
                      tc_plan_device_workspace_size(pl));
            }
            tc_plan_destroy(pl);
            pl = NULL;
            if (CHECK_STATUS(tc_plan_conv(&pl, ctx, &d, &o), TC_OK))
                CHECK(strcmp(tc_plan_algorithm(pl), "cuda.conv.fft") != 0,
                      "3x3 plan (flags %u) chose cuda.conv.fft", o.flags);
            tc_plan_destroy(pl);
        }
    }
    tc_context_destroy(ctx);
    TH_END();

    /* the scratch check can fail: an igemm plan whose reported device
     * workspace is below 15 partial sums, executed with TILECONV_CUDA_CONV_SHAPE
     * "64,16" set after planning (72 k-steps of 16 in parts of 5: S = 15),
     * is an internal error */
    TH_BEGIN("device scratch over the plan's report is caught (TILECONV_CUDA_CHECK_SCRATCH)");
    {
        tc_plan_options o;
        tc_plan_options_init(&o);
        o.algorithm = "cuda.conv.igemm";
        tc_plan *pl = NULL;
        const size_t forced = (size_t)15 * 128 * (8 * 28 * 28) * sizeof(float);
        if (CHECK_STATUS(tc_plan_conv(&pl, NULL, &d, &o), TC_OK)) {
            if (tc_plan_device_workspace_size(pl) < forced) {
                const int64_t nx = 8 * 128 * 28 * 28, nw = 128 * 128 * 9;
                float *x = malloc(nx * 4), *w = malloc(nw * 4), *y = malloc(nx * 4);
                th_rng r = th_rng_for(77);
                fill(x, nx, &r);
                fill(w, nw, &r);
                setenv("TILECONV_CUDA_CONV_SHAPE", "64,16", 1);
                tc_status st = tc_execute_conv(pl, y, x, w, NULL, NULL);
                unsetenv("TILECONV_CUDA_CONV_SHAPE");
                CHECK(st == TC_ERR_INTERNAL && strstr(tc_last_error(), "device scratch"),
                      "status %d (%s), expected the scratch check", (int)st, tc_last_error());
                free(x); free(w); free(y);
            } else {
                printf("  (the plan reports %zu bytes, not below the forced split's %zu: "
                       "nothing to catch)\n", tc_plan_device_workspace_size(pl), forced);
            }
        }
        tc_plan_destroy(pl);
    }
    TH_END();
}

/* cuda.conv.igemm-tf32's kernel forms beside the default one (the tiled
 * kernel's register-staged mma.sync form), forced through TILECONV_CUDA_CONV_TF32_KERNEL
 * on every conv case (src/cuda/conv/igemm_select.cu): 1 the tiled
 * mma.sync form with the cp.async gather and, where the device runs
 * sm_90a code, the wgmma kernels: 4 the tiled wgmma form, 7 the shifted
 * views with cp.async copies (stride 1, C/G % 4 == 0, at least 3 taps,
 * padded width <= 128; the tiled kernel takes the other cases), 8 the
 * same with TMA copies (the zero-padded cases with G == 1 or C/G % 32 ==
 * 0; the cp.async copies take the others), 11 / 12 the 1x1 stream,
 * mma.sync / wgmma, on every 1x1 case it fits (the tiled kernel's layers
 * otherwise), 13 the depth ring on every zero-padded stride-1 case with
 * C/G <= 32, 2D ones included; host pointers (every conv solver runs
 * again; the variant only changes igemm-tf32). Where the probe finds no
 * sm_90a image, TFV=4, 7 and 8 run the default form again. */
static void run_conv_tf32_variants(void) {
    static const char *vs[] = {"1", "4", "7", "8", "11", "12", "13"};
    /* TILECONV_TEST_CUDA_TF32_KERNEL=V: that variant alone (sanitizer runs of one kernel) */
    const char *only = tc__knob_get(TC__KNOB_TEST_CUDA_TF32_KERNEL);
    /* a single non-TF32 solver (TILECONV_TEST_CUDA_CONV_SOLVER, sanitizer runs):
     * the variants do not change it, so its cases would only repeat */
    if (conv_only_solver && !strstr(conv_only_solver, "tf32")) return;
    for (int v = 0; v < (int)(sizeof vs / sizeof vs[0]); v++) {
        if (only && strcmp(only, vs[v])) continue;
        printf("conv cases with TILECONV_CUDA_CONV_TF32_KERNEL=%s\n", vs[v]);
        setenv("TILECONV_CUDA_CONV_TF32_KERNEL", vs[v], 1);
        /* the 1x1 stream with 3 blocks along the tiles: several tiles a
         * block, the stages running across tile boundaries */
        if (v >= 4) setenv("TILECONV_CUDA_CONV_GRID", "3", 1);
        /* the depth ring (TFV=13, on the 2D layers too): two output planes an item,
         * so that the items and the plane ring wrap within a block */
        if (!strcmp(vs[v], "13")) setenv("TILECONV_CUDA_CONV_RING_PLANES", "2", 1);
        for (int ci = 0; ci < NCC; ci++) run_conv_case(ci, 0, 0, 0);
        unsetenv("TILECONV_CUDA_CONV_GRID");
        unsetenv("TILECONV_CUDA_CONV_RING_PLANES");
    }
    unsetenv("TILECONV_CUDA_CONV_TF32_KERNEL");
}

/* cuda.conv.fft in chunks of two images (TILECONV_CUDA_CONV_FFT_NB): several
 * chunks, and a short last one (N = 3, 9), on every conv case; then every
 * conv case under each of the product's three forms
 * (TILECONV_CUDA_CONV_FFT_TILE), whichever the geometry would pick; then with
 * the fused transforms forced on where they fit and off
 * (TILECONV_CUDA_CONV_FFT_FUSED) */
static void run_conv_fft_chunks(void) {
    if (tc__knob_get(TC__KNOB_TEST_CUDA_TF32_KERNEL)) return;
    const char *only = conv_only_solver;
    if (only && strcmp(only, "cuda.conv.fft")) return;
    printf("conv cases: cuda.conv.fft with TILECONV_CUDA_CONV_FFT_NB=2\n");
    setenv("TILECONV_CUDA_CONV_FFT_NB", "2", 1);
    conv_only_solver = "cuda.conv.fft";
    for (int ci = 0; ci < NCC; ci++)
        if (ccases[ci].N > 2) run_conv_case(ci, 0, 0, 0);
    unsetenv("TILECONV_CUDA_CONV_FFT_NB");
    static const char *tiles[] = {"big", "small", "direct"};
    for (int t = 0; t < 3; t++) {
        printf("conv cases: cuda.conv.fft with TILECONV_CUDA_CONV_FFT_TILE=%s\n", tiles[t]);
        setenv("TILECONV_CUDA_CONV_FFT_TILE", tiles[t], 1);
        for (int ci = 0; ci < NCC; ci++) run_conv_case(ci, 0, 0, 0);
    }
    unsetenv("TILECONV_CUDA_CONV_FFT_TILE");
    /* the fused 64 x 64 transforms on every 2D case they fit (E <= 64),
     * and cuFFT on the cases that take them by default */
    static const char *fused[] = {"1", "0"};
    for (int f = 0; f < 2; f++) {
        printf("conv cases: cuda.conv.fft with TILECONV_CUDA_CONV_FFT_FUSED=%s\n", fused[f]);
        setenv("TILECONV_CUDA_CONV_FFT_FUSED", fused[f], 1);
        for (int ci = 0; ci < NCC; ci++) {
            /* quick (the sanitizers): up to 2048 planes (a block each in
             * the fused kernels; racecheck did not finish the 512-channel
             * cases' 20k weight planes in 90 s) */
            const ccase *c = &ccases[ci];
            if (th_g.quick && c->K * (c->C / c->G) + c->N * (c->C + c->K) > 2048) continue;
            run_conv_case(ci, 0, 0, 0);
        }
    }
    unsetenv("TILECONV_CUDA_CONV_FFT_FUSED");
    conv_only_solver = only;
}

/* every CUDA solver of the registry (src/core/registry.c) is in one of the
 * lists above, so that a new one cannot go untested */
static void check_lists_cover_registry(void) {
    TH_BEGIN("the solver lists cover the registry's CUDA solvers");
    for (int i = 0; i < tc_algorithm_count(); i++) {
        tc_algorithm_info ai;
        if (tc_algorithm_get(i, &ai) != TC_OK || ai.backend != TC_BACKEND_CUDA) continue;
        int found = !strcmp(ai.name, "cuda.conv.igemm-half") || /* run_conv_half_native_all */
                    !strcmp(ai.name, "cuda.filter.direct-half") || /* run_filter_half_native_all */
                    !strcmp(ai.name, "cuda.conv.igemm-half-halo") ||
                    !strcmp(ai.name, "cuda.conv.igemm-half-shifted") ||
                    !strcmp(ai.name, "cuda.conv.igemm-half-stream");
        for (int s = 0; s < NFS && !found; s++) found = !strcmp(ai.name, filter_solvers[s]);
        for (int s = 0; s < NGS && !found; s++) found = !strcmp(ai.name, gemm_solvers[s]);
        for (int s = 0; s < NCS && !found; s++) found = !strcmp(ai.name, conv_solvers[s]);
        CHECK(found, "%s is in none of test_cuda's solver lists", ai.name);
    }
    TH_END();
}

static void run_filter_separable_forms(int quick)
{
    /* cuda.filter.separable's forms besides its default (which the filter
     * case loops run: the register z window with the near boundary map for
     * float32 3D, else the row stream x + y, which declines these small
     * arrays for the fused x + y kernel):
     * TILECONV_CUDA_SEPARABLE_FUSED=0 (one pass per axis), =1 (x + y
     * (+ z) fused where it applies) and =4 (the stream forms, the row
     * stream forced) on every case, =2 (x + y fused, then a z pass) and =3
     * (the register z window with the full map, float32) on the 3D ones;
     * every mode in float32 and float64 (=3: float32) on host pointers, one
     * mode on device pointers */
    for (int kv = 0; kv <= 4 && !tc__knob_get(TC__KNOB_CUDA_SEPARABLE_FUSED); kv++) {
        only_solver = "cuda.filter.separable";
        setenv("TILECONV_CUDA_SEPARABLE_FUSED", kv == 4 ? "4" : kv == 3 ? "3" : kv == 2 ? "2" : kv ? "1" : "0", 1);
        for (int f64 = 0; f64 < (kv == 3 ? 1 : 2); f64++)
            for (int ci = 0; ci < NFC; ci++)
                for (int mi = 0; mi < 5; mi++) {
                    if ((quick && mi % 2) || ((kv == 2 || kv == 3) && fcases[ci].nsp < 3)) continue;
                    run_filter_case(ci, mi, 0, f64 ? TC_FLOAT64 : TC_FLOAT32);
#if TC_TEST_CUDA
                    int swap = fcases[ci].out == TC_OUTPUT_VALID &&
                               fcases[ci].mask[fcases[ci].nsp - 1] > fcases[ci].shape[fcases[ci].nsp - 1];
                    if (!swap && mi == (ci + f64) % 5) run_filter_case(ci, mi, 1, f64 ? TC_FLOAT64 : TC_FLOAT32);
#endif
                }
        unsetenv("TILECONV_CUDA_SEPARABLE_FUSED");
        only_solver = NULL;
    }
    /* the register z window's 16-row tiles (TILECONV_CUDA_SEPARABLE_ZREG_TY=16;
     * 32 rows the default): the 3D cases, float32, every mode on host
     * pointers, one on device pointers */
    if (!tc__knob_get(TC__KNOB_CUDA_SEPARABLE_FUSED) && !tc__knob_get(TC__KNOB_CUDA_SEPARABLE_ZREG_TY)) {
        only_solver = "cuda.filter.separable";
        setenv("TILECONV_CUDA_SEPARABLE_ZREG_TY", "16", 1);
        for (int ci = 0; ci < NFC; ci++)
            for (int mi = 0; mi < 5; mi++) {
                if ((quick && mi % 2) || fcases[ci].nsp < 3) continue;
                run_filter_case(ci, mi, 0, TC_FLOAT32);
#if TC_TEST_CUDA
                if (mi == ci % 5) run_filter_case(ci, mi, 1, TC_FLOAT32);
#endif
            }
        unsetenv("TILECONV_CUDA_SEPARABLE_ZREG_TY");
        only_solver = NULL;
    }
}

int main(int argc, char **argv) {
    th_init(argc, argv);
    check_lists_cover_registry();
    conv_only_solver = tc__knob_get(TC__KNOB_TEST_CUDA_CONV_SOLVER);
    if (conv_only_solver && !conv_only_solver[0]) conv_only_solver = NULL; /* set but empty */
    /* batched host-array filters run chunk by chunk on two streams
     * (transfers overlapped with compute); one batch item per chunk here,
     * so every batched host case takes that path */
    setenv("TILECONV_CUDA_CHUNK_BYTES", "1", 0);
    /* every execute checks that it took no more device scratch than its
     * plan reports (tc_plan_device_workspace_size): an internal error
     * fails the case */
    setenv("TILECONV_CUDA_CHECK_SCRATCH", "1", 0);
    int ndev = tc_cuda_device_count();
    int ngpu_solvers = 0;
    for (int i = 0; i < tc_algorithm_count(); i++) {
        tc_algorithm_info ai;
        if (tc_algorithm_get(i, &ai) == TC_OK && ai.backend == TC_BACKEND_CUDA && ai.available)
            ngpu_solvers++;
    }
    if (ndev == 0 || ngpu_solvers == 0) {
        printf("SKIP all GPU cases: %s\n",
               ndev == 0 ? "tc_cuda_device_count() == 0 (no CUDA driver or GPU, or built "
                           "without CUDA)"
                         : "no CUDA algorithm is usable on this device (built for sm_90)");
        th_g.skipped += 1;
        run_fallback_checks();
        return th_finish();
    }
    printf("%d CUDA device(s), %d CUDA algorithms available\n", ndev, ngpu_solvers);
    int quick = th_g.quick;
    /* TILECONV_TEST_CUDA_GEMM_ONLY=1: the GEMM cases alone (sanitizer runs of
     * the GEMM kernels) */
    const char *gemm_only = tc__knob_get(TC__KNOB_TEST_CUDA_GEMM_ONLY);
    if (gemm_only && gemm_only[0] == '1') {
        for (int gi = 0; gi < NGC; gi++) {
            /* quick (the sanitizers): cases up to 10M multiply-adds */
            if (quick && gcases[gi].m * gcases[gi].n * gcases[gi].k > 10000000) continue;
            run_gemm_case(gi, 0);
#if TC_TEST_CUDA
            run_gemm_case(gi, 1);
#endif
        }
        run_gemm_tf32_checks();
        run_gemm_3xtf32_checks();
        run_gemm_variants();
        run_gemm_half_all();
        printf("(%ld solver/case pairs not applicable, not counted)\n", n_na);
        return th_finish();
    }
    /* TILECONV_TEST_CUDA_CONV_ONLY=1: the conv-layer cases alone (sanitizer runs
     * of the conv kernels) */
    const char *conv_only = tc__knob_get(TC__KNOB_TEST_CUDA_CONV_ONLY);
    if (conv_only && conv_only[0] == '1') {
        /* with TILECONV_TEST_CUDA_TF32_KERNEL set, that TF32 variant's loop alone */
        for (int ci = 0; ci < NCC && !tc__knob_get(TC__KNOB_TEST_CUDA_TF32_KERNEL); ci++) {
            run_conv_case(ci, 0, 0, 0);
#if TC_TEST_CUDA
            run_conv_case(ci, 1, 0, 0);
            run_conv_case(ci, 1, 0, 1); /* channels-last weights, device staging */
#endif
            if (!quick) run_conv_case(ci, 0, 1, 0);
            if (!quick && ci % 4 == 0) run_conv_case(ci, 0, 0, 1); /* host staging */
        }
        if (!tc__knob_get(TC__KNOB_TEST_CUDA_TF32_KERNEL)) run_conv_staged_all();
        if (!tc__knob_get(TC__KNOB_TEST_CUDA_TF32_KERNEL)) run_conv_half_native_all();
        run_conv_tf32_variants();
        run_conv_fft_chunks();
#if TC_TEST_CUDA
        run_conv_concurrent();
#endif
        run_conv_planner_checks();
        printf("(%ld solver/case pairs not applicable, not counted)\n", n_na);
        return th_finish();
    }
    run_gpu_api_checks();
    /* TILECONV_TEST_CUDA_FILTER_ONLY=half: the float16 / bfloat16 filter
     * cases alone (staged and native); =separable: cuda.filter.separable's
     * forms alone */
    {
        const char *fo = tc__knob_get(TC__KNOB_TEST_CUDA_FILTER_ONLY);
        if (fo && !strcmp(fo, "separable")) {
            run_filter_separable_forms(quick);
            printf("(%ld solver/case pairs not applicable, not counted)\n", n_na);
            return th_finish();
        }
        if (fo && !strcmp(fo, "half")) {
            run_filter_half_all();
            run_filter_half_native_all();
            printf("(%ld solver/case pairs not applicable, not counted)\n", n_na);
            return th_finish();
        }
    }
    /* float32, then float64: every case and mode on host pointers (quick:
     * one mode in two), one mode of each on device pointers (float32 mode
     * ci % 5, float64 (ci + 2) % 5) */
    for (int f64 = 0; f64 < 2; f64++)
        for (int ci = 0; ci < NFC; ci++)
            for (int mi = 0; mi < 5; mi++) {
                if (quick && (ci % 3 || mi % 2)) continue;
                const tc_dtype dt = f64 ? TC_FLOAT64 : TC_FLOAT32;
                run_filter_case(ci, mi, 0, dt);
#if TC_TEST_CUDA
                /* device pointers: not for the swapped valid case, where the
                 * core packs the caller's input on the host */
                int swap = fcases[ci].out == TC_OUTPUT_VALID &&
                           fcases[ci].mask[fcases[ci].nsp - 1] > fcases[ci].shape[fcases[ci].nsp - 1];
                if (!swap && (mi == (ci + 2 * f64) % 5 || fcases[ci].out != TC_OUTPUT_SAME))
                    run_filter_case(ci, mi, 1, dt);
#endif
            }
    /* TC_PLAN_MASK_AT_EXECUTE (cuda.filter.direct's per-call mask): every
     * case, float32 and float64, one mode each on host pointers (host mask)
     * and another on device pointers (device mask, and -m in a second call
     * enqueued behind the first) */
    g_mexec = 1;
    for (int f64 = 0; f64 < 2; f64++)
        for (int ci = 0; ci < NFC; ci++)
            for (int mi = 0; mi < 5; mi++) {
                if (quick && ci % 3) continue;
                const tc_dtype dt = f64 ? TC_FLOAT64 : TC_FLOAT32;
                const int same = fcases[ci].out == TC_OUTPUT_SAME;
                if (!same || mi == (ci + 1 + f64) % 5) run_filter_case(ci, mi, 0, dt);
#if TC_TEST_CUDA
                if (!same || mi == (ci + 3 + f64) % 5) run_filter_case(ci, mi, 1, dt);
#endif
            }
    g_mexec = 0;
    run_filter_f64_planner_checks();
    for (int ci = 0; ci < NNF; ci++)
        for (int mi = 0; mi < 2; mi++)
            if (!quick || mi == 0) run_nonfinite_case(ci, mi);
    for (int ci = 0; ci < NNFT; ci++)
        for (int mi = 0; mi < 2; mi++)
            run_nonfinite_case_of(&nfcases_tc[ci], 100 + ci, mi, "cuda.filter.tc-3xtf32");
    run_filter_tc_accuracy();
#if TC_TEST_CUDA
    run_filter_concurrent();
#endif
    run_filter_half_all();
    run_filter_half_native_all();
    /* every cuda.filter.direct kernel variant, tuning alternatives included (the
     * planner takes only some of them), forced through
     * TILECONV_CUDA_DIRECT_VARIANT on the cases it applies to: constant,
     * reflect and wrap, host pointers; the NG >= 1 forms (lean tiles, register
     * z window) in every mode, and again as "i:2" (at most two blocks of lean
     * tiles, one chunk of the whole depth per xy tile), so that the small
     * cases also walk several tiles or planes a block */
    if (!tc__knob_get(TC__KNOB_CUDA_DIRECT_VARIANT)) {
        only_solver = "cuda.filter.direct";
        for (int v = 0; v < TC_CU_DIRECT_NSHAPES; v++) {
            const int ng = tc_cu_direct_shapes[v].ng;
            for (int cap = 0; cap <= (ng ? 2 : 0); cap += 2) {
                char ev[32];
                if (cap) snprintf(ev, sizeof ev, "%d:%d", v, cap);
                else snprintf(ev, sizeof ev, "%d", v);
                setenv("TILECONV_CUDA_DIRECT_VARIANT", ev, 1);
                for (int ci = 0; ci < NFC; ci++)
                    for (int mi = 0; mi < 5; mi += ng ? 1 : 2)
                        if (!quick || mi == 0) run_filter_case(ci, mi, 0, TC_FLOAT32);
                /* the NG 0 variants' per-call device-mask kernels (_dm):
                 * constant on host pointers, wrap on device pointers */
                g_mexec = 1;
                for (int ci = 0; ci < NFC && !ng; ci++) {
                    run_filter_case(ci, 0, 0, TC_FLOAT32);
#if TC_TEST_CUDA
                    if (!quick) run_filter_case(ci, 4, 1, TC_FLOAT32);
#endif
                }
                g_mexec = 0;
            }
        }
        unsetenv("TILECONV_CUDA_DIRECT_VARIANT");
        /* the 3D plane ring and the register z window with 1 and 3 output
         * planes a block (TILECONV_CUDA_DIRECT_ZC): chunk edges inside every
         * volume, reflect (planes mapped at both ends of a chunk); the
         * window's variants forced, the ring's the planner's */
        static const char *const zcs[] = {"1", "3"};
        for (int k = 0; k < 2; k++) {
            setenv("TILECONV_CUDA_DIRECT_ZC", zcs[k], 1);
            for (int ci = 0; ci < NFC; ci++)
                if (fcases[ci].nsp == 3) run_filter_case(ci, 2, 0, TC_FLOAT32);
            for (int v = 0; v < TC_CU_DIRECT_NSHAPES; v++) {
                if (tc_cu_direct_shapes[v].ng < 1 || tc_cu_direct_shapes[v].R < 2) continue;
                char ev[32];
                snprintf(ev, sizeof ev, "%d", v);
                setenv("TILECONV_CUDA_DIRECT_VARIANT", ev, 1);
                for (int ci = 0; ci < NFC; ci++)
                    if (fcases[ci].nsp == 3) run_filter_case(ci, 2, 0, TC_FLOAT32);
            }
            unsetenv("TILECONV_CUDA_DIRECT_VARIANT");
        }
        unsetenv("TILECONV_CUDA_DIRECT_ZC");
        only_solver = NULL;
    }
    run_filter_separable_forms(quick);
    /* TILECONV_TEST_CUDA_FILTER_ONLY=1: the API checks and the filter cases
     * alone (scripts/gpu-check.sh runs the filter, GEMM and conv parts as
     * three processes, so that a kernel that traps in one part, which ends
     * its process's CUDA context, leaves the others' results standing) */
    const char *filter_only = tc__knob_get(TC__KNOB_TEST_CUDA_FILTER_ONLY);
    if (filter_only && filter_only[0] == '1') {
        printf("(%ld solver/case pairs not applicable, not counted)\n", n_na);
        return th_finish();
    }
    for (int gi = 0; gi < NGC; gi++) {
        if (quick && gi % 2) continue;
        run_gemm_case(gi, 0);
#if TC_TEST_CUDA
        run_gemm_case(gi, 1);
#endif
    }
    run_gemm_tf32_checks();
    run_gemm_3xtf32_checks();
    run_gemm_variants();
    run_gemm_half_all();
    for (int ci = 0; ci < NCC; ci++) {
        run_conv_case(ci, 0, 0, 0);
#if TC_TEST_CUDA
        run_conv_case(ci, 1, 0, 0);
        run_conv_case(ci, 1, 0, 1); /* channels-last weights, device staging */
#endif
        if (!quick) run_conv_case(ci, 0, 1, 0);
        if (!quick && ci % 4 == 0) run_conv_case(ci, 0, 0, 1); /* host staging */
    }
    run_conv_staged_all();
    run_conv_half_native_all();
    run_conv_tf32_variants();
    run_conv_fft_chunks();
#if TC_TEST_CUDA
    run_conv_concurrent();
#endif
    run_conv_planner_checks();
    printf("(%ld solver/case pairs not applicable, not counted)\n", n_na);
    return th_finish();
}
