/*
 * solver_igemm.cu - cuda.conv.igemm: the implicit-GEMM conv layer in fp32
 * on the CUDA cores (igemm_tiled.cu; igemm_generic.cu beyond its 32-bit
 * ranges). Any stride, dilation, groups, padding mode (zeros / reflect /
 * replicate / circular), 1D/2D/3D; bias in the epilogue; NCHW in and out.
 * Host and device pointers as for the filters (tc__cu_run); the bias, K
 * values, is staged per call when it is host memory.
 */
#include "cuda/conv/conv_internal.h"

namespace {

using namespace tc_conv;

int ig_available(void) { return tc__cu_available(); }

int ig_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (!cv_base(p, why, n)) return 0;
    if (p->K / p->G > 65535 * (int64_t)CV_M || p->G > 65535) {
        if (why) snprintf(why, n, "too many channels or groups for the grid");
        return 0;
    }
    int64_t rl = (p->C / p->G) * p->msk[0] * p->msk[1] * p->msk[2];
    if (rl > INT32_MAX / 2 || tc__cu_axis_reach(p) > INT32_MAX / 2) {
        if (why) snprintf(why, n, "reduction or axis length beyond 32-bit index arithmetic");
        return 0;
    }
    return 1;
}

/* Partial-tile waste counted (ig_fill); the FP32 kernel at ~60% of the
 * FP32 peak (cuda.gemm.simt's rate; the generic kernel ~20%), plus the blocks'
 * fixed cost (ig_blocks_time). */
double ig_estimate(const tc__problem *p, const tc__env *e) {
    return tc__cu_estimate(tc__problem_bytes(p), tc__problem_flops(p) / ig_fill(p),
                           ig_fast(p) ? 0.6 : 0.2) +
           ig_blocks_time(p);
}

tc_status ig_launch(const tc__args *a, const tc__cu_bufs *b) {
    if (ig_fast(a->p) && !tc__knob_get(TC__KNOB_CUDA_CONV_GENERIC)) return ig_run(a, b, 0);
    return ig_run_generic(a, b);
}
tc_status ig_execute(const tc__args *a) { return tc__cu_run(a, NULL, 1, ig_launch); }

size_t ig_device_ws(const tc__problem *p, const tc__env *e, const void *state) {
    return tc__cu_conv_igemm_scratch(p, 0);
}

void ig_report(tc__cu_report *r) {
    ig_report_tiled(r, 0);
    ig_report_generic(r);
}

} // namespace

TC__CU_SOLVER(tc__solver_cuda_conv_igemm) = {
    .name = "cuda.conv.igemm",
    .backend = TC_BACKEND_CUDA,
    .ops = TC_OP_CONV,
    .summary = "implicit-GEMM conv layer (fp32, CUDA cores): 128x128 or 64x128 tiles, BK 16, 4-stage cp.async pipeline, im2col gathered through a per-block tap table with the padding mode; split-K for few tiles; any stride, dilation, groups, 1D-3D.",
    .available = ig_available,
    .applicable = ig_applicable,
    .estimate = ig_estimate,
    .execute = ig_execute,
    .device_workspace = ig_device_ws,
    .report = ig_report,
};
