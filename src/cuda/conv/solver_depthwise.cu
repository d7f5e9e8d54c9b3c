/*
 * solver_depthwise.cu - cuda.conv.depthwise: depthwise conv layers
 * (groups == C, K a multiple of C) in fp32, every padding mode, 1D/2D/3D
 * (the kernels: depthwise.cu).
 */
#include "cuda/conv/conv_internal.h"

namespace {

using namespace tc_conv;

int dw_available(void) { return tc__cu_available(); }

int dw_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (!cv_base(p, why, n)) return 0;
    if (p->G != p->C || p->K % p->C) {
        if (why) snprintf(why, n, "depthwise layers only (groups == in_channels)");
        return 0;
    }
    return 1;
}

/* memory-bound: the tiled kernel moved 0.8-1.4 TB/s on the MobileNet
 * layers (H100): the bytes at ~0.45 of the nominal bandwidth */
double dw_estimate(const tc__problem *p, const tc__env *e) {
    return tc__cu_estimate(tc__problem_bytes(p) * 2.0, tc__problem_flops(p), 0.25);
}

tc_status dw_execute(const tc__args *a) { return tc__cu_run(a, NULL, 1, dw_launch); }

size_t dw_device_ws(const tc__problem *p, const tc__env *e, const void *state) {
    return p->has_bias ? (size_t)p->K * sizeof(float) : 0;
}

} // namespace

TC__CU_SOLVER(tc__solver_cuda_conv_depthwise) = {
    .name = "cuda.conv.depthwise",
    .backend = TC_BACKEND_CUDA,
    .ops = TC_OP_CONV,
    .summary = "depthwise conv layer (groups == channels): 1D/2D through shared-memory tiles with the padding applied at the copy (several planes or a band of rows a block, 4 output rows a thread for 3x3/5x5); 3D one thread per output; every padding mode.",
    .available = dw_available,
    .applicable = dw_applicable,
    .estimate = dw_estimate,
    .execute = dw_execute,
    .device_workspace = dw_device_ws,
    .report = dw_report,
};
