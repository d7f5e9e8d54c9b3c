/* cuda_stage.cu - a staged plan (src/core/stage.h) run on device arrays:
 * the conversions and the epilogue pass on the plan's stream. */
#include "cuda/cuda_common.h"

extern "C" {
#include "core/plan.h"
}

extern "C" tc_status tc__cu_execute_staged(const tc_plan *pl, void *y, const void *x,
                                           const void *w, const void *bias,
                                           const void *residual, const void *wpack) {
    (void)y; (void)x; (void)w; (void)bias; (void)residual; (void)wpack;
    return tc__error(TC_ERR_UNSUPPORTED,
                     "execute: %s on device arrays needs %s, which runs on host arrays "
                     "only; pass host arrays or choose an algorithm with native kernels",
                     pl->solver->name, pl->staging);
}
