/*
 * cuda_gemm_3xtf32.cu - cuda.gemm.wgmma-3xtf32: float32 GEMM at about float32
 * accuracy on Hopper's TF32 tensor cores (wgmma), by splitting each operand
 * in two TF32 parts. On the H200: 92-100 TFLOP/s at 2048^3 to 8192^3,
 * 1.8-2.0x cuBLAS SGEMM; on the H100 85-89 TFLOP/s, 1.68-1.75x; max error
 * against float64 6.1e-7 / 6.4e-7 of max|C| at 2048^3 / 4096^3 on both,
 * where cuBLAS SGEMM's and cuda.gemm.simt's are 1.9e-6 / 2.7e-6
 * (bench/gpu_gemm.py). The planner takes it for float32 GEMMs with
 * k >= 1024 (g3_estimate), where tests/test_cuda.c (run_gemm_3xtf32_checks)
 * holds its error to no more than simt's.
 *
 * The split: a float x is hi = x rounded to TF32 (10-bit mantissa, nearest,
 * ties away; truncated instead where rounding would carry into the
 * infinities) and lo = (x - hi) rounded to TF32; x - hi is exact, and
 * |x - hi - lo| <= 2^-22 |x|. C = alpha (A_lo B_hi + A_hi B_lo + A_hi B_hi)
 * + beta C; A_lo B_lo (<= 2^-22 |ab|) is dropped: three TF32 MMAs for one
 * fp32 product, so at best a third of the TF32 rate. The small terms go
 * first within each k8 step. Each operand element is split once, when its
 * tile is staged, not once per product.
 *
 * Accumulation: the tensor cores sum a stage's 12 MMAs (32 of k) into
 * their own accumulators, starting from zero (the stage's first wgmma with
 * scale-d 0), and the stage's sums are then added into the tile's fp32
 * sums by ordinary (round-to-nearest) adds. Published measurements of
 * earlier tensor cores (V100 / A100) found their fp32 accumulation
 * truncating (round toward zero); a model of that (a k8 dot product exact,
 * its addition to the accumulator truncated to fp32; a numpy emulation on
 * the CPU of this file's three products on uniform, wide-exponent and
 * TF32-boundary data, docs/solvers/cuda-gemm.md) put the error with one
 * accumulator over the whole k at 3-11x cuda.gemm.simt's (a sequential-FMA
 * model) at k = 100 and 10-50x from k = 1000 (2.7e-5 - 4.9e-5 of max|C| at
 * k = 4000: 3k/8 truncations, all toward zero), and with this per-stage
 * promotion at 0.3-3.2x simt's (at most 1.2x from k = 1000). Rounding to
 * nearest, one accumulator stays within 2x of simt's. Hopper's own
 * rounding has not been seen here.
 *
 * One form: 128 x 128 x 32 block tiles, one block an SM, persistent (tiles
 * strided over the grid, walked in groups of 8 m-tiles for L2 reuse); 384
 * threads: a producer warpgroup, whose first warp issues the
 * tensor-memory-accelerator copies into 4 mbarrier stages (lane 0 the A
 * box, lanes 1-16 the B boxes) and which gives its registers back
 * (setmaxnreg), and two consumer warpgroups at 232 registers (each 64 of
 * the tile's n, wgmma m64n128k8: 64 tensor-core accumulators and 64 fp32
 * sums a thread, 32 fragment registers). A consumer stage s: its 12 wgmmas
 * (B fragments from registers, A's hi / lo from buffer s mod 3); while they
 * run, stage s + 1's A tile (16 floats a thread) is split into the next
 * hi / lo buffer; then wait for the wgmmas, add their sums into the fp32
 * sums, split stage s + 1's B fragments into the (now free) fragment
 * registers, free its copy stage (every read of it is done), make the
 * shared-memory writes visible to the tensor cores (fence.proxy.async) and
 * meet the other warpgroup at a named barrier (both read the whole A
 * tile). The B split and the promotion do not overlap the MMAs (one
 * fragment buffer: two, with the promotion's 64 extra registers, made ptxas
 * spill at 232). Hi / lo buffers: stage s + 1's split starts once both
 * warpgroups met after stage s - 1's wgmmas were done, so it may overwrite
 * stage s - 1's buffer; three of them leave one more stage of margin.
 * Copies past m, n or k read zeros, so any size runs. Shared memory: 4 x
 * 32 KB copy stages + 3 x 32 KB hi / lo buffers (225 KB of the 227 KB).
 *
 * Not in this form (cuda.gemm.wgmma-tf32 has them): clusters sharing A / B
 * by multicast, the 256-row tile, the split tail. With three MMAs a byte
 * of operand where the TF32 kernel has one, what bounds the 128-row form of
 * that kernel (L2 bytes per MAC) should matter less here; not measured.
 *
 * Non-finite inputs: an infinite operand can give NaN where float32 gives
 * an infinity (its lo part is 0; inf x_hi + inf x_lo is NaN where x_lo is
 * 0 or of the other sign); NaN stays NaN. Finite inputs whose products
 * overflow give infinities as float32 does.
 *
 * Applies to float32 GEMMs with trans_a = trans_b = 0, lda and ldb multiples
 * of 4 (16-byte rows for the tensor copies), sizes below 2^31, where the
 * device runs this file's sm_90a image (the probe) and the driver has the
 * tensor-map encoder; an execute whose A or B is not 16-byte aligned
 * (device pointers) runs cuda.gemm.simt's kernel instead.
 */
#include "cuda/cuda_common.h"
#include "cuda/cuda_hopper.h"

#include <type_traits>

namespace {

#define G3_BM 128 /* C rows (m) a block: wgmma's N */
#define G3_BN 128 /* C columns (n) a block: two warpgroups of 64 (wgmma's M) */
#define G3_BK 32
#define G3_ST 4                   /* copy stages */
#define G3_CV 3                   /* hi / lo buffers of the converted A tile */
#define G3_NT 384                 /* a producer warpgroup, then two consumer warpgroups */
#define G3_CONS 128               /* the consumers' first thread */
#define G3_AS (G3_BM * G3_BK)     /* floats: an A tile, 128-byte swizzled */
#define G3_BS (G3_BK * G3_BN)     /* floats: a B tile, 16 boxes [32 k][8 n] */
#define G3_GROUP 8                /* m-tiles a raster group */
constexpr size_t G3_SMEM =
    ((size_t)G3_ST * (G3_AS + G3_BS) + (size_t)2 * G3_CV * G3_AS) * sizeof(float) + 2 * G3_ST * 8 + 1024;
static_assert(G3_SMEM <= 232448, "shared memory beyond the 227 KB a block may take");

struct g3p {
    int m, n, k, ldc, ntm, ntn, kt, tiles;
    float alpha, beta;
};
struct g3tm {
    CUtensorMap a, b;
};

/* the C origin of tile `tile`, walked in groups of G3_GROUP m-tiles, m
 * fastest within a group */
__device__ __forceinline__ void g3_origin(const g3p &q, int tile, int &m0, int &n0) {
    const int per = G3_GROUP * q.ntn, grp = tile / per, fm = grp * G3_GROUP,
              gs = min(G3_GROUP, q.ntm - fm);
    const int r = tile - grp * per;
    m0 = (fm + r % gs) * G3_BM;
    n0 = (r / gs) * G3_BN;
}

__device__ __forceinline__ float4 g3_hi4(float4 v, float4 &lo) {
    unsigned h0, h1, h2, h3, l0, l1, l2, l3;
    ig_tf32_split(v.x, h0, l0);
    ig_tf32_split(v.y, h1, l1);
    ig_tf32_split(v.z, h2, l2);
    ig_tf32_split(v.w, h3, l3);
    lo = make_float4(__uint_as_float(l0), __uint_as_float(l1), __uint_as_float(l2), __uint_as_float(l3));
    return make_float4(__uint_as_float(h0), __uint_as_float(h1), __uint_as_float(h2), __uint_as_float(h3));
}

/* D[64 x 128] += A[64 x 8] * B[8 x 128], A from registers (the m16n8k8
 * TF32 A fragment of each warp's 16 rows: a0 (g, t), a1 (g + 8, t), a2
 * (g, t + 4), a3 (g + 8, t + 4)), B K-major in shared memory (db) */
__device__ __forceinline__ void g3_wgmma(float *d, const unsigned *a, uint64_t db, int keep) {
#if IG_WGMMA
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, {%64,%65,%66,%67}, %68, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(keep)
                 : "memory");
#endif
}
/* the 256 consumer threads (two warpgroups) meet: named barrier 1 */
__device__ __forceinline__ void g3_consumers_sync() { asm volatile("bar.sync 1, 256;\n" ::: "memory"); }


/* Launched at 168 registers (384 threads); the producer warpgroup gives
 * its registers back (40) and the consumers take 232 (compiled alone at
 * __maxnreg__(232) their code takes 217, no spills: 64 tensor-core
 * accumulators, 64 fp32 sums, hi and lo B fragments, the conversion's 16
 * floats). Whole warpgroups: with one producer warp (288 threads) a
 * scheduler holds 3 warps, so 168 registers at most (3 x 32 x 168 <= 16K),
 * under which ptxas serialized the wgmmas (C7512, "insufficient register
 * resources"). */
__global__ void __launch_bounds__(G3_NT, 1)
    k_gemm_3xtf32(float *__restrict__ C, const g3p q, const __grid_constant__ g3tm tm) {
    extern __shared__ float4 g3_smem4[];
    float *smem = reinterpret_cast<float *>(g3_smem4);
    smem += ((1024 - ((unsigned)__cvta_generic_to_shared(smem) & 1023)) & 1023) / 4;
    float *As = smem, *Bs = As + G3_ST * G3_AS, *Ah = Bs + G3_ST * G3_BS, *Al = Ah + G3_CV * G3_AS;
    uint64_t *full = reinterpret_cast<uint64_t *>(Al + G3_CV * G3_AS), *empty = full + G3_ST;
    const int tid = threadIdx.x;
    if (tid == 0) {
        for (int i = 0; i < G3_ST; i++) {
            ig_mbar_init(full + i, 1);
            ig_mbar_init(empty + i, 256); /* every consumer thread */
        }
        ig_mbar_init_fence();
    }
    __syncthreads();
    if (tid < G3_CONS) {
        /* the producer warpgroup: lane 0 the A box, lanes 1-16 the B boxes */
        ig_setmaxnreg_dec<40>();
        const int lane = tid;
        if (lane > 16) return;
        int slot = 0, it = 0;
        unsigned ph = 0;
        for (int tile = (int)blockIdx.x; tile < q.tiles; tile += (int)gridDim.x) {
            int m0, n0;
            g3_origin(q, tile, m0, n0);
            for (int kt = 0; kt < q.kt; kt++, it++) {
                if (it >= G3_ST) ig_mbar_wait(empty + slot, ph ^ 1u);
                if (lane == 0) ig_mbar_expect(full + slot, (G3_AS + G3_BS) * 4u);
                __syncwarp(0x1ffffu);
                if (lane > 0)
                    ig_tma2(Bs + slot * G3_BS + (lane - 1) * 256, &tm.b, n0 + 8 * (lane - 1), kt * G3_BK,
                            full + slot);
                else
                    ig_tma2(As + slot * G3_AS, &tm.a, kt * G3_BK, m0, full + slot);
                if (++slot == G3_ST) slot = 0, ph ^= 1u;
            }
        }
        return;
    }
    ig_setmaxnreg_inc<232>();
    const int ct = tid - G3_CONS;
    const int wg = ct >> 7, warp = (ct >> 5) & 3, lane = ct & 31, g = lane >> 2, t = lane & 3;
    /* acc: the tile's sums (fp32, rounded to nearest); tc: the tensor cores'
     * sums of one stage, added into acc once the stage's wgmmas are done */
    float acc[G3_BM / 2], tc[G3_BM / 2];
    /* this thread's fragment rows: n = 64 wg + 16 warp + g (+ 8), in B boxes
     * bx and bx + 1, k row t (+ 4) of each k8 step */
    const int fo = (8 * wg + 2 * warp) * 256 + t * 8 + g;
    const unsigned dh0 = (unsigned)ig_desc_sw128(Ah), dl0 = (unsigned)ig_desc_sw128(Al);
    constexpr uint64_t DHI = ig_desc_sw128_hi << 32;
    unsigned fh[4][4], fl[4][4]; /* B fragments: hi, lo */
    int slot = 0, cv = 0, cm = 0; /* copy stage; hi / lo buffer to convert into, to multiply */
    unsigned ph = 0;
    /* the next copy stage's A split into hi / lo buffer cv (4 float4 a
     * thread); runs while the previous stage's wgmmas do */
    auto convert_a = [&]() {
        ig_mbar_wait(full + slot, ph);
        const float4 *src = reinterpret_cast<const float4 *>(As + slot * G3_AS);
        float4 *dh = reinterpret_cast<float4 *>(Ah + cv * G3_AS),
               *dl = reinterpret_cast<float4 *>(Al + cv * G3_AS);
        float4 v[4];
#pragma unroll
        for (int j = 0; j < 4; j++) v[j] = src[ct + 256 * j];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            float4 lo;
            dh[ct + 256 * j] = g3_hi4(v[j], lo);
            dl[ct + 256 * j] = lo;
        }
    };
    /* its B fragments split into fh / fl (once the previous stage's wgmmas,
     * which read them, are done); the copy stage freed; the hi / lo writes
     * made visible to the tensor cores (the async proxy) */
    auto convert_b = [&]() {
        const float *bs = Bs + slot * G3_BS + fo;
#pragma unroll
        for (int k8 = 0; k8 < 4; k8++) {
            ig_tf32_split(bs[k8 * 64], fh[k8][0], fl[k8][0]);
            ig_tf32_split(bs[k8 * 64 + 256], fh[k8][1], fl[k8][1]);
            ig_tf32_split(bs[k8 * 64 + 32], fh[k8][2], fl[k8][2]);
            ig_tf32_split(bs[k8 * 64 + 256 + 32], fh[k8][3], fl[k8][3]);
        }
        /* this thread's reads of the copy stage are done: its arrival frees
         * the stage for the producer once all 256 have arrived (every
         * thread arrives: an arrival by one lane a warp, a divergent branch
         * near the wgmmas, made ptxas serialize them, C7520) */
        ig_mbar_arrive(empty + slot);
        ig_proxy_fence();
        if (++slot == G3_ST) slot = 0, ph ^= 1u;
        cm = cv;
        if (++cv == G3_CV) cv = 0;
    };
    /* a stage's 12 wgmmas into tc (its first one overwrites tc: scale-d 0),
     * from the fragments and hi / lo buffer c; the small products first in
     * each k8 step */
    auto mma = [&](int c) {
        ig_wg_fence();
        const unsigned dh = dh0 + (unsigned)c * (G3_AS / 4), dl = dl0 + (unsigned)c * (G3_AS / 4);
#pragma unroll
        for (int k8 = 0; k8 < 4; k8++) {
            g3_wgmma(tc, fl[k8], DHI | (dh + 2u * k8), k8 > 0); /* B_lo A_hi */
            g3_wgmma(tc, fh[k8], DHI | (dl + 2u * k8), 1);      /* B_hi A_lo */
            g3_wgmma(tc, fh[k8], DHI | (dh + 2u * k8), 1);      /* B_hi A_hi */
        }
        ig_wg_commit();
    };
    /* the stage's wgmmas done: their sums into acc, rounded to nearest */
    auto promote = [&]() {
        ig_wg_wait<0>();
#pragma unroll
        for (int i = 0; i < G3_BM / 2; i++) acc[i] += tc[i];
    };
#pragma unroll
    for (int i = 0; i < G3_BM / 2; i++) tc[i] = 0.f; /* defined before the first "+f" */
    for (int tile = (int)blockIdx.x; tile < q.tiles; tile += (int)gridDim.x) {
        int m0, n0;
        g3_origin(q, tile, m0, n0);
#pragma unroll
        for (int i = 0; i < G3_BM / 2; i++) acc[i] = 0.f;
        convert_a();
        convert_b();
        g3_consumers_sync();
        /* each stage: its wgmmas, the next stage's A split while they run;
         * then their sums into acc, the next stage's B fragments, and the
         * two warpgroups meet (both read the whole A tile) */
        for (int kt = 0; kt + 1 < q.kt; kt++) {
            mma(cm);
            convert_a();
            promote();
            convert_b();
            g3_consumers_sync();
        }
        mma(cm);
        promote();
        /* acc[i] is C's row m0 + 8 (i / 4) + 2t + (i & 1), column
         * n0 + 64 wg + 16 warp + g + 8 ((i / 2) & 1): alpha v + beta C
         * where it lies inside m and n */
#pragma unroll
        for (int i = 0; i < G3_BM / 2; i++) {
            const int n = n0 + 64 * wg + 16 * warp + g + 8 * ((i >> 1) & 1),
                      m = m0 + 8 * (i >> 2) + 2 * t + (i & 1);
            if (n >= q.n || m >= q.m) continue;
            float *c = C + (int64_t)m * q.ldc + n;
            const float a = q.alpha * acc[i];
            *c = q.beta != 0.f ? a + q.beta * *c : a;
        }
    }
}

int g3_applicable(const tc__problem *p, const tc__env *e, char *why, size_t n) {
    const char *w = NULL;
    if (p->op != TC_OP_GEMM || p->dtype != TC_FLOAT32)
        w = "float32 GEMM only";
    else if (p->trans_a || p->trans_b)
        w = "transposed operands (cuda.gemm.simt takes them)";
    else if (p->lda % 4 || p->ldb % 4)
        w = "lda and ldb must be multiples of 4 (16-byte rows for the tensor copies)";
    else if (p->m > INT32_MAX - G3_BM || p->n > INT32_MAX - G3_BN || p->k > INT32_MAX - G3_BK ||
             p->ldc > INT32_MAX || p->m * p->ldc > ((int64_t)1 << 40) ||
             tc__cu_div_up(p->m, G3_BM) * tc__cu_div_up(p->n, G3_BN) > INT32_MAX - 65536)
        w = "sizes beyond 32-bit tile indexing";
    else if (!tc__cu_available())
        w = "no usable CUDA device";
    else if (!ig_wgmma_ok() || !ig_tma_encoder())
        w = "needs a Hopper GPU (sm_90a image, wgmma) and the driver's tensor maps";
    if (w && why) snprintf(why, n, "%s", w);
    return w == NULL;
}
/* The planner's float32 GEMM where k >= G3_MIN_K: there its error against
 * float64 is no larger than cuda.gemm.simt's (test_cuda holds that on
 * uniform, wide-exponent and TF32-boundary data); below, simt's single
 * rounding a product is the more accurate, and it is never chosen.
 * TC_PLAN_DIRECT excludes it (a split form). Modelled at 1.35x the nominal
 * FP32 rate (92-100 TFLOP/s measured on the H200 at 2048^3 to 8192^3,
 * against 67 nominal), scaled down when the tiles do not fill the SMs. */
constexpr int64_t G3_MIN_K = 1024;
double g3_estimate(const tc__problem *p, const tc__env *e) {
    (void)e;
    if (p->k < G3_MIN_K) return 1e300;
    const tc__cu_device *d = tc__cu_dev();
    const double sms = d && d->sms > 0 ? d->sms : 132;
    const double tiles = (double)tc__cu_div_up(p->m, G3_BM) * (double)tc__cu_div_up(p->n, G3_BN);
    const double fill = tiles < sms ? tiles / sms : 1.0;
    return tc__cu_estimate(tc__problem_bytes(p), tc__problem_flops(p), 1.35 * fill);
}

int g3_attr_set[IG_NDEV];
tc_status launch_gemm_3xtf32(const tc__args *a, const tc__cu_bufs *b) {
    const tc__problem *p = a->p;
    const float *A = (const float *)b->x, *B = (const float *)b->w;
    if ((uintptr_t)A % 16 || (uintptr_t)B % 16) return tc__cu_sgemm_launch(a, b);
    g3tm tm;
    memset(&tm, 0, sizeof tm);
    tc_status st = ig_gemm_tensor_maps(p, A, B, G3_BM, G3_BK, &tm.a, &tm.b, "cuda.gemm.wgmma-3xtf32");
    if (st) return st;
    int dev = 0;
    TC_CU(cudaGetDevice(&dev));
    if (dev < 0 || dev >= IG_NDEV || !__atomic_load_n(&g3_attr_set[dev], __ATOMIC_ACQUIRE)) {
        TC_CU(cudaFuncSetAttribute(k_gemm_3xtf32, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)G3_SMEM));
        if (dev >= 0 && dev < IG_NDEV) __atomic_store_n(&g3_attr_set[dev], 1, __ATOMIC_RELEASE);
    }
    g3p q;
    q.m = (int)p->m; q.n = (int)p->n; q.k = (int)p->k; q.ldc = (int)p->ldc;
    q.ntm = (int)tc__cu_div_up(p->m, G3_BM);
    q.ntn = (int)tc__cu_div_up(p->n, G3_BN);
    q.kt = (int)tc__cu_div_up(p->k, G3_BK);
    q.tiles = q.ntm * q.ntn;
    q.alpha = (float)p->alpha;
    q.beta = (float)p->beta;
    const tc__cu_device *d = tc__cu_dev();
    const int sms = d && d->sms > 0 ? d->sms : 1; /* one block an SM (225 KB of shared memory) */
    const unsigned grid = (unsigned)(q.tiles < sms ? q.tiles : sms);
    k_gemm_3xtf32<<<grid, G3_NT, G3_SMEM, b->s>>>((float *)b->y, q, tm);
    TC_CU_LAUNCH("cuda.gemm.wgmma-3xtf32");
    return TC_OK;
}
tc_status g3_execute(const tc__args *a) { return tc__cu_run(a, NULL, 1, launch_gemm_3xtf32); }

/* the kernel report (tc_cuda_kernel_report): registers and the largest block */
void g3_report(tc__cu_report *r) {
    cudaFuncSetAttribute(k_gemm_3xtf32, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)G3_SMEM);
    (void)cudaGetLastError();
    tc__cu_report_kernel(r, "cuda.gemm.wgmma-3xtf32 128x128", (const void *)k_gemm_3xtf32, G3_NT, G3_SMEM);
}

} // namespace

TC__CU_SOLVER(tc__solver_cuda_gemm_3xtf32) = {
    "cuda.gemm.wgmma-3xtf32", TC_BACKEND_CUDA, TC_OP_GEMM,
    "GPU GEMM at about float32 accuracy on Hopper's TF32 tensor cores: each operand split into TF32 hi + lo parts once as its tile is staged, C += A_lo B_hi + A_hi B_lo + A_hi B_hi (wgmma, 128x128x32 tiles, persistent); the planner's float32 GEMM for k >= 1024 (there no less accurate than cuda.gemm.simt; not with TC_PLAN_DIRECT).",
    tc__cu_available, g3_applicable, g3_estimate, NULL, NULL, NULL, g3_execute,
    NULL, NULL, NULL, 0, g3_report,
};
