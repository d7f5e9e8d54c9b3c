/*
 * solver_igemm_3xtf32.cu - cuda.conv.igemm-3xtf32: float32 conv layers at
 * about float32 accuracy on the TF32 tensor cores, each operand split once
 * into TF32 hi and lo parts and every product three MMAs (lo hi, hi lo,
 * hi hi; ig_tf32_split, cuda_hopper.h), the split GEMM of cuda.gemm.wgmma-3xtf32
 * applied to the implicit GEMM. Plain float32 layers: no
 * TC_PLAN_ALLOW_TF32 needed; TC_PLAN_DIRECT leaves it out (the planner
 * counts "3xtf32" among the transform algorithms, src/core/planner.c).
 *
 * Forms (igemm_select.cu, ig_run with IG_3XTF32): 2D stride-1 zero-padded
 * layers on the sm_90a image run the TMA-fed shifted views' 3xTF32 form
 * (igemm_shifted.cu), 1x1 layers with K/G <= 256 the 1x1 stream's 3xTF32
 * form (igemm_1x1_stream.cu); every other layer the tiled kernel's 3xTF32
 * mma.sync forms (igemm_tiled.cu). Not yet run on a GPU.
 */
#include "cuda/conv/conv_internal.h"

namespace {

using namespace tc_conv;

int x3_available(void) { return tc__cu_available(); }

int x3_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (!cv_base(p, why, n)) return 0;
    if (!ig_fast(p)) {
        if (why)
            snprintf(why, n, "more than %d mask taps or sizes beyond 32-bit index arithmetic",
                     IG_TAPMAX);
        return 0;
    }
    (void)cv_wgmma_ok(); /* the probe at plan time, not in an execute */
    return 1;
}

/* Never chosen by the planner (ESTIMATE, or MEASURE: far outside the
 * measuring window) until it has been measured on a GPU: the lead sets
 * the estimate from those measurements (the prediction per layer:
 * docs/solvers/cuda-conv-igemm.md). Runs when forced by name
 * (tc_plan_options.algorithm, `--algo cuda.conv.igemm-3xtf32`), as
 * cuda.gemm.wgmma-3xtf32 does. */
double x3_estimate(const tc__problem *p, const tc__env *e) { return 1e30; }

tc_status x3_launch(const tc__args *a, const tc__cu_bufs *b) { return ig_run(a, b, IG_3XTF32); }
tc_status x3_execute(const tc__args *a) { return tc__cu_run(a, NULL, 1, x3_launch); }

size_t x3_device_ws(const tc__problem *p, const tc__env *e, const void *state) {
    return tc__cu_conv_igemm_scratch(p, IG_3XTF32);
}

void x3_report(tc__cu_report *r) {
    ig_report_tiled(r, IG_3XTF32);
    sv_report3(r);
    s1_report3(r);
}

} // namespace

TC__CU_SOLVER(tc__solver_cuda_conv_igemm_3xtf32) = {
    .name = "cuda.conv.igemm-3xtf32",
    .backend = TC_BACKEND_CUDA,
    .ops = TC_OP_CONV,
    .summary = "implicit-GEMM conv layer at about float32 accuracy on the TF32 tensor cores: each operand split once into TF32 hi + lo parts, three MMAs a product (lo*hi + hi*lo + hi*hi), fp32 sums promoted every k step; TMA-fed shifted views on wgmma for 2D stride-1 zero-padded layers (sm_90a), tiled mma.sync otherwise; plain float32 layers, forced by name only (not yet measured).",
    .available = x3_available,
    .applicable = x3_applicable,
    .estimate = x3_estimate,
    .execute = x3_execute,
    .device_workspace = x3_device_ws,
    .report = x3_report,
};
