/*
 * internal.h - what every solver and the core share. Not installed.
 *
 * THE ONE PROBLEM. Filter and conv are both lowered, at plan time, to one
 * generalised cross-correlation on dense C-order arrays:
 *
 *   y[n][k][p0][p1][p2] = bias[k] +
 *       sum_{c < Cg} sum_{r0,r1,r2}
 *           w[k][c][r0][r1][r2] *
 *           X(n, g*Cg + c, p0*stride0 + r0*dil0 - pad_lo0, ...)
 *
 * with g = k / (K/G), Cg = C/G, and X the input extended beyond its edges
 * by the boundary mode (cval for CONSTANT). Unused spatial axes have size 1.
 * A scipy "convolve" is a correlate with the mask flipped: the core flips
 * the plan's copy of the mask, so solvers never see convolve (except CUDA
 * solvers given a per-call device mask: tc__args.wflip). scipy origins
 * and output kinds become pad_lo/pad_hi. Solvers see contiguous arrays: the
 * core packs strided caller arrays into the workspace before calling them.
 *
 * GEMM is its own problem kind (op == TC_OP_GEMM), row-major.
 *
 * A SOLVER is one file that defines one `const tc__solver` and appears once
 * in src/core/registry.c. The planner asks `applicable`, then `estimate`,
 * then calls `plan` on the winner; `execute` must be re-entrant (const
 * state, scratch only from args->ws).
 */
#ifndef TC_INTERNAL_H
#define TC_INTERNAL_H

#include "tileconv.h"
#include "knobs.h" /* environment knobs: tc__knob_get */

#include <stddef.h>
#include <stdint.h>

#define TC__NSP 3 /* spatial axes stored; unused ones have size 1 */

typedef struct tc__problem {
    unsigned op;        /* TC_OP_FILTER, TC_OP_CONV or TC_OP_GEMM */
    tc_dtype dtype;
    size_t esize;       /* bytes per element */

    /* --- correlation problems (FILTER, CONV) --- */
    int nsp;            /* spatial rank given by the user, 1..3; axes
                           nsp..2 are padded with size 1 at the FRONT:
                           a 1D problem of length L is in = {1, 1, L} */
    int64_t N, C, K, G; /* batch, in channels, out channels, groups */
    int64_t in[TC__NSP], msk[TC__NSP], out[TC__NSP];
    int64_t stride[TC__NSP], dil[TC__NSP];
    int64_t pad_lo[TC__NSP], pad_hi[TC__NSP]; /* >= 0 or < 0 (crop) */
    tc_mode mode;
    double cval;
    int has_bias;
    /* Conv only: layout of x, y and the residual; the fused epilogue
     * y = act(acc + bias + residual) (bias above). Solvers see these only
     * when their caps say they handle them; otherwise the core stages the
     * problem (see tc__solver.caps). */
    tc_layout layout;
    /* Conv only: layout of the weights (args->w, and what wpack is given):
     * TC_LAYOUT_CHANNELS_FIRST = K x C/G x mask, TC_LAYOUT_CHANNELS_LAST =
     * K x mask x C/G. Only solvers with TC__CAP_WEIGHTS_CL see
     * CHANNELS_LAST; for the others the core reorders the weights (staged
     * problem: CHANNELS_FIRST). */
    tc_layout wlayout;
    tc_activation act;
    int has_residual;
    /* Filter only: the plan-owned mask (already flipped for convolve),
     * msk[0]*msk[1]*msk[2] elements of dtype. NULL for conv (weights come
     * with each execute) and for plans with TC_PLAN_MASK_AT_EXECUTE (the
     * mask comes with each execute as args->w; see TC__CAP_MASK_AT_EXECUTE).
     * Solvers may precompute from it at plan time. */
    const void *mask;
    /* Filter in float16 / bfloat16: the plan-owned float32 copy of mask,
     * which staged solvers see (src/core/stage.c). NULL otherwise. */
    const void *mask_f32;
    /* Filter with the mask larger than the input (valid, swapped): the
     * core handles it; solvers never see it. */

    /* --- GEMM --- */
    int trans_a, trans_b;
    int64_t m, n, k, lda, ldb, ldc;
    double alpha, beta;
} tc__problem;

/* Element counts of the dense arrays a solver sees. */
static inline int64_t tc__x_count(const tc__problem *p) {
    return p->N * p->C * p->in[0] * p->in[1] * p->in[2];
}
static inline int64_t tc__y_count(const tc__problem *p) {
    return p->N * p->K * p->out[0] * p->out[1] * p->out[2];
}
static inline int64_t tc__w_count(const tc__problem *p) {
    return p->K * (p->C / p->G) * p->msk[0] * p->msk[1] * p->msk[2];
}

/* What planning and execution may use of the machine. */
typedef struct tc__env {
    int threads;          /* >= 1 */
    tc_backend backend;   /* preference from the context */
    unsigned cpu;         /* TC__CPU_* bits */
    unsigned flags;       /* TC_PLAN_* flags of this plan */
} tc__env;

#define TC__CPU_AVX2 1u     /* avx2 + fma */
#define TC__CPU_AVX512 2u   /* avx512f + avx512bw + avx512vl + avx512dq */
#define TC__CPU_AVX512BF16 4u /* avx512_bf16 (vdpbf16ps), with TC__CPU_AVX512 */
unsigned tc__cpu_detect(void); /* cached; thread-safe */
/* Microarchitecture family (src/core/machine.c), for cost models and for
 * kernels whose best blocking differs between them. */
typedef enum tc__uarch {
    TC__UARCH_UNKNOWN = 0,
    TC__UARCH_ZEN,          /* Zen 1-3: AVX2 */
    TC__UARCH_ZEN4,         /* AVX-512 split over two 256-bit pipes */
    TC__UARCH_ZEN5,         /* full-rate AVX-512 */
    TC__UARCH_INTEL_AVX512, /* two 512-bit FMA ports assumed */
    TC__UARCH_INTEL
} tc__uarch;
tc__uarch tc__cpu_uarch(void);
/* FP32 FLOP/s of one core and memory bandwidth (0 = unknown) the cost
 * model uses: measured (tc_machine_set_ceilings, or the ceilings cache
 * file) or per-microarchitecture defaults. */
double tc__machine_flops_core(void);
/* The same for bfloat16 dot products (vdpbf16ps: twice the fp32 FMA's
 * products per instruction); the fp32 rate without AVX512-BF16. */
double tc__machine_flops_core_bf16(void);
double tc__machine_bandwidth(void);

/* Arguments of one execute call, all arrays dense and C-order. */
typedef struct tc__args {
    const tc__problem *p;
    const void *state;    /* what the solver's plan() returned, or NULL */
    void *y;
    const void *x;
    const void *w;        /* conv: caller's weights (layout p->wlayout);
                             filter: p->mask, or
                             the call's mask (TC_PLAN_MASK_AT_EXECUTE) */
    const void *bias;     /* NULL unless p->has_bias */
    const void *residual; /* NULL unless p->has_residual: y's shape, layout
                             and dtype; may equal y (in place) */
    const void *wpack;    /* conv: non-NULL iff the solver has wpack: its
                             packed form of w (from tc_plan_conv_set_weights,
                             or packed by the core for this call) */
    /* gemm: y = C, x = A, w = B */
    void *ws;             /* solver scratch, >= workspace(p) bytes,
                             64-byte aligned */
    int threads;
    void *stream;         /* backend stream (CUDA), NULL on the CPU */
    /* CUDA: the plan's device_workspace bound (dev_ws_set = 1 when the
     * execute runs the plan's own solver and state); the backend checks it
     * under TILECONV_CUDA_CHECK_SCRATCH=1 */
    size_t dev_ws;
    int dev_ws_set;
    /* TC_PLAN_MASK_AT_EXECUTE, CUDA solvers: 1 when w is the caller's
     * convolve mask, to be read reversed (the core cannot flip a device
     * mask; CPU solvers get it flipped in the workspace). 0 otherwise. */
    int wflip;
} tc__args;

struct tc__cu_report; /* src/cuda/cuda_report.cu */

typedef struct tc__solver {
    const char *name;     /* "cpu.filter.direct-halo": backend.family.variant */
    tc_backend backend;
    unsigned ops;         /* TC_OP_* bit set */
    const char *summary;  /* one sentence for `tileconv info` */
    /* Is the solver compiled and usable on this machine (e.g. ISA, GPU)?
     * NULL means always. */
    int (*available)(void);
    /* Does it handle this problem? On 0, may write a short reason (for
     * forced algorithms) into why[0..why_size). */
    int (*applicable)(const tc__problem *p, const tc__env *env, char *why,
                      size_t why_size);
    /* Estimated seconds for one execute (ESTIMATE mode). */
    double (*estimate)(const tc__problem *p, const tc__env *env);
    /* Scratch bytes needed by execute. NULL means 0. */
    size_t (*workspace)(const tc__problem *p, const tc__env *env);
    /* Optional: precompute state (packed masks, FFT plans). NULL = none. */
    tc_status (*plan)(const tc__problem *p, const tc__env *env,
                      void **state);
    void (*destroy)(void *state);
    tc_status (*execute)(const tc__args *a);
    /* Optional, conv only: the solver's packed (blocked, transformed) form
     * of the weights. wpack_size gives its bytes; wpack writes it to dst
     * (64-byte aligned) from the caller's dense K x C/G x R0 x R1 x R2
     * weights (K x R0 x R1 x R2 x C/G when p->wlayout is channels-last,
     * which only a solver with TC__CAP_WEIGHTS_CL sees). The core packs once in tc_plan_conv_set_weights, or into a
     * workspace region on every execute that passes weights, and hands the
     * result to execute as args->wpack. Both NULL = no packing. CUDA
     * solvers: the core packs only in tc_plan_conv_set_weights and holds
     * the packed form on the device (args->wpack is then a device
     * pointer); an execute that passes its own weights gets wpack NULL and
     * the solver packs them on the device itself. */
    size_t (*wpack_size)(const tc__problem *p, const tc__env *env);
    tc_status (*wpack)(const tc__problem *p, const tc__env *env,
                       const void *state, const void *w, void *dst);
    /* Optional, CUDA: the most device memory one execute takes from the
     * backend's stream-ordered pool (the sum of its allocations; operands
     * staged from host memory not counted), given the plan's state.
     * NULL means none. Reported by tc_plan_device_workspace_size. */
    size_t (*device_workspace)(const tc__problem *p, const tc__env *env,
                               const void *state);
    /* What the solver handles itself (TC__CAP_*). For a problem that needs
     * something outside its caps, the solver is asked about, planned for
     * and run on a staged problem instead: float32 in place of float16 /
     * bfloat16, channels-first in place of channels-last (x, y, residual;
     * the weights' own layout with TC__CAP_WEIGHTS_CL), no activation
     * and no residual (bias stays with the solver); the core converts the
     * operands in its workspace and applies the epilogue and the output
     * conversion in one pass (src/core/stage.c). A solver with a cap still
     * says in `applicable` which of those problems it takes. */
    unsigned caps;
    /* Optional, CUDA: adds the solver's kernels (registers, shared memory,
     * occupancy) to tc_cuda_kernel_report, which walks this registry
     * (src/cuda/cuda_report.cu); solvers that share kernels share the
     * function, which then runs once. NULL = none. */
    void (*report)(struct tc__cu_report *r);
    /* Optional: the caps for this problem, when the solver's own handling
     * covers only some of the problems a cap admits (the rest are staged as
     * if it lacked the cap). The core uses caps_for(p) & caps wherever it
     * decides staging (tc__solver_caps). NULL = caps for every problem. */
    unsigned (*caps_for)(const tc__problem *p);
} tc__solver;

#define TC__CAP_HALF 1u          /* TC_FLOAT16 / TC_BFLOAT16 storage */
#define TC__CAP_CHANNELS_LAST 2u /* p->layout == TC_LAYOUT_CHANNELS_LAST */
#define TC__CAP_EPILOGUE 4u      /* p->act and p->has_residual */
#define TC__CAP_ALL 7u
/* Not a staging cap: the solver reads a filter's mask from args->w on
 * every execute and never from p->mask (whose values it does not need at
 * plan time), so it runs plans made with TC_PLAN_MASK_AT_EXECUTE (p->mask
 * NULL; CUDA solvers also honour args->wflip). Only solvers with it are
 * applicable to such plans. */
#define TC__CAP_MASK_AT_EXECUTE 8u
/* Conv: the solver reads weights in either layout, p->wlayout (args->w on
 * each execute, and the w its wpack is given, are K x mask x C/G when
 * p->wlayout == TC_LAYOUT_CHANNELS_LAST). Without it the core reorders
 * channels-last weights to K x C/G x mask first (TC__STAGE_WLAYOUT): per
 * execute into the workspace (host weights on the host, device weights on
 * the device), and once in tc_plan_conv_set_weights for plan-held ones.
 * Not part of TC__CAP_ALL: a solver claims it by name. */
#define TC__CAP_WEIGHTS_CL 16u
static inline unsigned tc__solver_caps(const tc__solver *s, const tc__problem *p) {
    return s->caps_for ? s->caps_for(p) & s->caps : s->caps;
}

/* The registry (src/core/registry.c): NULL-terminated, reference last. */
extern const tc__solver *const tc__solvers[];
const tc__solver *tc__solver_find(const char *name);
/* Reference solvers are named "ref.*": never measured by MEASURE when
 * another solver applies. */
int tc__solver_is_reference(const tc__solver *s);
/* 1 for the algorithms TC_PLAN_DIRECT leaves out (their transforms add
 * rounding: Winograd, FFT, Strassen, separable / low-rank, split
 * precision). */
int tc__solver_is_transform(const tc__solver *s);
/* s->applicable with the plan flags' own rules first (TC_PLAN_DIRECT,
 * TC_PLAN_MASK_AT_EXECUTE). */
int tc__applicable(const tc__solver *s, const tc__problem *p, const tc__env *env, char *why,
                   size_t why_size);

/* ---- errors (src/core/status.c) ---- */
/* Records a printf-style message for tc_last_error and returns status. */
tc_status tc__error(tc_status status, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void tc__error_clear(void);

/* ---- checked arithmetic (returns 0 on overflow) ---- */
static inline int tc__mul_ok(int64_t a, int64_t b, int64_t *r) {
    return !__builtin_mul_overflow(a, b, r);
}
static inline int tc__add_ok(int64_t a, int64_t b, int64_t *r) {
    return !__builtin_add_overflow(a, b, r);
}
/* Ceiling of a / b for a >= 0, b > 0, without the a + b - 1 that
 * overflows when a or b is near INT64_MAX (hostile strides, paddings). */
static inline int64_t tc__cdiv64(int64_t a, int64_t b) {
    return a / b + (a % b != 0);
}

/* ---- memory (src/core/memory.c): 64-byte aligned, NULL on failure ---- */
void *tc__alloc(size_t bytes);
void tc__free(void *p);

/* ---- boundary: map an extended index to [0, n), or -1 for cval ---- */
static inline int64_t tc__mod(int64_t a, int64_t m) {
    int64_t r = a % m;
    return r < 0 ? r + m : r;
}
static inline int64_t tc__boundary_index(int64_t i, int64_t n, tc_mode mode) {
    if (i >= 0 && i < n) return i;
    switch (mode) {
    case TC_MODE_CONSTANT: return -1;
    case TC_MODE_NEAREST: return i < 0 ? 0 : n - 1;
    case TC_MODE_WRAP: return tc__mod(i, n);
    case TC_MODE_REFLECT: {
        int64_t m = tc__mod(i, 2 * n);
        return m < n ? m : 2 * n - 1 - m;
    }
    case TC_MODE_MIRROR: {
        if (n == 1) return 0;
        int64_t m = tc__mod(i, 2 * n - 2);
        return m < n ? m : 2 * n - 2 - m;
    }
    }
    return -1;
}

/* Prefetches the cache line at p into L1 (a hint: never faults). Inline
 * asm on x86 because GCC treats __builtin_prefetch / _mm_prefetch as free
 * of side effects: a helper function whose only effect was prefetching
 * was judged pure and its calls deleted at -O3 (GCC 12). */
static inline void tc__prefetch(const void *p) {
#if defined(__x86_64__) || defined(__i386__)
    __asm__ volatile("prefetcht0 %0" ::"m"(*(const char *)p));
#else
    __builtin_prefetch(p);
#endif
}

/* ---- threads (src/core/threads.c) ----
 * Runs fn(arg, begin, end, tid) over [0, n) split into at most `threads`
 * contiguous chunks; returns when all are done. Chunking depends only on
 * n and threads, so results are reproducible. Safe to call from several
 * threads at once. */
typedef void (*tc__range_fn)(void *arg, int64_t begin, int64_t end, int tid);
void tc__parallel_for(int threads, int64_t n, tc__range_fn fn, void *arg);
/* Where tc__parallel_for's jobs run (threads.c): tileconv's pool, the
 * process's OpenMP runtime, or auto (TILECONV_THREADS). tc__threads_runtime
 * sets the mode (overriding the knob; any other value leaves it) and
 * returns where the next job runs, TC__THREADS_POOL or TC__THREADS_OPENMP. */
enum { TC__THREADS_POOL = 0, TC__THREADS_OPENMP = 1, TC__THREADS_AUTO = 2 };
int tc__threads_runtime(int mode);
/* The CPUs the pool uses (see threads.c): fills cpus[0..max), returns the
 * count (>= 1), describes the source in src when non-NULL. */
int tc__process_cpus(int *cpus, int max, char *src, size_t srcn);

/* ---- GEMM for other solvers (im2col, Winograd, ...): row-major,
 * C = alpha op(A) op(B) + beta C; dispatches to the fastest CPU GEMM
 * kernel compiled in (src/cpu/gemm_*.c). ---- */
tc_status tc__gemm(int threads, tc_dtype dt, int ta, int tb, int64_t m,
                   int64_t n, int64_t k, double alpha, const void *A,
                   int64_t lda, const void *B, int64_t ldb, double beta,
                   void *C, int64_t ldc);

/* ---- timing (src/core/memory.c) ---- */
double tc__now(void); /* monotonic seconds */

/* ---- cost model helpers (src/core/planner.c) ---- */
double tc__problem_flops(const tc__problem *p);
double tc__problem_bytes(const tc__problem *p);
/* Machine ceilings used by ESTIMATE: FLOP/s per thread for a well
 * vectorised kernel, and memory bandwidth in bytes/s. */
double tc__peak_flops(const tc__env *env);
double tc__peak_bandwidth(const tc__env *env);

/* ---- FFT lengths (src/cpu/fft_fftw.c, built with or without FFTW) ----
 * Smallest 2,3,5,7-smooth length >= n (even when asked and n > 1): the
 * transform length of cpu.filter.fft, cpu.conv.fft, cuda.filter.fft and
 * cuda.conv.fft. */
int64_t tc__fft_smooth_length(int64_t n, int even);

#endif
