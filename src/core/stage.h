/* stage.h - running a solver on a converted ("staged") problem when it
 * lacks a capability the problem needs (see tc__solver.caps): 16-bit
 * storage, channels-last layout, the fused epilogue, channels-last
 * weights. */
#ifndef TC_STAGE_H
#define TC_STAGE_H
#include "internal.h"

#define TC__STAGE_DTYPE 1u    /* float16 / bfloat16 stored, float32 solved */
#define TC__STAGE_LAYOUT 2u   /* channels-last stored, channels-first solved */
#define TC__STAGE_EPILOGUE 4u /* act / residual applied by the core's pass */
#define TC__STAGE_WLAYOUT 8u  /* conv weights K x mask x C/G stored, K x C/G x
                                 mask solved (no TC__CAP_WEIGHTS_CL) */

/* What the core must do for a solver with these caps; 0: nothing. */
unsigned tc__stage_bits(const tc__problem *p, unsigned caps);
/* The problem a solver with these caps sees (a copy of p when bits are 0).
 * A filter problem's half mask is replaced by p->mask_f32. */
void tc__stage_problem(const tc__problem *p, unsigned caps, tc__problem *sp);
/* Elements a row-major rows x cols view with leading dimension ld
 * touches: rows - 1 full rows and the last row's cols (the caller's array
 * may end there); 0 when empty. A gemm problem's A and B. */
int64_t tc__span(int64_t rows, int64_t cols, int64_t ld);
int64_t tc__gemm_a_span(const tc__problem *p);
int64_t tc__gemm_b_span(const tc__problem *p);
/* Elements, in the staged dtype, of the buffers a staged conv or gemm call
 * converts into: the host workspace's regions (src/core/planner.c) and the
 * device pool's (src/cuda/cuda_stage.cu). Filter problems: the input and
 * output when the dtype is staged (the host adds its own packing). */
typedef struct tc__stage_counts {
    int64_t x;   /* the input (gemm: A), when the dtype or layout is staged */
    int64_t y;   /* the solver's output (gemm: C): also with the epilogue
                    staged and a residual, which may be y itself */
    int64_t res; /* the residual, staged like x for a solver that has the
                    epilogue but not the dtype or layout */
    int64_t w;   /* weights and bias (gemm: B), when the dtype is staged;
                    the weights alone when only their layout is */
} tc__stage_counts;
tc__stage_counts tc__stage_buffers(const tc__problem *p, unsigned bits);
/* Seconds the staging passes take (bytes over the backend's bandwidth). */
double tc__stage_cost(const tc__problem *p, unsigned bits, tc_backend be,
                      const tc__env *env);
/* "x,w,bias float16->float32; ..." for tc_plan_staging. */
void tc__stage_describe(const tc__problem *p, unsigned bits, char *buf, size_t n);

/* n elements of dtype sd at src to dtype dd at dst (dense), threaded. */
void tc__convert(void *dst, tc_dtype dd, const void *src, tc_dtype sd, int64_t n,
                 int threads);
/* An N x C x S tensor (layout sl, dtype sd) to layout dl, dtype dd. */
void tc__convert_tensor(void *dst, tc_dtype dd, tc_layout dl, const void *src,
                        tc_dtype sd, tc_layout sl, int64_t N, int64_t C, int64_t S,
                        int threads);
/* The output pass: y (dtype yd, layout yl) = act(acc + residual), with acc
 * an N x K x S tensor of dtype ad, layout al; residual (y's dtype and
 * layout) may be NULL, and may be y. acc may be y itself only when the
 * dtypes and layouts are equal (the in-place epilogue). */
void tc__stage_output(void *y, tc_dtype yd, tc_layout yl, const void *acc, tc_dtype ad,
                      tc_layout al, const void *residual, tc_activation act, int64_t N,
                      int64_t K, int64_t S, int threads);
#endif
