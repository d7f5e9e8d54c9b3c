/*
 * cuda_gemm.cu - cuda.gemm.simt: single-precision GEMM on CUDA cores (strict FP32
 * FFMA; no TF32, whatever TC_PLAN_ALLOW_TF32 says, so results match the
 * CPU to float rounding).
 *
 * Fast path (op(A) = A, op(B) = B, k, n, lda, ldb multiples of 4, A and B
 * 16-byte aligned): 128x128 block tile, BK = 32 (16 where k is not a
 * multiple of 32), 256 threads, 8x8 outputs per thread (two 4x4 quadrants
 * 64 apart, so a warp's shared loads hit distinct banks), 2 blocks an SM
 * (<= 128 registers). B: a 4-stage cp.async pipeline of 16-byte copies. A:
 * through registers into a k-major tile, 16 k at a time (each thread loads
 * two rows' 4 k with 16-byte loads and stores them transposed after the
 * compute of the tile's matching half; two A buffers), so a k-step's
 * fragments are 8 + 8 floats (two 16-byte shared loads each) and the next
 * step's load while this one's 64 FMAs run. Blocks whose tile lies inside
 * m and n, when k is a multiple of BK, load without per-load tests from
 * pointers stepped along k; edge blocks test rows and k and read zeros
 * past them, so any m and n run.
 *
 * What each part is worth (docs/solvers/cuda-gemm.md, H200, TFLOP/s at
 * 4096^3 / 8192^3, cuBLAS 49-51): A row-major in shared memory read 4 k a
 * 16-byte load, copy pointers set once: 42.6-42.9 (BK = 32 with 3 stages is
 * slower); interior copies without tests: 44.0-44.8; A k-major as above:
 * 46.0-46.3 (an issue rate of 0.81 a cycle against 0.77: at 128 registers
 * the row-major form holds a k-chunk's 32 A values and cannot load the next
 * chunk's while computing); BK = 32: 47.8-48.6, 0.94-0.95x (the hottest
 * loop 90% FFMA against 88.7%). Tried and not kept: a 128-thread form with
 * 8x16 outputs a thread (cuBLAS's SIMT shape, 255 registers, 8 warps an
 * SM): 40.6-41.3; cuBLAS's own shape (256 x 128 tiles, 8 x 16 a thread, one
 * block an SM, A and B by cp.async, fragments double-buffered; commit
 * ff5fa2e): 39-46, an issue rate of 0.74-0.76 a cycle against cuBLAS's 0.89
 * with the same two warps a scheduler (dispatch and scoreboard stalls at
 * 249-255 registers); a stream-K tail (the last T mod S tiles' k steps
 * shared by the S resident blocks, partial tiles added by a fix-up kernel;
 * commit
 * "cuda.gemm.simt: a stream-K tail"): 4096^3 2% slower, 8192^3 0.4% faster
 * than whole tiles, and its kernel held the body twice.
 *
 * Generic path (transposes, odd sizes or strides): 64x64 tiles, 4x4 per
 * thread, bounds-checked loads.
 */
#include "cuda/cuda_common.h"

namespace {

#define GB_M 128
#define GB_N 128
struct gargs {
    int64_t m, n, k, lda, ldb, ldc;
    int ta, tb, vec_c;
    float alpha, beta;
};

__device__ __forceinline__ void cp_async16(float *dst, const float *src, int bytes) {
    unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(bytes));
}
/* a whole 16-byte copy (no zero-fill operand: the interior blocks' copies) */
__device__ __forceinline__ void cp_async16f(float *dst, const float *src) {
    unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src));
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/* alpha acc + beta C into one row's four columns from col (16 bytes where
 * C allows it, else column by column up to n) */
__device__ __forceinline__ void store4(const gargs &g, float *crow, int64_t col, const float *acc) {
    float v[4];
#pragma unroll
    for (int j = 0; j < 4; j++) v[j] = g.alpha * acc[j];
    if (g.vec_c && col + 3 < g.n) {
        float4 *cp = reinterpret_cast<float4 *>(crow + col);
        if (g.beta != 0.f) {
            float4 o = *cp;
            v[0] += g.beta * o.x; v[1] += g.beta * o.y;
            v[2] += g.beta * o.z; v[3] += g.beta * o.w;
        }
        *cp = make_float4(v[0], v[1], v[2], v[3]);
    } else {
#pragma unroll
        for (int j = 0; j < 4; j++)
            if (col + j < g.n) crow[col + j] = g.beta != 0.f ? v[j] + g.beta * crow[col + j] : v[j];
    }
}

/* the fast kernel's shape (see the top of the file), by its k depth BK (32
 * where k is a multiple of 32, else 16): A staged in halves of 16 k */
template <int BK_> struct gat {
    static constexpr int BK = BK_;
    static constexpr int AP = GB_M + 4; /* k-major A: a k row of 128 m, padded */
    static constexpr int ST = 4;
    static constexpr int AF = BK * AP; /* floats an A buffer */
    static constexpr int BF = BK * GB_N;
    static constexpr int CB = BK * GB_N / 4 / 256; /* B copies a thread a stage */
    static constexpr size_t SMEM = (size_t)(2 * AF + ST * BF) * sizeof(float);
};

/* EDGE: the block's tile crosses m or n, or k is not a multiple of BK */
template <int BK, bool EDGE>
__device__ __forceinline__ void sgemm_at_body(const float *__restrict__ A, const float *__restrict__ B,
                                              float *__restrict__ C, const gargs &g, int64_t m0,
                                              int64_t n0) {
    using K = gat<BK>;
    extern __shared__ float4 smem4[];
    float *smem = reinterpret_cast<float *>(smem4);
    float *AsT = smem, *Bsm = smem + 2 * K::AF;
    const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    const int KT = (int)((g.k + BK - 1) / BK);
    /* A staging, a half (16 k) at a time: rows 2q, 2q + 1 of the tile, k
     * 4c .. 4c + 3 of the half */
    const int q2 = (tid >> 2) * 2, c4 = (tid & 3) * 4;
    const bool r0ok = m0 + q2 < g.m, r1ok = m0 + q2 + 1 < g.m;
    const float *pa0 = A + (r0ok ? (m0 + q2) * g.lda : 0) + c4;
    const float *pa1 = A + (r1ok ? (m0 + q2 + 1) * g.lda : 0) + c4;
    /* B copies: k rows bkr + 8 i at n chunk bnc */
    const int bkr = tid >> 5, bnc = (tid & 31) * 4;
    const float *pb = B + (int64_t)bkr * g.ldb + n0 + bnc;
    const bool bok = n0 + bnc < g.n;
    const int64_t bstep8 = (int64_t)8 * g.ldb;
    const float *rb = pb;
    auto load_b = [&](int slot, int kt) {
        float *Bs = Bsm + slot * K::BF;
        if constexpr (!EDGE) {
#pragma unroll
            for (int i = 0; i < K::CB; i++) cp_async16f(Bs + (bkr + 8 * i) * GB_N + bnc, rb + i * bstep8);
            rb += BK * g.ldb;
            return;
        }
        const int64_t k0 = (int64_t)kt * BK;
        const float *pbk = pb + k0 * g.ldb;
#pragma unroll
        for (int i = 0; i < K::CB; i++) {
            const bool ok = bok && k0 + bkr + 8 * i < g.k;
            cp_async16(Bs + (bkr + 8 * i) * GB_N + bnc, ok ? pbk + i * bstep8 : B, ok ? 16 : 0);
        }
    };
    float4 v0, v1; /* a half of the next A tile: two rows */
    auto ldg_a = [&](int kt, int h) {
        const int64_t k = (int64_t)kt * BK + 16 * h;
        if constexpr (!EDGE) {
            v0 = __ldg(reinterpret_cast<const float4 *>(pa0 + k));
            v1 = __ldg(reinterpret_cast<const float4 *>(pa1 + k));
            return;
        }
        const bool kok = k + c4 < g.k;
        const float4 z = make_float4(0.f, 0.f, 0.f, 0.f);
        v0 = kok && r0ok ? __ldg(reinterpret_cast<const float4 *>(pa0 + k)) : z;
        v1 = kok && r1ok ? __ldg(reinterpret_cast<const float4 *>(pa1 + k)) : z;
    };
    /* transposed: (v0.j, v1.j) to k row 16 h + c4 + j, rows q2 and q2 + 1
     * (ptxas pairs them into 8-byte stores, with a register move each) */
    auto sts_a = [&](int buf, int h) {
        float *d = AsT + buf * K::AF + (16 * h + c4) * K::AP + q2;
        d[0] = v0.x; d[1] = v1.x;
        d[K::AP] = v0.y; d[K::AP + 1] = v1.y;
        d[2 * K::AP] = v0.z; d[2 * K::AP + 1] = v1.z;
        d[3 * K::AP] = v0.w; d[3 * K::AP + 1] = v1.w;
    };
#pragma unroll
    for (int s = 0; s < K::ST - 1; s++) {
        if (s < KT) load_b(s, s);
        cp_commit();
    }
    constexpr int HALVES = BK / 16;
#pragma unroll
    for (int h = 0; h < HALVES; h++) {
        ldg_a(0, h);
        sts_a(0, h);
    }
    if (HALVES == 1 && KT > 1) ldg_a(1, 0);
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = 0.f;
    int cs = 0, ls = K::ST - 1;
    for (int kt = 0; kt < KT; kt++) {
        cp_wait<K::ST - 2>();
        __syncthreads();
        if (kt + K::ST - 1 < KT) load_b(ls, kt + K::ST - 1);
        cp_commit();
        if (++ls == K::ST) ls = 0;
        const float *At = AsT + (kt & 1) * K::AF + ty * 4;
        const float *Bt = Bsm + cs * K::BF + tx * 4;
        if (++cs == K::ST) cs = 0;
        const bool more = kt + 1 < KT;
        float4 fa[2][2], fb[2][2];
        fa[0][0] = *reinterpret_cast<const float4 *>(At);
        fa[0][1] = *reinterpret_cast<const float4 *>(At + 64);
        fb[0][0] = *reinterpret_cast<const float4 *>(Bt);
        fb[0][1] = *reinterpret_cast<const float4 *>(Bt + 64);
        /* BK 32: each half of the next tile loaded from global memory before
         * this tile's half computes, stored into the other buffer after it.
         * BK 16: the next tile stored after the compute, the one after it
         * loaded then (a whole tile to arrive; the other order spilled). */
#pragma unroll
        for (int h = 0; h < HALVES; h++) {
            if (HALVES > 1 && more) ldg_a(kt + 1, h);
#pragma unroll
            for (int k16 = 0; k16 < 16; k16++) {
                const int kk = 16 * h + k16, cb = kk & 1, nb = cb ^ 1;
                if (kk + 1 < BK) {
                    fa[nb][0] = *reinterpret_cast<const float4 *>(At + (kk + 1) * K::AP);
                    fa[nb][1] = *reinterpret_cast<const float4 *>(At + (kk + 1) * K::AP + 64);
                    fb[nb][0] = *reinterpret_cast<const float4 *>(Bt + (kk + 1) * GB_N);
                    fb[nb][1] = *reinterpret_cast<const float4 *>(Bt + (kk + 1) * GB_N + 64);
                }
                const float a[8] = {fa[cb][0].x, fa[cb][0].y, fa[cb][0].z, fa[cb][0].w,
                                    fa[cb][1].x, fa[cb][1].y, fa[cb][1].z, fa[cb][1].w};
                const float b[8] = {fb[cb][0].x, fb[cb][0].y, fb[cb][0].z, fb[cb][0].w,
                                    fb[cb][1].x, fb[cb][1].y, fb[cb][1].z, fb[cb][1].w};
#pragma unroll
                for (int i = 0; i < 8; i++)
#pragma unroll
                    for (int j = 0; j < 8; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
            }
            if (HALVES > 1 && more) sts_a((kt + 1) & 1, h);
        }
        if (HALVES == 1) {
            if (more) sts_a((kt + 1) & 1, 0);
            if (kt + 2 < KT) ldg_a(kt + 2, 0);
        }
    }
    cp_wait<0>();
#pragma unroll
    for (int i = 0; i < 8; i++) {
        int64_t row = m0 + (i < 4 ? 0 : 64) + ty * 4 + (i & 3);
        if (row >= g.m) continue;
#pragma unroll
        for (int h = 0; h < 2; h++) store4(g, C + row * g.ldc, n0 + h * 64 + tx * 4, &acc[i][h * 4]);
    }
}

template <int BK>
__global__ void __launch_bounds__(256, 2)
sgemm_128x128(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
              const gargs g, int64_t gy0) {
    const int64_t m0 = ((int64_t)blockIdx.y + gy0) * GB_M, n0 = (int64_t)blockIdx.x * GB_N;
    if (m0 + GB_M <= g.m && n0 + GB_N <= g.n && g.k % BK == 0)
        sgemm_at_body<BK, false>(A, B, C, g, m0, n0);
    else
        sgemm_at_body<BK, true>(A, B, C, g, m0, n0);
}

/* ---- generic: any transposes, sizes and strides ---- */
__device__ __forceinline__ float lda_(const float *A, const gargs &g, int64_t i, int64_t k) {
    return g.ta ? A[k * g.lda + i] : A[i * g.lda + k];
}
__device__ __forceinline__ float ldb_(const float *B, const gargs &g, int64_t k, int64_t j) {
    return g.tb ? B[j * g.ldb + k] : B[k * g.ldb + j];
}

__global__ void __launch_bounds__(256)
sgemm_generic64(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
                const gargs g, int64_t gy0) {
    __shared__ float As[16][64 + 4], Bs[16][64 + 4];
    const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    const int64_t m0 = ((int64_t)blockIdx.y + gy0) * 64, n0 = (int64_t)blockIdx.x * 64;
    float acc[4][4] = {};
    for (int64_t k0 = 0; k0 < g.k; k0 += 16) {
        for (int e = tid; e < 16 * 64; e += 256) {
            int kk, mm;
            /* coalesce along the contiguous axis of each operand */
            if (g.ta) { kk = e / 64; mm = e % 64; } else { mm = e / 16; kk = e % 16; }
            int64_t gm = m0 + mm, gk = k0 + kk;
            As[kk][mm] = (gm < g.m && gk < g.k) ? lda_(A, g, gm, gk) : 0.f;
            int nn;
            if (g.tb) { nn = e / 16; kk = e % 16; } else { kk = e / 64; nn = e % 64; }
            int64_t gn = n0 + nn;
            gk = k0 + kk;
            Bs[kk][nn] = (gk < g.k && gn < g.n) ? ldb_(B, g, gk, gn) : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < 16; kk++) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; i++) a[i] = As[kk][ty * 4 + i];
#pragma unroll
            for (int j = 0; j < 4; j++) b[j] = Bs[kk][tx * 4 + j];
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
        int64_t row = m0 + ty * 4 + i;
        if (row >= g.m) continue;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            int64_t col = n0 + tx * 4 + j;
            if (col >= g.n) continue;
            float *c = C + row * g.ldc + col;
            float v = g.alpha * acc[i][j];
            *c = g.beta != 0.f ? v + g.beta * *c : v;
        }
    }
}

static gargs make_args(const tc__problem *p) {
    gargs g;
    g.m = p->m; g.n = p->n; g.k = p->k;
    g.lda = p->lda; g.ldb = p->ldb; g.ldc = p->ldc;
    g.ta = p->trans_a; g.tb = p->trans_b;
    g.alpha = (float)p->alpha; g.beta = (float)p->beta;
    g.vec_c = 0;
    return g;
}

static int fast_shape(const tc__problem *p) {
    return !p->trans_a && !p->trans_b && p->k % 4 == 0 && p->n % 4 == 0 && p->lda % 4 == 0 &&
           p->ldb % 4 == 0 && p->k < INT32_MAX / 2; /* k tiles counted in int */
}

/* the fast kernel's k depth: 32 where k is a multiple of 32 (H200:
 * 45.5-48.6 TFLOP/s against 44.9-46.4 at BK 16), else 16 (whose
 * interior blocks then still load without tests); TILECONV_CUDA_GEMM_FP32_BK=16
 * or 32 forces one */
static int fp32_bk32(int64_t k) {
    const char *e = tc__knob_get(TC__KNOB_CUDA_GEMM_FP32_BK);
    if (e && (!strcmp(e, "16") || !strcmp(e, "32"))) return !strcmp(e, "32");
    return k % 32 == 0;
}

static int g_attr_set[2][16]; /* per k depth and device: the shared-memory size set */
template <int BK> static tc_status launch_fast(const gargs &g, const float *A, const float *B, float *C,
                                               cudaStream_t st) {
    const size_t smem = gat<BK>::SMEM;
    const int f = BK == 32;
    int dev = 0;
    TC_CU(cudaGetDevice(&dev));
    if (dev < 0 || dev >= 16 || !__atomic_load_n(&g_attr_set[f][dev], __ATOMIC_ACQUIRE)) {
        TC_CU(cudaFuncSetAttribute(sgemm_128x128<BK>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)smem));
        if (dev >= 0 && dev < 16) __atomic_store_n(&g_attr_set[f][dev], 1, __ATOMIC_RELEASE);
    }
    int64_t gx = tc__cu_div_up(g.n, GB_N), gyn = tc__cu_div_up(g.m, GB_M);
    TC__CU_FOR_GRID(gyn, 1, {
        sgemm_128x128<BK><<<dim3((unsigned)gx, gny), 256, smem, st>>>(A, B, C, g, gy0);
        TC_CU_LAUNCH("cuda.gemm.simt");
    })
    return TC_OK;
}

static tc_status launch_gemm(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    gargs g = make_args(p);
    const float *A = (const float *)b->x, *B = (const float *)b->w;
    float *C = (float *)b->y;
    if (fast_shape(p) && (uintptr_t)A % 16 == 0 && (uintptr_t)B % 16 == 0) {
        g.vec_c = p->ldc % 4 == 0 && (uintptr_t)C % 16 == 0;
        return fp32_bk32(p->k) ? launch_fast<32>(g, A, B, C, b->s) : launch_fast<16>(g, A, B, C, b->s);
    }
    int64_t gx = tc__cu_div_up(g.n, 64), gyn = tc__cu_div_up(g.m, 64);
    TC__CU_FOR_GRID(gyn, 1, {
        sgemm_generic64<<<dim3((unsigned)gx, gny), 256, 0, b->s>>>(A, B, C, g, gy0);
        TC_CU_LAUNCH("cuda.gemm.simt generic");
    })
    return TC_OK;
}

static int g_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    if (p->op != TC_OP_GEMM || p->dtype != TC_FLOAT32) {
        if (why) snprintf(why, n, "float32 GEMM only");
        return 0;
    }
    return 1;
}
static double g_estimate(const tc__problem *p, const tc__env *e) {
    return tc__cu_estimate(tc__problem_bytes(p), tc__problem_flops(p),
                           fast_shape(p) ? 0.7 : 0.25);
}
static tc_status g_execute(const tc__args *a) { return tc__cu_run(a, NULL, 1, launch_gemm); }

} // namespace

/* cuda.gemm.simt's launch, for cuda.gemm.wgmma-tf32's executes it cannot take */
tc_status tc__cu_sgemm_launch(const tc__args *a, const tc__cu_bufs *b) { return launch_gemm(a, b); }

TC__CU_SOLVER(tc__solver_cuda_gemm) = {
    "cuda.gemm.simt", TC_BACKEND_CUDA, TC_OP_GEMM,
    "GPU SGEMM (strict FP32): 128x128 tiles, BK 32 (16 where k is not a multiple of 32), 8x8 per thread, B by a 4-stage cp.async pipeline, A k-major through registers.",
    tc__cu_available, g_applicable, g_estimate, NULL, NULL, NULL, g_execute,
    NULL, NULL, NULL, 0, tc__cu_report_gemm,
};

void tc__cu_report_gemm(tc__cu_report *r) {
    cudaFuncSetAttribute(sgemm_128x128<16>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)gat<16>::SMEM);
    tc__cu_report_kernel(r, "cuda.gemm.simt 128x128x16, A k-major", (const void *)sgemm_128x128<16>, 256,
                         gat<16>::SMEM);
    (void)cudaGetLastError();
    cudaFuncSetAttribute(sgemm_128x128<32>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)gat<32>::SMEM);
    tc__cu_report_kernel(r, "cuda.gemm.simt 128x128x32, A k-major", (const void *)sgemm_128x128<32>, 256,
                         gat<32>::SMEM);
    (void)cudaGetLastError();
    tc__cu_report_kernel(r, "cuda.gemm.simt generic 64x64", (const void *)sgemm_generic64, 256, 0);
}
