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
 * mma.sync forms (igemm_tiled.cu).
 */
#include "cuda/conv/conv_internal.h"

extern "C" const tc__solver tc__solver_cuda_conv_igemm;    /* their estimates */
extern "C" const tc__solver tc__solver_cuda_conv_winograd; /* (winograd-f4) */

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

/* Chosen by the planner only where it measured faster than the solver
 * it replaces and no less accurate (an H100, ResNet-50 layers at batch 32,
 * bench/gpu_layers.py):
 *  - 1x1 layers of at most 256 output channels a group (the 1x1 stream's
 *    3xTF32 form): cuda.conv.igemm's estimate times 0.755 (1x1 256->64 @56:
 *    0.071 ms against cuda.conv.igemm's 0.094, error against float64 4.8e-7
 *    against 6.7e-7);
 *  - 2D 3x3 stride-1 layers of at least 256 channels in and out on outputs
 *    of at most 14 x 14 (the shifted wgmma views): cuda.conv.winograd-f4's
 *    estimate (fitted in ms on the same layers) times 0.86 (3x3 256 @14:
 *    0.115 ms against winograd-f4's 0.133; 512 @7: 0.131 against 0.155;
 *    3xTF32 errors 3.4e-7-7.2e-7 against winograd-f4's 8.5e-6-1.5e-5).
 * Elsewhere forced by name only (tc_plan_options.algorithm, `--algo
 * cuda.conv.igemm-3xtf32`): the 3x3 layers at 56 / 28 ran 0.176 / 0.128 ms
 * against winograd-f4's 0.148 / 0.125, conv1 and the 3D layer (the tiled
 * mma.sync form) 1.2x and 2.1x slower than the planner's choice. */
double x3_estimate(const tc__problem *p, const tc__env *e) {
    if (ig_is_1x1(p) && p->K / p->G <= 256) {
        const double t = tc__solver_cuda_conv_igemm.estimate(p, e);
        return t < 1e30 ? 0.755 * t : t;
    }
    if (p->nsp == 2 && p->G == 1 && p->C >= 256 && p->K >= 256 && p->msk[1] == 3 && p->msk[2] == 3 &&
        p->stride[1] == 1 && p->stride[2] == 1 && p->dil[1] == 1 && p->dil[2] == 1 &&
        p->out[1] * p->out[2] <= 14 * 14 &&
        tc__solver_cuda_conv_winograd.applicable(p, e, NULL, 0)) {
        const double t = tc__solver_cuda_conv_winograd.estimate(p, e);
        return t < 1e30 ? 0.86 * t : t;
    }
    return 1e30;
}

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
    .summary = "implicit-GEMM conv layer at about float32 accuracy on the TF32 tensor cores: each operand split once into TF32 hi + lo parts, three MMAs a product (lo*hi + hi*lo + hi*hi), fp32 sums promoted every k step; TMA-fed shifted views on wgmma for 2D stride-1 zero-padded layers (sm_90a), tiled mma.sync otherwise; plain float32 layers; the planner's choice for 1x1 layers (up to 256 output channels a group) and 3x3 stride-1 layers of 256+ channels on outputs up to 14 x 14, forced by name elsewhere.",
    .available = x3_available,
    .applicable = x3_applicable,
    .estimate = x3_estimate,
    .execute = x3_execute,
    .device_workspace = x3_device_ws,
    .report = x3_report,
};
