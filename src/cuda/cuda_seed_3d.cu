/*
 * cuda_seed_3d.cu - cuda.filter.seed-tiled3d: the 3D report's kernel (seed 003).
 * Block = (TILE+T-1) x (TILE+S-1) x (TILE+R-1) threads, TILE = 4, each
 * thread loads one input element (mapped by the boundary mode) into shared
 * memory; the TILE^3 threads in the corner compute one output each. The
 * grid is sized by TILE, not by the block. Mask sides <= 5, so a block has
 * at most 8^3 = 512 threads (the report's limit: 12^3 <= 1024 for TILE 8
 * would not leave room for K = 5 at TILE 8).
 */
#include "cuda/cuda_common.h"

#include <stdlib.h>

#define SEED3_TILE 4
#define SEED3_KMAX 5

namespace {

struct g3d {
    int64_t D, H, W, P, Q, O, pad0, pad1, pad2, nzt;
    int R, S, T, mode;
    float cval;
};

__global__ void seed_tiled3d(const float *x, float *y, const float *__restrict__ w, g3d g,
                             int64_t gy0, int64_t gz0) {
    extern __shared__ float tile[];
    const int BX = blockDim.x, BY = blockDim.y;
    int64_t bz = (int64_t)blockIdx.z + gz0;
    int64_t n = bz / g.nzt;
    int64_t oz0 = (bz % g.nzt) * SEED3_TILE;
    int64_t oy0 = ((int64_t)blockIdx.y + gy0) * SEED3_TILE;
    int64_t ox0 = (int64_t)blockIdx.x * SEED3_TILE;
    int tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
    int64_t iz = tc__cu_bidx(oz0 - g.pad0 + tz, g.D, g.mode);
    int64_t iy = tc__cu_bidx(oy0 - g.pad1 + ty, g.H, g.mode);
    int64_t ix = tc__cu_bidx(ox0 - g.pad2 + tx, g.W, g.mode);
    tile[(tz * BY + ty) * BX + tx] =
        (iz < 0 || iy < 0 || ix < 0) ? g.cval
                                     : x[((n * g.D + iz) * g.H + iy) * g.W + ix];
    __syncthreads();
    if (tx >= SEED3_TILE || ty >= SEED3_TILE || tz >= SEED3_TILE) return;
    int64_t oz = oz0 + tz, oy = oy0 + ty, ox = ox0 + tx;
    if (oz >= g.P || oy >= g.Q || ox >= g.O) return;
    float acc = 0.f;
    for (int r = 0; r < g.R; r++)
        for (int s = 0; s < g.S; s++)
            for (int t = 0; t < g.T; t++)
                acc += tile[((tz + r) * BY + ty + s) * BX + tx + t] * w[(r * g.S + s) * g.T + t];
    y[((n * g.P + oz) * g.Q + oy) * g.O + ox] = acc;
}

static tc_status launch3(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    g3d g;
    g.D = p->in[0]; g.H = p->in[1]; g.W = p->in[2];
    g.P = p->out[0]; g.Q = p->out[1]; g.O = p->out[2];
    g.pad0 = p->pad_lo[0]; g.pad1 = p->pad_lo[1]; g.pad2 = p->pad_lo[2];
    g.R = (int)p->msk[0]; g.S = (int)p->msk[1]; g.T = (int)p->msk[2];
    g.mode = (int)p->mode;
    g.cval = (float)p->cval;
    g.nzt = tc__cu_div_up(g.P, SEED3_TILE);
    dim3 blk(SEED3_TILE + g.T - 1, SEED3_TILE + g.S - 1, SEED3_TILE + g.R - 1);
    size_t smem = (size_t)blk.x * blk.y * blk.z * 4;
    int64_t gx = tc__cu_div_up(g.O, SEED3_TILE), gyn = tc__cu_div_up(g.Q, SEED3_TILE);
    TC__CU_FOR_GRID(gyn, p->N * g.nzt, {
        seed_tiled3d<<<dim3((unsigned)gx, gny, gnz), blk, smem, b->s>>>(
            (const float *)b->x, (float *)b->y, (const float *)b->w, g, gy0, gz0);
        TC_CU_LAUNCH("cuda.filter.seed-tiled3d");
    })
    return TC_OK;
}

static int app3(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (p->op != TC_OP_FILTER || p->dtype != TC_FLOAT32) {
        if (why) snprintf(why, n, "float32 filters only");
        return 0;
    }
    if (p->msk[0] > SEED3_KMAX || p->msk[1] > SEED3_KMAX || p->msk[2] > SEED3_KMAX) {
        if (why) snprintf(why, n, "mask %lldx%lldx%lld: each side must be <= %d (block of (4+K-1)^3 threads)",
                          (long long)p->msk[0], (long long)p->msk[1], (long long)p->msk[2], SEED3_KMAX);
        return 0;
    }
    return 1;
}
static double est3(const tc__problem *p, const tc__env *e) {
    /* each block loads (4+K-1)^3 inputs for 64 outputs */
    return 3.0 * tc__cu_estimate(tc__problem_bytes(p) * 4, tc__problem_flops(p), 0.1);
}

struct s3 { void *dmask; };
static tc_status plan3(const tc__problem *p, const tc__env *e, void **state) {
    s3 *s = (s3 *)calloc(1, sizeof *s);
    if (!s) return tc__error(TC_ERR_OUT_OF_MEMORY, "cuda.filter.seed-tiled3d: out of memory");
    tc_status st = tc__cu_mask_upload(p, &s->dmask);
    if (st) { free(s); return st; }
    *state = s;
    return TC_OK;
}
static void destroy3(void *state) {
    s3 *s = (s3 *)state;
    if (s) tc__cu_mask_free(s->dmask);
    free(s);
}
static tc_status exec3(const tc__args *a) {
    const s3 *s = (const s3 *)a->state;
    return tc__cu_run(a, s ? s->dmask : NULL, 1, launch3);
}

} // namespace

TC__CU_SOLVER(tc__solver_cuda_seed_tiled3d) = {
    "cuda.filter.seed-tiled3d", TC_BACKEND_CUDA, TC_OP_FILTER,
    "Seed 003: 3D tiled, block = (4+K-1)^3 threads loading the input tile, 4^3 outputs (K <= 5).",
    tc__cu_available, app3, est3, NULL, plan3, destroy3, exec3,
    NULL, NULL, NULL, 0, tc__cu_report_seed3d,
};

void tc__cu_report_seed3d(tc__cu_report *r) {
    tc__cu_report_kernel(r, "cuda.filter.seed-tiled3d (mask 5^3)", (const void *)seed_tiled3d, 512,
                         512 * 4);
}
