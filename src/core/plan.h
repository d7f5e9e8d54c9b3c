/* plan.h - the plan object (private layout). */
#ifndef TC_PLAN_H
#define TC_PLAN_H
#include "describe.h"
#include "stage.h"

struct tc_plan {
    tc__problem p;             /* the problem as described */
    tc__problem sp;            /* what the solver sees: p, or p staged
                                  (src/core/stage.h) */
    unsigned stage;            /* TC__STAGE_* passes the core runs */
    char staging[192];         /* tc_plan_staging */
    void *mask_f32;            /* filter, 16-bit dtype: float32 mask copy */
    void *swap_f32;            /* filter valid-swap, staged: float32 input */
    size_t wst_off;            /* staged weights and bias in the workspace */
    void *w_staged, *bias_staged; /* conv: plan-held weights in sp's dtype */
    void *w_dev, *bias_dev;    /* CUDA conv plans: the weights the solver
                                  sees (sp's dtype), held on the device */
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
    void *wpacked;             /* solver->wpack form, or NULL (host) */
    void *wpack_dev;           /* CUDA solvers with wpack: that form on the
                                  device, or NULL */
    size_t wp_off;             /* per-execute packing region in the workspace */
    void *stream;              /* CUDA: tc_plan_set_cuda_stream (NULL: the
                                * calling thread's default stream) */
};
#endif
