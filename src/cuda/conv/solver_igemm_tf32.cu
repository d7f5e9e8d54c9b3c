/*
 * solver_igemm_tf32.cu - cuda.conv.igemm-tf32: the implicit-GEMM conv
 * layer on the TF32 tensor cores, only under TC_PLAN_ALLOW_TF32. The
 * forms and which one runs a layer: igemm_select.cu.
 */
#include "cuda/conv/conv_internal.h"

namespace {

using namespace tc_conv;

int tf_available(void) { return tc__cu_available(); }

int tf_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (!cv_base(p, why, n)) return 0;
    if (!e || !(e->flags & TC_PLAN_ALLOW_TF32)) {
        if (why) snprintf(why, n, "TF32 only when the plan flags include TC_PLAN_ALLOW_TF32");
        return 0;
    }
    if (!ig_fast(p)) {
        if (why)
            snprintf(why, n, "more than %d mask taps or sizes beyond 32-bit index arithmetic",
                     IG_TAPMAX);
        return 0;
    }
    (void)cv_wgmma_ok(); /* the probe at plan time, not in an execute */
    return 1;
}

/* TF32 at the nominal FP32 rate: the kernel ran 61-67 TFLOP/s on the
 * ResNet-50 3x3 layers at batch 32 on the H100, ~1.0 of the nominal 67; at
 * 2x, TF32 plans never took cuda.conv.winograd-f2-tf32 where it is 1.3x
 * faster (3x3 256 @14, 512 @7). The shifted views and the depth ring have
 * their own models (sv_default, dr_default) where the plan will run them. */
double tf_estimate(const tc__problem *p, const tc__env *e) {
    double t = 0.0;
    const int lm = p->mode == TC_MODE_CONSTANT && p->cval == 0 ? IG_ZEROS : IG_REMAP;
    if (!ig_is_1x1(p) && sv_default(p, ig_params(p), lm, &t, NULL)) return t;
    if (!ig_is_1x1(p) && dr_default(p, ig_params(p), lm, &t, NULL)) return t;
    return tc__cu_estimate(tc__problem_bytes(p), tc__problem_flops(p) / ig_fill(p), 1.0) +
           ig_blocks_time(p);
}

tc_status tf_launch(const tc__args *a, const tc__cu_bufs *b) { return ig_run(a, b, 1); }
tc_status tf_execute(const tc__args *a) { return tc__cu_run(a, NULL, 1, tf_launch); }

size_t tf_device_ws(const tc__problem *p, const tc__env *e, const void *state) {
    return tc__cu_conv_igemm_scratch(p, 1);
}

void tf_report(tc__cu_report *r) {
    ig_report_tiled(r, 1);
    s1_report(r);
    sv_report(r);
    dr_report(r);
}

} // namespace

TC__CU_SOLVER(tc__solver_cuda_conv_igemm_tf32) = {
    .name = "cuda.conv.igemm-tf32",
    .backend = TC_BACKEND_CUDA,
    .ops = TC_OP_CONV,
    .summary = "implicit-GEMM conv layer on the TF32 tensor cores (mma.sync m16n8k8, fp32 accumulation, conflict-free fragment loads, register-staged im2col gather with zero padding; on Hopper's sm_90a image wgmma kernels: TMA-fed shifted views for 2D stride-1 zero-padded layers, the same marching along depth with resident weights for 3D ones with C/G <= 32, a streaming kernel for 1x1 layers); only under TC_PLAN_ALLOW_TF32.",
    .available = tf_available,
    .applicable = tf_applicable,
    .estimate = tf_estimate,
    .execute = tf_execute,
    .device_workspace = tf_device_ws,
    .report = tf_report,
};
