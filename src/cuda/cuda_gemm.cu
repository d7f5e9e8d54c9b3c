/*
 * cuda_gemm.cu - cuda.gemm: single-precision GEMM on CUDA cores (strict FP32
 * FFMA; no TF32, whatever TC_PLAN_ALLOW_TF32 says, so results match the
 * CPU to float rounding).
 *
 * Fast path (op(A) = A, op(B) = B, k, n, lda, ldb multiples of 4, A and B
 * 16-byte aligned): 128x128 block tile, BK = 16, 256 threads, 8x8 outputs
 * per thread (two 4x4 quadrants 64 apart, so a warp's shared loads hit
 * distinct banks), a 4-stage cp.async pipeline (16-byte copies from
 * pointers set once, zero-fill at the edges, so any m works), A kept
 * row-major in shared memory with a 20-float pitch and read with 16-byte
 * loads along k (4 k-steps per load), B read with 16-byte loads along n.
 * 2 blocks per SM (<= 128 registers). Session 17 (perf-notes): the copy
 * pointers set once took the kernel from 41.0-41.4 to 42.6-42.9 TFLOP/s
 * (H200, 4096^3 and 8192^3; cuBLAS 50.8-50.9); BK = 32 with 3 stages
 * issued 4% fewer instructions but ran slower (40.6-41.1: fewer warps
 * eligible, 27% of cycles with none against 23%) and was dropped.
 * Session 18: blocks whose tile lies inside m and n (k a multiple of 16)
 * copy without per-copy tests from pointers stepped along k: 4.5% fewer
 * instructions, 44.0-44.8 TFLOP/s at 4096^3 and 8192^3 (cuBLAS 49.2-50.6).
 * A 128-thread form with 8 x 16 outputs a thread (cuBLAS's SIMT shape,
 * 255 registers, 8 warps an SM) issued 8% fewer instructions but at 0.69
 * a cycle against 0.77: 40.6-41.3, not kept.
 *
 * Generic path (transposes, odd sizes or strides): 64x64 tiles, 4x4 per
 * thread, bounds-checked loads.
 */
#include "cuda/cuda_common.h"

namespace {

#define GB_M 128
#define GB_N 128
/* The k depth of a stage and what follows from it: A's row pitch BK + 4
 * floats, the stages, each thread's 16-byte copies a stage */
struct gbc {
    static constexpr int BK = 16;
    static constexpr int AP = BK + 4;
    static constexpr int ST = 4;
    static constexpr int SF = GB_M * AP + BK * GB_N; /* floats a stage */
    static constexpr size_t SMEM = (size_t)ST * SF * sizeof(float);
    static constexpr int CA = GB_M * BK / 4 / 256; /* 16-byte copies a thread a stage, A */
    static constexpr int CB = BK * GB_N / 4 / 256; /* and B */
};

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

/* EDGE: the block's tile crosses m or n, or k is not a multiple of BK: each
 * copy tests its row and k and zero-fills past them. Interior blocks copy
 * whole 16-byte pieces from pointers that step along k (no tests, no
 * per-stage 64-bit arithmetic: session 18). */
template <bool EDGE>
__device__ __forceinline__ void sgemm256_body(const float *__restrict__ A, const float *__restrict__ B,
                                              float *__restrict__ C, const gargs &g, int64_t m0,
                                              int64_t n0) {
    using K = gbc;
    constexpr int BK = K::BK;
    extern __shared__ float4 smem4[];
    float *smem = reinterpret_cast<float *>(smem4);
    const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    const int KT = (int)((g.k + BK - 1) / BK);
    /* this thread's copies: A rows ar + (256 / (BK / 4)) i at k chunk akc, B
     * k rows bkr + 8 i at n chunk bnc; base pointers set once (session 17:
     * 1.04x, the per-stage 64-bit set-up gone) */
    constexpr int ARS = 256 / (BK / 4); /* A rows between a thread's copies */
    const int ar = tid / (BK / 4), akc = (tid % (BK / 4)) * 4, bkr = tid >> 5, bnc = (tid & 31) * 4;
    const float *pa = A + (m0 + ar < g.m ? (m0 + ar) * g.lda : 0) + akc;
    const float *pb = B + (int64_t)bkr * g.ldb + n0 + bnc;
    const bool bok = n0 + bnc < g.n;
    const int64_t astep = (int64_t)ARS * g.lda, bstep8 = (int64_t)8 * g.ldb;
    const float *ra = pa, *rb = pb; /* interior: the next stage's sources */
    auto load = [&](int slot, int kt) {
        float *As = smem + slot * K::SF, *Bs = As + GB_M * K::AP;
        if constexpr (!EDGE) {
#pragma unroll
            for (int i = 0; i < K::CA; i++) cp_async16f(As + (ar + ARS * i) * K::AP + akc, ra + i * astep);
#pragma unroll
            for (int i = 0; i < K::CB; i++) cp_async16f(Bs + (bkr + 8 * i) * GB_N + bnc, rb + i * bstep8);
            ra += BK;
            rb += BK * g.ldb;
            return;
        }
        const int64_t k0 = (int64_t)kt * BK;
        const bool kaok = k0 + akc < g.k;
#pragma unroll
        for (int i = 0; i < K::CA; i++) {
            const bool ok = kaok && m0 + ar + ARS * i < g.m;
            cp_async16(As + (ar + ARS * i) * K::AP + akc, ok ? pa + i * astep + k0 : A, ok ? 16 : 0);
        }
        const float *pbk = pb + k0 * g.ldb;
#pragma unroll
        for (int i = 0; i < K::CB; i++) {
            const bool ok = bok && k0 + bkr + 8 * i < g.k;
            cp_async16(Bs + (bkr + 8 * i) * GB_N + bnc, ok ? pbk + i * bstep8 : B, ok ? 16 : 0);
        }
    };

#pragma unroll
    for (int s = 0; s < K::ST - 1; s++) {
        if (s < KT) load(s, s);
        cp_commit();
    }
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = 0.f;

    int cs = 0, ls = K::ST - 1; /* the slot computed, the slot loaded next */
    for (int kt = 0; kt < KT; kt++) {
        cp_wait<K::ST - 2>();
        __syncthreads();
        if (kt + K::ST - 1 < KT) load(ls, kt + K::ST - 1);
        cp_commit();
        if (++ls == K::ST) ls = 0;
        const float *As = smem + cs * K::SF;
        const float *Bs = As + GB_M * K::AP;
        if (++cs == K::ST) cs = 0;
#pragma unroll
        for (int kc = 0; kc < BK / 4; kc++) {
            float a[8][4];
#pragma unroll
            for (int i = 0; i < 8; i++) {
                int row = (i < 4 ? 0 : 64) + ty * 4 + (i & 3);
                float4 q = *reinterpret_cast<const float4 *>(As + row * K::AP + kc * 4);
                a[i][0] = q.x; a[i][1] = q.y; a[i][2] = q.z; a[i][3] = q.w;
            }
#pragma unroll
            for (int kk = 0; kk < 4; kk++) {
                const float *br = Bs + (kc * 4 + kk) * GB_N;
                float4 b0 = *reinterpret_cast<const float4 *>(br + tx * 4);
                float4 b1 = *reinterpret_cast<const float4 *>(br + 64 + tx * 4);
                float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
                for (int i = 0; i < 8; i++)
#pragma unroll
                    for (int j = 0; j < 8; j++) acc[i][j] = fmaf(a[i][kk], b[j], acc[i][j]);
            }
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

__global__ void __launch_bounds__(256, 2)
sgemm_128x128(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
              const gargs g, int64_t gy0) {
    const int64_t m0 = ((int64_t)blockIdx.y + gy0) * GB_M, n0 = (int64_t)blockIdx.x * GB_N;
    if (m0 + GB_M <= g.m && n0 + GB_N <= g.n && g.k % gbc::BK == 0)
        sgemm256_body<false>(A, B, C, g, m0, n0);
    else
        sgemm256_body<true>(A, B, C, g, m0, n0);
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

static int g_attr_set[16]; /* per device: the fast kernel's shared-memory size set */
static tc_status launch_gemm(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    gargs g = make_args(p);
    const float *A = (const float *)b->x, *B = (const float *)b->w;
    float *C = (float *)b->y;
    if (fast_shape(p) && (uintptr_t)A % 16 == 0 && (uintptr_t)B % 16 == 0) {
        g.vec_c = p->ldc % 4 == 0 && (uintptr_t)C % 16 == 0;
        const size_t smem = gbc::SMEM;
        int dev = 0;
        TC_CU(cudaGetDevice(&dev));
        if (dev < 0 || dev >= 16 || !__atomic_load_n(&g_attr_set[dev], __ATOMIC_ACQUIRE)) {
            TC_CU(cudaFuncSetAttribute(sgemm_128x128, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       (int)smem));
            if (dev >= 0 && dev < 16) __atomic_store_n(&g_attr_set[dev], 1, __ATOMIC_RELEASE);
        }
        int64_t gx = tc__cu_div_up(g.n, GB_N), gyn = tc__cu_div_up(g.m, GB_M);
        TC__CU_FOR_GRID(gyn, 1, {
            sgemm_128x128<<<dim3((unsigned)gx, gny), 256, smem, b->s>>>(A, B, C, g, gy0);
            TC_CU_LAUNCH("cuda.gemm");
        })
        return TC_OK;
    }
    int64_t gx = tc__cu_div_up(g.n, 64), gyn = tc__cu_div_up(g.m, 64);
    TC__CU_FOR_GRID(gyn, 1, {
        sgemm_generic64<<<dim3((unsigned)gx, gny), 256, 0, b->s>>>(A, B, C, g, gy0);
        TC_CU_LAUNCH("cuda.gemm generic");
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

/* cuda.gemm's launch, for cuda.gemm-tf32's executes it cannot take */
tc_status tc__cu_sgemm_launch(const tc__args *a, const tc__cu_bufs *b) { return launch_gemm(a, b); }

TC__CU_SOLVER(tc__solver_cuda_gemm) = {
    "cuda.gemm", TC_BACKEND_CUDA, TC_OP_GEMM,
    "GPU SGEMM (strict FP32): 128x128x16 tiles, 8x8 per thread, 4-stage cp.async pipeline.",
    tc__cu_available, g_applicable, g_estimate, NULL, NULL, NULL, g_execute,
};

void tc__cu_report_gemm(tc__cu_report *r) {
    cudaFuncSetAttribute(sgemm_128x128, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)gbc::SMEM);
    tc__cu_report_kernel(r, "cuda.gemm 128x128x16 4-stage", (const void *)sgemm_128x128, 256, gbc::SMEM);
    (void)cudaGetLastError();
    tc__cu_report_kernel(r, "cuda.gemm generic 64x64", (const void *)sgemm_generic64, 256, 0);
}
