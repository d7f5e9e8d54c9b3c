/*
 * depthwise.cu - cuda.conv.depthwise's kernels (groups == C): 1D/2D layers
 * take the tiled kernel (k_dw_tile): a block copies the padded input of
 * several (n, k) planes, or of a band of output rows, into shared memory
 * with the padding mode applied at the copy, then computes without bounds
 * checks, RV = 4 output rows per thread for 3x3 / 5x5 masks at row stride
 * 1; 3D layers and rows too long for shared memory take k_dw_per_output,
 * one thread per output, taps from the read-only cache.
 */
#include "cuda/conv/gather.cuh"

namespace {

using namespace tc_conv;

/* depthwise: y[n][k][o] = bias + sum_r w[k][r] X(n, k / mult, o*s + r*d - pad) */
__global__ void __launch_bounds__(256)
    k_dw_per_output(const float *__restrict__ x, const float *__restrict__ w,
                    const float *__restrict__ bias, float *__restrict__ y, cargs a,
                    int64_t total) {
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

/* depthwise, 1D/2D layers: a block takes PP (n, k) planes (or one band of
 * BH output rows of one plane) and first copies the part of the input they
 * read into shared memory with the padding already applied (rows x cols
 * cells from input row ib = band's first output row * s1 - p1 and column
 * -p2; cells outside the input through the padding mode, read from global
 * memory), a warp per row, lanes over columns (coalesced). The compute
 * then has no bounds checks and no divergence at the plane's border: one
 * item = RV output rows at one column (lanes on consecutive columns: shared
 * loads conflict-free); with RV > 1 (s1 = d1 = 1) each loaded row of M2
 * values feeds up to M1 of the RV accumulators. M1 = M2 = 0: mask sizes at
 * run time, RV = 1. Each output sums bias + w * x in (r1, r2) order. */
/* n / d for 0 <= n < 2^31 by a multiply-high: (umulhi(n, m) + n) >> s */
struct dwdiv {
    unsigned m;
    int s;
};
__device__ __forceinline__ int dw_div(int n, dwdiv d) {
    return (int)((__umulhi((unsigned)n, d.m) + (unsigned)n) >> d.s);
}
struct dwp {
    int NK, K, C, mult; /* planes N*K, channels, multiplier K/C */
    int in1, in2, out1, out2;
    int m1, m2, s1, s2, d1, d2, p1, p2;
    int mode;
    float cval;
    int pp, bh, rows, cols; /* planes per block, band height, smem rows/cols per plane */
    int items;              /* items per plane of a band: ceil(bh / RV) * out2 */
    dwdiv drows, ditems, dout2;
};

template <int M1, int M2, int RV>
__global__ void __launch_bounds__(256)
    k_dw_tile(const float *__restrict__ x, const float *__restrict__ w,
              const float *__restrict__ bias, float *__restrict__ y, const dwp a) {
    extern __shared__ float4 dw_smem4[];
    /* [pp] plane offsets in x (int64), [pp] channel k, then the tiles */
    long long *sb = reinterpret_cast<long long *>(dw_smem4);
    int *sk = reinterpret_cast<int *>(sb + a.pp);
    float *xs = reinterpret_cast<float *>(sk + a.pp + (a.pp & 1));
    const int pl0 = blockIdx.x * a.pp, ob = blockIdx.y * a.bh;
    const int npl = min(a.pp, a.NK - pl0);
    const int ib = ob * a.s1 - a.p1;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
    const int nrows = npl * a.rows;
    for (int i = threadIdx.x; i < npl; i += blockDim.x) {
        const int pl = pl0 + i, k = pl % a.K, n = pl / a.K;
        sk[i] = k;
        sb[i] = ((long long)n * a.C + k / a.mult) * ((long long)a.in1 * a.in2);
    }
    __syncthreads();
    /* ---- load: row rw = (plane pi, padded row u), 4 rows in flight per warp ---- */
    for (int v0 = 0; v0 < a.cols; v0 += 32) {
        const int v = v0 + lane, j = v - a.p2;
        const bool vin = v < a.cols;
        const bool jin = (unsigned)j < (unsigned)a.in2;
        const int jj = jin ? j : cv_bidx(j, a.in2, a.mode);
        for (int r0 = warp; r0 < nrows; r0 += 4 * nw) {
            float val[4];
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const int rw = r0 + q * nw;
                val[q] = 0.f;
                if (rw < nrows && vin) {
                    const int pi = dw_div(rw, a.drows), u = rw - pi * a.rows;
                    const float *xp = x + sb[pi];
                    const int i = ib + u;
                    const int ii = (unsigned)i < (unsigned)a.in1 ? i : cv_bidx(i, a.in1, a.mode);
                    val[q] = (ii < 0 || jj < 0) ? a.cval : __ldg(xp + ii * a.in2 + jj);
                }
            }
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const int rw = r0 + q * nw;
                if (rw < nrows && vin) xs[rw * a.cols + v] = val[q];
            }
        }
    }
    __syncthreads();
    /* ---- compute: item = (plane, row group, column) ---- */
    const int brows = min(a.bh, a.out1 - ob);
    const int64_t P = (int64_t)a.out1 * a.out2;
    for (int it = threadIdx.x; it < npl * a.items; it += blockDim.x) {
        const int pi = dw_div(it, a.ditems), r = it - pi * a.items;
        const int rg = dw_div(r, a.dout2), o2 = r - rg * a.out2;
        if (rg * RV >= brows) continue; /* the last band's missing rows */
        const int pl = pl0 + pi, k = sk[pi];
        const float *xr = xs + (pi * a.rows + rg * RV * a.s1) * a.cols + o2 * a.s2;
        const float b = bias ? __ldg(bias + k) : 0.f;
        float *yp = y + pl * P + (int64_t)(ob + rg * RV) * a.out2 + o2;
        if (M1 > 0) {
            const float *wk = w + k * (M1 * M2);
            float wr[M1 * M2 > 0 ? M1 * M2 : 1];
#pragma unroll
            for (int t = 0; t < M1 * M2; t++) wr[t] = __ldg(wk + t);
            float acc[RV];
#pragma unroll
            for (int jr = 0; jr < RV; jr++) acc[jr] = b;
            if (RV > 1) {
#pragma unroll
                for (int u = 0; u < RV + M1 - 1; u++) {
                    float v[M2 > 0 ? M2 : 1];
#pragma unroll
                    for (int r2 = 0; r2 < M2; r2++) v[r2] = xr[u * a.cols + r2 * a.d2];
#pragma unroll
                    for (int jr = 0; jr < RV; jr++) {
                        const int r1 = u - jr;
                        if (r1 >= 0 && r1 < M1) {
#pragma unroll
                            for (int r2 = 0; r2 < M2; r2++)
                                acc[jr] = fmaf(wr[r1 * M2 + r2], v[r2], acc[jr]);
                        }
                    }
                }
            } else {
#pragma unroll
                for (int r1 = 0; r1 < M1; r1++)
#pragma unroll
                    for (int r2 = 0; r2 < M2; r2++)
                        acc[0] = fmaf(wr[r1 * M2 + r2], xr[r1 * a.d1 * a.cols + r2 * a.d2], acc[0]);
            }
#pragma unroll
            for (int jr = 0; jr < RV; jr++)
                if (rg * RV + jr < brows) yp[jr * a.out2] = acc[jr];
        } else {
            const float *wk = w + (int64_t)k * a.m1 * a.m2;
            float acc = b;
            for (int r1 = 0; r1 < a.m1; r1++) {
                const float *xq = xr + r1 * a.d1 * a.cols;
                const float *wq = wk + r1 * a.m2;
                for (int r2 = 0; r2 < a.m2; r2++) acc = fmaf(__ldg(wq + r2), xq[r2 * a.d2], acc);
            }
            yp[0] = acc;
        }
    }
}

typedef void (*dw_kernel)(const float *, const float *, const float *, float *, const dwp);

/* The tiled depthwise kernel for a 1D/2D layer: planes per block or bands
 * of output rows so that a block's padded input fits in DW_SMEM bytes and
 * a block has ~1024 items. *done = 0 (nothing launched) where it does not
 * apply: the caller then takes the one-thread-per-output kernel. */
#define DW_SMEM (40 * 1024)
static dwdiv dw_magic(int d) {
    dwdiv r;
    r.s = 0;
    while ((1LL << r.s) < d) r.s++;
    r.m = (unsigned)((((uint64_t)1 << 32) * (((uint64_t)1 << r.s) - (uint64_t)d)) / (uint64_t)d + 1);
    return r;
}
static tc_status dw_tiled(const tc__problem *p, const tc__cu_bufs *b, const float *db, int *done) {
    *done = 0;
    if (p->in[0] != 1 || p->out[0] != 1 || p->msk[0] != 1 || tc__knob_get(TC__KNOB_CUDA_CONV_GENERIC))
        return TC_OK;
    const int64_t lim = INT32_MAX / 4;
    const int64_t NK = p->N * p->K, plane = p->in[1] * p->in[2];
    if (NK > lim || plane > lim || p->out[1] * p->out[2] > lim || p->C * plane > lim * 64)
        return TC_OK;
    /* strides, dilations and paddings go into int fields (and bound the
     * shared-memory sizes below) */
    if (tc__cu_axis_reach(p) > lim) return TC_OK;
    dwp g;
    g.NK = (int)NK; g.K = (int)p->K; g.C = (int)p->C; g.mult = (int)(p->K / p->C);
    g.in1 = (int)p->in[1]; g.in2 = (int)p->in[2];
    g.out1 = (int)p->out[1]; g.out2 = (int)p->out[2];
    g.m1 = (int)p->msk[1]; g.m2 = (int)p->msk[2];
    g.s1 = (int)p->stride[1]; g.s2 = (int)p->stride[2];
    g.d1 = (int)p->dil[1]; g.d2 = (int)p->dil[2];
    g.p1 = (int)p->pad_lo[1]; g.p2 = (int)p->pad_lo[2];
    g.mode = (int)p->mode;
    g.cval = (float)p->cval;
    const char *frv = tc__knob_get(TC__KNOB_CUDA_DW_RV); /* "1": RV = 1 (tuning only) */
    const bool rv1 = frv && frv[0] == '1';
    const bool unit1 = g.s1 == 1 && g.d1 == 1 && !rv1;
    dw_kernel k;
    int rv = 1;
    if (g.m1 == 3 && g.m2 == 3) {
        k = unit1 ? k_dw_tile<3, 3, 4> : k_dw_tile<3, 3, 1>;
        rv = unit1 ? 4 : 1;
    } else if (g.m1 == 5 && g.m2 == 5 && unit1) {
        k = k_dw_tile<5, 5, 4>;
        rv = 4;
    } else {
        k = k_dw_tile<0, 0, 1>;
    }
    const int64_t cols = (p->out[2] - 1) * p->stride[2] + (p->msk[2] - 1) * p->dil[2] + 1;
    auto rows_for = [&](int64_t bh) {
        return ((bh + rv - 1) / rv * rv - 1) * p->stride[1] + (p->msk[1] - 1) * p->dil[1] + 1;
    };
    if (cols * 4 * rows_for(rv) > DW_SMEM) return TC_OK;
    int64_t bh = p->out[1], pp = 1;
    const char *ft = tc__knob_get(TC__KNOB_CUDA_DW_THREADS); /* target items per block (tuning only) */
    /* ~4 items a thread: 1024 ran 11% faster than 256 on the MobileNet
     * layer (28 x 28 planes: 5 planes a block; a sweep on the H100) */
    const int64_t target = ft && atoi(ft) >= 32 && atoi(ft) <= 4096 ? atoi(ft) : 1024;
    if (cols * 4 * rows_for(bh) <= DW_SMEM) {
        const int64_t items = tc__cu_div_up(bh, rv) * p->out[2];
        pp = target / items;
        const int64_t cap = DW_SMEM / (cols * 4 * rows_for(bh));
        pp = pp < 1 ? 1 : pp > cap ? cap : pp;
        if (pp > NK) pp = NK;
    } else {
        /* the most output rows (a multiple of rv) whose input fits */
        int64_t fit = (DW_SMEM / (cols * 4) - (p->msk[1] - 1) * p->dil[1] - 1) / p->stride[1] + 1;
        bh = fit / rv * rv;
        if (bh < rv) return TC_OK;
    }
    g.pp = (int)pp;
    g.bh = (int)bh;
    g.rows = (int)rows_for(bh);
    g.cols = (int)cols;
    g.items = (int)(tc__cu_div_up(bh, rv) * p->out[2]);
    g.drows = dw_magic(g.rows);
    g.ditems = dw_magic(g.items);
    g.dout2 = dw_magic(g.out2);
    const int64_t gx = tc__cu_div_up(NK, pp), gy = tc__cu_div_up(p->out[1], bh);
    if (gx > 0x7fffffff || gy > 65535) return TC_OK;
    int64_t nt = tc__cu_div_up(pp * tc__cu_div_up(bh, rv) * p->out[2], 32) * 32;
    nt = nt > 256 ? 256 : nt;
    const size_t smem = (size_t)(pp * g.rows * cols) * sizeof(float) + (size_t)pp * 12 + 8;
    k<<<dim3((unsigned)gx, (unsigned)gy), (unsigned)nt, smem, b->s>>>(
        (const float *)b->x, (const float *)b->w, db, (float *)b->y, g);
    *done = 1;
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return tc__cu_fail(e, "launch k_dw_tile", __FILE__, __LINE__);
    return TC_OK;
}

} // namespace

namespace tc_conv {

tc_status dw_launch(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    cargs c = cv_args(p);
    const float *db;
    void *own;
    tc_status st = cv_bias(a, b->s, &db, &own);
    if (st) return st;
    int done = 0;
    st = dw_tiled(p, b, db, &done);
    if (st || done) {
        tc__cu_free(own, b->s);
        return st;
    }
    int64_t total = p->N * p->K * c.P;
    int64_t blocks = tc__cu_div_up(total, 256);
    if (blocks > 0x7fffffff) {
        tc__cu_free(own, b->s);
        return tc__error(TC_ERR_UNSUPPORTED, "cuda.conv.depthwise: grid too large");
    }
    k_dw_per_output<<<(unsigned)blocks, 256, 0, b->s>>>((const float *)b->x, (const float *)b->w,
                                                        db, (float *)b->y, c, total);
    cudaError_t e = cudaGetLastError();
    tc__cu_free(own, b->s);
    if (e != cudaSuccess) return tc__cu_fail(e, "launch k_dw_per_output", __FILE__, __LINE__);
    return TC_OK;
}

/* the tiles at their largest shared memory (DW_SMEM) */
void dw_report(tc__cu_report *r) {
    const struct { const void *k; const char *name; } ks[] = {
        {(const void *)k_dw_tile<3, 3, 4>, "cuda.conv.depthwise tile 3x3 4 rows"},
        {(const void *)k_dw_tile<3, 3, 1>, "cuda.conv.depthwise tile 3x3"},
        {(const void *)k_dw_tile<5, 5, 4>, "cuda.conv.depthwise tile 5x5 4 rows"},
        {(const void *)k_dw_tile<0, 0, 1>, "cuda.conv.depthwise tile any mask"},
    };
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        tc__cu_report_kernel(r, ks[i].name, ks[i].k, 256, DW_SMEM);
    tc__cu_report_kernel(r, "cuda.conv.depthwise per output", (const void *)k_dw_per_output, 256, 0);
}

} // namespace tc_conv
