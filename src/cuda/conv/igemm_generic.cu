/*
 * igemm_generic.cu - cuda.conv.igemm's generic kernel, for the layers the
 * tiled kernel's 32-bit ranges do not take (more than IG_TAPMAX taps, or
 * sizes beyond 32-bit index arithmetic; TILECONV_CUDA_CONV_GENERIC=1 forces
 * it): 128 x 128 block tiles, BK = 8, a register-prefetch double buffer,
 * 8 x 8 outputs a thread, the im2col elements gathered with 64-bit
 * offsets through the padding mode.
 */
#include "cuda/conv/gather.cuh"

namespace {

using namespace tc_conv;

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

__global__ void __launch_bounds__(256, 2)
    k_conv_igemm_generic(const float *__restrict__ x, const float *__restrict__ w,
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

} // namespace

namespace tc_conv {

tc_status ig_run_generic(const tc__args *a, const tc__cu_bufs *b) {
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
    k_conv_igemm_generic<<<grid, 256, 0, b->s>>>((const float *)b->x, (const float *)b->w, db,
                                                 (float *)b->y, c);
    cudaError_t e = cudaGetLastError();
    tc__cu_free(own, b->s);
    if (e != cudaSuccess) return tc__cu_fail(e, "launch k_conv_igemm", __FILE__, __LINE__);
    return TC_OK;
}

void ig_report_generic(tc__cu_report *r) {
    tc__cu_report_kernel(r, "cuda.conv.igemm generic", (const void *)k_conv_igemm_generic, 256, 0);
}

} // namespace tc_conv
