/*
 * cuda_conv.cu - convolution layers on the GPU (seed 002's cuDNN algorithm
 * list), fp32 on the CUDA cores:
 *
 * cuda.conv.igemm   implicit GEMM, no im2col buffer. For group g the layer
 *                   is C[k][q] = sum_l W_g[k][l] * X_g[l][q] with l = (c,
 *                   r0, r1, r2) and q = (n, output position): a 128 x 128
 *                   block tile over (output channels, N*P columns), BK = 8,
 *                   256 threads with 8 x 8 outputs each (two 4-wide
 *                   quadrants 64 apart per axis, as cuda.gemm), A (weights)
 *                   and B (the im2col matrix, gathered on the fly with the
 *                   boundary mode per axis) staged through double-buffered
 *                   shared memory with register prefetch. Any stride,
 *                   dilation, groups, padding mode, 1D/2D/3D; bias in the
 *                   epilogue, NCHW out.
 * cuda.conv.depthwise  groups == C: one thread per output, taps from the
 *                   read-only cache; memory-bound by nature.
 *
 * Host and device pointers as for the filters (tc__cu_run); the bias, K
 * values, is staged per call when it is host memory.
 */
#include "cuda/cuda_common.h"

namespace {

#define CV_M 128
#define CV_N 128
#define CV_K 8

struct cargs {
    int64_t C, K, G, Cg, Kg, R, Rl; /* Rl = Cg * R */
    int64_t in0, in1, in2, m0, m1, m2, out0, out1, out2, P, NP;
    int64_t s0, s1, s2, d0, d1, d2, p0, p1, p2;
    int mode;
    float cval;
};

/* One B column (output position q) of a thread, decomposed once per block:
 * the image's input offset and the origin of its window per axis. */
struct cv_col {
    int64_t xoff; /* (n * C + g * Cg) * in0 * in1 * in2, or -1 past the end */
    int b0, b1, b2;
};

__device__ __forceinline__ cv_col cv_column(const cargs &a, int64_t g, int64_t q) {
    cv_col c;
    if (q >= a.NP) {
        c.xoff = -1;
        c.b0 = c.b1 = c.b2 = 0;
        return c;
    }
    int64_t o2 = q % a.out2, u = q / a.out2;
    int64_t o1 = u % a.out1;
    u /= a.out1;
    int64_t o0 = u % a.out0, n = u / a.out0;
    c.xoff = (n * a.C + g * a.Cg) * a.in0 * a.in1 * a.in2;
    c.b0 = (int)(o0 * a.s0 - a.p0);
    c.b1 = (int)(o1 * a.s1 - a.p1);
    c.b2 = (int)(o2 * a.s2 - a.p2);
    return c;
}

__device__ __forceinline__ int cv_bidx(int i, int n, int mode) {
    if ((unsigned)i < (unsigned)n) return i;
    return (int)tc__cu_bidx(i, n, mode);
}

__global__ void __launch_bounds__(256, 2)
    k_conv_igemm(const float *__restrict__ x, const float *__restrict__ w,
                 const float *__restrict__ bias, float *__restrict__ y, cargs a) {
    __shared__ __align__(16) float As[2][CV_K][CV_M + 4];
    __shared__ __align__(16) float Bs[2][CV_K][CV_N + 4];
    const int tid = threadIdx.x;
    const int64_t g = blockIdx.z;
    const int64_t q0 = (int64_t)blockIdx.x * CV_N, k0 = (int64_t)blockIdx.y * CV_M;
    const float *wg = w + g * a.Kg * a.Rl;
    /* loaders: A 128 rows x 8 (4 per thread: one row, 4 consecutive l);
     * B 8 rows x 128 columns (4 per thread: one l, 4 consecutive q) */
    const int arow = tid >> 1, acol = (tid & 1) * 4;
    const int brow = tid >> 5, bcol = (tid & 31) * 4;
    float ra[4], rb[4];
    cv_col col[4];
#pragma unroll
    for (int i = 0; i < 4; i++) col[i] = cv_column(a, g, q0 + bcol + i);
    const int m1 = (int)a.m1, m2 = (int)a.m2, m0 = (int)a.m0;
    const int in0 = (int)a.in0, in1 = (int)a.in1, in2 = (int)a.in2;
    const int64_t plane = a.in0 * a.in1 * a.in2;
    auto load = [&](int64_t l0) {
        int64_t kr = k0 + arow;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            int64_t l = l0 + acol + i;
            ra[i] = (kr < a.Kg && l < a.Rl) ? __ldg(wg + kr * a.Rl + l) : 0.f;
        }
        /* the reduction row of this thread's B loads, decomposed once (32-bit) */
        int l = (int)(l0 + brow);
        bool lok = l0 + brow < a.Rl;
        int r2 = l % m2, t = l / m2;
        int r1 = t % m1;
        t /= m1;
        int r0 = t % m0, c = t / m0;
        int e0 = r0 * (int)a.d0, e1 = r1 * (int)a.d1, e2 = r2 * (int)a.d2;
        const float *xc = x + (int64_t)c * plane;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            float v = 0.f;
            if (lok && col[i].xoff >= 0) {
                int i0 = cv_bidx(col[i].b0 + e0, in0, a.mode);
                int i1 = cv_bidx(col[i].b1 + e1, in1, a.mode);
                int i2 = cv_bidx(col[i].b2 + e2, in2, a.mode);
                v = (i0 < 0 || i1 < 0 || i2 < 0)
                        ? a.cval
                        : __ldg(xc + col[i].xoff + ((int64_t)i0 * in1 + i1) * in2 + i2);
            }
            rb[i] = v;
        }
    };
    auto store = [&](int buf) {
#pragma unroll
        for (int i = 0; i < 4; i++) As[buf][acol + i][arow] = ra[i];
#pragma unroll
        for (int i = 0; i < 4; i++) Bs[buf][brow][bcol + i] = rb[i];
    };
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = 0.f;
    const int tm = (tid >> 4) * 4, tn = (tid & 15) * 4; /* quadrant origins */
    load(0);
    store(0);
    __syncthreads();
    int buf = 0;
    for (int64_t l0 = 0; l0 < a.Rl; l0 += CV_K) {
        bool more = l0 + CV_K < a.Rl;
        if (more) load(l0 + CV_K);
#pragma unroll
        for (int kk = 0; kk < CV_K; kk++) {
            float av[8], bv[8];
            /* 16-byte shared loads: rows are 132 floats (528 bytes), the
             * quadrant origins multiples of 4 */
            float4 a0 = *reinterpret_cast<const float4 *>(&As[buf][kk][tm]);
            float4 a1 = *reinterpret_cast<const float4 *>(&As[buf][kk][tm + 64]);
            float4 b0 = *reinterpret_cast<const float4 *>(&Bs[buf][kk][tn]);
            float4 b1 = *reinterpret_cast<const float4 *>(&Bs[buf][kk][tn + 64]);
            av[0] = a0.x; av[1] = a0.y; av[2] = a0.z; av[3] = a0.w;
            av[4] = a1.x; av[5] = a1.y; av[6] = a1.z; av[7] = a1.w;
            bv[0] = b0.x; bv[1] = b0.y; bv[2] = b0.z; bv[3] = b0.w;
            bv[4] = b1.x; bv[5] = b1.y; bv[6] = b1.z; bv[7] = b1.w;
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
        if (more) {
            store(buf ^ 1);
            __syncthreads();
            buf ^= 1;
        }
    }
    /* epilogue: column q = (n, p) -> y[n][g*Kg + k][p] */
#pragma unroll
    for (int i = 0; i < 8; i++) {
        int64_t k = k0 + tm + (i < 4 ? i : 60 + i);
        if (k >= a.Kg) continue;
        int64_t kk = g * a.Kg + k;
        float b = bias ? __ldg(bias + kk) : 0.f;
#pragma unroll
        for (int j = 0; j < 8; j++) {
            int64_t q = q0 + tn + (j < 4 ? j : 60 + j);
            if (q >= a.NP) continue;
            int64_t n = q / a.P, pp = q - n * a.P;
            y[(n * a.K + kk) * a.P + pp] = acc[i][j] + b;
        }
    }
}

/* depthwise: y[n][k][o] = bias + sum_r w[k][r] X(n, k / mult, o*s + r*d - pad) */
__global__ void __launch_bounds__(256)
    k_conv_dw(const float *__restrict__ x, const float *__restrict__ w,
              const float *__restrict__ bias, float *__restrict__ y, cargs a, int64_t total) {
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    int64_t o2 = t % a.out2, u = t / a.out2;
    int64_t o1 = u % a.out1;
    u /= a.out1;
    int64_t o0 = u % a.out0;
    u /= a.out0;
    int64_t k = u % a.K, n = u / a.K;
    int64_t c = k / (a.K / a.C);
    const float *xp = x + (n * a.C + c) * a.in0 * a.in1 * a.in2;
    const float *wk = w + k * a.m0 * a.m1 * a.m2;
    float s = bias ? __ldg(bias + k) : 0.f;
    for (int64_t r0 = 0; r0 < a.m0; r0++) {
        int64_t i0 = tc__cu_bidx(o0 * a.s0 + r0 * a.d0 - a.p0, a.in0, a.mode);
        for (int64_t r1 = 0; r1 < a.m1; r1++) {
            int64_t i1 = tc__cu_bidx(o1 * a.s1 + r1 * a.d1 - a.p1, a.in1, a.mode);
            for (int64_t r2 = 0; r2 < a.m2; r2++) {
                int64_t i2 = tc__cu_bidx(o2 * a.s2 + r2 * a.d2 - a.p2, a.in2, a.mode);
                float v = (i0 < 0 || i1 < 0 || i2 < 0)
                              ? a.cval
                              : __ldg(xp + (i0 * a.in1 + i1) * a.in2 + i2);
                s = fmaf(__ldg(wk + (r0 * a.m1 + r1) * a.m2 + r2), v, s);
            }
        }
    }
    y[t] = s;
}

static cargs cv_args(const tc__problem *p) {
    cargs a;
    a.C = p->C; a.K = p->K; a.G = p->G;
    a.Cg = p->C / p->G; a.Kg = p->K / p->G;
    a.R = p->msk[0] * p->msk[1] * p->msk[2];
    a.Rl = a.Cg * a.R;
    a.in0 = p->in[0]; a.in1 = p->in[1]; a.in2 = p->in[2];
    a.m0 = p->msk[0]; a.m1 = p->msk[1]; a.m2 = p->msk[2];
    a.out0 = p->out[0]; a.out1 = p->out[1]; a.out2 = p->out[2];
    a.P = a.out0 * a.out1 * a.out2;
    a.NP = p->N * a.P;
    a.s0 = p->stride[0]; a.s1 = p->stride[1]; a.s2 = p->stride[2];
    a.d0 = p->dil[0]; a.d1 = p->dil[1]; a.d2 = p->dil[2];
    a.p0 = p->pad_lo[0]; a.p1 = p->pad_lo[1]; a.p2 = p->pad_lo[2];
    a.mode = (int)p->mode;
    a.cval = (float)p->cval;
    return a;
}

/* The bias on the device: in place, or staged into *own. */
static tc_status cv_bias(const tc__args *a, cudaStream_t s, const float **db, void **own) {
    *db = NULL;
    *own = NULL;
    if (!a->p->has_bias) return TC_OK;
    if (tc__cu_is_device(a->bias)) {
        *db = (const float *)a->bias;
        return TC_OK;
    }
    size_t bytes = (size_t)a->p->K * sizeof(float);
    tc_status st = tc__cu_alloc(own, bytes, s);
    if (st == TC_OK) st = tc__cu_h2d(*own, a->bias, bytes, s);
    *db = (const float *)*own;
    return st;
}

static tc_status launch_igemm(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    cargs c = cv_args(p);
    const float *db;
    void *own;
    tc_status st = cv_bias(a, b->s, &db, &own);
    if (st) return st;
    int64_t gx = tc__cu_div_up(c.NP, CV_N), gy = tc__cu_div_up(c.Kg, CV_M);
    if (gx > 0x7fffffff || gy > 65535 || p->G > 65535) {
        tc__cu_free(own, b->s);
        return tc__error(TC_ERR_UNSUPPORTED, "cuda.conv.igemm: grid too large");
    }
    dim3 grid((unsigned)gx, (unsigned)gy, (unsigned)p->G);
    k_conv_igemm<<<grid, 256, 0, b->s>>>((const float *)b->x, (const float *)b->w, db,
                                         (float *)b->y, c);
    cudaError_t e = cudaGetLastError();
    tc__cu_free(own, b->s);
    if (e != cudaSuccess) return tc__cu_fail(e, "launch k_conv_igemm", __FILE__, __LINE__);
    return TC_OK;
}

static tc_status launch_dw(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    cargs c = cv_args(p);
    const float *db;
    void *own;
    tc_status st = cv_bias(a, b->s, &db, &own);
    if (st) return st;
    int64_t total = p->N * p->K * c.P;
    int64_t blocks = tc__cu_div_up(total, 256);
    if (blocks > 0x7fffffff) {
        tc__cu_free(own, b->s);
        return tc__error(TC_ERR_UNSUPPORTED, "cuda.conv.depthwise: grid too large");
    }
    k_conv_dw<<<(unsigned)blocks, 256, 0, b->s>>>((const float *)b->x, (const float *)b->w, db,
                                                  (float *)b->y, c, total);
    cudaError_t e = cudaGetLastError();
    tc__cu_free(own, b->s);
    if (e != cudaSuccess) return tc__cu_fail(e, "launch k_conv_dw", __FILE__, __LINE__);
    return TC_OK;
}

static int cv_available(void) { return tc__cu_available(); }

static int cv_base(const tc__problem *p, char *why, size_t n) {
    if (p->op != TC_OP_CONV) {
        if (why) snprintf(why, n, "convolution layers only");
        return 0;
    }
    if (p->dtype != TC_FLOAT32) {
        if (why) snprintf(why, n, "float32 only");
        return 0;
    }
    return 1;
}

static int ig_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (!cv_base(p, why, n)) return 0;
    if (p->K / p->G > 65535 * (int64_t)CV_M || p->G > 65535) {
        if (why) snprintf(why, n, "too many channels or groups for the grid");
        return 0;
    }
    int64_t rl = (p->C / p->G) * p->msk[0] * p->msk[1] * p->msk[2];
    int64_t span = 0;
    for (int i = 0; i < 3; i++) {
        int64_t v = p->out[i] * p->stride[i] + p->msk[i] * p->dil[i] + p->pad_lo[i] + p->in[i];
        span = v > span ? v : span;
    }
    if (rl > INT32_MAX / 2 || span > INT32_MAX / 2) {
        if (why) snprintf(why, n, "reduction or axis length beyond 32-bit index arithmetic");
        return 0;
    }
    return 1;
}

static int dw_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (!cv_base(p, why, n)) return 0;
    if (p->G != p->C || p->K % p->C) {
        if (why) snprintf(why, n, "depthwise layers only (groups == in_channels)");
        return 0;
    }
    return 1;
}

/* ~35% of the FP32 peak for the implicit GEMM (the gather's integer work
 * shares the issue slots; measured order on the H100), full partial-tile
 * waste counted; depthwise is memory-bound */
static double ig_estimate(const tc__problem *p, const tc__env *e) {
    double Kg = (double)(p->K / p->G), NP = (double)p->N * p->out[0] * p->out[1] * p->out[2];
    double fill = Kg / (tc__cu_div_up((int64_t)Kg, CV_M) * (double)CV_M) *
                  NP / (tc__cu_div_up((int64_t)NP, CV_N) * (double)CV_N);
    return tc__cu_estimate(tc__problem_bytes(p), tc__problem_flops(p) / fill, 0.35);
}
static double dw_estimate(const tc__problem *p, const tc__env *e) {
    return tc__cu_estimate(tc__problem_bytes(p) * 1.5, tc__problem_flops(p), 0.25);
}

static tc_status ig_execute(const tc__args *a) { return tc__cu_run(a, NULL, 1, launch_igemm); }
static tc_status dw_execute(const tc__args *a) { return tc__cu_run(a, NULL, 1, launch_dw); }

} // namespace

TC__CU_SOLVER(tc__solver_cuda_conv_igemm) = {
    .name = "cuda.conv.igemm",
    .backend = TC_BACKEND_CUDA,
    .ops = TC_OP_CONV,
    .summary = "implicit-GEMM conv layer (fp32, CUDA cores): 128x128 tiles, the im2col matrix gathered into shared memory with the padding mode; any stride, dilation, groups, 1D-3D.",
    .available = cv_available,
    .applicable = ig_applicable,
    .estimate = ig_estimate,
    .execute = ig_execute,
};

TC__CU_SOLVER(tc__solver_cuda_conv_depthwise) = {
    .name = "cuda.conv.depthwise",
    .backend = TC_BACKEND_CUDA,
    .ops = TC_OP_CONV,
    .summary = "depthwise conv layer (groups == channels): one thread per output, every padding mode.",
    .available = cv_available,
    .applicable = dw_applicable,
    .estimate = dw_estimate,
    .execute = dw_execute,
};
