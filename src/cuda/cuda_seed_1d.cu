/*
 * cuda_seed_1d.cu - the seed's (PMPP chapter 7, seed 000) 1D kernels as
 * solvers, kept close to the text so they can be compared with cuda.filter.direct:
 *
 *   cuda.filter.seed-basic1d     one thread per output, ghost cells by the mode
 *   cuda.filter.seed-const1d     same, mask in __constant__ memory
 *   cuda.filter.seed-tiled1d-in  block = input tile (TILE + T - 1 threads; the
 *                         last T - 1 threads only load)
 *   cuda.filter.seed-tiled1d-out block = output tile (TILE threads; threads load
 *                         the extra halo in a second round)
 *
 * The seed fills ghost cells with 0; here the load goes through the
 * boundary mode (tc__cu_bidx), so every mode is exact. All apply to float32
 * filters whose mask is 1D (the array may have more axes: each row along
 * the last axis is filtered on its own).
 */
#include "cuda/cuda_common.h"

#include <pthread.h>
#include <stdlib.h>

#define SEED1_TILE 256
#define SEED1_CONST_MAX 4096 /* floats of __constant__ mask (16 KiB) */
#define SEED1_TILED_MAX (1024 - SEED1_TILE + 1)

__constant__ float tc__seed1d_cmask[SEED1_CONST_MAX];

namespace {

struct rows1d {
    int64_t L, O, pad; /* input length, output length, pad_lo */
    int mode;
    float cval;
};

__global__ void seed_basic1d(const float *x, float *y, const float *w, int T,
                             rows1d g, int64_t gy0) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t row = (int64_t)blockIdx.y + gy0;
    if (i >= g.O) return;
    const float *xr = x + row * g.L;
    int64_t start = i - g.pad;
    float acc = 0.f;
    for (int j = 0; j < T; j++) {
        int64_t k = tc__cu_bidx(start + j, g.L, g.mode);
        acc += (k < 0 ? g.cval : xr[k]) * w[j];
    }
    y[row * g.O + i] = acc;
}

__global__ void seed_const1d(const float *x, float *y, int T, rows1d g, int64_t gy0) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t row = (int64_t)blockIdx.y + gy0;
    if (i >= g.O) return;
    const float *xr = x + row * g.L;
    int64_t start = i - g.pad;
    float acc = 0.f;
    for (int j = 0; j < T; j++) {
        int64_t k = tc__cu_bidx(start + j, g.L, g.mode);
        acc += (k < 0 ? g.cval : xr[k]) * tc__seed1d_cmask[j];
    }
    y[row * g.O + i] = acc;
}

/* block = input tile: blockDim.x = SEED1_TILE + T - 1 */
__global__ void seed_tiled1d_in(const float *x, float *y, const float *__restrict__ w,
                                int T, rows1d g, int64_t gy0) {
    extern __shared__ float tile[];
    int64_t row = (int64_t)blockIdx.y + gy0;
    const float *xr = x + row * g.L;
    int64_t o0 = (int64_t)blockIdx.x * SEED1_TILE;
    int tx = threadIdx.x;
    int64_t k = tc__cu_bidx(o0 + tx - g.pad, g.L, g.mode);
    tile[tx] = k < 0 ? g.cval : xr[k];
    __syncthreads();
    if (tx < SEED1_TILE && o0 + tx < g.O) {
        float acc = 0.f;
        for (int j = 0; j < T; j++) acc += tile[tx + j] * w[j];
        y[row * g.O + o0 + tx] = acc;
    }
}

/* block = output tile: blockDim.x = SEED1_TILE, halo loaded in a loop */
__global__ void seed_tiled1d_out(const float *x, float *y, const float *__restrict__ w,
                                 int T, rows1d g, int64_t gy0) {
    extern __shared__ float tile[];
    int64_t row = (int64_t)blockIdx.y + gy0;
    const float *xr = x + row * g.L;
    int64_t o0 = (int64_t)blockIdx.x * SEED1_TILE;
    for (int c = threadIdx.x; c < SEED1_TILE + T - 1; c += SEED1_TILE) {
        int64_t k = tc__cu_bidx(o0 + c - g.pad, g.L, g.mode);
        tile[c] = k < 0 ? g.cval : xr[k];
    }
    __syncthreads();
    int tx = threadIdx.x;
    if (o0 + tx < g.O) {
        float acc = 0.f;
        for (int j = 0; j < T; j++) acc += tile[tx + j] * w[j];
        y[row * g.O + o0 + tx] = acc;
    }
}

static rows1d geom(const tc__problem *p) {
    rows1d g;
    g.L = p->in[2];
    g.O = p->out[2];
    g.pad = p->pad_lo[2];
    g.mode = (int)p->mode;
    g.cval = (float)p->cval;
    return g;
}
static int64_t nrows(const tc__problem *p) { return p->N * p->out[0] * p->out[1]; }

enum { K_BASIC, K_CONST, K_TIN, K_TOUT };

static pthread_mutex_t cmask_mu = PTHREAD_MUTEX_INITIALIZER;

template <int KIND>
static tc_status launch1d(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    rows1d g = geom(p);
    int T = (int)p->msk[2];
    int64_t rows = nrows(p);
    const float *x = (const float *)b->x, *w = (const float *)b->w;
    float *y = (float *)b->y;
    if (KIND == K_CONST) {
        /* one __constant__ symbol for every plan: hold it from the copy
         * until the kernel has finished */
        pthread_mutex_lock(&cmask_mu);
        cudaError_t e = cudaMemcpyToSymbolAsync(tc__seed1d_cmask, b->hw, (size_t)T * 4, 0,
                                                cudaMemcpyHostToDevice, b->s);
        if (e == cudaSuccess) {
            int64_t gx = tc__cu_div_up(g.O, 256);
            TC__CU_FOR_GRID(rows, 1, {
                if (e == cudaSuccess) {
                    seed_const1d<<<dim3((unsigned)gx, gny), 256, 0, b->s>>>(x, y, T, g, gy0);
                    e = cudaGetLastError();
                }
            })
        }
        if (e == cudaSuccess) e = cudaStreamSynchronize(b->s);
        pthread_mutex_unlock(&cmask_mu);
        if (e != cudaSuccess) return tc__cu_fail(e, "cuda.filter.seed-const1d", __FILE__, __LINE__);
        return TC_OK;
    }
    int64_t gx = tc__cu_div_up(g.O, KIND == K_BASIC ? 256 : SEED1_TILE);
    TC__CU_FOR_GRID(rows, 1, {
        if (KIND == K_BASIC) {
            seed_basic1d<<<dim3((unsigned)gx, gny), 256, 0, b->s>>>(x, y, w, T, g, gy0);
        } else if (KIND == K_TIN) {
            int bt = SEED1_TILE + T - 1;
            seed_tiled1d_in<<<dim3((unsigned)gx, gny), bt, bt * sizeof(float), b->s>>>(
                x, y, w, T, g, gy0);
        } else {
            seed_tiled1d_out<<<dim3((unsigned)gx, gny), SEED1_TILE,
                               (SEED1_TILE + T - 1) * sizeof(float), b->s>>>(x, y, w, T, g, gy0);
        }
        TC_CU_LAUNCH("cuda.seed 1d");
    })
    return TC_OK;
}

static int base_ok(const tc__problem *p, char *why, size_t n) {
    if (p->op != TC_OP_FILTER || p->dtype != TC_FLOAT32) {
        if (why) snprintf(why, n, "float32 filters only");
        return 0;
    }
    if (p->msk[0] != 1 || p->msk[1] != 1) {
        if (why) snprintf(why, n, "1D masks only (mask is %lldx%lldx%lld)",
                          (long long)p->msk[0], (long long)p->msk[1], (long long)p->msk[2]);
        return 0;
    }
    if (p->msk[2] > (1 << 20)) {
        if (why) snprintf(why, n, "mask longer than 2^20");
        return 0;
    }
    return 1;
}

static int app_basic(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    return base_ok(p, why, n);
}
static int app_const(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (!base_ok(p, why, n)) return 0;
    if (p->msk[2] > SEED1_CONST_MAX) {
        if (why) snprintf(why, n, "mask of %lld taps exceeds the %d-float __constant__ buffer",
                          (long long)p->msk[2], SEED1_CONST_MAX);
        return 0;
    }
    return 1;
}
static int app_tiled(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (!base_ok(p, why, n)) return 0;
    if (p->msk[2] > SEED1_TILED_MAX) {
        if (why) snprintf(why, n, "mask of %lld taps: block of TILE %d + mask - 1 threads exceeds 1024",
                          (long long)p->msk[2], SEED1_TILE);
        return 0;
    }
    return 1;
}

static double est_basic(const tc__problem *p, const tc__env *e) {
    return 4.0 * tc__cu_estimate(tc__problem_bytes(p) * 2, tc__problem_flops(p), 0.05);
}
static double est_tiled(const tc__problem *p, const tc__env *e) {
    return 3.0 * tc__cu_estimate(tc__problem_bytes(p), tc__problem_flops(p), 0.1);
}

struct s1 { void *dmask; };
static tc_status plan1(const tc__problem *p, const tc__env *e, void **state) {
    s1 *s = (s1 *)calloc(1, sizeof *s);
    if (!s) return tc__error(TC_ERR_OUT_OF_MEMORY, "cuda.seed: out of memory");
    tc_status st = tc__cu_mask_upload(p, &s->dmask);
    if (st) { free(s); return st; }
    *state = s;
    return TC_OK;
}
static void destroy1(void *state) {
    s1 *s = (s1 *)state;
    if (s) tc__cu_mask_free(s->dmask);
    free(s);
}
template <int KIND> static tc_status exec1(const tc__args *a) {
    const s1 *s = (const s1 *)a->state;
    return tc__cu_run(a, s ? s->dmask : NULL, 1, launch1d<KIND>);
}

} // namespace

TC__CU_SOLVER(tc__solver_cuda_seed_basic1d) = {
    "cuda.filter.seed-basic1d", TC_BACKEND_CUDA, TC_OP_FILTER,
    "Seed 000: 1D, one thread per output, ghost cells through the boundary mode.",
    tc__cu_available, app_basic, est_basic, NULL, plan1, destroy1, exec1<K_BASIC>,
    NULL, NULL, NULL, 0, tc__cu_report_seed1d,
};
TC__CU_SOLVER(tc__solver_cuda_seed_const1d) = {
    "cuda.filter.seed-const1d", TC_BACKEND_CUDA, TC_OP_FILTER,
    "Seed 000: 1D, one thread per output, mask in __constant__ memory (<= 4096 taps).",
    tc__cu_available, app_const, est_basic, NULL, plan1, destroy1, exec1<K_CONST>,
    NULL, NULL, NULL, 0, tc__cu_report_seed1d,
};
TC__CU_SOLVER(tc__solver_cuda_seed_tiled1d_in) = {
    "cuda.filter.seed-tiled1d-in", TC_BACKEND_CUDA, TC_OP_FILTER,
    "Seed 000: 1D tiled, block = input tile (256 + mask - 1 threads) in shared memory.",
    tc__cu_available, app_tiled, est_tiled, NULL, plan1, destroy1, exec1<K_TIN>,
    NULL, NULL, NULL, 0, tc__cu_report_seed1d,
};
TC__CU_SOLVER(tc__solver_cuda_seed_tiled1d_out) = {
    "cuda.filter.seed-tiled1d-out", TC_BACKEND_CUDA, TC_OP_FILTER,
    "Seed 000: 1D tiled, block = output tile (256 threads), halo loaded in extra rounds.",
    tc__cu_available, app_tiled, est_tiled, NULL, plan1, destroy1, exec1<K_TOUT>,
    NULL, NULL, NULL, 0, tc__cu_report_seed1d,
};

void tc__cu_report_seed1d(tc__cu_report *r) {
    tc__cu_report_kernel(r, "cuda.filter.seed-basic1d", (const void *)seed_basic1d, 256, 0);
    tc__cu_report_kernel(r, "cuda.filter.seed-const1d", (const void *)seed_const1d, 256, 0);
    tc__cu_report_kernel(r, "cuda.filter.seed-tiled1d-in (mask 5)", (const void *)seed_tiled1d_in,
                         SEED1_TILE + 4, (SEED1_TILE + 4) * 4);
    tc__cu_report_kernel(r, "cuda.filter.seed-tiled1d-out (mask 5)", (const void *)seed_tiled1d_out,
                         SEED1_TILE, (SEED1_TILE + 4) * 4);
}
