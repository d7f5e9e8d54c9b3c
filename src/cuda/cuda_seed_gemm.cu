/*
 * cuda_seed_gemm.cu - seed 004's matrix products as solvers:
 *
 *   cuda.gemm.seed-naive  one thread per C element, A's row and B's column
 *                         read from global memory
 *   cuda.gemm.seed-tiled  16x16 tiles of A and B in shared memory, loaded in
 *                         phases with __syncthreads() between load and use
 *
 * The seed's kernel indexed B and C with K where N belongs (right only for
 * square matrices); here B is k x n (row stride ldb) and C is m x n (ldc),
 * and edge tiles are padded with zeros, so any m, n, k and transposes work.
 * float32, C = alpha op(A) op(B) + beta C, C not read when beta is 0.
 */
#include "cuda/cuda_common.h"

#define SEEDG_TILE 16

namespace {

struct gg {
    int64_t m, n, k, lda, ldb, ldc;
    int ta, tb;
    float alpha, beta;
};

__device__ __forceinline__ float ld_a(const float *A, const gg &g, int64_t i, int64_t kk) {
    return g.ta ? A[kk * g.lda + i] : A[i * g.lda + kk];
}
__device__ __forceinline__ float ld_b(const float *B, const gg &g, int64_t kk, int64_t j) {
    return g.tb ? B[j * g.ldb + kk] : B[kk * g.ldb + j];
}
__device__ __forceinline__ void st_c(float *C, const gg &g, int64_t i, int64_t j, float acc) {
    float *c = C + i * g.ldc + j;
    *c = g.beta == 0.f ? g.alpha * acc : g.alpha * acc + g.beta * *c;
}

__global__ void seed_gemm_naive(const float *A, const float *B, float *C, gg g, int64_t gy0) {
    int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t i = ((int64_t)blockIdx.y + gy0) * blockDim.y + threadIdx.y;
    if (i >= g.m || j >= g.n) return;
    float acc = 0.f;
    for (int64_t kk = 0; kk < g.k; kk++) acc += ld_a(A, g, i, kk) * ld_b(B, g, kk, j);
    st_c(C, g, i, j, acc);
}

__global__ void seed_gemm_tiled(const float *A, const float *B, float *C, gg g, int64_t gy0) {
    __shared__ float As[SEEDG_TILE][SEEDG_TILE];
    __shared__ float Bs[SEEDG_TILE][SEEDG_TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int64_t j = (int64_t)blockIdx.x * SEEDG_TILE + tx;
    int64_t i = ((int64_t)blockIdx.y + gy0) * SEEDG_TILE + ty;
    float acc = 0.f;
    for (int64_t k0 = 0; k0 < g.k; k0 += SEEDG_TILE) {
        As[ty][tx] = (i < g.m && k0 + tx < g.k) ? ld_a(A, g, i, k0 + tx) : 0.f;
        Bs[ty][tx] = (k0 + ty < g.k && j < g.n) ? ld_b(B, g, k0 + ty, j) : 0.f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < SEEDG_TILE; kk++) acc += As[ty][kk] * Bs[kk][tx];
        __syncthreads();
    }
    if (i < g.m && j < g.n) st_c(C, g, i, j, acc);
}

static gg geom(const tc__problem *p) {
    gg g;
    g.m = p->m; g.n = p->n; g.k = p->k;
    g.lda = p->lda; g.ldb = p->ldb; g.ldc = p->ldc;
    g.ta = p->trans_a; g.tb = p->trans_b;
    g.alpha = (float)p->alpha; g.beta = (float)p->beta;
    return g;
}

template <int TILED>
static tc_status launchg(const tc__args *a, const tc__cu_bufs *b) {
    gg g = geom(a->p);
    int64_t gx = tc__cu_div_up(g.n, SEEDG_TILE), gyn = tc__cu_div_up(g.m, SEEDG_TILE);
    TC__CU_FOR_GRID(gyn, 1, {
        if (TILED)
            seed_gemm_tiled<<<dim3((unsigned)gx, gny), dim3(SEEDG_TILE, SEEDG_TILE), 0, b->s>>>(
                (const float *)b->x, (const float *)b->w, (float *)b->y, g, gy0);
        else
            seed_gemm_naive<<<dim3((unsigned)gx, gny), dim3(SEEDG_TILE, SEEDG_TILE), 0, b->s>>>(
                (const float *)b->x, (const float *)b->w, (float *)b->y, g, gy0);
        TC_CU_LAUNCH("cuda.gemm.seed");
    })
    return TC_OK;
}

static int appg(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (p->op != TC_OP_GEMM || p->dtype != TC_FLOAT32) {
        if (why) snprintf(why, n, "float32 GEMM only");
        return 0;
    }
    return 1;
}
static double est_naive(const tc__problem *p, const tc__env *e) {
    return tc__cu_estimate(0, tc__problem_flops(p), 0.01);
}
static double est_tiled(const tc__problem *p, const tc__env *e) {
    return tc__cu_estimate(0, tc__problem_flops(p), 0.05);
}
template <int TILED> static tc_status execg(const tc__args *a) {
    return tc__cu_run(a, NULL, 1, launchg<TILED>);
}

} // namespace

TC__CU_SOLVER(tc__solver_cuda_seed_gemm_naive) = {
    "cuda.gemm.seed-naive", TC_BACKEND_CUDA, TC_OP_GEMM,
    "Seed 004: naive SGEMM, one thread per C element (index bug of the seed fixed).",
    tc__cu_available, appg, est_naive, NULL, NULL, NULL, execg<0>,
    NULL, NULL, NULL, 0, tc__cu_report_seedgemm,
};
TC__CU_SOLVER(tc__solver_cuda_seed_gemm_tiled) = {
    "cuda.gemm.seed-tiled", TC_BACKEND_CUDA, TC_OP_GEMM,
    "Seed 004: SGEMM with 16x16 shared-memory tiles (any m, n, k; transposes).",
    tc__cu_available, appg, est_tiled, NULL, NULL, NULL, execg<1>,
    NULL, NULL, NULL, 0, tc__cu_report_seedgemm,
};

void tc__cu_report_seedgemm(tc__cu_report *r) {
    tc__cu_report_kernel(r, "cuda.gemm.seed-naive", (const void *)seed_gemm_naive, 256, 0);
    tc__cu_report_kernel(r, "cuda.gemm.seed-tiled", (const void *)seed_gemm_tiled, 256, 0);
}
