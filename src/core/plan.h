/* plan.h - the plan object (private layout). */
#ifndef TC_PLAN_H
#define TC_PLAN_H
#include "describe.h"

struct tc_plan {
    tc__problem p;
    tc__filter_layout lay;     /* filter only */
    const tc__solver *solver;
    void *state;               /* solver->plan() result */
    tc__env env;
    void *mask;                /* filter: plan-owned (flipped) mask */
    void *swap_input;          /* filter valid-swap: plan-owned input */
    size_t solver_ws;          /* bytes of solver scratch */
    size_t x_off, y_off;       /* packing regions in the workspace */
    size_t ws_total;           /* what tc_plan_workspace_size reports */
    size_t dev_ws;             /* what tc_plan_device_workspace_size reports */
    int dev_ws_set;            /* CUDA plans: dev_ws is the solver's bound */
    int pack_x, pack_y;
    /* conv: weights handed over by tc_plan_conv_set_weights */
    void *w_copy, *bias_copy;  /* caller's layout */
    void *wpacked;             /* solver->wpack form, or NULL */
    size_t wp_off;             /* per-execute packing region in the workspace */
    void *stream;              /* CUDA: tc_plan_set_cuda_stream (NULL: the
                                * calling thread's default stream) */
};
#endif
